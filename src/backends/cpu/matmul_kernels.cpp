// Batched matrix products (numpy.matmul) on the CPU: one GEMM call per matrix of the batch,
// float32 through oneDNN's sgemm, float64 through CBLAS; integers (and builds without those
// libraries) run the op's exact reference loop.
#include "backends/cpu/blas_call.hpp"
#include "backends/cpu/cpu_backend.hpp"
#include "backends/cpu/cpu_kernels.hpp"
#include "ops/matmul.hpp"

#include <theon/error.hpp>

#include <algorithm>


namespace theon::backends::cpu {
namespace {

class BatchedGemmKernel final : public Kernel {
 public:
  std::string name() const override { return blas_name(); }

  void run(const KernelPlan*, const ExecContext&, const graph::Apply& node, const std::vector<Array>& inputs,
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
      case DType::Float32:
        if (have_blas(DType::Float32)) return run_typed<float>(node, inputs, outputs, g);
        break;
      case DType::Float64:
        if (have_blas(DType::Float64)) return run_typed<double>(node, inputs, outputs, g);
        break;
      default: break;
    }
    matmul_loop(node, inputs, outputs);  // integers (or no BLAS): the exact reference loop
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
      blas_gemm(dtype_of<T>(), oa, ob, g.m, g.n, g.k, 1.0, pa + off_a, pb + off_b, 0.0, po + off_out, node);
    });
  }
};

}  // namespace

void register_matmul_kernels(CpuBackend& backend) {
  backend.register_kernel(graph::OpKind::BatchedMatmul, std::make_unique<BatchedGemmKernel>());
}

}  // namespace theon::backends::cpu
