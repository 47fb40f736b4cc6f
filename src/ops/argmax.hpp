// ArgMax: the index of the maximum (or minimum) along one axis or over the flattened
// tensor, as numpy.argmax/argmin: int64 result, first occurrence on ties, NaN counts as the
// extreme (the first NaN wins). keepdims is a DimShuffle after the op, as for Reduce.
#pragma once
#include "graph/op.hpp"

#include <functional>
#include <optional>

namespace theon::ops {

class ArgMax final : public graph::Op {
 public:
  /// `axis` non-negative, or std::nullopt for the flattened tensor.
  ArgMax(bool is_max, std::optional<int> axis) : is_max_(is_max), axis_(axis) {}
  bool is_max() const { return is_max_; }
  std::optional<int> axis() const { return axis_; }

  static constexpr graph::OpKind kKind = graph::OpKind::ArgMax;

  graph::OpKind kind() const override { return kKind; }
  graph::OpProps props() const override;
  std::vector<Shape> infer_shape(const graph::Apply& node, const std::vector<Array>& inputs) const override;
  graph::Cost cost(const graph::Apply& node, const std::vector<Shape>& input_shapes) const override;
  /// An integer output: no gradient flows to the input (nullptr).
  std::vector<graph::VarPtr> L_op(const graph::Apply& node, const std::vector<graph::VarPtr>& output_grads) const override;

 private:
  bool is_max_;
  std::optional<int> axis_;
};

/// argmax(x, axis, keepdims) (is_max) or argmin. Throws ShapeError for a bad axis and
/// ValueError when the reduced axis is statically empty.
graph::VarPtr argmax(const graph::VarPtr& x, std::optional<int> axis, bool keepdims, bool is_max);

}  // namespace theon::ops
