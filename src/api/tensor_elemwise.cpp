// tensor:: elementwise builders.
#include <theon/error.hpp>
#include <theon/tensor.hpp>

#include "api/need_var.hpp"

#include "ops/elemwise.hpp"

namespace theon::tensor {

using ops::ScalarOpId;
using detail::need;

namespace {
Var ew(ScalarOpId id, std::initializer_list<Var> args) {
  std::vector<graph::VarPtr> ins;
  for (auto& a : args) ins.push_back(need(a, ops::scalar_op_info(id).name.data()));
  return Var(ops::elemwise(id, std::move(ins)));
}
}  // namespace

// One definition per THEON_SCALAR_BUILDER row of theon/scalar_ops.def.
#define THEON_SCALAR_BUILDER(builder, functor, arity) THEON_DEFINE_ELEMWISE_##arity(builder, functor)
#define THEON_DEFINE_ELEMWISE_1(fn, id) \
  Var fn(const Var& a) { return ew(ScalarOpId::id, {a}); }
#define THEON_DEFINE_ELEMWISE_2(fn, id) \
  Var fn(const Var& a, const Var& b) { return ew(ScalarOpId::id, {a, b}); }
#define THEON_DEFINE_ELEMWISE_3(fn, id) \
  Var fn(const Var& a, const Var& b, const Var& c) { return ew(ScalarOpId::id, {a, b, c}); }
#include <theon/scalar_ops.def>
#undef THEON_DEFINE_ELEMWISE_1
#undef THEON_DEFINE_ELEMWISE_2
#undef THEON_DEFINE_ELEMWISE_3
#undef THEON_SCALAR_BUILDER

Var where(const Var& cond, const Var& a, const Var& b) { return switch_(cond, a, b); }
Var cast(const Var& x, DType dtype) { return Var(ops::cast(need(x, "cast"), dtype)); }

}  // namespace theon::tensor
