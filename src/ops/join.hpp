// Join: concatenate along an existing axis, or (stack) along a new one. Inputs share one
// dtype (the builder promotes them NEP 50-style with casts) and one rank.
#pragma once
#include "graph/op.hpp"

#include <vector>

namespace theon::ops {

class Join final : public graph::Op {
 public:
  /// `axis` is non-negative: an input axis (concatenate) or the new output axis (stack).
  Join(int axis, bool stack) : axis_(axis), stack_(stack) {}
  int axis() const { return axis_; }
  bool stack() const { return stack_; }
  static constexpr graph::OpKind kKind = graph::OpKind::Join;
  graph::OpKind kind() const override { return kKind; }
  graph::OpProps props() const override;
  std::vector<Shape> infer_shape(const graph::Apply& node, const std::vector<Array>& inputs) const override;
  std::vector<graph::VarPtr> L_op(const graph::Apply& node, const std::vector<graph::VarPtr>& output_grads) const override;
  graph::Cost cost(const graph::Apply& node, const std::vector<Shape>& input_shapes) const override;

 private:
  int axis_;
  bool stack_;
};

/// numpy.concatenate: inputs of one rank (>= 1), equal but for `axis`.
graph::VarPtr concatenate(const std::vector<graph::VarPtr>& xs, int axis);
/// numpy.stack: inputs of one shape, joined along a new `axis` (in [-(ndim+1), ndim]).
graph::VarPtr stack(const std::vector<graph::VarPtr>& xs, int axis);

}  // namespace theon::ops
