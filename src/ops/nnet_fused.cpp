#include "ops/nnet_fused.hpp"
#include "ops/make_op.hpp"

#include "ops/dimshuffle.hpp"
#include "ops/elemwise.hpp"
#include "ops/matmul.hpp"
#include "ops/nnet.hpp"
#include "ops/reduce.hpp"
#include "util/dispatch.hpp"

#include <theon/error.hpp>

#include <cmath>
#include <limits>
#include <type_traits>

namespace theon::ops {

using graph::Apply;
using graph::VarPtr;
using S = ScalarOpId;

namespace {

std::string described(const VarPtr& v) { return v->label() + " (" + v->type.str() + ")"; }

int num_inputs(const Apply& node) { return static_cast<int>(node.inputs().size()); }


void check_matrix_and_labels(const std::string& what, const VarPtr& m, const VarPtr& labels) {
  if (m->type.ndim() != 2 || !is_float(m->type.dtype))
    throw TypeError(what + ": expected a float matrix, got " + described(m));
  if (labels->type.ndim() != 1 || !is_integer(labels->type.dtype))
    throw TypeError(what + ": labels must be an integer vector, got " + described(labels));
  const int64_t a = m->type.dims[0], b = labels->type.dims[0];
  if (a >= 0 && b >= 0 && a != b)
    throw ShapeError(what + ": " + std::to_string(a) + " rows but " + std::to_string(b) + " labels (" + described(m) +
                     ", " + described(labels) + ")");
}

void check_rows(const Apply& node, const std::vector<Array>& inputs) {
  for (const Array& a : inputs)
    if (a.shape()[0] != inputs[0].shape()[0]) {
      std::string shapes;
      for (int k = 0; k < num_inputs(node); ++k)
        shapes += (k ? ", " : "") + input_label(node, k) + " has shape " + shape_str(inputs[k].shape());
      throw ShapeError(softmax_crossentropy_call(node) + ": row counts differ at run time (" + shapes + ")");
    }
}

}  // namespace

// Users wrote the unfused form, so errors name it too. The gradient op reads (dy, sm, labels).
std::string softmax_crossentropy_call(const Apply& node) {
  const int n = num_inputs(node);
  return node.describe() + (n == 2 ? ", the fused " : ", the gradient of ") + "categorical_crossentropy(softmax(" +
         (n == 2 ? input_label(node, 0) : "...") + "), " + input_label(node, n - 1) + ")";
}

// ---- SoftmaxCrossentropy ----

std::vector<VarPtr> softmax_crossentropy(const VarPtr& x, const VarPtr& labels) {
  check_matrix_and_labels("softmax_crossentropy(" + x->label() + ", " + labels->label() + ")", x, labels);
  graph::TensorType loss;
  loss.dtype = x->type.dtype;
  loss.dims = {x->type.dims[0] >= 0 ? x->type.dims[0] : labels->type.dims[0]};
  // The softmax keeps x's type exactly, as Softmax does: the rewrite swaps one for the other.
  graph::ApplyPtr node = Apply::make(std::make_shared<SoftmaxCrossentropy>(), {x, labels}, {loss, x->type});
  return node->outputs();
}

std::vector<Shape> SoftmaxCrossentropy::infer_shape(const Apply& node, const std::vector<Array>& inputs) const {
  check_rows(node, inputs);
  return {{inputs[0].shape()[0]}, inputs[0].shape()};
}

graph::Cost SoftmaxCrossentropy::cost(const Apply& node, const std::vector<Shape>& input_shapes) const {
  graph::Cost c;
  const double n = static_cast<double>(shape_size(input_shapes[0])), rows = static_cast<double>(input_shapes[0][0]);
  const double item = static_cast<double>(itemsize(node.input(0)->type.dtype));
  c.flops = 4 * n + 2 * rows;  // max, exp, sum, scale; one log and one subtraction per row
  c.bytes = 2 * n * item + rows * (item + static_cast<double>(itemsize(node.input(1)->type.dtype)));
  return c;
}

std::vector<VarPtr> SoftmaxCrossentropy::L_op(const Apply& node, const std::vector<VarPtr>& output_grads) const {
  const VarPtr &x = node.input(0), &labels = node.input(1);
  if (!is_float(x->type.dtype)) return {nullptr, nullptr};
  const VarPtr sm = const_cast<Apply&>(node).output(1);
  VarPtr gx;
  if (output_grads[0]) gx = softmax_crossentropy_grad(output_grads[0], sm, labels);
  if (output_grads[1]) {  // the softmax output used elsewhere: the general softmax rule
    const VarPtr gs = cast(output_grads[1], x->type.dtype);
    const VarPtr dot = reduce(ReduceKind::Sum, elemwise(S::Mul, {gs, sm}), std::vector<int>{1}, true);
    const VarPtr term = elemwise(S::Mul, {elemwise(S::Sub, {gs, dot}), sm});
    gx = gx ? elemwise(S::Add, {gx, term}) : term;
  }
  return {gx, nullptr};
}

// ---- SoftmaxCrossentropyGrad ----

VarPtr softmax_crossentropy_grad(const VarPtr& dy_in, const VarPtr& sm, const VarPtr& labels) {
  const std::string what = "softmax_crossentropy_grad(" + sm->label() + ", " + labels->label() + ")";
  check_matrix_and_labels(what, sm, labels);
  if (dy_in->type.ndim() != 1) throw ShapeError(what + ": expected a gradient vector, got " + described(dy_in));
  const int64_t a = dy_in->type.dims[0], b = sm->type.dims[0], c = labels->type.dims[0];
  if ((a >= 0 && b >= 0 && a != b) || (a >= 0 && c >= 0 && a != c))
    throw ShapeError(what + ": row counts differ (" + described(dy_in) + ", " + described(sm) + ", " +
                     described(labels) + ")");
  const VarPtr dy = cast(dy_in, sm->type.dtype);
  graph::TensorType t = sm->type;
  if (t.dims[0] < 0) t.dims[0] = a >= 0 ? a : c;
  return graph::make_output(std::make_shared<SoftmaxCrossentropyGrad>(), {dy, sm, labels}, t);
}

std::vector<Shape> SoftmaxCrossentropyGrad::infer_shape(const Apply& node, const std::vector<Array>& inputs) const {
  check_rows(node, inputs);
  return {inputs[1].shape()};
}

graph::Cost SoftmaxCrossentropyGrad::cost(const Apply& node, const std::vector<Shape>& input_shapes) const {
  graph::Cost c;
  const double n = static_cast<double>(shape_size(input_shapes[1])), rows = static_cast<double>(input_shapes[1][0]);
  const double item = static_cast<double>(itemsize(node.input(1)->type.dtype));
  c.flops = n + rows;
  c.bytes = 2 * n * item + rows * (item + static_cast<double>(itemsize(node.input(2)->type.dtype)));
  return c;
}

std::vector<VarPtr> SoftmaxCrossentropyGrad::L_op(const Apply& node, const std::vector<VarPtr>& output_grads) const {
  // out = dy[:, None] * (sm - one_hot):  d/ddy = sum(g * sm, 1) - g[i, labels[i]],
  //                                       d/dsm = g * dy[:, None].
  const VarPtr &dy = node.input(0), &sm = node.input(1), &labels = node.input(2);
  if (!output_grads[0] || !is_float(sm->type.dtype)) return {nullptr, nullptr, nullptr};
  const VarPtr g = cast(output_grads[0], sm->type.dtype);
  const VarPtr gdy = elemwise(S::Sub, {reduce(ReduceKind::Sum, elemwise(S::Mul, {g, sm}), std::vector<int>{1}, false),
                                       label_gather(g, labels)});
  const VarPtr gsm = elemwise(S::Mul, {g, dimshuffle(dy, {0, -1})});
  return {gdy, gsm, nullptr};
}

}  // namespace theon::ops

namespace theon::ops {

THEON_PROPLESS_FACTORY(SoftmaxCrossentropy, SoftmaxCrossentropy)
THEON_PROPLESS_FACTORY(SoftmaxCrossentropyGrad, SoftmaxCrossentropyGrad)

}  // namespace theon::ops
