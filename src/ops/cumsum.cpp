#include "ops/cumsum.hpp"
#include "ops/make_op.hpp"

#include "ops/elemwise.hpp"
#include "ops/reduce.hpp"
#include "ops/shape.hpp"

#include <theon/error.hpp>

namespace theon::ops {

using graph::Apply;
using graph::VarPtr;

DType cumsum_dtype(DType in) { return is_float(in) ? in : DType::Int64; }

graph::OpProps CumSum::props() const {
  return {{"axis", std::to_string(axis_)}, {"reverse", reverse_ ? "True" : "False"}};
}

std::string CumSum::render(const std::vector<std::string>& inputs, int output) const {
  if (output != 0 || inputs.size() != 1) return Op::render(inputs, output);
  return std::string(reverse_ ? "reverse_cumsum(" : "cumsum(") + inputs[0] + ", axis=" + std::to_string(axis_) + ")";
}

VarPtr cumsum(const VarPtr& x_in, std::optional<int> axis_in) {
  const std::string what = "cumsum(" + x_in->label() + ")";
  require_supported(x_in->type.dtype, what);
  VarPtr x = x_in;
  int axis = 0;
  if (axis_in) axis = normalize_axes(what, x, {*axis_in})[0];
  else if (x->type.ndim() != 1) x = flatten(x, 1);
  graph::TensorType t = x->type;
  t.dtype = cumsum_dtype(x->type.dtype);
  return graph::make_output(std::make_shared<CumSum>(axis, /*reverse=*/false), {x}, t);
}

std::vector<Shape> CumSum::infer_shape(const Apply&, const std::vector<Array>& inputs) const {
  return {inputs[0].shape()};
}

graph::Cost CumSum::cost(const Apply& node, const std::vector<Shape>& input_shapes) const {
  graph::Cost c = Op::cost(node, input_shapes);
  c.flops = static_cast<double>(shape_size(input_shapes[0]));
  return c;
}

std::vector<VarPtr> CumSum::L_op(const Apply& node, const std::vector<VarPtr>& output_grads) const {
  const VarPtr& g = output_grads[0];
  if (!g) return {nullptr};
  graph::TensorType t = g->type;
  t.dtype = cumsum_dtype(g->type.dtype);
  VarPtr back = graph::make_output(std::make_shared<CumSum>(axis_, !reverse_), {g}, t);
  const DType x_dtype = node.input(0)->type.dtype;
  return {back->type.dtype == x_dtype ? back : cast(back, x_dtype)};
}

}  // namespace theon::ops

namespace theon::ops {

template <>
std::shared_ptr<const graph::Op> op_from_props<graph::OpKind::CumSum>(PropReader& p) {
  const int axis = static_cast<int>(p.integer("axis"));
  return std::make_shared<const CumSum>(axis, p.flag("reverse"));
}

}  // namespace theon::ops
