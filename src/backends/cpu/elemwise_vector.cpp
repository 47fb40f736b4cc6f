#include "backends/cpu/elemwise_vector.hpp"

#include "backends/cpu/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>

#if defined(THEON_HAVE_SLEEF) && defined(__x86_64__)
#define THEON_ELEMWISE_VECTOR 1
// SLEEF's functions declared with GCC vector types (the __m256 / __m512 ABI) rather than
// through sleef.h, which declares them only when the whole file is compiled for AVX.
typedef float theon_ev8f __attribute__((vector_size(32)));
typedef float theon_ev16f __attribute__((vector_size(64)));
#define THEON_SLEEF_UNARY(fn)                                  \
  extern "C" theon_ev8f Sleef_##fn##f8_u10avx2(theon_ev8f);    \
  extern "C" theon_ev16f Sleef_##fn##f16_u10avx512f(theon_ev16f);
THEON_SLEEF_UNARY(exp)
THEON_SLEEF_UNARY(log)
THEON_SLEEF_UNARY(expm1)
THEON_SLEEF_UNARY(log1p)
THEON_SLEEF_UNARY(sin)
THEON_SLEEF_UNARY(cos)
#undef THEON_SLEEF_UNARY

// float32 tanh: the generated modules' own (tanh_f32_vector.inc), once per instruction set.
// It is within 0.51 ulp where SLEEF's tanhf reaches 1.0, and about 1.65x its speed.
#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace theon_tanh_avx2 {
#define THEON_TANH_LANES 4
#define THEON_TANH_AVX512 0
#include "backends/cpu/tanh_f32_vector.inc"
#undef THEON_TANH_LANES
#undef THEON_TANH_AVX512
}  // namespace theon_tanh_avx2
#pragma GCC pop_options
#pragma GCC push_options
#pragma GCC target("avx512f,avx2,fma")
namespace theon_tanh_avx512 {
#define THEON_TANH_LANES 8
#define THEON_TANH_AVX512 1
#include "backends/cpu/tanh_f32_vector.inc"
#undef THEON_TANH_LANES
#undef THEON_TANH_AVX512
}  // namespace theon_tanh_avx512
#pragma GCC pop_options
#endif

namespace theon::backends::cpu {

#ifdef THEON_ELEMWISE_VECTOR
namespace {

using F8 = theon_ev8f (*)(theon_ev8f);
using F16 = theon_ev16f (*)(theon_ev16f);

struct VectorFns {
  F8 avx2 = nullptr;
  F16 avx512 = nullptr;
};

VectorFns fns_of(ops::ScalarOpId op) {
  using S = ops::ScalarOpId;
  switch (op) {
#define THEON_CASE(id, fn) \
  case S::id: return {Sleef_##fn##f8_u10avx2, Sleef_##fn##f16_u10avx512f};
    THEON_CASE(Exp, exp)
    THEON_CASE(Log, log)
    THEON_CASE(Expm1, expm1)
    THEON_CASE(Log1p, log1p)
    THEON_CASE(Sin, sin)
    THEON_CASE(Cos, cos)
#undef THEON_CASE
    default: return {};
  }
}

enum class Isa { None, Avx2, Avx512 };

std::atomic<bool> g_avx512_enabled{true};

Isa isa() {
  static const Isa which = [] {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return Isa::Avx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::Avx2;
    return Isa::None;
  }();
  return which;
}

// Whole vectors, then the tail through a padded vector (its unused lanes hold 1, a value
// every function here takes without raising anything).
__attribute__((target("avx2,fma"))) void run8(F8 f, const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    theon_ev8f v;
    std::memcpy(&v, x + i, sizeof v);
    v = f(v);
    std::memcpy(y + i, &v, sizeof v);
  }
  if (i < n) {
    float buf[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    std::memcpy(buf, x + i, static_cast<size_t>(n - i) * sizeof(float));
    theon_ev8f v;
    std::memcpy(&v, buf, sizeof v);
    v = f(v);
    std::memcpy(buf, &v, sizeof v);
    std::memcpy(y + i, buf, static_cast<size_t>(n - i) * sizeof(float));
  }
}

__attribute__((target("avx512f,avx2,fma"))) void run16(F16 f, const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    theon_ev16f v;
    std::memcpy(&v, x + i, sizeof v);
    v = f(v);
    std::memcpy(y + i, &v, sizeof v);
  }
  if (i < n) {
    float buf[16];
    std::fill(buf, buf + 16, 1.0f);
    std::memcpy(buf, x + i, static_cast<size_t>(n - i) * sizeof(float));
    theon_ev16f v;
    std::memcpy(&v, buf, sizeof v);
    v = f(v);
    std::memcpy(buf, &v, sizeof v);
    std::memcpy(y + i, buf, static_cast<size_t>(n - i) * sizeof(float));
  }
}

}  // namespace

void elemwise_vector_avx512(bool enabled) { g_avx512_enabled.store(enabled, std::memory_order_relaxed); }

bool has_vector_unary_f32(ops::ScalarOpId op) {
  return isa() != Isa::None && (op == ops::ScalarOpId::Tanh || fns_of(op).avx2 != nullptr);
}

bool vector_unary_f32(ops::ScalarOpId op, const float* x, float* y, int64_t n) {
  if (!has_vector_unary_f32(op)) return false;
  const VectorFns f = fns_of(op);
  const bool wide = isa() == Isa::Avx512 && g_avx512_enabled.load(std::memory_order_relaxed);
  const bool tanh = op == ops::ScalarOpId::Tanh;
  auto run = [&](int64_t begin, int64_t end) {
    if (tanh && wide) theon_tanh_avx512::theon_tanh_f32(x + begin, y + begin, end - begin);
    else if (tanh) theon_tanh_avx2::theon_tanh_f32(x + begin, y + begin, end - begin);
    else if (wide) run16(f.avx512, x + begin, y + begin, end - begin);
    else run8(f.avx2, x + begin, y + begin, end - begin);
  };
  const int threads = parallel_threads(n);
  if (threads <= 1) {
    run(0, n);
    return true;
  }
  // Chunks of whole 16-lane vectors, so only the last chunk has a tail.
  const int64_t chunk = ((n + threads - 1) / threads + 15) / 16 * 16;
#pragma omp parallel for num_threads(threads) schedule(static, 1)
  for (int t = 0; t < threads; ++t) {
    const int64_t begin = std::min(n, t * chunk), end = std::min(n, begin + chunk);
    if (begin < end) run(begin, end);
  }
  return true;
}

#else

void elemwise_vector_avx512(bool) {}
bool has_vector_unary_f32(ops::ScalarOpId) { return false; }
bool vector_unary_f32(ops::ScalarOpId, const float*, float*, int64_t) { return false; }

#endif

}  // namespace theon::backends::cpu
