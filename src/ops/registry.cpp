#include "ops/registry.hpp"

namespace theon::ops {

const std::vector<OpEntry>& registered_ops() {
  static const std::vector<OpEntry> ops = {
#define THEON_OP(name, family) {#name, #family},
#include "ops/ops.def"
#undef THEON_OP
  };
  return ops;
}

}  // namespace theon::ops
