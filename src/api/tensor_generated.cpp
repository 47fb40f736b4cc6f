// tensor:: builders generated from the THEON_OP rows of theon/ops.def whose signature is not
// Custom. Each row declares the ops-layer builder its family file defines and wraps it; a
// family file whose builder has another signature fails to link, naming it.
#include <theon/error.hpp>
#include <theon/tensor.hpp>

#include "api/need_var.hpp"

#include "graph/node.hpp"

#include <optional>
#include <utility>
#include <vector>

namespace theon::ops {
#define THEON_OP(name, family, signature) THEON_OPS_BUILDER_##signature(name)
#define THEON_OPS_BUILDER_Custom(name)
#define THEON_OPS_BUILDER_AxisScan(name) graph::VarPtr name(const graph::VarPtr& x, std::optional<int> axis);
#define THEON_OPS_BUILDER_ArgReduce(name) \
  graph::VarPtr name(const graph::VarPtr& x, std::optional<int> axis, bool keepdims);
#define THEON_OPS_BUILDER_Reduce(name) \
  graph::VarPtr name(const graph::VarPtr& x, std::optional<std::vector<int>> axes, bool keepdims);
#include <theon/ops.def>
#undef THEON_OPS_BUILDER_Custom
#undef THEON_OPS_BUILDER_AxisScan
#undef THEON_OPS_BUILDER_Reduce
#undef THEON_OPS_BUILDER_ArgReduce
#undef THEON_OP
}  // namespace theon::ops

namespace theon::tensor {
using detail::need;

#define THEON_OP(name, family, signature) THEON_API_BUILDER_##signature(name)
#define THEON_API_BUILDER_Custom(name)
#define THEON_API_BUILDER_AxisScan(name) \
  Var name(const Var& x, std::optional<int> axis) { return Var(ops::name(need(x, #name), axis)); }
#define THEON_API_BUILDER_ArgReduce(name)                                                  \
  Var name(const Var& x, std::optional<int> axis, bool keepdims) {                          \
    return Var(ops::name(need(x, #name), axis, keepdims));                                  \
  }
#define THEON_API_BUILDER_Reduce(name)                          \
  Var name(const Var& x, Axes axis, bool keepdims) {            \
    return Var(ops::name(need(x, #name), std::move(axis), keepdims)); \
  }
#include <theon/ops.def>
#undef THEON_API_BUILDER_Custom
#undef THEON_API_BUILDER_AxisScan
#undef THEON_API_BUILDER_Reduce
#undef THEON_API_BUILDER_ArgReduce
#undef THEON_OP

}  // namespace theon::tensor
