#include "compile/program.hpp"

#include <theon/error.hpp>

#include <algorithm>
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

  // Destroy check: an output may overwrite an input only where the op says so (destroy_map),
  // the output is not a view, and the input's slot dies at this thunk (so it is not a graph
  // input, output, constant or shared variable, and no later thunk reads it).
  for (auto& t : prog->thunks) {
    t.destroy.assign(t.outputs.size(), -1);
    bool any = false;
    for (auto [o, i] : t.node->op().destroy_map()) {
      if (o < 0 || o >= static_cast<int>(t.outputs.size()) || i < 0 || i >= static_cast<int>(t.inputs.size()))
        throw InternalError(t.node->describe() + ": destroy_map refers to a missing input or output");
      if (t.output_is_view[o]) continue;
      const int s = t.inputs[i];
      if (std::find(t.release.begin(), t.release.end(), s) == t.release.end()) continue;
      t.destroy[o] = i;
      any = true;
    }
    prog->num_inplace += any;
  }
  return prog;
}

}  // namespace theon::compile
