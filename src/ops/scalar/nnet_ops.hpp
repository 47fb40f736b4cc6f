// The per-row semantics of softmax, log_softmax and the crossentropy family, written once.
// The CPU loops (backends/cpu/nnet_cpu.cpp) call these functions; the generated CUDA kernels
// (backends/cuda/nnet_cuda.cpp) paste this same header's text (embedded at build time, as
// reduce_ops.hpp is), so CPU and GPU follow one definition: the row maximum first (exp <= 1,
// no overflow), a NaN anywhere in a row makes it NaN (as NumPy), every value in double and
// rounded once to the output type. Where the two sides walk a row in different orders (GPU
// trees), sums differ only by rounding.
#pragma once
#include "scalar_ops.hpp"

namespace theon::nnet {

/// The running row maximum: a NaN wins and stays.
THEON_HD double row_max(double m, double v) { return (v > m || v != v) && !(m != m) ? v : m; }

/// exp(x - m) for the row maximum m: a softmax numerator, in (0, 1].
THEON_HD double shifted_exp(double x, double m) { return std::exp(x - m); }
/// softmax: exp(x - m) / sum, sum the row's sum of shifted_exp.
THEON_HD double softmax_value(double x, double m, double sum) { return std::exp(x - m) / sum; }
/// log_softmax: x - m - log(sum), given log_sum = log(sum).
THEON_HD double log_softmax_value(double x, double m, double log_sum) { return x - m - log_sum; }

/// The fused softmax + crossentropy loss -log(softmax(x)[label]) = m + log(sum) - x[label]:
/// no log of a probability that underflowed.
// (m - x_label) first: m + log(sum) loses log(sum) once m is beyond 2^53 times it.
THEON_HD double softmax_xent_loss(double m, double sum, double x_label) { return (m - x_label) + std::log(sum); }
/// Its gradient at one element: dy * (sm - 1) at the label (exact in double, where the unfused
/// dy*sm - dy rounds twice), dy * sm elsewhere.
THEON_HD double softmax_xent_grad(double dy, double sm, bool at_label) { return at_label ? dy * (sm - 1.0) : dy * sm; }

/// categorical_crossentropy with class indices: -log(p[label]).
THEON_HD double crossentropy(double p_label) { return -std::log(p_label); }
/// Its gradient at the label: -gz / p[label] (0 elsewhere).
THEON_HD double crossentropy_grad(double gz, double p_label) { return -gz / p_label; }

/// Gemm's epilogue at one element (ops/gemm.hpp): the scaled product plus the scaled addend,
/// then the activation (act 1: relu, which keeps NaN and maps -0 to +0, as the Relu scalar
/// op; 0: none). T is double in the reference loops and the CUDA kernel (one rounding to the
/// output type after); the CPU fast path uses T = float when the addend is unscaled, where
/// the float add rounds exactly as the double add then the cast would.
template <class T>
THEON_HD T gemm_epilogue(T scaled_prod, T scaled_addend, int act) {
  const T v = scaled_prod + scaled_addend;
  return act == 1 && !(v > T(0)) && v == v ? T(0) : v;
}

/// Whether a class index (label, one_hot index) is in range.
THEON_HD bool label_ok(long long label, long long classes) { return label >= 0 && label < classes; }

}  // namespace theon::nnet
