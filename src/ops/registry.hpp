// The list of user-facing ops: the elementwise builders of theon/scalar_ops.def (under the
// scalar op's name: "and", "switch") and the THEON_OP rows of theon/ops.def. The test harness
// enumerates it; docs/OPS.md lists it.
#pragma once
#include <string>
#include <vector>

namespace theon::ops {

struct OpEntry {
  std::string name;    // the tensor:: builder's name ("add", "sum", "dot")
  std::string family;  // the Op class that implements it ("Elemwise", "Reduce")
  std::string builder;  // its tensor:: function ("and_" for the scalar op "and")
};

const std::vector<OpEntry>& registered_ops();

}  // namespace theon::ops
