// merge: common-subexpression elimination. Equal constants (dtype, shape, bytes, weakness)
// become one variable, then nodes with equal ops (equals(): kind and props) and the same
// inputs become one, in topological order. Impure ops never merge.
//
// Runs first (position 0: later passes see each value once, constant_fold folds it once)
// and again last as merge_again (after inplace: rewrites may have built equal nodes).
#include "graph/op.hpp"
#include "rewrite/passes/passes.hpp"

#include <cstring>
#include <map>
#include <unordered_map>

namespace theon::rewrite {

namespace {

// A constant's identity: dtype, shape and bytes.
std::string constant_key(const Array& a) {
  Array c = a.contiguous();
  std::string key = std::string(dtype_name(c.dtype())) + shape_str(c.shape()) + ":";
  key.append(static_cast<const char*>(c.data()), c.nbytes());
  return key;
}

}  // namespace

bool merge_pass(graph::FunctionGraph& fgraph) {
  std::vector<std::pair<graph::VarPtr, graph::VarPtr>> replacements;
  // Constants first: equal values become one variable.
  std::unordered_map<std::string, graph::VarPtr> constants;
  std::unordered_map<const graph::Variable*, graph::VarPtr> canonical;
  for (auto& node : fgraph.nodes())
    for (auto& in : node->inputs()) {
      if (in->kind != graph::VarKind::Constant || canonical.count(in.get())) continue;
      auto [it, inserted] = constants.try_emplace(constant_key(in->constant) + (in->weak ? "w" : "s"), in);
      canonical[in.get()] = it->second;
      if (!inserted && it->second != in) replacements.push_back({in, it->second});
    }
  // Then nodes, in topological order, with inputs seen through the merges so far.
  std::unordered_map<size_t, std::vector<graph::Apply*>> seen;
  std::unordered_map<const graph::Variable*, graph::VarPtr> merged;
  auto resolve = [&](const graph::VarPtr& v) -> const graph::Variable* {
    if (auto c = canonical.find(v.get()); c != canonical.end()) return c->second.get();
    if (auto m = merged.find(v.get()); m != merged.end()) return m->second.get();
    return v.get();
  };
  for (auto& node : fgraph.nodes()) {
    if (!node->op().pure()) continue;
    size_t h = node->op().hash();
    for (auto& in : node->inputs()) h = h * 31 + std::hash<const void*>()(resolve(in));
    auto& bucket = seen[h];
    graph::Apply* match = nullptr;
    for (graph::Apply* other : bucket) {
      if (!other->op().equals(node->op()) || other->inputs().size() != node->inputs().size()) continue;
      bool same = true;
      for (size_t i = 0; same && i < node->inputs().size(); ++i)
        same = resolve(other->input(static_cast<int>(i))) == resolve(node->input(static_cast<int>(i)));
      if (same) {
        match = other;
        break;
      }
    }
    if (!match) {
      bucket.push_back(node.get());
      continue;
    }
    for (int i = 0; i < node->num_outputs(); ++i) {
      graph::VarPtr keep = match->output(i);
      merged[node->output_raw(i)] = keep;
      replacements.push_back({node->output(i), keep});
    }
  }
  if (replacements.empty()) return false;
  fgraph.replace_all(replacements, "merge");
  return true;
}

}  // namespace theon::rewrite
