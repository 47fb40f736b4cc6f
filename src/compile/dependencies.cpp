#include "compile/dependencies.hpp"

#include <algorithm>

namespace theon::compile {

void plan_dependencies(Program& prog) {
  std::vector<int> producer(prog.num_slots, -1);
  for (size_t k = 0; k < prog.thunks.size(); ++k)
    for (int s : prog.thunks[k].outputs) producer[s] = static_cast<int>(k);
  for (size_t k = 0; k < prog.thunks.size(); ++k) {
    Thunk& t = prog.thunks[k];
    t.after.clear();
    for (int s : t.inputs) {
      const int p = producer[s];
      // Within one context a GPU copy stream and compute stream are ordered by events too.
      if (p < 0 || (prog.thunks[p].context_index == t.context_index &&
                    prog.thunks[p].on_copy_stream == t.on_copy_stream))
        continue;
      if (std::find(t.after.begin(), t.after.end(), p) != t.after.end()) continue;
      t.after.push_back(p);
      prog.thunks[p].signals = true;
    }
  }
}

}  // namespace theon::compile
