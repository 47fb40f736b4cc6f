#include "ops/cumulative.hpp"
#include "ops/make_op.hpp"

#include "ops/elemwise.hpp"
#include "ops/shape.hpp"

#include <theon/error.hpp>

namespace theon::ops {

using graph::Apply;
using graph::OpKind;
using graph::VarPtr;

namespace {

const char* word(OpKind kind) { return kind == OpKind::CumSum ? "cumsum" : "cumprod"; }

VarPtr scan(OpKind kind, const VarPtr& x, int axis, bool reverse) {
  graph::TensorType t = x->type;
  t.dtype = cumulative_dtype(x->type.dtype);
  return graph::make_output(std::make_shared<Cumulative>(kind, axis, reverse), {x}, t);
}

VarPtr cumulative(OpKind kind, const VarPtr& x_in, std::optional<int> axis_in) {
  const std::string what = std::string(word(kind)) + "(" + x_in->label() + ")";
  require_supported(x_in->type.dtype, what);
  VarPtr x = x_in;
  int axis = 0;
  if (axis_in) axis = normalize_axes(what, x, {*axis_in})[0];
  else if (x->type.ndim() != 1) x = flatten(x, 1);
  return scan(kind, x, axis, /*reverse=*/false);
}

}  // namespace

const Cumulative* Cumulative::of(const graph::Op& op) {
  const OpKind k = op.kind();
  return k == OpKind::CumSum || k == OpKind::CumProd ? static_cast<const Cumulative*>(&op) : nullptr;
}

DType cumulative_dtype(DType in) { return is_float(in) ? in : DType::Int64; }

graph::OpProps Cumulative::props() const {
  return {{"axis", std::to_string(axis_)}, {"reverse", reverse_ ? "True" : "False"}};
}

std::string Cumulative::render(const std::vector<std::string>& inputs, int output) const {
  if (output != 0 || inputs.size() != 1) return Op::render(inputs, output);
  return std::string(reverse_ ? "reverse_" : "") + word(kind_) + "(" + inputs[0] + ", axis=" + std::to_string(axis_) +
         ")";
}

VarPtr cumsum(const VarPtr& x, std::optional<int> axis) { return cumulative(OpKind::CumSum, x, axis); }
VarPtr cumprod(const VarPtr& x, std::optional<int> axis) { return cumulative(OpKind::CumProd, x, axis); }

std::vector<Shape> Cumulative::infer_shape(const Apply&, const std::vector<Array>& inputs) const {
  return {inputs[0].shape()};
}

graph::Cost Cumulative::cost(const Apply& node, const std::vector<Shape>& input_shapes) const {
  graph::Cost c = Op::cost(node, input_shapes);
  c.flops = static_cast<double>(shape_size(input_shapes[0]));
  return c;
}

std::vector<VarPtr> Cumulative::L_op(const Apply& node, const std::vector<VarPtr>& output_grads) const {
  const VarPtr& g = output_grads[0];
  if (!g) return {nullptr};
  const VarPtr& x = node.input(0);
  VarPtr back = kind_ == OpKind::CumSum
                    ? scan(OpKind::CumSum, g, axis_, !reverse_)
                    : elemwise(ScalarOpId::TrueDiv,
                               {scan(OpKind::CumSum, elemwise(ScalarOpId::Mul, {g, const_cast<Apply&>(node).output(0)}),
                                     axis_, !reverse_),
                                x});
  return {back->type.dtype == x->type.dtype ? back : cast(back, x->type.dtype)};
}

template <>
std::shared_ptr<const graph::Op> op_from_props<OpKind::CumSum>(PropReader& p) {
  const int axis = static_cast<int>(p.integer("axis"));
  return std::make_shared<const Cumulative>(OpKind::CumSum, axis, p.flag("reverse"));
}
template <>
std::shared_ptr<const graph::Op> op_from_props<OpKind::CumProd>(PropReader& p) {
  const int axis = static_cast<int>(p.integer("axis"));
  return std::make_shared<const Cumulative>(OpKind::CumProd, axis, p.flag("reverse"));
}

}  // namespace theon::ops
