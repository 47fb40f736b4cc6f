// The last lowering steps, on the thunk list:
//   plan_memory: each thunk lists the slots whose last reader it is, so the executor
//     recycles their buffers as soon as they are dead (outputs, inputs and leaves are kept,
//     and values read in another context than the one that wrote them);
//   plan_inplace: an output may overwrite an input only where the op says so (destroy_map),
//     the output is not a view, and the input's slot dies at that thunk.
#pragma once
#include "compile/program.hpp"

namespace theon::compile {

void plan_memory(Program& program);
void plan_inplace(Program& program);

}  // namespace theon::compile
