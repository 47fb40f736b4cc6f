// The list of user-facing ops (ops.def), for the test harness and generated docs.
#pragma once
#include <string>
#include <vector>

namespace theon::ops {

struct OpEntry {
  std::string name;    // the tensor:: builder's name ("add", "sum", "dot")
  std::string family;  // the Op class that implements it ("Elemwise", "Reduce")
};

const std::vector<OpEntry>& registered_ops();

}  // namespace theon::ops
