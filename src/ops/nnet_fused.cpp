#include "ops/nnet_fused.hpp"

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

// Rows x classes at which the row loops go parallel: below it a thread team costs more
// than the exps it would share.
constexpr int64_t kParallelElements = int64_t(1) << 15;

std::string described(const VarPtr& v) { return v->label() + " (" + v->type.str() + ")"; }

int num_inputs(const Apply& node) { return static_cast<int>(node.inputs().size()); }

// "SoftmaxCrossentropy(x, y), the fused categorical_crossentropy(softmax(x), y)": users
// wrote the unfused form, so errors name it too. The gradient op reads (dy, sm, labels).
std::string fused_call(const Apply& node) {
  const int n = num_inputs(node);
  return node.describe() + (n == 2 ? ", the fused " : ", the gradient of ") + "categorical_crossentropy(softmax(" +
         (n == 2 ? input_label(node, 0) : "...") + "), " + input_label(node, n - 1) + ")";
}

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

// Every label, checked against the class count before any row is computed (the row loop
// may run on OpenMP threads, where an exception must not escape).
std::vector<int64_t> checked_labels(const Apply& node, const Array& labels, int64_t classes, const Shape& x_shape) {
  const int64_t rows = labels.shape()[0], st = labels.strides()[0];
  std::vector<int64_t> t(static_cast<size_t>(rows));
  detail::visit_dtype(labels.dtype(), [&]<class L>() {
    const L* p = labels.data<L>();
    for (int64_t i = 0; i < rows; ++i) t[i] = static_cast<int64_t>(p[i * st]);
  });
  for (int64_t i = 0; i < rows; ++i)
    if (t[i] < 0 || t[i] >= classes)
      throw IndexError(fused_call(node) + ": class index " + std::to_string(t[i]) + " in row " + std::to_string(i) +
                       " of " + input_label(node, num_inputs(node) - 1) + " is out of range for " +
                       std::to_string(classes) + " classes (" + input_label(node, num_inputs(node) - 2) +
                       " has shape " + shape_str(x_shape) + ")");
  return t;
}

void check_rows(const Apply& node, const std::vector<Array>& inputs) {
  for (const Array& a : inputs)
    if (a.shape()[0] != inputs[0].shape()[0]) {
      std::string shapes;
      for (int k = 0; k < num_inputs(node); ++k)
        shapes += (k ? ", " : "") + input_label(node, k) + " has shape " + shape_str(inputs[k].shape());
      throw ShapeError(fused_call(node) + ": row counts differ at run time (" + shapes + ")");
    }
}

}  // namespace

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

void SoftmaxCrossentropy::perform(const Apply& node, const std::vector<Array>& inputs,
                                  std::vector<Array>& outputs) const {
  const Array &x = inputs[0], &labels = inputs[1];
  const int64_t rows = x.shape()[0], classes = x.shape()[1], rs = x.strides()[0], cs = x.strides()[1];
  const std::vector<int64_t> t = checked_labels(node, labels, classes, x.shape());
  detail::visit_dtype(x.dtype(), [&]<class T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const T* px = x.data<T>();
      T* loss = outputs[0].data<T>();
      T* psm = outputs[1].data<T>();  // outputs arrive contiguous
      const bool parallel = rows > 1 && rows * classes >= kParallelElements;
      (void)parallel;  // unused without OpenMP
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (parallel)
#endif
      for (int64_t i = 0; i < rows; ++i) {
        const T* xi = px + i * rs;
        T* sm = psm + i * classes;
        // As Softmax::perform: the maximum first (exp <= 1, no overflow), sums in double, a
        // NaN anywhere makes the row NaN.
        double m = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < classes; ++j) {
          const double v = xi[j * cs];
          if (v > m || std::isnan(v)) m = v;
          if (std::isnan(m)) break;
        }
        // exp(x - m) is stored once and rescaled: one exp per element, not two (for float32
        // the extra rounding stays within an ulp).
        double sum = 0;
        for (int64_t j = 0; j < classes; ++j) {
          const double e = std::exp(double(xi[j * cs]) - m);
          sm[j] = static_cast<T>(e);
          sum += e;
        }
        const double inv = 1.0 / sum;
        for (int64_t j = 0; j < classes; ++j) sm[j] = static_cast<T>(double(sm[j]) * inv);
        // -log(softmax[t]) = m + log(sum) - x[t]: no log of an underflowed probability.
        loss[i] = static_cast<T>(m + std::log(sum) - double(xi[t[i] * cs]));
      }
    } else {
      throw InternalError(node.describe() + ": non-float input " + std::string(dtype_name(x.dtype())));
    }
  });
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

void SoftmaxCrossentropyGrad::perform(const Apply& node, const std::vector<Array>& inputs,
                                      std::vector<Array>& outputs) const {
  const Array &dy = inputs[0], &sm = inputs[1], &labels = inputs[2];
  const int64_t rows = sm.shape()[0], classes = sm.shape()[1];
  const int64_t ds = dy.strides()[0], rs = sm.strides()[0], cs = sm.strides()[1];
  const std::vector<int64_t> t = checked_labels(node, labels, classes, sm.shape());
  detail::visit_dtype(sm.dtype(), [&]<class T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const T* pd = dy.data<T>();
      const T* ps = sm.data<T>();
      T* po = outputs[0].data<T>();
      const bool parallel = rows > 1 && rows * classes >= kParallelElements;
      (void)parallel;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (parallel)
#endif
      for (int64_t i = 0; i < rows; ++i) {
        const double d = pd[i * ds];
        const T* si = ps + i * rs;
        T* oi = po + i * classes;
        for (int64_t j = 0; j < classes; ++j) oi[j] = static_cast<T>(d * double(si[j * cs]));
        // sm - 1 at the label, in double: exact, where the unfused dy*sm - dy rounds twice.
        oi[t[i]] = static_cast<T>(d * (double(si[t[i] * cs]) - 1.0));
      }
    } else {
      throw InternalError(node.describe() + ": non-float softmax " + std::string(dtype_name(sm.dtype())));
    }
  });
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
