#include "compile/memory_plan.hpp"

#include <theon/error.hpp>

#include <algorithm>

namespace theon::compile {

void plan_memory(Program& prog) {
  std::vector<int> last(prog.num_slots, -1);
  for (size_t i = 0; i < prog.thunks.size(); ++i) {
    for (int s : prog.thunks[i].inputs) last[s] = static_cast<int>(i);
    for (int s : prog.thunks[i].outputs)
      if (last[s] < 0) last[s] = static_cast<int>(i);  // unused outputs die where they are made
  }
  std::vector<bool> keep(prog.num_slots, false);
  // A value read in another context than its writer's lives to the end of the call: its
  // readers run on other workers or streams, in no order with the writer's context after the
  // crossing, and each context recycles only its own buffers (its pool).
  std::vector<int> written_in(prog.num_slots, -1);
  for (auto& t : prog.thunks)
    for (int s : t.outputs) written_in[s] = t.context_index;
  for (auto& t : prog.thunks)
    for (int s : t.inputs) keep[s] = keep[s] || (written_in[s] >= 0 && written_in[s] != t.context_index);
  for (int s : prog.output_slots) keep[s] = true;
  for (int s : prog.input_slots) keep[s] = true;
  for (auto& [s, v] : prog.leaves) keep[s] = true;
  for (int s = 0; s < prog.num_slots; ++s)
    if (!keep[s] && last[s] >= 0) prog.thunks[last[s]].release.push_back(s);
}

void plan_inplace(Program& prog) {
  // The input's slot must die at this thunk (so it is not a graph input, output, constant or
  // shared variable, and no later thunk reads it): plan_memory released it here.
  for (auto& t : prog.thunks) {
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
    prog.num_inplace += any;
  }
}

}  // namespace theon::compile
