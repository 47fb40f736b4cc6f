// Matrix products on the CPU. A narrow output (n <= 16 float32 columns, k <= 256; float64 only
// below kSmallGemmWork) goes to the skinny kernel (skinny_gemm.cpp), other float32 products
// through oneDNN (Debian's OpenBLAS 0.3.21 misdetects recent CPUs and runs 4-6x slower on
// large products, see docs/ARCHITECTURE.md; up to 64x64x64 it is the faster one and
// blas_gemm takes it), float64 through CBLAS, and integers through the op's exact reference
// loop.
#include "backends/cpu/blas_call.hpp"
#include "backends/cpu/cpu_backend.hpp"
#include "backends/cpu/cpu_kernels.hpp"
#include "backends/cpu/skinny_gemm.hpp"
#include "ops/blas.hpp"

#include <theon/error.hpp>

#include <algorithm>


namespace theon::backends::cpu {
namespace {

// Tiny products (the seed's 10x10 . 10x5) cost more in library dispatch than in arithmetic:
// a plain i-p-j loop, vectorised over j, is several times faster below this many FLOPs.
constexpr int64_t kSmallGemmWork = 16 * 1024;

template <class T>
void small_gemm(const Array& a, const Array& b, Array& out, const ops::GemmShape& g) {
  const int64_t a_rs = a.ndim() == 2 ? a.strides()[0] : 0, a_cs = a.strides().back();
  const int64_t b_rs = b.strides()[0], b_cs = b.ndim() == 2 ? b.strides()[1] : 0;
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  T* po = out.data<T>();
  std::fill(po, po + g.m * g.n, T(0));
  for (int64_t i = 0; i < g.m; ++i) {
    T* row = po + i * g.n;
    for (int64_t p = 0; p < g.k; ++p) {
      const T av = pa[i * a_rs + p * a_cs];
      const T* brow = pb + p * b_rs;
      if (b_cs == 1)
        for (int64_t j = 0; j < g.n; ++j) row[j] += av * brow[j];
      else
        for (int64_t j = 0; j < g.n; ++j) row[j] += av * brow[j * b_cs];
    }
  }
}

// The product by the skinny kernel (no addend); a 1-d operand is a row (a) or column (b).
template <class T>
void skinny_dot(const Array& a, const Array& b, Array& out, const ops::GemmShape& g) {
  SkinnyGemm<T> s;
  s.m = g.m;
  s.n = g.n;
  s.k = g.k;
  s.a = a.data<T>();
  s.a_rs = a.ndim() == 2 ? a.strides()[0] : 0;
  s.a_cs = a.strides().back();
  s.b = b.data<T>();
  s.b_rs = b.strides()[0];
  s.b_cs = b.ndim() == 2 ? b.strides()[1] : 0;
  s.out = out.data<T>();
  skinny_gemm(s);
}

class GemmKernel final : public Kernel {
 public:
  std::string name() const override { return blas_name(); }

  void run(const KernelPlan*, const ExecContext& where, const graph::Apply& node, const std::vector<Array>& inputs,
           std::vector<Array>& outputs) const override {
    const Array &a = inputs[0], &b = inputs[1];
    Array& out = outputs[0];
    ops::GemmShape g = ops::dot_geometry(node, a.shape(), b.shape());
    if (g.m == 0 || g.n == 0) return;
    if (g.k == 0) {
      std::fill_n(static_cast<char*>(out.data()), out.nbytes(), 0);  // all-zero bits is 0 for floats
      return;
    }
    const DType t = a.dtype();
    if (t != DType::Float32 && t != DType::Float64) return dot_loop(node, inputs, outputs);
    const bool small = g.m * g.n * g.k <= kSmallGemmWork;
    if (out.is_contiguous()) {  // (the executor's outputs are)
      if (t == DType::Float32 && skinny_gemm_fits<float>(g.m, g.n, g.k)) return skinny_dot<float>(a, b, out, g);
      if (t == DType::Float64 && small && skinny_gemm_fits<double>(g.m, g.n, g.k)) return skinny_dot<double>(a, b, out, g);
    }
    if (small) {
      if (t == DType::Float32) small_gemm<float>(a, b, out, g);
      else small_gemm<double>(a, b, out, g);
      return;
    }
    BlasOperand oa = as_blas_operand(g.m, g.k, a.ndim() == 2 ? a.strides()[0] : g.k, a.strides().back());
    BlasOperand ob = as_blas_operand(g.k, g.n, b.strides()[0], b.ndim() == 2 ? b.strides()[1] : 1);
    if (!oa.ok || !ob.ok)  // strides BLAS cannot express (negative, both non-unit): copy first
      return run(nullptr, where, node, {a.contiguous(), b.contiguous()}, outputs);
    if (!have_blas(t)) return dot_loop(node, inputs, outputs);
    blas_gemm(t, oa, ob, g.m, g.n, g.k, 1.0, a.data(), b.data(), 0.0, out.data(), node);
  }
};

}  // namespace

void register_blas_kernels(CpuBackend& backend) { backend.register_kernel(graph::OpKind::Dot, std::make_unique<GemmKernel>()); }

}  // namespace theon::backends::cpu
