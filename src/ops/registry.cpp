#include "ops/registry.hpp"

#include "ops/scalar/scalar_op_id.hpp"

namespace theon::ops {

const std::vector<OpEntry>& registered_ops() {
  static const std::vector<OpEntry> ops = [] {
    std::vector<OpEntry> list;
#define THEON_SCALAR_BUILDER(builder, functor, arity) \
    list.push_back({std::string(scalar_op_info(ScalarOpId::functor).name), "Elemwise", #builder});
#include <theon/scalar_ops.def>
#undef THEON_SCALAR_BUILDER
#define THEON_OP(name, family, signature) list.push_back({#name, #family, #name});
#include <theon/ops.def>
#undef THEON_OP
    return list;
  }();
  return ops;
}

}  // namespace theon::ops
