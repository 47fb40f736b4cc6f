// The float32 vector loops of a lone transcendental (backends/cpu/elemwise_vector): every op
// on both paths (AVX-512 where the CPU has it, AVX2 forced) against the double function on
// lengths around the 8/16 lanes, special values at every position class, in place, threaded;
// a sweep of floats for tanh; and the Elemwise kernel taking the loop for contiguous, strided and
// broadcast operands alike (the same bits).
#include "backends/cpu/elemwise_vector.hpp"

#include <theon/theon.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace theon::backends::cpu {
namespace {

using ops::ScalarOpId;

double reference(ScalarOpId op, double x) {
  switch (op) {
    case ScalarOpId::Exp: return std::exp(x);
    case ScalarOpId::Log: return std::log(x);
    case ScalarOpId::Expm1: return std::expm1(x);
    case ScalarOpId::Log1p: return std::log1p(x);
    case ScalarOpId::Tanh: return std::tanh(x);
    case ScalarOpId::Sin: return std::sin(x);
    case ScalarOpId::Cos: return std::cos(x);
    default: return NAN;
  }
}

constexpr ScalarOpId kOps[] = {ScalarOpId::Exp, ScalarOpId::Log, ScalarOpId::Expm1, ScalarOpId::Log1p,
                               ScalarOpId::Tanh, ScalarOpId::Sin, ScalarOpId::Cos};

// Within 1 ulp of the correctly rounded result (SLEEF's u10 bound; tanh, the generated
// modules' own: 0.504), NaN where it is NaN, infinities and zeros exactly.
void expect_close(ScalarOpId op, float x, float got) {
  const double bound = op == ScalarOpId::Tanh ? 0.504 : 1.0;
  const double want = reference(op, x);
  const float want_f = static_cast<float>(want);
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << static_cast<int>(op) << " of " << x << " gave " << got;
    return;
  }
  if (std::isinf(want_f) || want_f == 0) {
    EXPECT_EQ(got, want_f) << static_cast<int>(op) << " of " << x;
    return;
  }
  const double ulp = std::nextafter(std::fabs(want_f), INFINITY) - std::fabs(want_f);
  EXPECT_LE(std::fabs(double(got) - want), bound * ulp) << static_cast<int>(op) << " of " << x << ": " << got
                                                      << " vs " << want;
}

std::vector<float> values(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-20.f, 20.f);
  std::vector<float> x(n);
  for (auto& v : x) v = u(rng);
  const float specials[] = {0.f, -0.f, 1.f, -1.f, 1e-30f, -1e-30f, 88.f, -103.f, 1e30f,
                            std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::denorm_min()};
  // first lane, inside, last lane of a vector and the tail
  for (size_t k = 0; k < std::size(specials); ++k) {
    for (int64_t at : {int64_t(0), int64_t(5), int64_t(15), n - 1})
      if (at >= 0 && at < n) x[static_cast<size_t>((at + 3 * int64_t(k)) % n)] = specials[k];
  }
  return x;
}

struct Avx512 {
  explicit Avx512(bool on) { elemwise_vector_avx512(on); }
  ~Avx512() { elemwise_vector_avx512(true); }
};

TEST(ElemwiseVector, EveryOpOnBothPathsAgainstDouble) {
  if (!has_vector_unary_f32(ScalarOpId::Exp)) GTEST_SKIP() << "no SLEEF or no AVX2 here";
  EXPECT_FALSE(has_vector_unary_f32(ScalarOpId::Add));
  EXPECT_FALSE(has_vector_unary_f32(ScalarOpId::Sigmoid));
  for (bool wide : {true, false}) {
    Avx512 path(wide);
    for (ScalarOpId op : kOps)
      for (int64_t n : {1, 7, 8, 9, 15, 16, 17, 31, 33, 1000}) {
        const std::vector<float> x = values(n, static_cast<uint32_t>(n));
        std::vector<float> y(n + 1, 12345.f);  // one guard element past the end
        ASSERT_TRUE(vector_unary_f32(op, x.data(), y.data(), n));
        for (int64_t i = 0; i < n; ++i) expect_close(op, x[i], y[i]);
        EXPECT_EQ(y[n], 12345.f) << "wrote past the end";
        // in place gives the same
        std::vector<float> z = x;
        ASSERT_TRUE(vector_unary_f32(op, z.data(), z.data(), n));
        for (int64_t i = 0; i < n; ++i) EXPECT_TRUE(z[i] == y[i] || (std::isnan(z[i]) && std::isnan(y[i])));
      }
  }
}

TEST(ElemwiseVector, ThreadedSplitCoversEveryElement) {
  if (!has_vector_unary_f32(ScalarOpId::Tanh)) GTEST_SKIP() << "no SLEEF or no AVX2 here";
  const int64_t n = 1'000'003;  // past openmp_elemwise_minsize, odd
  const std::vector<float> x = values(n, 7);
  std::vector<float> y(n, NAN);
  ASSERT_TRUE(vector_unary_f32(ScalarOpId::Tanh, x.data(), y.data(), n));
  for (int64_t i = 0; i < n; i += 997) expect_close(ScalarOpId::Tanh, x[i], y[i]);
  expect_close(ScalarOpId::Tanh, x[n - 1], y[n - 1]);
}

// tanh over a sweep of floats (every 4099th bit pattern of both signs, all exponents), on both
// paths: within 0.504 ulp (0.5035 over every float), the sign of zero kept.
TEST(ElemwiseVector, TanhWithinHalfAnUlpOverASweepOfFloats) {
  if (!has_vector_unary_f32(ScalarOpId::Tanh)) GTEST_SKIP() << "no SLEEF or no AVX2 here";
  std::vector<float> x;
  for (uint64_t b = 0; b < 0x7f800000u; b += 4099)
    for (uint32_t sign : {0u, 0x80000000u}) {
      const uint32_t u = static_cast<uint32_t>(b) | sign;
      float f;
      std::memcpy(&f, &u, sizeof f);
      x.push_back(f);
    }
  const auto n = static_cast<int64_t>(x.size());
  for (bool wide : {true, false}) {
    Avx512 path(wide);
    std::vector<float> y(x.size());
    ASSERT_TRUE(vector_unary_f32(ScalarOpId::Tanh, x.data(), y.data(), n));
    int bad = 0;
    for (int64_t i = 0; i < n && bad < 5; ++i) {
      const double want = std::tanh(double(x[i]));
      if (want == 0) {
        bad += !(y[i] == 0 && std::signbit(y[i]) == std::signbit(x[i]));
        continue;
      }
      const float w = static_cast<float>(want);
      const double ulp = std::max(double(std::nextafter(std::fabs(w), INFINITY) - std::fabs(w)), 1.4e-45);
      if (std::fabs(double(y[i]) - want) > 0.504 * ulp) {
        ADD_FAILURE() << "tanh(" << x[i] << ") = " << y[i] << ", want " << want << (wide ? " (AVX-512)" : " (AVX2)");
        ++bad;
      }
    }
    EXPECT_EQ(bad, 0);
  }
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0 || (std::isnan(a) && std::isnan(b)); }

TEST(ElemwiseVector, TheElemwiseKernelGivesTheSameBitsForContiguousStridedAndBroadcastInputs) {
  // The contiguous input takes the vector loop directly; a strided view, or a broadcast row,
  // is copied into the output first and takes the same loop there.
  Var m = tensor::matrix("m", DType::Float32);
  for (auto build : {+[](const Var& v) { return tensor::tanh(v); }, +[](const Var& v) { return tensor::log1p(v); }}) {
    Function f = function({m}, {build(m)}, {.mode = "fast_compile"});
    Array a = Array::randn({64, 33}, 3).astype(DType::Float32);
    const auto dense = f({a})[0].to_vector<float>();
    const auto strided = f({a.transpose({1, 0}).copy().transpose({1, 0})})[0].to_vector<float>();
    ASSERT_EQ(dense.size(), strided.size());
    for (size_t i = 0; i < dense.size(); ++i) EXPECT_TRUE(same_bits(dense[i], strided[i])) << i;
    Array row = a.slice(0, 5, 6);  // (1, 33), stride-0 broadcast to (64, 33)
    const auto from_row = f({row.broadcast_to({64, 33})})[0].to_vector<float>();
    for (size_t i = 0; i < from_row.size(); ++i) EXPECT_TRUE(same_bits(from_row[i], dense[5 * 33 + i % 33])) << i;
    // a (0, 33) view
    EXPECT_EQ(f({a.slice(0, 3, 3)})[0].size(), 0);
  }
}

}  // namespace
}  // namespace theon::backends::cpu
