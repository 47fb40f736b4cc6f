#include "ops/transfer.hpp"
#include "ops/make_op.hpp"

#include <theon/error.hpp>

namespace theon::ops {

std::vector<Shape> Transfer::infer_shape(const graph::Apply&, const std::vector<Array>& inputs) const {
  return {inputs[0].shape()};
}

std::vector<graph::VarPtr> Transfer::L_op(const graph::Apply& node, const std::vector<graph::VarPtr>& output_grads) const {
  const graph::VarPtr& g = output_grads[0];
  if (!g) return {nullptr};
  const std::string& home = node.input(0)->type.context;
  if (home.empty() || home == g->type.context) return {g};
  return {transfer(g, home)};
}

graph::Cost Transfer::cost(const graph::Apply& node, const std::vector<Shape>& input_shapes) const {
  const double bytes = static_cast<double>(shape_size(input_shapes[0])) * itemsize(node.input(0)->type.dtype);
  return {0, bytes, 1};
}

graph::VarPtr transfer(const graph::VarPtr& x, const std::string& context) {
  if (context.empty()) throw ValueError("transfer of " + x->label() + ": the target context's name is empty");
  graph::TensorType type = x->type;
  type.context = context;
  return graph::make_output(std::make_shared<Transfer>(context), {x}, type);
}

graph::VarPtr transfer(const graph::VarPtr& x, Device device) { return transfer(x, device.str()); }

template <>
std::shared_ptr<const graph::Op> op_from_props<graph::OpKind::Transfer>(PropReader& p) {
  const std::string to = p.text("to");
  if (to.empty()) throw ValueError("make_op(Transfer): prop 'to' (the target context's name) is empty");
  return p.done(std::make_shared<const Transfer>(to));
}

}  // namespace theon::ops
