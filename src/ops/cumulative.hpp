// Cumulative sums and products: numpy.cumsum / numpy.cumprod along one axis (the builders
// flatten first when no axis is given). Their semantics are the Sum and Prod reductions'
// (ops/scalar/reduce_ops.hpp: integers and bools widen to int64 and wrap, floats accumulate in
// double and each output is rounded once), applied as a running scan:
// out[i] = combine(... combine(init, load(x[0])) ..., load(x[i])). `reverse` scans from the
// end (out[i] = x[i] + ... + x[n-1]): the gradients need it.
#pragma once
#include "graph/op.hpp"
#include "ops/reduce.hpp"

#include <optional>

namespace theon::ops {

class Cumulative final : public graph::Op {
 public:
  /// `kind` CumSum or CumProd; `axis` non-negative (the builders normalise it).
  Cumulative(graph::OpKind kind, int axis, bool reverse) : kind_(kind), axis_(axis), reverse_(reverse) {}
  /// The op as a Cumulative when it is one (CumSum, CumProd), else nullptr.
  static const Cumulative* of(const graph::Op& op);
  int axis() const { return axis_; }
  bool reverse() const { return reverse_; }
  /// The reduction it scans with (Sum or Prod).
  ReduceKind reduce_kind() const { return kind_ == graph::OpKind::CumSum ? ReduceKind::Sum : ReduceKind::Prod; }

  graph::OpKind kind() const override { return kind_; }
  graph::OpProps props() const override;
  std::vector<Shape> infer_shape(const graph::Apply& node, const std::vector<Array>& inputs) const override;
  graph::Cost cost(const graph::Apply& node, const std::vector<Shape>& input_shapes) const override;
  /// cumsum: the opposite scan of the output gradient. cumprod: Theano's rule,
  /// opposite-cumsum(g * out) / x (undefined where x is 0, as in Theano).
  std::vector<graph::VarPtr> L_op(const graph::Apply& node, const std::vector<graph::VarPtr>& output_grads) const override;
  std::string render(const std::vector<std::string>& inputs, int output = 0) const override;

 private:
  graph::OpKind kind_;
  int axis_;
  bool reverse_;
};

/// The output dtype of a cumulative sum or product of `in` (as sum: integers and bools give int64).
DType cumulative_dtype(DType in);

/// cumsum(x, axis) / cumprod(x, axis): along `axis` (negative counts from the end), or over
/// the flattened tensor when std::nullopt. Throw ShapeError naming x for a bad axis.
graph::VarPtr cumsum(const graph::VarPtr& x, std::optional<int> axis);
graph::VarPtr cumprod(const graph::VarPtr& x, std::optional<int> axis);

}  // namespace theon::ops
