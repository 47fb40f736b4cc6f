// The CPU kernel of Gemm (out = act(alpha * a.b + beta * c), formed by the specialize and
// gemm_epilogue passes). Float32 (oneDNN's sgemm) and float64 (CBLAS's dgemm):
// - c broadcast along rows (a row bias, or a (1, n) matrix) or along columns: one BLAS call
//   writes alpha * a.b (beta 0), then one vectorised pass adds the bias and applies the
//   activation while the output is hot in cache. A row bias narrower than the pass's tile is
//   first repeated into a stack tile (no allocation), so the pass is a flat loop over the
//   output whatever n is;
// - any other c: broadcast into the output first, one BLAS call accumulates the product into
//   it with beta, then (relu) one pass over the output.
// - no addend (relu(dot(a, b))): one BLAS call writes alpha * a.b, then (relu) one pass.
// - a narrow output (n <= 16 float32 columns, k <= 256: the seed examples' x . W + b): the
//   skinny kernel (skinny_gemm.cpp) with the addend and relu fused, no BLAS call at all. For
//   float64 only where the reference loop ran before (under kSmallGemmWork): beyond it, CBLAS's
//   dgemm is not slower.
// Integer dtypes, degenerate products and products broadcast against a larger c run the op's
// reference (blas_reference.cpp). The per-element math is nnet::gemm_epilogue.
#include "backends/cpu/blas_call.hpp"
#include "backends/cpu/cpu_backend.hpp"
#include "backends/cpu/cpu_kernels.hpp"
#include "backends/cpu/parallel.hpp"
#include "backends/cpu/skinny_gemm.hpp"
#include "ops/gemm.hpp"
#include "ops/scalar/nnet_ops.hpp"
#include "ops/shape.hpp"

#include <theon/error.hpp>

#include <algorithm>
#include <cstring>

namespace theon::backends::cpu {
namespace {

// Below this many multiply-adds the reference loop beats library dispatch (as for Dot).
constexpr int64_t kSmallGemmWork = 16 * 1024;
// Elements of the repeated-bias tile (on the stack: 4 KiB of double). The loops below carry
// `omp simd`: at -O2 GCC's cheap cost model would leave them scalar, and the scalar relu
// branches on the sign (a mispredict per element on random data: 4x slower on W3).
constexpr int64_t kTile = 512;

template <int Act, class T, class C>
void add_tile(T* __restrict__ o, const C* __restrict__ tile, int64_t len) {
#pragma omp simd
  for (int64_t t = 0; t < len; ++t) o[t] = static_cast<T>(nnet::gemm_epilogue<C>(static_cast<C>(o[t]), tile[t], Act));
}

// out(m, n) contiguous = act(out + beta * c[j]) with c strided by cs; in C (T or double).
template <int Act, class T, class C>
void row_epilogue(T* out, int64_t m, int64_t n, const T* c, int64_t cs, double beta) {
  alignas(64) C tile[kTile];  // n <= kTile
  const int64_t reps = kTile / n, len = reps * n;
  for (int64_t r = 0; r < reps; ++r)
    for (int64_t j = 0; j < n; ++j) tile[r * n + j] = static_cast<C>(beta * static_cast<double>(c[j * cs]));
  const int64_t total = m * n;
  for (int64_t i0 = 0; i0 < total; i0 += len) add_tile<Act, T, C>(out + i0, tile, std::min(len, total - i0));
}

// out(m, n) contiguous = act(out + beta * c[i]) with c strided by rs.
template <int Act, class T, class C>
void col_epilogue(T* out, int64_t m, int64_t n, const T* c, int64_t rs, double beta) {
  for (int64_t i = 0; i < m; ++i) {
    const C v = static_cast<C>(beta * static_cast<double>(c[i * rs]));
    T* __restrict__ o = out + i * n;
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) o[j] = static_cast<T>(nnet::gemm_epilogue<C>(static_cast<C>(o[j]), v, Act));
  }
}

template <class T>
void relu_pass(T* __restrict__ o, int64_t size) {
#pragma omp simd
  for (int64_t i = 0; i < size; ++i) o[i] = nnet::gemm_epilogue<T>(o[i], T(0), 1);
}

// The broadcast-addend epilogue in T when beta is 1 (exact: see gemm_epilogue), else in double.
template <class T>
void vector_epilogue(T* out, int64_t m, int64_t n, const Array& c, bool row, double beta, int act) {
  const T* pc = c.data<T>();
  if (row) {
    const int64_t cs = c.shape()[1] == 1 ? 0 : c.strides()[1];
    if (beta == 1) act ? row_epilogue<1, T, T>(out, m, n, pc, cs, beta) : row_epilogue<0, T, T>(out, m, n, pc, cs, beta);
    else act ? row_epilogue<1, T, double>(out, m, n, pc, cs, beta) : row_epilogue<0, T, double>(out, m, n, pc, cs, beta);
    return;
  }
  const int64_t rs = c.shape()[0] == 1 ? 0 : c.strides()[0];
  if (beta == 1) act ? col_epilogue<1, T, T>(out, m, n, pc, rs, beta) : col_epilogue<0, T, T>(out, m, n, pc, rs, beta);
  else act ? col_epilogue<1, T, double>(out, m, n, pc, rs, beta) : col_epilogue<0, T, double>(out, m, n, pc, rs, beta);
}

// out(m, n) = act(alpha * a.b + beta * c) by the skinny kernel, c (the node's input 0, a
// matrix, a row or a column vector; undefined for none) read through its strides as
// gemm_loop reads it: no view of it is built (this runs on every call).
template <class T>
void skinny_gemm_node(const ops::Gemm& op, const Array& c, const Array& a, const Array& b, Array& out) {
  SkinnyGemm<T> g;
  g.m = a.shape()[0];
  g.k = a.shape()[1];
  g.n = b.shape()[1];
  g.alpha = static_cast<T>(op.alpha());
  g.beta = static_cast<T>(op.beta());
  g.a = a.data<T>();
  g.a_rs = a.strides()[0];
  g.a_cs = a.strides()[1];
  g.b = b.data<T>();
  g.b_rs = b.strides()[0];
  g.b_cs = b.strides()[1];
  g.relu = op.epilogue().act == ops::GemmAct::Relu;
  g.out = out.data<T>();
  if (op.epilogue().addend == ops::GemmAddend::None) return skinny_gemm(g);  // g.c null: no addend
  g.c = c.data<T>();
  const int64_t c0 = c.shape()[0] == 1 ? 0 : c.strides()[0];
  switch (op.epilogue().addend) {
    case ops::GemmAddend::Matrix:
      g.c_rs = c0;
      g.c_cs = c.shape()[1] == 1 ? 0 : c.strides()[1];
      break;
    case ops::GemmAddend::Row:
      g.c_rs = 0;
      g.c_cs = c0;
      break;
    case ops::GemmAddend::Col:
      g.c_rs = c0;
      g.c_cs = 0;
      break;
    case ops::GemmAddend::None: break;  // returned above
  }
  skinny_gemm(g);
}

class GemmBetaKernel final : public Kernel {
 public:
  std::string name() const override { return blas_name(); }

  void run(const KernelPlan*, const ExecContext& where, const graph::Apply& node, const std::vector<Array>& inputs,
           std::vector<Array>& outputs) const override {
    const auto& op = static_cast<const ops::Gemm&>(node.op());
    const ops::GemmAddend addend = op.epilogue().addend;
    const bool has_c = addend != ops::GemmAddend::None;
    const int ia = ops::gemm_a_index(addend);
    const Array &a = inputs[ia], &b = inputs[ia + 1];
    const Array c_in = has_c ? inputs[0] : Array();
    Array& out = outputs[0];
    const int64_t m = a.shape()[0], k = a.shape()[1], n = b.shape()[1];
    const DType t = a.dtype();
    // The output has the node's inferred shape (the executor checked c against the product):
    // when it is the product's, c broadcasts into it. No Gemm destroys an input, so out
    // overlaps none of c, a, b.
    const bool plain = out.shape().size() == 2 && out.shape()[0] == m && out.shape()[1] == n && m > 0 && k > 0 &&
                       out.is_contiguous();
    if (plain && t == DType::Float32 && skinny_gemm_fits<float>(m, n, k))
      return skinny_gemm_node<float>(op, c_in, a, b, out);
    if (plain && t == DType::Float64 && skinny_gemm_fits<double>(m, n, k) && m * n * k <= kSmallGemmWork)
      return skinny_gemm_node<double>(op, c_in, a, b, out);
    const Array c = ops::gemm_addend_view(addend, c_in);
    const Shape out_shape = ops::gemm_output_shape(node, c_in.shape(), a.shape(), b.shape());
    const bool blas_dtype = have_blas(t);
    if (!blas_dtype || out_shape != Shape{m, n} || m == 0 || n == 0 || k == 0 || m * n * k <= kSmallGemmWork ||
        !out.is_contiguous())
      return gemm_loop(node, inputs, outputs);
    BlasOperand oa = as_blas_operand(m, k, a.strides()[0], a.strides()[1]);
    BlasOperand ob = as_blas_operand(k, n, b.strides()[0], b.strides()[1]);
    if (!oa.ok || !ob.ok) {  // strides BLAS cannot express (negative, both non-unit): copy first
      std::vector<Array> in = inputs;
      if (!oa.ok) in[ia] = a.contiguous();
      if (!ob.ok) in[ia + 1] = b.contiguous();
      return run(nullptr, where, node, in, outputs);
    }
    const int act = op.epilogue().act == ops::GemmAct::Relu ? 1 : 0;
    if (!has_c) {  // the product (beta 0: BLAS does not read out), then the relu pass
      blas_gemm(t, oa, ob, m, n, k, op.alpha(), a.data(), b.data(), 0.0, out.data(), node);
      if (act) {
        if (t == DType::Float32) relu_pass(out.data<float>(), out.size());
        else relu_pass(out.data<double>(), out.size());
      }
      return;
    }
    // (A row wider than the tile takes the broadcast copy below.)
    const bool row = c.shape()[0] == 1 && m > 1 && n <= kTile, col = c.shape()[1] == 1 && n > 1 && c.shape()[0] != 1;
    if (row || col) {
      // The product alone (beta 0: BLAS does not read out), then bias + activation in one pass.
      blas_gemm(t, oa, ob, m, n, k, op.alpha(), a.data(), b.data(), 0.0, out.data(), node);
      if (t == DType::Float32) vector_epilogue<float>(out.data<float>(), m, n, c, row, op.beta(), act);
      else vector_epilogue<double>(out.data<double>(), m, n, c, row, op.beta(), act);
      return;
    }
    // c broadcast into the output (BLAS scales it by beta): one memcpy when c is a contiguous
    // matrix of the output's shape (W10's x.Wx; the generic strided copy cost 4 instructions
    // an element there), on the threads when large (W6's weight updates).
    if (c.shape() == out.shape() && c.is_contiguous()) parallel_memcpy(out.data(), c.data(), out.nbytes(), out.size());
    else ops::copy_strided(c, out);
    blas_gemm(t, oa, ob, m, n, k, op.alpha(), a.data(), b.data(), op.beta(), out.data(), node);
    if (act) {
      if (t == DType::Float32) relu_pass(out.data<float>(), out.size());
      else relu_pass(out.data<double>(), out.size());
    }
  }
};

}  // namespace

void register_gemm_kernels(CpuBackend& backend) { backend.register_kernel(graph::OpKind::Gemm, std::make_unique<GemmBetaKernel>()); }

}  // namespace theon::backends::cpu
