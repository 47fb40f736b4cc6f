// Transfer: copies its input to another device (host <-> GPU, GPU <-> GPU). Placement
// inserts one wherever a node reads a value that lives elsewhere, so every byte that
// crosses a bus is a node explain() and the profiler can show. Internal (not in ops.def);
// never merged or folded (pure() is false).
#pragma once
#include "graph/op.hpp"

#include <theon/device.hpp>

namespace theon::ops {

class Transfer final : public graph::Op {
 public:
  explicit Transfer(Device target) : target_(target) {}
  Device target() const { return target_; }
  static constexpr graph::OpKind kKind = graph::OpKind::Transfer;
  graph::OpKind kind() const override { return kKind; }
  graph::OpProps props() const override { return {{"to", target_.str()}}; }
  std::string display() const override { return "Transfer{to=" + target_.str() + "}"; }
  bool pure() const override { return false; }
  /// Placement inserts transfers: messages name the value moved.
  bool presents_input() const override { return true; }
  std::vector<Shape> infer_shape(const graph::Apply& node, const std::vector<Array>& inputs) const override;
  /// The output arrives allocated on the target device; this copies into it.
  std::vector<graph::VarPtr> L_op(const graph::Apply& node, const std::vector<graph::VarPtr>& output_grads) const override;
  graph::Cost cost(const graph::Apply& node, const std::vector<Shape>& input_shapes) const override;

 private:
  Device target_;
};

/// `x` copied to `target` (same type).
graph::VarPtr transfer(const graph::VarPtr& x, Device target);

}  // namespace theon::ops
