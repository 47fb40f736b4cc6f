// ScalarOpId: the scalar ops of theon/scalar_ops.def as an enum, with their names, arities and kinds.
#pragma once
#include <cstdint>
#include <string_view>

namespace theon::ops {

enum class ScalarKind : uint8_t { Arith, FloatFn, Compare, Logic, Select, Cast };

enum class ScalarOpId : uint8_t {
#define THEON_SCALAR_OP(functor, name, arity, kind) functor,
#include <theon/scalar_ops.def>
#undef THEON_SCALAR_OP
  Count
};

struct ScalarOpInfo {
  std::string_view name;
  int arity;
  ScalarKind kind;
  std::string_view functor;  // its functor in scalar_ops.hpp ("Add"): what generated kernels call
};

const ScalarOpInfo& scalar_op_info(ScalarOpId id);
/// Looks a scalar op up by name ("add"); throws ValueError when unknown.
ScalarOpId scalar_op_by_name(std::string_view name);

}  // namespace theon::ops
