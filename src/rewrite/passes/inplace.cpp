// Inplace: a node whose output 0 may overwrite one of its inputs is replaced by its op's
// inplace variant (Op::inplace_variant(0, k): destroy_map {0: k}), so the executor can write
// the result into the input's buffer instead of allocating one. The pass knows no op class:
// an op takes part by overriding inplace_variant (today Elemwise and Composite).
//
// Runs last but for merge_again: after canonicalize, specialize and fusion (the nodes it marks
// must be final: a later rewrite would have to keep destroy_maps and the last-reader rule),
// before merge_again (the final clean-up).
//
// The rule (static; the executor re-checks everything at run time and allocates when a check
// fails, so the pass only marks candidates). Input k of node n may be destroyed when:
//  - n's op destroys no input yet and has an inplace variant for output 0 and input k;
//  - input k has the dtype of output 0 and its static type cannot broadcast against it: in
//    every dim the input is not statically 1 unless the output is, and known sizes agree;
//  - the memory of input k is an intermediate: following view_map from k to the variable
//    that owns the memory (its "root") ends at the output of a node that is not a view, never
//    at a graph input, a constant or a shared variable;
//  - no variable of that memory (the root and every view of it) is a graph output, and every
//    node reading any of them comes before n in the topological order or is n itself (n is
//    the last reader of the memory);
//  - no other input of n reads the same memory through a different variable (a view with
//    another layout); the same variable at several positions is fine (element i is read
//    before element i is written).
// At most one input per node is destroyed (the first that qualifies).
#include "graph/op.hpp"
#include "rewrite/passes/passes.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace theon::rewrite {
namespace {

using graph::Apply;
using graph::FunctionGraph;
using graph::Variable;

// Can `in` be overwritten by an output of type `out` without changing the output's shape?
bool same_static_shape(const graph::TensorType& in, const graph::TensorType& out) {
  if (in.dtype != out.dtype || in.ndim() != out.ndim()) return false;
  for (int d = 0; d < in.ndim(); ++d) {
    const int64_t a = in.dims[d], b = out.dims[d];
    if (a == 1 && b != 1) return false;  // a broadcast input
    if (a >= 0 && b >= 0 && a != b) return false;
  }
  return true;
}

}  // namespace

bool inplace_pass(FunctionGraph& fg) {
  const auto& nodes = fg.nodes();
  std::unordered_map<const Apply*, size_t> topo;
  for (size_t i = 0; i < nodes.size(); ++i) topo[nodes[i].get()] = i;

  // The memory root of every variable: itself, or (for a view output, or an output that may
  // be its input handed over: pass_through_map) its input's root.
  std::unordered_map<const Variable*, const Variable*> root;
  auto root_of = [&](const Variable* v) {
    auto it = root.find(v);
    return it == root.end() ? v : it->second;  // leaves are their own roots
  };
  auto aliases = [](const Apply& n) {
    std::map<int, int> views = n.op().view_map();
    views.merge(n.op().pass_through_map());
    return views;
  };
  for (auto& n : nodes) {
    auto views = aliases(*n);
    for (int o = 0; o < n->num_outputs(); ++o) {
      auto it = views.find(o);
      root[n->output_raw(o)] = it == views.end() ? n->output_raw(o) : root_of(n->input(it->second).get());
    }
  }
  // Per root: the last node reading any variable of that memory, and whether one is an output.
  std::unordered_map<const Variable*, size_t> last_reader;
  std::unordered_map<const Variable*, bool> is_output;
  for (auto& n : nodes)
    for (auto& in : n->inputs()) {
      size_t& l = last_reader[root_of(in.get())];
      l = std::max(l, topo[n.get()]);
    }
  for (auto& o : fg.outputs()) is_output[root_of(o.get())] = true;

  auto intermediate_root = [&](const Variable* r) {
    if (r->kind != graph::VarKind::Output || !r->owner) return false;  // input, constant, shared
    return aliases(*r->owner).count(r->index) == 0;
  };

  std::vector<std::pair<graph::VarPtr, graph::VarPtr>> pairs;
  std::unordered_map<const Variable*, graph::VarPtr> replaced;  // old output -> new (chains)
  for (auto& n : nodes) {
    if (n->num_outputs() == 0 || !n->op().destroy_map().empty()) continue;
    const graph::TensorType& out = n->output_raw(0)->type;
    std::shared_ptr<const graph::Op> op;  // the inplace variant chosen
    for (int k = 0; k < static_cast<int>(n->inputs().size()) && !op; ++k) {
      const Variable* in = n->input(k).get();
      const Variable* r = root_of(in);
      if (!same_static_shape(in->type, out) || !intermediate_root(r)) continue;
      if (is_output.count(r) || last_reader[r] != topo[n.get()]) continue;
      bool other_alias = false;
      for (auto& other : n->inputs())
        if (other.get() != in && root_of(other.get()) == r) other_alias = true;
      if (!other_alias) op = n->op().inplace_variant(0, k);
    }
    if (!op) continue;
    std::vector<graph::TensorType> types;
    for (int o = 0; o < n->num_outputs(); ++o) types.push_back(n->output_raw(o)->type);
    std::vector<graph::VarPtr> inputs;
    for (auto& in : n->inputs()) {
      auto it = replaced.find(in.get());
      inputs.push_back(it == replaced.end() ? in : it->second);
    }
    graph::ApplyPtr node = Apply::make(op, std::move(inputs), std::move(types));
    for (int o = 0; o < n->num_outputs(); ++o) {
      node->output_raw(o)->name = n->output_raw(o)->name;
      replaced[n->output_raw(o)] = node->output(o);
      pairs.push_back({n->output(o), node->output(o)});
    }
  }
  if (pairs.empty()) return false;
  fg.replace_all(pairs, "inplace");
  return true;
}

}  // namespace theon::rewrite
