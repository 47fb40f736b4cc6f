#include "ops/transfer.hpp"
#include "ops/make_op.hpp"

#include "util/device_ops.hpp"

namespace theon::ops {

std::vector<Shape> Transfer::infer_shape(const graph::Apply&, const std::vector<Array>& inputs) const {
  return {inputs[0].shape()};
}

std::vector<graph::VarPtr> Transfer::L_op(const graph::Apply& node, const std::vector<graph::VarPtr>& output_grads) const {
  // The gradient flows back to where the input lived (placement may move it again).
  if (!output_grads[0]) return {nullptr};
  (void)node;
  return {output_grads[0]};
}

graph::Cost Transfer::cost(const graph::Apply& node, const std::vector<Shape>& input_shapes) const {
  const double bytes = static_cast<double>(shape_size(input_shapes[0])) * itemsize(node.input(0)->type.dtype);
  return {0, bytes, 1};
}

graph::VarPtr transfer(const graph::VarPtr& x, Device target) {
  return graph::make_output(std::make_shared<Transfer>(target), {x}, x->type);
}

}  // namespace theon::ops

namespace theon::ops {

THEON_NOT_REBUILDABLE(Transfer, "a Transfer holds a device, not a prop")

}  // namespace theon::ops
