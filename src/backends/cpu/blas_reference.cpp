// The exact loops of the matrix products: double accumulation for floats, wrapping uint64
// for integers (NumPy's results, no signed overflow). The BLAS kernels (blas_kernels.cpp,
// gemm_kernel.cpp, matmul_kernels.cpp) run float32/float64 through oneDNN or CBLAS and fall
// back to these for integers or without a BLAS.
#include "backends/cpu/cpu_kernels.hpp"
#include "ops/blas.hpp"
#include "ops/gemm.hpp"
#include "ops/matmul.hpp"
#include "ops/scalar/nnet_ops.hpp"
#include "util/dispatch.hpp"

#include <cstdint>
#include <type_traits>

namespace theon::backends::cpu {

using graph::Apply;

void dot_loop(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) {
  const Array &a = inputs[0], &b = inputs[1];
  ops::GemmShape g = ops::dot_geometry(node, a.shape(), b.shape());
  // Strides as 2-d (m, k) and (k, n) views, whatever the vector cases.
  int64_t a_rs = a.ndim() == 2 ? a.strides()[0] : 0, a_cs = a.strides().back();
  int64_t b_rs = b.strides()[0], b_cs = b.ndim() == 2 ? b.strides()[1] : 0;
  detail::visit_dtype(a.dtype(), [&]<class T>() {
    using Acc = std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>;
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    T* po = outputs[0].data<T>();
    for (int64_t i = 0; i < g.m; ++i)
      for (int64_t j = 0; j < g.n; ++j) {
        Acc acc = 0;
        for (int64_t p = 0; p < g.k; ++p) acc += Acc(pa[i * a_rs + p * a_cs]) * Acc(pb[p * b_rs + j * b_cs]);
        po[i * g.n + j] = static_cast<T>(acc);
      }
  });
}

void gemm_loop(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) {
  const auto& op = graph::op_as<ops::Gemm>(node.op());
  const double alpha_ = op.alpha(), beta_ = op.beta();
  const int act = op.epilogue().act == ops::GemmAct::Relu ? 1 : 0;
  // No addend (GemmAddend::None): c is undefined and every element adds -0 (x + -0 == x for
  // every x, -0 and NaN included) in floats, 0 in integers.
  const bool has_c = op.epilogue().addend != ops::GemmAddend::None;
  const ops::GemmOperands ops_in = ops::gemm_operands(op.epilogue().addend, inputs);
  const Array &c = ops_in.c, &a = ops_in.a, &b = ops_in.b;
  const Shape out_shape = ops::gemm_output_shape(node, has_c ? inputs[0].shape() : Shape{}, a.shape(), b.shape());
  const int64_t m = a.shape()[0], n = b.shape()[1], k = a.shape()[1];
  const int64_t a_rs = a.strides()[0], a_cs = a.strides()[1], b_rs = b.strides()[0], b_cs = b.strides()[1];
  const int64_t c_rs = has_c && c.shape()[0] != 1 ? c.strides()[0] : 0;
  const int64_t c_cs = has_c && c.shape()[1] != 1 ? c.strides()[1] : 0;
  Array& out = outputs[0];
  const int64_t o_rs = out.strides()[0], o_cs = out.strides()[1];
  detail::visit_dtype(a.dtype(), [&]<class T>() {
    constexpr bool fp = std::is_floating_point_v<T>;
    using Acc = std::conditional_t<fp, double, uint64_t>;
    // Integers wrap like NumPy (through uint64: no signed overflow); alpha, beta are integral there.
    const Acc al = fp ? Acc(alpha_) : Acc(static_cast<int64_t>(alpha_));
    const Acc be = fp ? Acc(beta_) : Acc(static_cast<int64_t>(beta_));
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    const T* pc = has_c ? c.data<T>() : nullptr;
    T* po = out.data<T>();
    for (int64_t i = 0; i < out_shape[0]; ++i)
      for (int64_t j = 0; j < out_shape[1]; ++j) {
        const int64_t pi = m == 1 ? 0 : i, pj = n == 1 ? 0 : j;
        Acc acc = 0;
        for (int64_t p = 0; p < k; ++p) acc += Acc(pa[pi * a_rs + p * a_cs]) * Acc(pb[p * b_rs + pj * b_cs]);
        if constexpr (fp) {
          const double addend = pc ? be * Acc(pc[i * c_rs + j * c_cs]) : -0.0;
          po[i * o_rs + j * o_cs] = static_cast<T>(nnet::gemm_epilogue<double>(al * acc, addend, act));
        } else {
          const T v = static_cast<T>(al * acc + (pc ? be * Acc(pc[i * c_rs + j * c_cs]) : Acc(0)));
          po[i * o_rs + j * o_cs] = act == 1 ? theon::scalar::Relu()(v) : v;
        }
      }
  });
}

void matmul_loop(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) {
  const Array &a = inputs[0], &b = inputs[1];
  const ops::MatmulShape g = ops::matmul_shape(node, a.shape(), b.shape());
  const ops::MatrixStrides sa = ops::lhs_matrix_strides(a), sb = ops::rhs_matrix_strides(b);
  detail::visit_dtype(a.dtype(), [&]<class T>() {
    using Acc = std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>;  // ints wrap like NumPy
    const T* pa0 = a.data<T>();
    const T* pb0 = b.data<T>();
    T* po0 = outputs[0].data<T>();
    ops::for_each_matmul_batch(g, a, b, [&](int64_t oa, int64_t ob, int64_t oo) {
      const T* pa = pa0 + oa;
      const T* pb = pb0 + ob;
      T* po = po0 + oo;
      for (int64_t i = 0; i < g.m; ++i)
        for (int64_t j = 0; j < g.n; ++j) {
          Acc acc = 0;
          for (int64_t p = 0; p < g.k; ++p)
            acc += Acc(pa[i * sa.rows + p * sa.cols]) * Acc(pb[p * sb.rows + j * sb.cols]);
          po[i * g.n + j] = static_cast<T>(acc);
        }
    });
  });
}

}  // namespace theon::backends::cpu
