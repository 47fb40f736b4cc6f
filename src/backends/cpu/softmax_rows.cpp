#include "backends/cpu/softmax_rows.hpp"

#include "backends/cpu/parallel.hpp"
#include "ops/scalar/nnet_ops.hpp"

#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>

#if defined(THEON_HAVE_SLEEF) && defined(__x86_64__)
#define THEON_SOFTMAX_AVX2 1
// SLEEF's AVX2 expf declared with a GCC vector type (the __m256 ABI) rather than through
// sleef.h, which declares it only when the whole file is compiled for AVX.
typedef float theon_v8f __attribute__((vector_size(32)));
extern "C" theon_v8f Sleef_expf8_u10avx2(theon_v8f);
// And its AVX-512 one, 16 lanes (the __m512 ABI).
typedef float theon_v16f __attribute__((vector_size(64)));
extern "C" theon_v16f Sleef_expf16_u10avx512f(theon_v16f);
#endif

namespace theon::backends::cpu {

namespace {

// The row maximum, or NaN when the row holds one.
float row_max(const float* x, int64_t n) {
  float m = -std::numeric_limits<float>::infinity();
  bool nan = false;
  for (int64_t i = 0; i < n; ++i) {
    m = x[i] > m ? x[i] : m;
    nan = nan || x[i] != x[i];
  }
  return nan ? std::numeric_limits<float>::quiet_NaN() : m;
}

// x - m in float loses up to half an ulp of the difference (4e-7 relative in exp(x - m) for a
// difference of 8): the rounding error, exact by TwoSum, corrects the exp to first order,
// exp(d + err) = exp(d) * (1 + err), so the result is within a few ulp of the double softmax.
// Where the difference is -inf (x is -inf, m is +inf, or a spread beyond FLT_MAX overflows the
// float difference) the exp is 0, as in double; the TwoSum would give inf - inf there, and
// 0 * NaN. The guard tests the difference, not x (issue 29).
float shifted_exp_corrected(float x, float neg_m) {
  const float d = x + neg_m;
  if (d == -std::numeric_limits<float>::infinity()) return 0.f;
  const float xb = d - neg_m;
  const float err = (x - xb) + (neg_m - (d - xb));
  const float e = std::exp(d);
  return e + e * err;
}

// y[i] = exp(x[i] - m); returns the sum in double.
double exp_row_scalar(const float* x, float* y, int64_t n, float m) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float e = shifted_exp_corrected(x[i], -m);
    y[i] = e;
    sum += e;
  }
  return sum;
}

#ifdef THEON_SOFTMAX_AVX2
// Everything that touches a 32-byte vector carries the target attribute (a lambda or a
// template would not inherit it, and would pass the vectors to SLEEF in memory, not ymm).
typedef double theon_v4d __attribute__((vector_size(32)));
typedef float theon_v4f __attribute__((vector_size(16)));

__attribute__((target("avx2,fma"))) static inline theon_v8f exp_shifted_v8(theon_v8f v, theon_v8f neg_m) {
  const theon_v8f zero = {};  // +0 (neg_m * 0 is -0 where m > 0: such lanes printed as -0)
  const theon_v8f d = v + neg_m;
  const theon_v8f vb = d - neg_m;
  const theon_v8f err = (v - vb) + (neg_m - (d - vb));  // as shifted_exp_corrected
  const theon_v8f e = Sleef_expf8_u10avx2(d);
  const theon_v8f ninf = zero - std::numeric_limits<float>::infinity();
  return d == ninf ? zero : e + e * err;  // a -inf difference: 0 (the correction would make it NaN)
}

__attribute__((target("avx2,fma"))) static inline theon_v4d widen_sum(theon_v8f e) {
  const theon_v4f lo = {e[0], e[1], e[2], e[3]}, hi = {e[4], e[5], e[6], e[7]};
  return __builtin_convertvector(lo, theon_v4d) + __builtin_convertvector(hi, theon_v4d);
}

__attribute__((target("avx2,fma"))) double exp_row_avx2(const float* x, float* y, int64_t n, float m) {
  const theon_v8f neg_m = {-m, -m, -m, -m, -m, -m, -m, -m};
  theon_v4d acc = {0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    theon_v8f v;
    std::memcpy(&v, x + i, sizeof v);
    const theon_v8f e = exp_shifted_v8(v, neg_m);
    std::memcpy(y + i, &e, sizeof e);
    acc += widen_sum(e);
  }
  if (i < n) {  // the tail through a padded vector: -inf lanes give exp 0
    theon_v8f v;
    for (int k = 0; k < 8; ++k) v[k] = i + k < n ? x[i + k] : -std::numeric_limits<float>::infinity();
    const theon_v8f e = exp_shifted_v8(v, neg_m);
    std::memcpy(y + i, &e, static_cast<size_t>(n - i) * sizeof(float));
    acc += widen_sum(e);
  }
  return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

// The row maximum (NaN when the row holds one) and the scale by 1/sum, 8 lanes at a time: as
// scalar loops (the NaN test keeps the compiler from vectorising the maximum) they took about
// half of W7's time (perf, issue 18).
__attribute__((target("avx2,fma"))) float row_max_avx2(const float* x, int64_t n) {
  const float ninf = -std::numeric_limits<float>::infinity();
  theon_v8f m0 = {ninf, ninf, ninf, ninf, ninf, ninf, ninf, ninf}, m1 = m0;
  typedef int theon_v8i __attribute__((vector_size(32)));
  theon_v8i nan = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    theon_v8f a, b;
    std::memcpy(&a, x + i, sizeof a);
    std::memcpy(&b, x + i + 8, sizeof b);
    m0 = a > m0 ? a : m0;
    m1 = b > m1 ? b : m1;
    nan |= (a != a) | (b != b);
  }
  m0 = m1 > m0 ? m1 : m0;
  float m = ninf;
  bool any_nan = false;
  for (int k = 0; k < 8; ++k) {
    m = m0[k] > m ? m0[k] : m;
    any_nan = any_nan || nan[k] != 0;
  }
  for (; i < n; ++i) {
    m = x[i] > m ? x[i] : m;
    any_nan = any_nan || x[i] != x[i];
  }
  return any_nan ? std::numeric_limits<float>::quiet_NaN() : m;
}

__attribute__((target("avx2,fma"))) void scale_row_avx2(float* y, int64_t n, float scale) {
  const theon_v8f s = {scale, scale, scale, scale, scale, scale, scale, scale};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    theon_v8f v;
    std::memcpy(&v, y + i, sizeof v);
    v *= s;
    std::memcpy(y + i, &v, sizeof v);
  }
  for (; i < n; ++i) y[i] *= scale;
}

// The AVX-512 row: the same arithmetic 16 lanes at a time (SLEEF's AVX-512 expf, the sum in
// two double accumulators of 8), which on Zen 4 halves the instructions per element of the AVX2
// row. Rows pass through row_max_avx2 and scale_row_avx2 (memory-bound at 8 lanes).
#define THEON_AVX512 __attribute__((target("avx512f,avx2,fma")))
THEON_AVX512 static inline theon_v16f exp_shifted_v16(theon_v16f v, theon_v16f neg_m) {
  const theon_v16f zero = {};  // +0, as exp_shifted_v8
  const theon_v16f d = v + neg_m;
  const theon_v16f vb = d - neg_m;
  const theon_v16f err = (v - vb) + (neg_m - (d - vb));  // as shifted_exp_corrected
  const theon_v16f e = Sleef_expf16_u10avx512f(d);
  const theon_v16f ninf = zero - std::numeric_limits<float>::infinity();
  return d == ninf ? zero : e + e * err;  // as exp_shifted_v8
}

typedef double theon_v8d __attribute__((vector_size(64)));

THEON_AVX512 double exp_row_avx512(const float* x, float* y, int64_t n, float m) {
  theon_v16f neg_m;
  for (int k = 0; k < 16; ++k) neg_m[k] = -m;
  theon_v8d acc0 = {0, 0, 0, 0, 0, 0, 0, 0}, acc1 = acc0;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    theon_v16f v;
    std::memcpy(&v, x + i, sizeof v);
    const theon_v16f e = exp_shifted_v16(v, neg_m);
    std::memcpy(y + i, &e, sizeof e);
    acc0 += __builtin_convertvector(__builtin_shufflevector(e, e, 0, 1, 2, 3, 4, 5, 6, 7), theon_v8d);
    acc1 += __builtin_convertvector(__builtin_shufflevector(e, e, 8, 9, 10, 11, 12, 13, 14, 15), theon_v8d);
  }
  if (i < n) {  // the tail through a padded vector: -inf lanes give exp 0
    theon_v16f v;
    for (int k = 0; k < 16; ++k) v[k] = i + k < n ? x[i + k] : -std::numeric_limits<float>::infinity();
    const theon_v16f e = exp_shifted_v16(v, neg_m);
    std::memcpy(y + i, &e, static_cast<size_t>(n - i) * sizeof(float));
    acc0 += __builtin_convertvector(__builtin_shufflevector(e, e, 0, 1, 2, 3, 4, 5, 6, 7), theon_v8d);
    acc1 += __builtin_convertvector(__builtin_shufflevector(e, e, 8, 9, 10, 11, 12, 13, 14, 15), theon_v8d);
  }
  acc0 += acc1;
  return ((acc0[0] + acc0[1]) + (acc0[2] + acc0[3])) + ((acc0[4] + acc0[5]) + (acc0[6] + acc0[7]));
}

std::atomic<bool> g_no_avx512{false};  // softmax_rows_avx512(false): the AVX2 rows, for their tests

bool have_avx512() {
  static const bool yes = __builtin_cpu_supports("avx512f");
  return yes && !g_no_avx512.load(std::memory_order_relaxed);
}

bool have_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return yes;
}
#endif

double exp_row(const float* x, float* y, int64_t n, float m, bool vector) {
#ifdef THEON_SOFTMAX_AVX2
  if (vector && have_avx2()) return have_avx512() ? exp_row_avx512(x, y, n, m) : exp_row_avx2(x, y, n, m);
#endif
  (void)vector;
  return exp_row_scalar(x, y, n, m);
}

float row_max(const float* x, int64_t n, bool vector) {
#ifdef THEON_SOFTMAX_AVX2
  if (vector && have_avx2()) return row_max_avx2(x, n);
#endif
  (void)vector;
  return row_max(x, n);
}

void scale_row(float* y, int64_t n, float scale, bool vector) {
#ifdef THEON_SOFTMAX_AVX2
  if (vector && have_avx2()) return scale_row_avx2(y, n, scale);
#endif
  (void)vector;
  for (int64_t i = 0; i < n; ++i) y[i] *= scale;
}

void softmax_row(const float* x, float* y, int64_t n, bool log, bool vector) {
  const float m = row_max(x, n, vector);
  if (m != m || m == -std::numeric_limits<float>::infinity()) {
    // NaN, or every value -inf: the reference's exp(x - m) is NaN throughout.
    for (int64_t i = 0; i < n; ++i) y[i] = std::numeric_limits<float>::quiet_NaN();
    return;
  }
  const double sum = exp_row(x, y, n, m, vector);  // y holds exp(x - m); for log it is overwritten
  if (log) {
    // (x - m) - log(sum), as nnet::log_softmax_value: x - (m + log(sum)) loses log(sum) once m
    // is beyond 2^53 times it (a float32 row of 1e17s gave 0 instead of -log(3)).
    const double log_sum = std::log(sum);
    for (int64_t i = 0; i < n; ++i) y[i] = static_cast<float>(nnet::log_softmax_value(double(x[i]), double(m), log_sum));
  } else {
    scale_row(y, n, static_cast<float>(1.0 / sum), vector);
  }
}

// The fused softmax + crossentropy of one row: softmax into y, and the loss
// m + log(sum) - x[label] (nnet::softmax_xent_loss), NaN with the row when it is all NaN.
float softmax_xent_row(const float* x, float* y, int64_t n, int64_t label, bool vector) {
  const float m = row_max(x, n, vector);
  if (m != m || m == -std::numeric_limits<float>::infinity()) {
    for (int64_t i = 0; i < n; ++i) y[i] = std::numeric_limits<float>::quiet_NaN();
    return std::numeric_limits<float>::quiet_NaN();
  }
  const double sum = exp_row(x, y, n, m, vector);
  scale_row(y, n, static_cast<float>(1.0 / sum), vector);
  return static_cast<float>(nnet::softmax_xent_loss(double(m), sum, double(x[label])));
}

}  // namespace

void softmax_xent_rows_f32(const float* x, int64_t x_row, const int64_t* labels, float* loss, float* sm, int64_t rows,
                           int64_t n, bool vector) {
  const int threads = rows > 1 ? parallel_threads(rows * n) : 1;
  (void)threads;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
  for (int64_t r = 0; r < rows; ++r) loss[r] = softmax_xent_row(x + r * x_row, sm + r * n, n, labels[r], vector);
}

void softmax_rows_f32(const float* x, int64_t x_row, float* y, int64_t y_row, int64_t rows, int64_t n, bool log,
                      bool vector) {
  const int threads = rows > 1 ? parallel_threads(rows * n) : 1;  // parallel.hpp
  (void)threads;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
  for (int64_t r = 0; r < rows; ++r) softmax_row(x + r * x_row, y + r * y_row, n, log, vector);
}

bool softmax_rows_avx512(bool allow) {
#ifdef THEON_SOFTMAX_AVX2
  g_no_avx512.store(!allow, std::memory_order_relaxed);
  return have_avx2() && have_avx512();
#else
  (void)allow;
  return false;
#endif
}

bool softmax_rows_vectorised() {
#ifdef THEON_SOFTMAX_AVX2
  return have_avx2();
#else
  return false;
#endif
}

}  // namespace theon::backends::cpu
