// Neural-network ops on the CPU: Softmax/LogSoftmax, CategoricalCrossentropy, OneHot, the
// fused SoftmaxCrossentropy and its gradient, and the label ops of the gradients (LabelGather,
// LabelScatter, CrossentropyGrad). The per-element math is ops/scalar/nnet_ops.hpp, which the
// CUDA kernels (backends/cuda/nnet_cuda.cpp) paste as well; these loops walk rows in order,
// sums in double.
#include "backends/cpu/cpu_backend.hpp"
#include "backends/cpu/cpu_kernels.hpp"
#include "backends/cpu/parallel.hpp"
#include "backends/cpu/softmax_rows.hpp"
#include "ops/matmul.hpp"
#include "ops/nnet.hpp"
#include "ops/nnet_fused.hpp"
#include "ops/scalar/nnet_ops.hpp"
#include "util/dispatch.hpp"
#include "util/strided.hpp"

#include <theon/error.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

namespace theon::backends::cpu {

using graph::Apply;
using ops::input_label;

namespace {

// The row loops go parallel by parallel_threads(rows x classes) (parallel.hpp).

int num_inputs(const Apply& node) { return static_cast<int>(node.inputs().size()); }

// The integer at position i of a vector of any integer dtype and stride.
int64_t index_at(const Array& v, int64_t i) {
  return detail::visit_dtype(v.dtype(), [&]<class T>() -> int64_t {
    return static_cast<int64_t>(v.data<T>()[i * v.strides()[0]]);
  });
}

// The label of row i, checked against the class count.
int64_t label_at(const Apply& node, const Array& labels, int64_t i, int64_t classes) {
  const int64_t t = index_at(labels, i);
  if (!nnet::label_ok(t, classes))
    throw IndexError(node.describe() + ": label " + std::to_string(t) + " in row " + std::to_string(i) +
                     " is out of range for " + std::to_string(classes) + " classes");
  return t;
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
    if (!nnet::label_ok(t[i], classes))
      throw IndexError(ops::softmax_crossentropy_call(node) + ": class index " + std::to_string(t[i]) + " in row " +
                       std::to_string(i) + " of " + input_label(node, num_inputs(node) - 1) + " is out of range for " +
                       std::to_string(classes) + " classes (" + input_label(node, num_inputs(node) - 2) +
                       " has shape " + shape_str(x_shape) + ")");
  return t;
}

// The row maximum of n values at stride s (NaN if any is NaN).
template <class T>
double row_max(const T* x, int64_t n, int64_t s) {
  double m = -std::numeric_limits<double>::infinity();
  for (int64_t i = 0; i < n; ++i) {
    m = nnet::row_max(m, double(x[i * s]));
    if (std::isnan(m)) break;
  }
  return m;
}

// ---- softmax / log_softmax ----

void softmax_loop(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) {
  const auto& op = static_cast<const ops::Softmax&>(node.op());
  const int axis = op.axis();
  const bool log = op.is_log();
  const Array& in = inputs[0];
  Array& out = outputs[0];
  const int64_t n = in.shape()[axis], is = in.strides()[axis];
  const Strides out_st = contiguous_strides(out.shape());
  const int64_t os = out_st[axis];
  // Rows of float32 along the last axis: the vectorised, threaded path.
  const int nd = in.ndim();
  if (in.dtype() == DType::Float32 && axis == nd - 1 && is == 1 && (in.is_contiguous() || nd == 2)) {
    const int64_t rows = n == 0 ? 0 : in.size() / n;
    const int64_t x_row = nd == 2 ? in.strides()[0] : n;
    softmax_rows_f32(in.data<float>(), x_row, out.data<float>(), n, rows, n, log);
    return;
  }
  detail::visit_dtype(in.dtype(), [&]<class T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const T* pi = in.data<T>();
      T* po = out.data<T>();
      for_each_lane(in.shape(), axis, {in.strides(), out_st}, [&](const std::vector<int64_t>& off) {
        const T* x = pi + off[0];
        T* y = po + off[1];
        const double m = row_max(x, n, is);
        double sum = 0;
        for (int64_t i = 0; i < n; ++i) sum += nnet::shifted_exp(double(x[i * is]), m);
        if (log) {
          const double log_sum = std::log(sum);
          for (int64_t i = 0; i < n; ++i) y[i * os] = static_cast<T>(nnet::log_softmax_value(double(x[i * is]), m, log_sum));
        } else {
          for (int64_t i = 0; i < n; ++i) y[i * os] = static_cast<T>(nnet::softmax_value(double(x[i * is]), m, sum));
        }
      });
    } else {
      throw InternalError("Softmax: non-float input " + std::string(dtype_name(in.dtype())) + " reached its kernel");
    }
  });
}

// ---- categorical_crossentropy, one_hot ----

void crossentropy_loop(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) {
  const Array &coding = inputs[0], &targets = inputs[1];
  const int64_t rows = coding.shape()[0], classes = coding.shape()[1];
  const int64_t rs = coding.strides()[0], cs = coding.strides()[1];
  detail::visit_dtype(coding.dtype(), [&]<class T>() {
    const T* p = coding.data<T>();
    T* out = outputs[0].data<T>();
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t t = index_at(targets, i);
      if (!nnet::label_ok(t, classes))
        throw IndexError(ops::crossentropy_call(node) + ": class index " + std::to_string(t) + " in row " +
                         std::to_string(i) + " of " + input_label(node, 1) + " is out of range for " +
                         std::to_string(classes) + " classes (" + input_label(node, 0) + " has shape " +
                         shape_str(coding.shape()) + ")");
      out[i] = static_cast<T>(nnet::crossentropy(double(p[i * rs + t * cs])));
    }
  });
}

void one_hot_loop(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) {
  const int64_t n = graph::op_as<ops::OneHot>(node.op()).n();
  const Array& indices = inputs[0];
  Array& out = outputs[0];
  std::fill_n(static_cast<char*>(out.data()), out.nbytes(), 0);  // all-zero bits is 0 for every dtype
  detail::visit_dtype(out.dtype(), [&]<class T>() {
    T* p = out.data<T>();
    for (int64_t i = 0; i < indices.shape()[0]; ++i) {
      const int64_t j = index_at(indices, i);
      if (!nnet::label_ok(j, n))
        throw IndexError(node.describe() + ": index " + std::to_string(j) + " at position " + std::to_string(i) +
                         " of " + node.input(0)->label() + " is out of range for " + std::to_string(n) +
                         " classes (" + node.input(0)->label() + " has shape " + shape_str(indices.shape()) + ")");
      p[i * n + j] = T(1);
    }
  });
}

// ---- the fused softmax + crossentropy and its gradient ----

void softmax_xent_loop(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) {
  const Array &x = inputs[0], &labels = inputs[1];
  const int64_t rows = x.shape()[0], classes = x.shape()[1], rs = x.strides()[0], cs = x.strides()[1];
  const std::vector<int64_t> t = checked_labels(node, labels, classes, x.shape());
  if (x.dtype() == DType::Float32 && (cs == 1 || classes <= 1)) {  // rows of float32: the vectorised path
    softmax_xent_rows_f32(x.data<float>(), rs, t.data(), outputs[0].data<float>(), outputs[1].data<float>(), rows,
                          classes);
    return;
  }
  detail::visit_dtype(x.dtype(), [&]<class T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const T* px = x.data<T>();
      T* loss = outputs[0].data<T>();
      T* psm = outputs[1].data<T>();  // outputs arrive contiguous
      const int threads = rows > 1 ? parallel_threads(rows * classes) : 1;
      (void)threads;  // unused without OpenMP
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
#endif
      for (int64_t i = 0; i < rows; ++i) {
        const T* xi = px + i * rs;
        T* sm = psm + i * classes;
        const double m = row_max(xi, classes, cs);
        // exp(x - m) is stored once and rescaled: one exp per element, not two (for float32
        // the extra rounding stays within an ulp).
        double sum = 0;
        for (int64_t j = 0; j < classes; ++j) {
          const double e = nnet::shifted_exp(double(xi[j * cs]), m);
          sm[j] = static_cast<T>(e);
          sum += e;
        }
        const double inv = 1.0 / sum;
        for (int64_t j = 0; j < classes; ++j) sm[j] = static_cast<T>(double(sm[j]) * inv);
        loss[i] = static_cast<T>(nnet::softmax_xent_loss(m, sum, double(xi[t[i] * cs])));
      }
    } else {
      throw InternalError(node.describe() + ": non-float input " + std::string(dtype_name(x.dtype())));
    }
  });
}

void softmax_xent_grad_loop(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) {
  const Array &dy = inputs[0], &sm = inputs[1], &labels = inputs[2];
  const int64_t rows = sm.shape()[0], classes = sm.shape()[1];
  const int64_t ds = dy.strides()[0], rs = sm.strides()[0], cs = sm.strides()[1];
  const std::vector<int64_t> t = checked_labels(node, labels, classes, sm.shape());
  detail::visit_dtype(sm.dtype(), [&]<class T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const T* pd = dy.data<T>();
      const T* ps = sm.data<T>();
      T* po = outputs[0].data<T>();
      const int threads = rows > 1 ? parallel_threads(rows * classes) : 1;
      (void)threads;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
#endif
      for (int64_t i = 0; i < rows; ++i) {
        const double d = pd[i * ds];
        const T* si = ps + i * rs;
        T* oi = po + i * classes;
        for (int64_t j = 0; j < classes; ++j) oi[j] = static_cast<T>(nnet::softmax_xent_grad(d, double(si[j * cs]), false));
        oi[t[i]] = static_cast<T>(nnet::softmax_xent_grad(d, double(si[t[i] * cs]), true));
      }
    } else {
      throw InternalError(node.describe() + ": non-float softmax " + std::string(dtype_name(sm.dtype())));
    }
  });
}

// ---- the label ops of the gradients ----

void label_gather_loop(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) {
  const Array &x = inputs[0], &labels = inputs[1];
  const int64_t rows = x.shape()[0], classes = x.shape()[1], rs = x.strides()[0], cs = x.strides()[1];
  detail::visit_dtype(x.dtype(), [&]<class T>() {
    const T* px = x.data<T>();
    T* out = outputs[0].data<T>();
    for (int64_t i = 0; i < rows; ++i) out[i] = px[i * rs + label_at(node, labels, i, classes) * cs];
  });
}

void label_scatter_loop(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) {
  const Array &v = inputs[0], &labels = inputs[2];
  Array& out = outputs[0];
  const int64_t rows = out.shape()[0], classes = out.shape()[1], vs = v.strides()[0];
  std::fill_n(static_cast<char*>(out.data()), out.nbytes(), 0);  // all-zero bits is 0 for every dtype
  detail::visit_dtype(out.dtype(), [&]<class T>() {
    const T* pv = v.data<T>();
    T* po = out.data<T>();
    for (int64_t i = 0; i < rows; ++i) po[i * classes + label_at(node, labels, i, classes)] = pv[i * vs];
  });
}

void crossentropy_grad_loop(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) {
  const Array &gz = inputs[0], &p = inputs[1], &labels = inputs[2];
  Array& out = outputs[0];
  const int64_t rows = p.shape()[0], classes = p.shape()[1];
  const int64_t gs = gz.strides()[0], rs = p.strides()[0], cs = p.strides()[1];
  std::fill_n(static_cast<char*>(out.data()), out.nbytes(), 0);
  detail::visit_dtype(p.dtype(), [&]<class T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const T* pg = gz.data<T>();
      const T* pp = p.data<T>();
      T* po = out.data<T>();
      for (int64_t i = 0; i < rows; ++i) {
        const int64_t t = label_at(node, labels, i, classes);
        po[i * classes + t] = static_cast<T>(nnet::crossentropy_grad(double(pg[i * gs]), double(pp[i * rs + t * cs])));
      }
    } else {
      throw InternalError(node.describe() + ": non-float coding " + std::string(dtype_name(p.dtype())));
    }
  });
}

}  // namespace

void register_nnet_loops(CpuBackend& backend) {
  using K = graph::OpKind;
  register_loop(backend, K::Softmax, softmax_loop);
  register_loop(backend, K::LogSoftmax, softmax_loop);
  register_loop(backend, K::CategoricalCrossentropy, crossentropy_loop);
  register_loop(backend, K::OneHot, one_hot_loop);
  register_loop(backend, K::SoftmaxCrossentropy, softmax_xent_loop);
  register_loop(backend, K::SoftmaxCrossentropyGrad, softmax_xent_grad_loop);
  register_loop(backend, K::LabelGather, label_gather_loop);
  register_loop(backend, K::LabelScatter, label_scatter_loop);
  register_loop(backend, K::CrossentropyGrad, crossentropy_grad_loop);
}

}  // namespace theon::backends::cpu
