// Matrix products with a narrow output (n <= 16 float32 or 8 float64 columns): the seed
// examples' x(m, 10) . W(10, 5) + b and any tiny product, where oneDNN's sgemm spends most of
// its time packing and dispatching (W2: 10000x10x5 took 44 us through oneDNN, 27 us here with
// the bias and relu, one core of the Zen 4 machine).
// Vectorised along the output row (one or two 32-byte vectors), blocked over rows, B packed
// once per call into a zero-padded stack panel, the bias and relu epilogue applied before the
// row is stored. AVX2+FMA where the CPU has them (checked once), else a portable loop over
// the same sums.
#pragma once

#include <cstdint>

namespace theon::backends::cpu {

/// Largest n the skinny kernel takes for element type T (two 32-byte vectors).
template <class T>
constexpr int64_t kSkinnyMaxN = 64 / static_cast<int64_t>(sizeof(T));
/// Largest k (the packed B panel lives on the stack: up to k * 64 bytes).
constexpr int64_t kSkinnyMaxK = 256;

/// The operands of out(m, n) = act(alpha * a . b + beta * c). a (m, k) and b (k, n) are any
/// element strides (rows, columns; transposed or broadcast views are fine); c is broadcast
/// through its strides (c_rs = 0 for a row bias, c_cs = 0 for a column bias, both 0 for a
/// scalar) or null for none. out is contiguous (row stride n) and overlaps none of a, b, c.
template <class T>
struct SkinnyGemm {
  int64_t m = 0, n = 0, k = 0;
  T alpha = 1, beta = 0;
  const T* a = nullptr;
  int64_t a_rs = 0, a_cs = 0;
  const T* b = nullptr;
  int64_t b_rs = 0, b_cs = 0;
  const T* c = nullptr;
  int64_t c_rs = 0, c_cs = 0;
  bool relu = false;  // nnet::gemm_epilogue's relu (NaN passes through)
  T* out = nullptr;
};

/// Whether skinny_gemm takes a product of this size: 1 <= n <= kSkinnyMaxN<T>, 1 <= k <=
/// kSkinnyMaxK, m >= 1.
template <class T>
constexpr bool skinny_gemm_fits(int64_t m, int64_t n, int64_t k) {
  return m >= 1 && n >= 1 && n <= kSkinnyMaxN<T> && k >= 1 && k <= kSkinnyMaxK;
}

/// Runs the product (float or double; skinny_gemm_fits must hold). Rows are split over
/// OpenMP threads only from openmp_elemwise_minsize elements of a (parallel.hpp).
void skinny_gemm(const SkinnyGemm<float>& g);
void skinny_gemm(const SkinnyGemm<double>& g);

namespace detail {
/// The baseline-instruction-set path skinny_gemm takes on a CPU without AVX2+FMA (for tests).
void skinny_gemm_portable(const SkinnyGemm<float>& g);
void skinny_gemm_portable(const SkinnyGemm<double>& g);
}  // namespace detail

}  // namespace theon::backends::cpu
