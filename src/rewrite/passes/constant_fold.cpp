// constant_fold: evaluates pure nodes whose inputs are all constants (outputs up to
// kMaxFoldedElements elements each) and replaces their outputs by constants of the exact
// static type. A node whose evaluation raises is left for run time.
//
// Runs after merge (each constant subexpression is folded once) and before canonicalize
// (folded constants expose x * 1, x + 0, ...); passes after it may build new constant
// subexpressions that stay unfolded. Kernels run with the options function() froze
// (Target::kernel_options), never config().
#include "backends/backend.hpp"
#include "backends/cpu/thread_budget.hpp"
#include "graph/op.hpp"
#include "rewrite/passes/passes.hpp"

#include <theon/error.hpp>

namespace theon::rewrite {

namespace {
// Folding trades compile time and constant memory for run time; beyond this many elements
// per output the graph keeps the node (e.g. a huge alloc of a constant).
constexpr int64_t kMaxFoldedElements = 1 << 16;
}  // namespace

bool constant_fold_pass(graph::FunctionGraph& fgraph, const Target& target) {
  std::vector<std::pair<graph::VarPtr, graph::VarPtr>> replacements;
  std::unordered_map<const graph::Variable*, graph::VarPtr> folded;
  for (auto& node : fgraph.nodes()) {
    if (!node->op().pure()) continue;
    std::vector<Array> inputs;
    bool all_constant = true;
    for (auto& in : node->inputs()) {
      const graph::Variable* v = in.get();
      if (auto f = folded.find(v); f != folded.end()) v = f->second.get();
      if (v->kind != graph::VarKind::Constant) {
        all_constant = false;
        break;
      }
      inputs.push_back(v->constant);
    }
    if (!all_constant) continue;
    std::vector<Array> outputs;
    try {
      std::vector<Shape> shapes = node->op().infer_shape(*node, inputs);
      bool small = true;
      for (auto& s : shapes) small = small && shape_size(s) <= kMaxFoldedElements;
      if (!small) continue;
      auto views = node->op().view_map();
      outputs.resize(shapes.size());
      for (size_t i = 0; i < shapes.size(); ++i)
        if (!views.count(static_cast<int>(i))) outputs[i] = Array::empty(shapes[i], node->output_raw(static_cast<int>(i))->type.dtype);
      // The CPU backend's kernel, as the node would run at run time.
      const backends::Backend& cpu = backends::cpu_backend();
      if (!cpu.supports(*node).ok) continue;
      const backends::Kernel& kernel = cpu.kernel(*node);
      backends::PrepareInfo info{target.kernel_options, Device::cpu(), inputs,
                                 std::vector<bool>(inputs.size(), true)};
      const std::shared_ptr<backends::KernelPlan> plan = kernel.prepare(*node, info);
      const backends::cpu::LoopBudgetScope budget({target.kernel_options.openmp_elemwise_minsize, 0});
      kernel.run(plan.get(), *node, inputs, outputs);
    } catch (const Error&) {
      continue;  // leave it to run time, where the error names the call
    }
    for (int i = 0; i < node->num_outputs(); ++i) {
      graph::VarPtr c = graph::Variable::make_constant(outputs[i].copy(), false, node->output_raw(i)->name);
      c->type = node->output_raw(i)->type;  // keep the static type exactly
      folded[node->output_raw(i)] = c;
      replacements.push_back({node->output(i), c});
    }
  }
  if (replacements.empty()) return false;
  fgraph.replace_all(replacements, "constant_fold");
  return true;
}

}  // namespace theon::rewrite
