// tensor:: reshape, flatten, broadcast_to, concatenate, stack, shape, size, alloc and the
// *_like constructors, plus the Var methods that forward to them.
#include <theon/error.hpp>
#include <theon/tensor.hpp>

#include "graph/node.hpp"
#include "ops/arange.hpp"
#include "ops/elemwise.hpp"
#include "ops/join.hpp"
#include "ops/shape.hpp"

namespace theon {

namespace {
const graph::VarPtr& need(const Var& v, const char* what) {
  if (!v.defined()) throw ValueError(std::string(what) + ": use of an undefined Var");
  return v.node();
}

std::vector<graph::VarPtr> nodes(const std::vector<Var>& xs, const char* what) {
  std::vector<graph::VarPtr> out;
  for (auto& x : xs) out.push_back(need(x, what));
  return out;
}
}  // namespace

Var Var::reshape(const std::vector<int64_t>& shape) const { return Var(ops::reshape(need(*this, "reshape"), shape)); }
Var Var::flatten(int ndim) const { return Var(ops::flatten(need(*this, "flatten"), ndim)); }
Var Var::shape() const { return Var(ops::shape_of(need(*this, "shape"))); }

namespace tensor {

Var reshape(const Var& x, const std::vector<int64_t>& shape) { return x.reshape(shape); }
Var reshape(const Var& x, const Var& shape) {
  return Var(ops::reshape(need(x, "reshape"), need(shape, "reshape")));
}
Var flatten(const Var& x, int ndim) { return x.flatten(ndim); }
Var broadcast_to(const Var& x, const std::vector<int64_t>& shape) {
  return Var(ops::broadcast_to(need(x, "broadcast_to"), shape));
}
Var concatenate(const std::vector<Var>& xs, int axis) {
  return Var(ops::concatenate(nodes(xs, "concatenate"), axis));
}
Var stack(const std::vector<Var>& xs, int axis) { return Var(ops::stack(nodes(xs, "stack"), axis)); }
Var shape(const Var& x) { return x.shape(); }
Var size(const Var& x) { return Var(ops::size_of(need(x, "size"))); }

Var zeros_like(const Var& x, std::optional<DType> dtype) {
  return Var(ops::fill_like(need(x, "zeros_like"), 0.0, dtype, "zeros_like"));
}
Var ones_like(const Var& x, std::optional<DType> dtype) {
  return Var(ops::fill_like(need(x, "ones_like"), 1.0, dtype, "ones_like"));
}
Var alloc(const Var& value, const std::vector<Var>& shape) {
  return Var(ops::alloc(need(value, "alloc"), nodes(shape, "alloc")));
}
Var arange(const ScalarArg& stop) { return arange(0, stop); }
Var arange(const ScalarArg& start, const ScalarArg& stop, const ScalarArg& step, std::optional<DType> dtype) {
  return Var(ops::arange(need(start, "arange"), need(stop, "arange"), need(step, "arange"), dtype));
}
Var alloc(const Var& value, const std::vector<int64_t>& shape) {
  std::vector<graph::VarPtr> sizes;
  for (int64_t n : shape) sizes.push_back(ops::constant(Array::scalar(static_cast<double>(n), DType::Int64)));
  return Var(ops::alloc(need(value, "alloc"), sizes));
}

}  // namespace tensor
}  // namespace theon
