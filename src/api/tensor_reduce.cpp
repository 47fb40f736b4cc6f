// tensor:: reductions.
#include <theon/error.hpp>
#include <theon/tensor.hpp>

#include "ops/reduce.hpp"

namespace theon::tensor {

namespace {
Var red(ops::ReduceKind kind, const Var& x, Axes axis, bool keepdims) {
  if (!x.defined()) throw ValueError(std::string(ops::reduce_kind_name(kind)) + ": use of an undefined Var");
  return Var(ops::reduce(kind, x.node(), std::move(axis), keepdims));
}
}  // namespace

Var sum(const Var& x, Axes axis, bool keepdims) { return red(ops::ReduceKind::Sum, x, std::move(axis), keepdims); }
Var mean(const Var& x, Axes axis, bool keepdims) { return red(ops::ReduceKind::Mean, x, std::move(axis), keepdims); }
Var prod(const Var& x, Axes axis, bool keepdims) { return red(ops::ReduceKind::Prod, x, std::move(axis), keepdims); }
Var max(const Var& x, Axes axis, bool keepdims) { return red(ops::ReduceKind::Max, x, std::move(axis), keepdims); }
Var min(const Var& x, Axes axis, bool keepdims) { return red(ops::ReduceKind::Min, x, std::move(axis), keepdims); }
Var any(const Var& x, Axes axis, bool keepdims) { return red(ops::ReduceKind::Any, x, std::move(axis), keepdims); }
Var all(const Var& x, Axes axis, bool keepdims) { return red(ops::ReduceKind::All, x, std::move(axis), keepdims); }

}  // namespace theon::tensor
