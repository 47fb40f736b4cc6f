#include "compile/program.hpp"

#include <theon/error.hpp>

#include <unordered_map>

namespace theon::compile {

using graph::VarKind;

std::shared_ptr<Program> lower(std::shared_ptr<graph::FunctionGraph> fgraph, const LowerOptions& options) {
  auto prog = std::make_shared<Program>();
  prog->passes = rewrite::optimize(*fgraph, options.mode, options.optimizer_including, options.optimizer_excluding);
  prog->fgraph = fgraph;

  // Placement. Until the CUDA backend exists every node runs on the CPU; function() has
  // already applied on_fallback (warned or raised) when another device was asked for.
  std::string device = "cpu", reason = "device=cpu";
  if (!options.fallback_reason.empty()) {
    reason = "fallback: " + options.fallback_reason;
    prog->fallback_notes.push_back(options.fallback_reason);
  }
  prog->device = device;

  std::unordered_map<const graph::Variable*, int> slot;
  auto slot_of = [&](const graph::VarPtr& v) {
    auto [it, inserted] = slot.try_emplace(v.get(), prog->num_slots);
    if (inserted) {
      ++prog->num_slots;
      if (v->kind == VarKind::Constant || v->kind == VarKind::Shared) prog->leaves.push_back({it->second, v});
    }
    return it->second;
  };
  for (auto& in : fgraph->inputs()) prog->input_slots.push_back(slot_of(in));

  backends::Backend& cpu = backends::cpu_backend();
  for (auto& node : fgraph->nodes()) {
    Thunk t;
    t.node = node;
    t.device = device;
    t.reason = reason;
    backends::Support s = cpu.supports(*node);
    if (!s.ok) throw InternalError(node->describe() + ": the CPU backend does not support it: " + s.reason);
    t.kernel = &cpu.kernel(*node);
    for (auto& in : node->inputs()) t.inputs.push_back(slot_of(in));
    auto views = node->op().view_map();
    for (int i = 0; i < node->num_outputs(); ++i) {
      t.outputs.push_back(slot_of(node->output(i)));
      t.output_is_view.push_back(views.count(i) > 0);
    }
    prog->thunks.push_back(std::move(t));
  }
  for (auto& out : fgraph->outputs()) prog->output_slots.push_back(slot_of(out));

  // Memory plan: a slot is dead after its last reader, unless it is an output, an input or
  // a leaf (those are never recycled by the executor).
  std::vector<int> last(prog->num_slots, -1);
  for (size_t i = 0; i < prog->thunks.size(); ++i) {
    for (int s : prog->thunks[i].inputs) last[s] = static_cast<int>(i);
    for (int s : prog->thunks[i].outputs)
      if (last[s] < 0) last[s] = static_cast<int>(i);  // unused outputs die where they are made
  }
  std::vector<bool> keep(prog->num_slots, false);
  for (int s : prog->output_slots) keep[s] = true;
  for (int s : prog->input_slots) keep[s] = true;
  for (auto& [s, v] : prog->leaves) keep[s] = true;
  for (int s = 0; s < prog->num_slots; ++s)
    if (!keep[s] && last[s] >= 0) prog->thunks[last[s]].release.push_back(s);
  return prog;
}

}  // namespace theon::compile
