// Gradients (L_op) of the neural-network ops, written with the same builders users call so
// that gradients of gradients work:
//   softmax            (gz - sum(gz * sm, axis, keepdims)) * sm
//   log_softmax        gz - exp(out) * sum(gz, axis, keepdims)
//   crossentropy       coding: CrossentropyGrad(gz, coding, labels) = -gz[i] / coding[i, t[i]]
//                      at the label, 0 elsewhere; labels: none
//   softmax + xent     SoftmaxCrossentropyGrad(gz, sm, labels) = gz[i] * (sm - one_hot(labels))
//                      when softmax's output gradient is exactly that CrossentropyGrad (the
//                      division cancels: no inf/NaN where a probability underflows to 0)
//   one_hot            none (integer input)
// plus the internal ops those gradients use: LabelGather, LabelScatter (adjoints of each
// other) and CrossentropyGrad. SoftmaxCrossentropyGrad lives in nnet_fused.cpp.
#include "ops/nnet.hpp"
#include "ops/nnet_fused.hpp"

#include "ops/elemwise.hpp"
#include "ops/reduce.hpp"
#include "util/dispatch.hpp"

#include <theon/error.hpp>

#include <algorithm>

namespace theon::ops {

using graph::Apply;
using graph::VarPtr;
using S = ScalarOpId;

namespace {

VarPtr mul(const VarPtr& a, const VarPtr& b) { return elemwise(S::Mul, {a, b}); }
VarPtr sub(const VarPtr& a, const VarPtr& b) { return elemwise(S::Sub, {a, b}); }
VarPtr div(const VarPtr& a, const VarPtr& b) { return elemwise(S::TrueDiv, {a, b}); }
VarPtr neg(const VarPtr& a) { return elemwise(S::Neg, {a}); }

std::string described(const VarPtr& v) { return v->label() + " (" + v->type.str() + ")"; }

// Build-time checks shared by the three builders: `m` a matrix, `labels` an integer
// vector, and `rows` (a vector's length or -1) agreeing with both statically.
void check_label_inputs(const std::string& what, const VarPtr& m, const VarPtr& labels, int64_t rows) {
  if (m->type.ndim() != 2) throw ShapeError(what + ": expected a matrix, got " + described(m));
  if (labels->type.ndim() != 1 || !is_integer(labels->type.dtype))
    throw TypeError(what + ": labels must be an integer vector, got " + described(labels));
  const int64_t r[3] = {m->type.dims[0], labels->type.dims[0], rows};
  for (int64_t x : r)
    for (int64_t y : r)
      if (x >= 0 && y >= 0 && x != y)
        throw ShapeError(what + ": row counts differ (" + described(m) + ", " + described(labels) + ")");
}

void check_rows(const Apply& node, const std::vector<int64_t>& rows) {
  for (int64_t r : rows)
    if (r != rows[0]) {
      std::string shapes;
      for (auto& in : node.inputs()) shapes += (shapes.empty() ? "" : ", ") + described(in);
      throw ShapeError(node.describe() + ": row counts differ at run time (" + shapes + ")");
    }
}

int64_t rows_of(const VarPtr& v) { return v->type.dims[0]; }

}  // namespace

// ---- LabelGather ----

VarPtr label_gather(const VarPtr& x, const VarPtr& labels) {
  check_label_inputs("label_gather(" + x->label() + ")", x, labels, -1);
  graph::TensorType t;
  t.dtype = x->type.dtype;
  t.dims = {rows_of(x) >= 0 ? rows_of(x) : rows_of(labels)};
  return graph::make_output(std::make_shared<LabelGather>(), {x, labels}, t);
}

std::vector<Shape> LabelGather::infer_shape(const Apply& node, const std::vector<Array>& inputs) const {
  check_rows(node, {inputs[0].shape()[0], inputs[1].shape()[0]});
  return {{inputs[0].shape()[0]}};
}

std::vector<VarPtr> LabelGather::L_op(const Apply& node, const std::vector<VarPtr>& output_grads) const {
  const VarPtr &x = node.input(0), &labels = node.input(1);
  if (!output_grads[0] || !is_float(x->type.dtype)) return {nullptr, nullptr};
  return {label_scatter(output_grads[0], x, labels), nullptr};
}

// ---- LabelScatter ----

VarPtr label_scatter(const VarPtr& v_in, const VarPtr& like, const VarPtr& labels) {
  const std::string what = "label_scatter(" + v_in->label() + ")";
  if (v_in->type.ndim() != 1) throw ShapeError(what + ": expected a vector, got " + described(v_in));
  check_label_inputs(what, like, labels, rows_of(v_in));
  const VarPtr v = cast(v_in, like->type.dtype);
  graph::TensorType t = like->type;
  if (t.dims[0] < 0) t.dims[0] = rows_of(v) >= 0 ? rows_of(v) : rows_of(labels);
  return graph::make_output(std::make_shared<LabelScatter>(), {v, like, labels}, t);
}

std::vector<Shape> LabelScatter::infer_shape(const Apply& node, const std::vector<Array>& inputs) const {
  check_rows(node, {inputs[0].shape()[0], inputs[1].shape()[0], inputs[2].shape()[0]});
  return {inputs[1].shape()};
}

std::vector<VarPtr> LabelScatter::L_op(const Apply& node, const std::vector<VarPtr>& output_grads) const {
  // `like` lends only its shape; the labels are integers.
  const VarPtr &v = node.input(0), &labels = node.input(2);
  if (!output_grads[0] || !is_float(v->type.dtype)) return {nullptr, nullptr, nullptr};
  return {label_gather(cast(output_grads[0], v->type.dtype), labels), nullptr, nullptr};
}

// ---- CrossentropyGrad ----

VarPtr crossentropy_grad(const VarPtr& gz_in, const VarPtr& coding, const VarPtr& labels) {
  const std::string what = "crossentropy_grad(" + coding->label() + ")";
  if (gz_in->type.ndim() != 1) throw ShapeError(what + ": expected a gradient vector, got " + described(gz_in));
  check_label_inputs(what, coding, labels, rows_of(gz_in));
  const VarPtr gz = cast(gz_in, coding->type.dtype);
  graph::TensorType t = coding->type;
  if (t.dims[0] < 0) t.dims[0] = rows_of(gz) >= 0 ? rows_of(gz) : rows_of(labels);
  return graph::make_output(std::make_shared<CrossentropyGrad>(), {gz, coding, labels}, t);
}

std::vector<Shape> CrossentropyGrad::infer_shape(const Apply& node, const std::vector<Array>& inputs) const {
  check_rows(node, {inputs[0].shape()[0], inputs[1].shape()[0], inputs[2].shape()[0]});
  return {inputs[1].shape()};
}

std::vector<VarPtr> CrossentropyGrad::L_op(const Apply& node, const std::vector<VarPtr>& output_grads) const {
  // out = scatter(-gz / gather(p)):  d/dgz = -gather(h) / gather(p),
  //                                  d/dp  = scatter(gz * gather(h) / gather(p)^2).
  const VarPtr &gz = node.input(0), &p = node.input(1), &labels = node.input(2);
  if (!output_grads[0] || !is_float(p->type.dtype)) return {nullptr, nullptr, nullptr};
  const VarPtr h = label_gather(cast(output_grads[0], p->type.dtype), labels);
  const VarPtr pt = label_gather(p, labels);
  return {neg(div(h, pt)), label_scatter(div(mul(gz, h), mul(pt, pt)), p, labels), nullptr};
}

// ---- the nnet ops' gradients ----

std::vector<VarPtr> Softmax::L_op(const Apply& node, const std::vector<VarPtr>& output_grads) const {
  const VarPtr& x = node.input(0);
  if (!output_grads[0] || !is_float(x->type.dtype)) return {nullptr};
  const VarPtr out = const_cast<Apply&>(node).output(0);
  const VarPtr gz = cast(output_grads[0], x->type.dtype);
  const std::vector<int> axis = {axis_};
  if (log_) return {sub(gz, mul(elemwise(S::Exp, {out}), reduce(ReduceKind::Sum, gz, axis, true)))};
  // softmax then categorical_crossentropy(sm, labels): gz = CrossentropyGrad(g, sm, t) is
  // -g/sm at the labels, and (gz - sum(gz * sm)) * sm simplifies to g * (sm - one_hot(t)),
  // built as one SoftmaxCrossentropyGrad node (nnet_fused.hpp) that `specialize` pairs with
  // the fused forward op.
  if (axis_ == 1 && x->type.ndim() == 2 && gz->owner && gz->owner->num_outputs() == 1 &&
      graph::op_if<CrossentropyGrad>(gz->owner->op()) && gz->owner->input(1).get() == out.get()) {
    const VarPtr &g = gz->owner->input(0), &labels = gz->owner->input(2);
    return {softmax_crossentropy_grad(g, out, labels)};
  }
  return {mul(sub(gz, reduce(ReduceKind::Sum, mul(gz, out), axis, true)), out)};
}

std::vector<VarPtr> CategoricalCrossentropy::L_op(const Apply& node, const std::vector<VarPtr>& output_grads) const {
  const VarPtr &coding = node.input(0), &targets = node.input(1);
  if (!output_grads[0] || !is_float(coding->type.dtype)) return {nullptr, nullptr};
  return {crossentropy_grad(output_grads[0], coding, targets), nullptr};  // class indices: none
}

std::vector<VarPtr> OneHot::L_op(const Apply&, const std::vector<VarPtr>&) const {
  return {nullptr};  // integer indices: no gradient
}

}  // namespace theon::ops
