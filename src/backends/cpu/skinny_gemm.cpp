// The narrow-output matrix product (skinny_gemm.hpp). Layout of the AVX2 path:
// - B (k, n) is packed once into a stack panel of k rows of NP 32-byte vectors (NP = 1 when n
//   fits one vector, else 2), zero beyond column n, whatever b's strides;
// - rows of the output are computed RB at a time (8 for one vector a row, 4 for two: enough
//   independent FMA chains to hide the FMA latency), each row's accumulators fed by a
//   broadcast of a(i, p) times panel row p;
// - the epilogue (alpha, the broadcast addend, relu) is applied in registers; a row is stored
//   with whole vectors when the store stays inside the caller's rows (the lanes past column n
//   land in the next rows, which are stored after it), else lane by lane.
// The portable path computes the same sums in the same order (accumulation in T, one product
// added per p), lane by lane, without FMA (so the last bit may differ).
#include "backends/cpu/skinny_gemm.hpp"

#include "backends/cpu/parallel.hpp"

#include <algorithm>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#define THEON_SKINNY_AVX2 1
#include <immintrin.h>
#endif

namespace theon::backends::cpu {

namespace {

// Bias of the row-broadcast addend (c_rs == 0) is loaded once; any other addend per row.
enum class Addend { None, Row, PerRow };

template <class T>
Addend addend_kind(const SkinnyGemm<T>& g) {
  if (!g.c) return Addend::None;
  return g.c_rs == 0 ? Addend::Row : Addend::PerRow;
}

template <class T>
inline T relu_keep_nan(T v) {
  return !(v > T(0)) && v == v ? T(0) : v;
}

// Rows [r0, r1), lane by lane: acc = sum_p a(i,p) * b(p,j) in T, then the epilogue.
template <class T>
void skinny_rows_portable(const SkinnyGemm<T>& g, int64_t r0, int64_t r1) {
  T acc[kSkinnyMaxN<T>];
  for (int64_t i = r0; i < r1; ++i) {
    std::fill(acc, acc + g.n, T(0));
    const T* ar = g.a + i * g.a_rs;
    for (int64_t p = 0; p < g.k; ++p) {
      const T av = ar[p * g.a_cs];
      const T* br = g.b + p * g.b_rs;
      for (int64_t j = 0; j < g.n; ++j) acc[j] += av * br[j * g.b_cs];
    }
    T* o = g.out + i * g.n;
    for (int64_t j = 0; j < g.n; ++j) {
      T v = acc[j] * g.alpha;
      if (g.c) v += g.beta * g.c[i * g.c_rs + j * g.c_cs];
      o[j] = g.relu ? relu_keep_nan(v) : v;
    }
  }
}

#ifdef THEON_SKINNY_AVX2
#define THEON_AVX2 __attribute__((target("avx2,fma")))

template <class T>
struct Avx;

template <>
struct Avx<float> {
  using V = __m256;
  static constexpr int L = 8;
  THEON_AVX2 static V zero() { return _mm256_setzero_ps(); }
  THEON_AVX2 static V load(const float* p) { return _mm256_loadu_ps(p); }
  THEON_AVX2 static V set1(float v) { return _mm256_set1_ps(v); }
  THEON_AVX2 static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
  THEON_AVX2 static V fmadd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  THEON_AVX2 static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  THEON_AVX2 static V add(V a, V b) { return _mm256_add_ps(a, b); }
  // v where v > 0 or v is NaN, else +0 (nnet::gemm_epilogue's relu)
  THEON_AVX2 static V relu(V v) { return _mm256_and_ps(v, _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_NLE_UQ)); }
};

template <>
struct Avx<double> {
  using V = __m256d;
  static constexpr int L = 4;
  THEON_AVX2 static V zero() { return _mm256_setzero_pd(); }
  THEON_AVX2 static V load(const double* p) { return _mm256_loadu_pd(p); }
  THEON_AVX2 static V set1(double v) { return _mm256_set1_pd(v); }
  THEON_AVX2 static void store(double* p, V v) { _mm256_storeu_pd(p, v); }
  THEON_AVX2 static V fmadd(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
  THEON_AVX2 static V mul(V a, V b) { return _mm256_mul_pd(a, b); }
  THEON_AVX2 static V add(V a, V b) { return _mm256_add_pd(a, b); }
  THEON_AVX2 static V relu(V v) { return _mm256_and_pd(v, _mm256_cmp_pd(v, _mm256_setzero_pd(), _CMP_NLE_UQ)); }
};

// RB rows from row i: the sums, the epilogue, the stores. `whole` rows may be stored with
// whole vectors (their spill past column n stays inside the caller's rows).
template <class T, int NP, int RB, Addend A>
THEON_AVX2 inline void skinny_block(const SkinnyGemm<T>& g, const T* panel, const typename Avx<T>::V* row_bias,
                                    int64_t i, bool whole) {
  using X = Avx<T>;
  using V = typename X::V;
  constexpr int L = X::L;
  V acc[RB][NP];
  #pragma GCC unroll 8
  for (int r = 0; r < RB; ++r)
    #pragma GCC unroll 8
    for (int q = 0; q < NP; ++q) acc[r][q] = X::zero();
  const T* ar[RB];
  #pragma GCC unroll 8
  for (int r = 0; r < RB; ++r) ar[r] = g.a + (i + r) * g.a_rs;
  const int64_t acs = g.a_cs;
  for (int64_t p = 0; p < g.k; ++p) {
    V bv[NP];
    #pragma GCC unroll 8
    for (int q = 0; q < NP; ++q) bv[q] = X::load(panel + (p * NP + q) * L);
    #pragma GCC unroll 8
    for (int r = 0; r < RB; ++r) {
      const V av = X::set1(ar[r][p * acs]);
      #pragma GCC unroll 8
      for (int q = 0; q < NP; ++q) acc[r][q] = X::fmadd(av, bv[q], acc[r][q]);
    }
  }
  const V alpha = X::set1(g.alpha);
  #pragma GCC unroll 8
  for (int r = 0; r < RB; ++r) {
    const int64_t row = i + r;
    alignas(32) T rb[NP * L];
    if constexpr (A == Addend::PerRow) {
      for (int64_t j = 0; j < g.n; ++j) rb[j] = g.beta * g.c[row * g.c_rs + j * g.c_cs];
      for (int64_t j = g.n; j < NP * L; ++j) rb[j] = T(0);
    }
    T* o = g.out + row * g.n;
    alignas(32) T tmp[NP * L];
    #pragma GCC unroll 8
    for (int q = 0; q < NP; ++q) {
      V v = X::mul(acc[r][q], alpha);
      if constexpr (A == Addend::Row) v = X::add(v, row_bias[q]);
      if constexpr (A == Addend::PerRow) v = X::add(v, X::load(rb + q * L));
      if (g.relu) v = X::relu(v);
      if (whole) X::store(o + q * L, v);
      else X::store(tmp + q * L, v);
    }
    if (!whole) std::memcpy(o, tmp, static_cast<size_t>(g.n) * sizeof(T));
  }
}

template <class T, int NP, Addend A>
THEON_AVX2 void skinny_rows_avx2(const SkinnyGemm<T>& g, const T* panel, int64_t r0, int64_t r1) {
  using X = Avx<T>;
  using V = typename X::V;
  constexpr int L = X::L;
  constexpr int RB = NP == 1 ? 8 : 4;
  V row_bias[NP];
  if constexpr (A == Addend::Row) {
    alignas(32) T rb[NP * L] = {};
    for (int64_t j = 0; j < g.n; ++j) rb[j] = g.beta * g.c[j * g.c_cs];
    for (int q = 0; q < NP; ++q) row_bias[q] = X::load(rb + q * L);
  }
  // Row i may be stored with whole vectors when i * n + NP * L <= r1 * n.
  const int64_t spill = NP * L - g.n;  // lanes past the row's end
  const int64_t whole_end = std::max<int64_t>(r0, r1 - (spill + g.n - 1) / g.n);
  int64_t i = r0;
  for (; i + RB <= whole_end; i += RB) skinny_block<T, NP, RB, A>(g, panel, row_bias, i, true);
  for (; i < r1; ++i) skinny_block<T, NP, 1, A>(g, panel, row_bias, i, i < whole_end);
}

template <class T, int NP, Addend A>
THEON_AVX2 void skinny_avx2(const SkinnyGemm<T>& g) {
  constexpr int L = Avx<T>::L;
  alignas(32) T panel[kSkinnyMaxK * NP * L];
  for (int64_t p = 0; p < g.k; ++p) {
    T* row = panel + p * NP * L;
    const T* src = g.b + p * g.b_rs;
    if (g.b_cs == 1) std::memcpy(row, src, static_cast<size_t>(g.n) * sizeof(T));
    else
      for (int64_t j = 0; j < g.n; ++j) row[j] = src[j * g.b_cs];
    std::fill(row + g.n, row + NP * L, T(0));
  }
  const int threads = parallel_threads(g.m * g.k);
  if (threads <= 1) return skinny_rows_avx2<T, NP, A>(g, panel, 0, g.m);
#pragma omp parallel num_threads(threads)
  {
#ifdef _OPENMP
    const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
#else
    const int64_t t = 0, nt = 1;
#endif
    const int64_t r0 = g.m * t / nt, r1 = g.m * (t + 1) / nt;
    if (r0 < r1) skinny_rows_avx2<T, NP, A>(g, panel, r0, r1);
  }
}

template <class T, int NP>
void skinny_avx2_addend(const SkinnyGemm<T>& g) {
  switch (addend_kind(g)) {
    case Addend::None: return skinny_avx2<T, NP, Addend::None>(g);
    case Addend::Row: return skinny_avx2<T, NP, Addend::Row>(g);
    case Addend::PerRow: return skinny_avx2<T, NP, Addend::PerRow>(g);
  }
}

bool have_avx2_fma() {
  static const bool yes = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return yes;
}
#endif  // THEON_SKINNY_AVX2

template <class T>
void skinny_portable(const SkinnyGemm<T>& g) {
  const int threads = parallel_threads(g.m * g.k);
  if (threads <= 1) return skinny_rows_portable(g, 0, g.m);
#pragma omp parallel for num_threads(threads)
  for (int64_t t = 0; t < threads; ++t) skinny_rows_portable(g, g.m * t / threads, g.m * (t + 1) / threads);
}

template <class T>
void run(const SkinnyGemm<T>& g) {
#ifdef THEON_SKINNY_AVX2
  if (have_avx2_fma()) {
    if (g.n <= Avx<T>::L) return skinny_avx2_addend<T, 1>(g);
    return skinny_avx2_addend<T, 2>(g);
  }
#endif
  skinny_portable(g);
}

}  // namespace

void skinny_gemm(const SkinnyGemm<float>& g) { run(g); }
void skinny_gemm(const SkinnyGemm<double>& g) { run(g); }

namespace detail {
void skinny_gemm_portable(const SkinnyGemm<float>& g) { skinny_portable(g); }
void skinny_gemm_portable(const SkinnyGemm<double>& g) { skinny_portable(g); }
}  // namespace detail

}  // namespace theon::backends::cpu
