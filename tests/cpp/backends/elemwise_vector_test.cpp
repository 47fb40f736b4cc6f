// The float32 vector loops of a lone transcendental (backends/cpu/elemwise_vector): every op
// on both paths (AVX-512 where the CPU has it, AVX2 forced) against the double function on
// lengths around the 8/16 lanes, special values at every position class, in place, threaded;
// and the Elemwise kernel taking the loop only where it applies (same results strided).
#include "backends/cpu/elemwise_vector.hpp"

#include <theon/theon.hpp>

#include <gtest/gtest.h>

#include <cmath>
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

// Within 1 ulp of the correctly rounded result (SLEEF's u10 bound), NaN where it is NaN,
// infinities and zeros exactly.
void expect_close(ScalarOpId op, float x, float got) {
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
  EXPECT_LE(std::fabs(double(got) - want), 1.0 * ulp) << static_cast<int>(op) << " of " << x << ": " << got
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

TEST(ElemwiseVector, TheElemwiseKernelAgreesOnContiguousAndStridedInputs) {
  // The contiguous input takes the vector loop, its strided view the scalar one.
  Var m = tensor::matrix("m", DType::Float32);
  for (auto build : {+[](const Var& v) { return tensor::tanh(v); }, +[](const Var& v) { return tensor::log1p(v); }}) {
    Function f = function({m}, {build(m)}, {.mode = "fast_compile"});
    Array a = Array::randn({64, 33}, 3).astype(DType::Float32);
    const auto dense = f({a})[0].to_vector<float>();
    const auto strided = f({a.transpose({1, 0}).copy().transpose({1, 0})})[0].to_vector<float>();
    ASSERT_EQ(dense.size(), strided.size());
    for (size_t i = 0; i < dense.size(); ++i) {
      if (std::isnan(strided[i])) {
        EXPECT_TRUE(std::isnan(dense[i]));  // log1p below -1
        continue;
      }
      EXPECT_NEAR(dense[i], strided[i], 4e-7 * (1 + std::fabs(strided[i])));
    }
  }
}

}  // namespace
}  // namespace theon::backends::cpu
