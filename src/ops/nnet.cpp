#include "ops/nnet.hpp"
#include "ops/make_op.hpp"
#include "util/checked_size.hpp"
#include "graph/user_names.hpp"

#include "ops/argmax.hpp"
#include "ops/elemwise.hpp"
#include "ops/matmul.hpp"
#include "ops/reduce.hpp"
#include "util/dispatch.hpp"

#include <theon/error.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace theon::ops {

using graph::Apply;
using graph::VarPtr;

namespace {

std::string described(const VarPtr& v) { return v->label() + " (" + v->type.str() + ")"; }

}  // namespace

std::string crossentropy_call(const Apply& node) {
  return "categorical_crossentropy(" + input_label(node, 0) + ", " + input_label(node, 1) + ")";
}

// ---- softmax / log_softmax ----

VarPtr softmax(const VarPtr& x_in, int axis, bool log) {
  const std::string what = std::string(log ? "log_softmax" : "softmax") + "(" + x_in->label() + ")";
  require_supported(x_in->type.dtype, what);
  if (x_in->type.ndim() == 0)
    throw ShapeError(what + ": needs a tensor of rank >= 1, got the scalar " + described(x_in));
  const int ax = normalize_axes(what, x_in, {axis})[0];
  VarPtr x = is_float(x_in->type.dtype) ? x_in : cast(x_in, upcast_to_float(x_in->type.dtype));
  return graph::make_output(std::make_shared<Softmax>(log, ax), {x}, x->type);
}

std::vector<Shape> Softmax::infer_shape(const Apply&, const std::vector<Array>& inputs) const {
  return {inputs[0].shape()};
}

graph::Cost Softmax::cost(const Apply& node, const std::vector<Shape>& input_shapes) const {
  graph::Cost c = Op::cost(node, input_shapes);
  const double n = static_cast<double>(shape_size(input_shapes[0]));
  c.flops = 4 * n;  // max, subtract, exp, normalise
  c.bytes *= 2;     // the output is the input's size
  return c;
}

// ---- categorical cross-entropy ----

VarPtr categorical_crossentropy(const VarPtr& coding_in, const VarPtr& target) {
  const std::string what = "categorical_crossentropy(" + coding_in->label() + ", " + target->label() + ")";
  require_supported(coding_in->type.dtype, what);
  require_supported(target->type.dtype, what);
  if (coding_in->type.ndim() != 2)
    throw ShapeError(what + ": coding_dist must be a matrix of row probabilities, got " + described(coding_in));
  VarPtr coding = is_float(coding_in->type.dtype) ? coding_in : cast(coding_in, upcast_to_float(coding_in->type.dtype));
  const auto& cd = coding->type.dims;
  const auto& td = target->type.dims;
  if (target->type.ndim() == 1) {
    if (!is_integer(target->type.dtype))
      throw TypeError(what + ": a vector true_dist holds class indices and must have an integer dtype, got " +
                      described(target));
    if (cd[0] >= 0 && td[0] >= 0 && cd[0] != td[0])
      throw ShapeError(what + ": " + std::to_string(cd[0]) + " rows of probabilities but " + std::to_string(td[0]) +
                       " targets (" + described(coding_in) + ", " + described(target) + ")");
    graph::TensorType t;
    t.dtype = coding->type.dtype;
    t.dims = {cd[0] >= 0 ? cd[0] : td[0]};
    return graph::make_output(std::make_shared<CategoricalCrossentropy>(), {coding, target}, t);
  }
  if (target->type.ndim() != 2)
    throw ShapeError(what +
                     ": true_dist must be an integer vector of class indices or a matrix like coding_dist, got " +
                     described(target));
  for (int d = 0; d < 2; ++d)
    if (cd[d] >= 0 && td[d] >= 0 && cd[d] != td[d])
      throw ShapeError(what + ": true_dist must have coding_dist's shape (" + described(coding_in) + ", " +
                       described(target) + ")");
  // An integer or bool one-hot matrix takes the probabilities' dtype rather than promoting them.
  VarPtr t = is_float(target->type.dtype) ? target : cast(target, coding->type.dtype);
  VarPtr terms = elemwise(ScalarOpId::Mul, {t, elemwise(ScalarOpId::Log, {coding})});
  return elemwise(ScalarOpId::Neg, {reduce(ReduceKind::Sum, terms, std::vector<int>{1}, false)});
}

std::vector<Shape> CategoricalCrossentropy::infer_shape(const Apply& node, const std::vector<Array>& inputs) const {
  const Shape &c = inputs[0].shape(), &t = inputs[1].shape();
  if (c[0] != t[0])
    throw ShapeError(crossentropy_call(node) + ": " + std::to_string(c[0]) + " rows of probabilities but " +
                     std::to_string(t[0]) + " targets: " + input_label(node, 0) + " has shape " + shape_str(c) + ", " +
                     input_label(node, 1) + " has shape " + shape_str(t));
  return {{c[0]}};
}

graph::Cost CategoricalCrossentropy::cost(const Apply& node, const std::vector<Shape>& input_shapes) const {
  // Only one probability per row is read, not the whole coding matrix.
  const double rows = static_cast<double>(input_shapes[1][0]);
  graph::Cost c;
  c.flops = rows;  // one log each
  c.bytes = rows * static_cast<double>(2 * itemsize(node.input(0)->type.dtype) + itemsize(node.input(1)->type.dtype));
  return c;
}

// ---- one_hot ----

graph::OpProps OneHot::props() const { return {{"n", std::to_string(n_)}, {"dtype", std::string(dtype_name(dtype_))}}; }

VarPtr one_hot(const VarPtr& indices, int64_t n, DType dtype) {
  const std::string what = "one_hot(" + indices->label() + ", " + std::to_string(n) + ")";
  require_supported(dtype, what);
  require_supported(indices->type.dtype, what);
  if (indices->type.ndim() != 1) throw ShapeError(what + ": indices must be a vector, got " + described(indices));
  if (!is_integer(indices->type.dtype))
    throw TypeError(what + ": indices must have an integer dtype, got " + described(indices));
  if (n < 0) throw ValueError(what + ": the number of classes must be >= 0, got " + std::to_string(n));
  graph::TensorType t;
  t.dtype = dtype;
  t.dims = {indices->type.dims[0], n};
  if (t.dims[0] >= 0) detail::checked_nbytes(t.dims, dtype, what);
  return graph::make_output(std::make_shared<OneHot>(n, dtype), {indices}, t);
}

std::vector<Shape> OneHot::infer_shape(const Apply& node, const std::vector<Array>& inputs) const {
  Shape out = {inputs[0].shape()[0], n_};
  detail::checked_nbytes(out, node.output_raw(0)->type.dtype, [&] { return graph::user_describe(node); });
  return {out};
}

graph::Cost OneHot::cost(const Apply& node, const std::vector<Shape>& input_shapes) const {
  graph::Cost c = Op::cost(node, input_shapes);
  c.bytes += static_cast<double>(input_shapes[0][0]) * static_cast<double>(n_) * static_cast<double>(itemsize(dtype_));
  return c;
}

}  // namespace theon::ops

namespace theon::ops {

THEON_PROPLESS_FACTORY(CategoricalCrossentropy, CategoricalCrossentropy)
THEON_PROPLESS_FACTORY(CrossentropyGrad, CrossentropyGrad)
THEON_PROPLESS_FACTORY(LabelGather, LabelGather)
THEON_PROPLESS_FACTORY(LabelScatter, LabelScatter)

template <>
std::shared_ptr<const graph::Op> op_from_props<graph::OpKind::Softmax>(PropReader& p) {
  return std::make_shared<const Softmax>(false, static_cast<int>(p.integer("axis")));
}

template <>
std::shared_ptr<const graph::Op> op_from_props<graph::OpKind::LogSoftmax>(PropReader& p) {
  return std::make_shared<const Softmax>(true, static_cast<int>(p.integer("axis")));
}

template <>
std::shared_ptr<const graph::Op> op_from_props<graph::OpKind::OneHot>(PropReader& p) {
  const int64_t n = p.integer("n");
  return std::make_shared<const OneHot>(n, parse_dtype(p.text("dtype")));
}

}  // namespace theon::ops
