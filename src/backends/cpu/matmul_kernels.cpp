// Batched matrix products (numpy.matmul) on the CPU: one GEMM call per matrix of the batch,
// float32 through oneDNN's sgemm, float64 through CBLAS; integers (and builds without those
// libraries) run the op's exact reference loop.
#include "backends/cpu/blas_operand.hpp"
#include "backends/cpu/cpu_backend.hpp"
#include "ops/matmul.hpp"

#include <theon/error.hpp>

#include <algorithm>

#ifdef THEON_HAVE_DNNL
#include <dnnl.h>
#endif
#ifdef THEON_HAVE_CBLAS
#include <cblas.h>
#endif

namespace theon::backends::cpu {
namespace {

// One row-major GEMM per call: out(m, n) = a(m, k) . b(k, n), out contiguous.
#if defined(THEON_HAVE_DNNL) || defined(THEON_HAVE_CBLAS)
#define THEON_MATMUL_SGEMM 1
void gemm(const graph::Apply& node, const BlasOperand& oa, const BlasOperand& ob, int64_t m, int64_t n, int64_t k,
          const float* a, const float* b, float* out) {
#ifdef THEON_HAVE_DNNL
  dnnl_status_t st = dnnl_sgemm(oa.trans ? 'T' : 'N', ob.trans ? 'T' : 'N', m, n, k, 1.0f, a, oa.ld, b, ob.ld, 0.0f,
                                out, n);
  if (st != dnnl_success)
    throw InternalError(node.describe() + ": oneDNN sgemm failed with status " + std::to_string(st));
#else
  (void)node;
  cblas_sgemm(CblasRowMajor, oa.trans ? CblasTrans : CblasNoTrans, ob.trans ? CblasTrans : CblasNoTrans, m, n, k, 1.0f,
              a, oa.ld, b, ob.ld, 0.0f, out, n);
#endif
}
#endif

#ifdef THEON_HAVE_CBLAS
#define THEON_MATMUL_DGEMM 1
void gemm(const graph::Apply&, const BlasOperand& oa, const BlasOperand& ob, int64_t m, int64_t n, int64_t k,
          const double* a, const double* b, double* out) {
  cblas_dgemm(CblasRowMajor, oa.trans ? CblasTrans : CblasNoTrans, ob.trans ? CblasTrans : CblasNoTrans, m, n, k, 1.0,
              a, oa.ld, b, ob.ld, 0.0, out, n);
}
#endif

class BatchedGemmKernel final : public Kernel {
 public:
  std::string name() const override {
#ifdef THEON_HAVE_DNNL
    return "onednn/cblas";
#else
    return "cblas";
#endif
  }

  void run(const KernelPlan*, const graph::Apply& node, const std::vector<Array>& inputs,
           std::vector<Array>& outputs) const override {
    const Array &a = inputs[0], &b = inputs[1];
    Array& out = outputs[0];
    const ops::MatmulShape g = ops::matmul_shape(node, a.shape(), b.shape());
    if (out.size() == 0) return;
    if (g.k == 0) {
      std::fill_n(static_cast<char*>(out.data()), out.nbytes(), 0);  // all-zero bits is 0 for every dtype
      return;
    }
    switch (a.dtype()) {
#ifdef THEON_MATMUL_SGEMM
      case DType::Float32: return run_typed<float>(node, inputs, outputs, g);
#endif
#ifdef THEON_MATMUL_DGEMM
      case DType::Float64: return run_typed<double>(node, inputs, outputs, g);
#endif
      default: return node.op().perform(node, inputs, outputs);  // integers: the exact reference loop
    }
  }

 private:
  template <class T>
  void run_typed(const graph::Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs,
                 const ops::MatmulShape& g) const {
    const Array &a = inputs[0], &b = inputs[1];
    const ops::MatrixStrides sa = ops::lhs_matrix_strides(a), sb = ops::rhs_matrix_strides(b);
    const BlasOperand oa = as_blas_operand(g.m, g.k, sa.rows, sa.cols);
    const BlasOperand ob = as_blas_operand(g.k, g.n, sb.rows, sb.cols);
    if (!oa.ok || !ob.ok)  // matrix strides BLAS cannot express: copy first (batch strides are free)
      return run_typed<T>(node, {a.contiguous(), b.contiguous()}, outputs, g);
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    T* po = outputs[0].data<T>();
    ops::for_each_matmul_batch(g, a, b, [&](int64_t off_a, int64_t off_b, int64_t off_out) {
      gemm(node, oa, ob, g.m, g.n, g.k, pa + off_a, pb + off_b, po + off_out);
    });
  }
};

}  // namespace

void register_matmul_kernels(CpuBackend& backend) {
  backend.register_kernel("BatchedMatmul", std::make_unique<BatchedGemmKernel>());
}

}  // namespace theon::backends::cpu
