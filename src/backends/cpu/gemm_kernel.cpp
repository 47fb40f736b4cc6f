// The CPU kernel of Gemm (out = alpha * a.b + beta * c, formed by the specialize pass):
// c is broadcast into the output first, then one BLAS call accumulates the product into it
// with beta (oneDNN's sgemm for float32, CBLAS's dgemm for float64). Integer dtypes, tiny or
// degenerate products and products broadcast against a larger c run the op's reference.
#include "backends/cpu/blas_call.hpp"
#include "backends/cpu/cpu_backend.hpp"
#include "backends/cpu/cpu_kernels.hpp"
#include "ops/gemm.hpp"
#include "ops/shape.hpp"

#include <theon/error.hpp>


namespace theon::backends::cpu {
namespace {

// Below this many multiply-adds the reference loop beats library dispatch (as for Dot).
constexpr int64_t kSmallGemmWork = 16 * 1024;

class GemmBetaKernel final : public Kernel {
 public:
  std::string name() const override { return blas_name(); }

  void run(const KernelPlan*, const graph::Apply& node, const std::vector<Array>& inputs,
           std::vector<Array>& outputs) const override {
    const auto& op = static_cast<const ops::Gemm&>(node.op());
    const Array &c = inputs[0], &a = inputs[1], &b = inputs[2];
    Array& out = outputs[0];
    const int64_t m = a.shape()[0], k = a.shape()[1], n = b.shape()[1];
    const Shape out_shape = ops::gemm_output_shape(node, c.shape(), a.shape(), b.shape());
    const DType t = a.dtype();
    const bool blas_dtype = have_blas(t);
    if (!blas_dtype || out_shape != Shape{m, n} || m == 0 || n == 0 || k == 0 || m * n * k <= kSmallGemmWork ||
        !out.is_contiguous())
      return gemm_loop(node, inputs, outputs);
    BlasOperand oa = as_blas_operand(m, k, a.strides()[0], a.strides()[1]);
    BlasOperand ob = as_blas_operand(k, n, b.strides()[0], b.strides()[1]);
    if (!oa.ok || !ob.ok)  // strides BLAS cannot express (negative, both non-unit): copy first
      return run(nullptr, node, {c, oa.ok ? a : a.contiguous(), ob.ok ? b : b.contiguous()}, outputs);
    ops::copy_strided(c, out);  // c broadcast into the output; BLAS scales it by beta
    blas_gemm(t, oa, ob, m, n, k, op.alpha(), a.data(), b.data(), op.beta(), out.data(), node);
  }
};

}  // namespace

void register_gemm_kernels(CpuBackend& backend) { backend.register_kernel(graph::OpKind::Gemm, std::make_unique<GemmBetaKernel>()); }

}  // namespace theon::backends::cpu
