// Elementwise fusion: maximal connected regions of Elemwise nodes become one Composite.
//
// Regions grow from the last node of the graph towards its producers. A producer joins the
// region of its consumer when every use of its result is inside the region; a producer whose
// result is also used outside (by another node or as a graph output) joins too and its
// result becomes an extra output of the Composite, unless that would make the region
// non-convex (a path leaving the region and coming back, which would be a cycle once the
// region is one node). Regions of one node stay Elemwise.
//
// Then reductions absorb the elementwise work that feeds them: a Reduce (not Count) whose
// input is made by a single-output Composite or an Elemwise and used by nothing else becomes
// one FusedReduce node (ops/fused_reduce.hpp), e.g. sum(exp(x - m)) in one pass with no
// full-size intermediate. The elementwise region is formed first, so the reduction takes all
// of it. Only in graphs that run on the CPU (see cpu_only below).
//
// Runs after canonicalize and specialize (their rules match single Elemwise nodes, which a
// Composite hides) and before inplace (Composites have inplace variants).
#include "graph/contexts.hpp"
#include "ops/composite.hpp"
#include "ops/elemwise.hpp"
#include "ops/fused_reduce.hpp"
#include "rewrite/passes/passes.hpp"
#include "rewrite/pipeline.hpp"

#include <theon/config.hpp>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace theon::rewrite {
namespace {

using graph::Apply;
using graph::FunctionGraph;

const ops::Elemwise* as_elemwise(const Apply* n) { return graph::op_if<ops::Elemwise>(n->op()); }

bool is_graph_output(const FunctionGraph& fg, const graph::Variable* v) {
  for (auto& o : fg.outputs())
    if (o.get() == v) return true;
  return false;
}

// Whether node n's results are used outside `region` (by a node or as a graph output).
bool used_outside(const FunctionGraph& fg, const Apply* n, const std::unordered_set<const Apply*>& region) {
  for (int i = 0; i < n->num_outputs(); ++i) {
    if (is_graph_output(fg, n->output_raw(i))) return true;
    for (auto& [c, pos] : fg.clients(n->output_raw(i)))
      if (!region.count(c)) return true;
  }
  return false;
}

// No path leaves the region and re-enters it.
bool convex(const FunctionGraph& fg, const std::unordered_set<const Apply*>& region) {
  std::vector<const Apply*> stack;
  std::unordered_set<const Apply*> seen;
  auto push_clients = [&](const Apply* n) -> bool {
    for (int i = 0; i < n->num_outputs(); ++i)
      for (auto& [c, pos] : fg.clients(n->output_raw(i))) {
        if (region.count(c)) {
          if (!region.count(n)) return false;  // re-entered from outside
          continue;
        }
        if (seen.insert(c).second) stack.push_back(c);
      }
    return true;
  };
  for (const Apply* n : region)
    if (!push_clients(n)) return false;
  while (!stack.empty()) {
    const Apply* n = stack.back();
    stack.pop_back();
    if (!push_clients(n)) return false;
  }
  return true;
}

// Whether the graph will run on the CPU: the device it is compiled for (lowering's target)
// is the CPU and no variable is pinned to a context. Only the CPU backend has a FusedReduce
// kernel so far; on a GPU the Composite and the Reduce stay apart (each has a CUDA kernel)
// rather than the fused node falling back to the CPU.
bool cpu_only(const FunctionGraph& fg, const Target& target) {
  if (!target.device.is_cpu()) return false;
  for (auto& node : fg.nodes()) {
    for (auto& in : node->inputs())
      if (!in->type.context.empty()) return false;
    for (int i = 0; i < node->num_outputs(); ++i)
      if (!node->output_raw(i)->type.context.empty()) return false;
  }
  return true;
}

}  // namespace

bool fusion_pass(FunctionGraph& fg, const Target& target) {
  const std::vector<graph::ApplyPtr> snapshot = fg.nodes();
  std::unordered_map<const Apply*, size_t> topo;
  for (size_t i = 0; i < snapshot.size(); ++i) topo[snapshot[i].get()] = i;
  std::unordered_set<const Apply*> assigned;
  bool changed = false;
  // A region stays in one context (placement runs each node where graph::infer_context says).
  const auto contexts = graph::infer_contexts(fg);

  for (size_t r = snapshot.size(); r-- > 0;) {
    Apply* root = snapshot[r].get();
    if (assigned.count(root) || !as_elemwise(root)) continue;
    std::unordered_set<const Apply*> region{root};
    std::vector<Apply*> members{root};
    for (bool grew = true; grew;) {
      grew = false;
      for (size_t m = 0; m < members.size(); ++m) {
        for (auto& in : members[m]->inputs()) {
          Apply* p = in->owner;
          if (!p || region.count(p) || assigned.count(p) || !as_elemwise(p) || !topo.count(p)) continue;
          if (contexts.at(p).name != contexts.at(root).name) continue;
          region.insert(p);
          if (used_outside(fg, p, region) && !convex(fg, region)) {
            region.erase(p);
            continue;
          }
          members.push_back(p);
          grew = true;
        }
      }
    }
    for (const Apply* m : members) assigned.insert(m);
    if (members.size() < 2) continue;
    std::sort(members.begin(), members.end(), [&](const Apply* a, const Apply* b) { return topo[a] < topo[b]; });

    // The program: region inputs (deduplicated) first, then one instruction per member.
    std::vector<graph::VarPtr> inputs;
    std::vector<DType> input_dtypes;
    std::unordered_map<const graph::Variable*, int> value;
    for (Apply* m : members)
      for (auto& in : m->inputs())
        if ((!in->owner || !region.count(in->owner)) && !value.count(in.get())) {
          value[in.get()] = static_cast<int>(inputs.size());
          inputs.push_back(in);
          input_dtypes.push_back(in->type.dtype);
        }
    std::vector<ops::CompositeInstr> program;
    for (Apply* m : members) {
      const ops::Elemwise* e = as_elemwise(m);
      ops::CompositeInstr instr{e->scalar(), m->output_raw(0)->type.dtype, {}};
      for (auto& in : m->inputs()) instr.args.push_back(value.at(in.get()));
      value[m->output_raw(0)] = static_cast<int>(inputs.size() + program.size());
      program.push_back(std::move(instr));
    }
    std::vector<int> outputs;
    std::vector<graph::VarPtr> old_outputs;
    std::vector<graph::TensorType> types;
    for (Apply* m : members)
      if (used_outside(fg, m, region)) {
        outputs.push_back(value.at(m->output_raw(0)));
        old_outputs.push_back(m->output(0));
        types.push_back(m->output_raw(0)->type);
      }
    auto op = std::make_shared<ops::Composite>(std::move(input_dtypes), std::move(program), std::move(outputs));
    graph::ApplyPtr node = Apply::make(op, std::move(inputs), std::move(types));
    std::vector<std::pair<graph::VarPtr, graph::VarPtr>> pairs;
    for (size_t i = 0; i < old_outputs.size(); ++i) pairs.push_back({old_outputs[i], node->output(static_cast<int>(i))});
    fg.replace_all(pairs, "fusion");
    changed = true;
  }

  if (!cpu_only(fg, target)) return changed;
  for (const graph::ApplyPtr& node : std::vector<graph::ApplyPtr>(fg.nodes())) {
    const auto* red = ops::is_reduce(node->op().kind()) ? static_cast<const ops::Reduce*>(&node->op()) : nullptr;
    if (!red || red->reduce_kind() == ops::ReduceKind::Count || node->inputs().size() != 1) continue;
    const graph::Variable* x = node->inputs()[0].get();
    Apply* p = x->owner;
    if (!p || p->num_outputs() != 1 || is_graph_output(fg, x) || fg.clients(x).size() != 1) continue;
    std::shared_ptr<const ops::Composite> region;
    std::vector<graph::VarPtr> inputs;
    if (auto c = std::dynamic_pointer_cast<const ops::Composite>(p->op_ptr())) {
      const auto& deps = c->output_deps()[0];
      // One output over the whole region (its shape is the broadcast of every input), not
      // an inplace variant (the inplace pass runs later; this is a guard).
      if (c->outputs().size() != 1 || c->inplace() >= 0 || std::find(deps.begin(), deps.end(), false) != deps.end())
        continue;
      region = c;
      inputs = p->inputs();
    } else if (const ops::Elemwise* e = as_elemwise(p)) {
      std::vector<DType> dtypes;
      ops::CompositeInstr instr{e->scalar(), x->type.dtype, {}};
      for (auto& in : p->inputs()) {
        auto it = std::find(inputs.begin(), inputs.end(), in);
        if (it == inputs.end()) {
          inputs.push_back(in);
          dtypes.push_back(in->type.dtype);
          it = inputs.end() - 1;
        }
        instr.args.push_back(static_cast<int>(it - inputs.begin()));
      }
      const int out = static_cast<int>(inputs.size());
      region = std::make_shared<ops::Composite>(std::move(dtypes), std::vector<ops::CompositeInstr>{std::move(instr)},
                                                std::vector<int>{out});
    } else {
      continue;
    }
    const graph::TensorType type = node->output_raw(0)->type;
    auto op = std::make_shared<ops::FusedReduce>(region, red->reduce_kind(), red->axes(), type.dtype);
    graph::ApplyPtr fused = Apply::make(op, std::move(inputs), {type});
    fg.replace_all({{node->output(0), fused->output(0)}}, "fusion");
    changed = true;
  }
  return changed;
}

}  // namespace theon::rewrite
