// SumTo: sums a gradient back to the run-time shape of the variable it belongs to (the
// dims where that variable had size 1 and was broadcast). Gradients of broadcasting ops
// end in a SumTo, so a dim that broadcast at run time without the type knowing it
// statically is still summed correctly (DESIGN.md).
#pragma once
#include "graph/op.hpp"

namespace theon::ops {

class SumTo final : public graph::Op {
 public:
  static constexpr graph::OpKind kKind = graph::OpKind::SumTo;
  graph::OpKind kind() const override { return kKind; }
  std::vector<Shape> infer_shape(const graph::Apply& node, const std::vector<Array>& inputs) const override;
  std::vector<graph::VarPtr> L_op(const graph::Apply& node, const std::vector<graph::VarPtr>& output_grads) const override;
  /// A gradient that already has `like`'s shape is the output itself: no copy, no kernel.
  std::map<int, int> pass_through_map() const override { return {{0, 0}}; }
};

/// `g` summed to the run-time shape of `like` (same rank). A no-op when `g` is already
/// known to have `like`'s static shape or `like` has no dim that can broadcast.
graph::VarPtr sum_to(const graph::VarPtr& g, const graph::VarPtr& like);

/// `v` broadcast to the run-time shape of `like` (same rank, v's dims 1 or equal), in v's
/// dtype. An elementwise op (switch on a true literal), so fusion absorbs it.
graph::VarPtr broadcast_like(const graph::VarPtr& v, const graph::VarPtr& like);

}  // namespace theon::ops
