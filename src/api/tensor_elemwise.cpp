// tensor:: elementwise builders.
#include <theon/error.hpp>
#include <theon/tensor.hpp>

#include "ops/elemwise.hpp"

namespace theon::tensor {

using ops::ScalarOpId;

namespace {
graph::VarPtr need(const Var& v, const char* op) {
  if (!v.defined()) throw ValueError(std::string(op) + ": use of an undefined Var");
  return v.node();
}
Var ew(ScalarOpId id, std::initializer_list<Var> args) {
  std::vector<graph::VarPtr> ins;
  for (auto& a : args) ins.push_back(need(a, ops::scalar_op_info(id).name.data()));
  return Var(ops::elemwise(id, std::move(ins)));
}
}  // namespace

#define THEON_UNARY(fn, id) \
  Var fn(const Var& a) { return ew(ScalarOpId::id, {a}); }
#define THEON_BINARY(fn, id) \
  Var fn(const Var& a, const Var& b) { return ew(ScalarOpId::id, {a, b}); }
THEON_BINARY(add, Add)
THEON_BINARY(sub, Sub)
THEON_BINARY(mul, Mul)
THEON_BINARY(true_div, TrueDiv)
THEON_BINARY(floor_div, FloorDiv)
THEON_BINARY(mod, Mod)
THEON_BINARY(pow, Pow)
THEON_UNARY(neg, Neg)
THEON_UNARY(abs, Abs)
THEON_UNARY(sign, Sign)
THEON_UNARY(sqr, Sqr)
THEON_BINARY(lt, Lt)
THEON_BINARY(gt, Gt)
THEON_BINARY(le, Le)
THEON_BINARY(ge, Ge)
THEON_BINARY(eq, Eq)
THEON_BINARY(neq, Neq)
THEON_BINARY(and_, And)
THEON_BINARY(or_, Or)
THEON_BINARY(xor_, Xor)
THEON_UNARY(invert, Not)
THEON_UNARY(exp, Exp)
THEON_UNARY(log, Log)
THEON_UNARY(log1p, Log1p)
THEON_UNARY(expm1, Expm1)
THEON_UNARY(sqrt, Sqrt)
THEON_UNARY(tanh, Tanh)
THEON_UNARY(sigmoid, Sigmoid)
THEON_UNARY(softplus, Softplus)
THEON_UNARY(sin, Sin)
THEON_UNARY(cos, Cos)
THEON_UNARY(relu, Relu)
THEON_BINARY(maximum, Maximum)
THEON_BINARY(minimum, Minimum)
#undef THEON_UNARY
#undef THEON_BINARY

Var clip(const Var& x, const Var& lo, const Var& hi) { return ew(ScalarOpId::Clip, {x, lo, hi}); }
Var switch_(const Var& cond, const Var& a, const Var& b) { return ew(ScalarOpId::Switch, {cond, a, b}); }
Var where(const Var& cond, const Var& a, const Var& b) { return switch_(cond, a, b); }
Var cast(const Var& x, DType dtype) { return Var(ops::cast(need(x, "cast"), dtype)); }

}  // namespace theon::tensor
