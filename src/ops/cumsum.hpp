// CumSum: numpy.cumsum along one axis (the builder flattens first when no axis is given).
// Its semantics are the Sum reduction's (ops/scalar/reduce_ops.hpp: integers and bools widen
// to int64 and wrap, floats accumulate in double and each output is rounded once), applied
// as a running scan: out[i] = finish(combine(... combine(init, load(x[0])) ..., load(x[i]))).
// `reverse` scans from the end (out[i] = x[i] + ... + x[n-1]): the gradient of a forward
// scan, and the other way round.
#pragma once
#include "graph/op.hpp"

#include <optional>

namespace theon::ops {

class CumSum final : public graph::Op {
 public:
  /// `axis` non-negative (the builder normalises it).
  CumSum(int axis, bool reverse) : axis_(axis), reverse_(reverse) {}
  int axis() const { return axis_; }
  bool reverse() const { return reverse_; }

  static constexpr graph::OpKind kKind = graph::OpKind::CumSum;

  graph::OpKind kind() const override { return kKind; }
  graph::OpProps props() const override;
  std::vector<Shape> infer_shape(const graph::Apply& node, const std::vector<Array>& inputs) const override;
  graph::Cost cost(const graph::Apply& node, const std::vector<Shape>& input_shapes) const override;
  /// The gradient of a scan is the opposite scan of the output gradient.
  std::vector<graph::VarPtr> L_op(const graph::Apply& node, const std::vector<graph::VarPtr>& output_grads) const override;
  std::string render(const std::vector<std::string>& inputs, int output = 0) const override;

 private:
  int axis_;
  bool reverse_;
};

/// The output dtype of a cumulative sum of `in` (as sum: integers and bools give int64).
DType cumsum_dtype(DType in);

/// cumsum(x, axis): along `axis` (negative counts from the end), or over the flattened
/// tensor when std::nullopt. Throws ShapeError naming x for a bad axis.
graph::VarPtr cumsum(const graph::VarPtr& x, std::optional<int> axis);

}  // namespace theon::ops
