// The CPU's float32 softmax rows (backends/cpu/softmax_rows): against a float64 softmax on
// rows of many lengths (vector body and padded tail), and the reference's NaN/inf rules; the
// fused softmax + crossentropy rows likewise.
#include "backends/cpu/softmax_rows.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace theon::backends::cpu {
namespace {

std::vector<double> reference(const std::vector<float>& x, bool log) {
  double m = -INFINITY, sum = 0;
  for (float v : x) m = std::max(m, double(v));
  for (float v : x) sum += std::exp(double(v) - m);
  std::vector<double> y;
  for (float v : x) y.push_back(log ? double(v) - m - std::log(sum) : std::exp(double(v) - m) / sum);
  return y;
}

// The vector paths: AVX-512 (where the CPU has it) and AVX2 (forced), and the scalar loop.
enum class Path { Avx512, Avx2, Scalar };
constexpr Path kPaths[] = {Path::Avx512, Path::Avx2, Path::Scalar};
struct UsePath {
  bool vector;
  explicit UsePath(Path p) : vector(p != Path::Scalar) { softmax_rows_avx512(p == Path::Avx512); }
  ~UsePath() { softmax_rows_avx512(true); }
};
const char* name(Path p) { return p == Path::Avx512 ? " avx512" : p == Path::Avx2 ? " avx2" : " scalar"; }

TEST(SoftmaxRows, MatchesFloat64ForEveryRowLength) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.f, 4.f);
  for (Path path : kPaths)
  for (bool log : {false, true})
    // Row lengths around the 8- and 16-lane bodies (and the max's 16-wide unroll) and their tails.
    for (int64_t n : {1, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 100, 1000, 2048, 2049}) {
      UsePath use(path);
      const bool vector = use.vector;
      const int64_t rows = 3, stride = n + 5;  // rows apart in memory, as a slice of a wider matrix
      std::vector<float> x(static_cast<size_t>(rows * stride)), y(static_cast<size_t>(rows * n), -1.f);
      for (float& v : x) v = normal(rng);
      softmax_rows_f32(x.data(), stride, y.data(), n, rows, n, log, vector);
      for (int64_t r = 0; r < rows; ++r) {
        const std::vector<float> row(x.begin() + r * stride, x.begin() + r * stride + n);
        const std::vector<double> want = reference(row, log);
        for (int64_t i = 0; i < n; ++i)
          EXPECT_NEAR(y[r * n + i], want[i], 3e-7 * std::abs(want[i]) + (log ? 1e-6 : 1e-12))
              << "n=" << n << " row " << r << " i=" << i << (log ? " log" : "") << name(path);
      }
    }
}

TEST(SoftmaxRows, NanAndInfinityRowsAreNanAsTheReference) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (Path path : kPaths)
  for (bool log : {false, true}) {
    UsePath use(path);
    const bool vector = use.vector;
    std::vector<float> x = {1.f, nan, 2.f, /**/ -inf, -inf, -inf, /**/ 0.f, inf, 1.f, /**/ -inf, 0.f, 1.f};
    std::vector<float> y(12);
    softmax_rows_f32(x.data(), 3, y.data(), 3, 4, 3, log, vector);
    for (int i = 0; i < 9; ++i) EXPECT_TRUE(std::isnan(y[i])) << i << (log ? " log" : "");
    EXPECT_EQ(y[9], log ? -inf : 0.f);  // a -inf among finite values: probability 0
    EXPECT_FALSE(std::isnan(y[10]) || std::isnan(y[11]));
  }
}

// Long rows (the vector bodies): a NaN, a +inf or a -inf at every position class (first lane,
// inside the body, the body's last lane, the tail) and the row maximum in the body or the tail.
TEST(SoftmaxRows, SpecialValuesAnywhereInALongRow) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const int64_t n = 37;  // two 16-lane vectors and a tail of 5 (four 8-lane vectors and 5)
  for (Path path : kPaths)
    for (int64_t at : {0, 5, 15, 16, 31, 32, 36}) {
      UsePath use(path);
      std::vector<float> x(n), y(n);
      for (int64_t i = 0; i < n; ++i) x[i] = 0.01f * float(i % 11);
      for (float special : {nan, inf}) {
        x[at] = special;
        softmax_rows_f32(x.data(), n, y.data(), n, 1, n, false, use.vector);
        for (int64_t i = 0; i < n; ++i) EXPECT_TRUE(std::isnan(y[i])) << special << " at " << at << name(path);
      }
      x[at] = -inf;  // probability 0 there, the rest a softmax of the others
      softmax_rows_f32(x.data(), n, y.data(), n, 1, n, false, use.vector);
      EXPECT_EQ(y[at], 0.f) << at << name(path);
      x[at] = 100.f;  // the maximum, wherever it is (exp(100 - 0.1) would overflow float): the row sums to 1
      softmax_rows_f32(x.data(), n, y.data(), n, 1, n, false, use.vector);
      double sum = 0;
      for (float v : y) sum += v;
      EXPECT_NEAR(sum, 1.0, 1e-6) << at << name(path);
      EXPECT_NEAR(y[at], 1.0, 1e-6) << at << name(path);
    }
}

TEST(SoftmaxRows, ManyRowsSplitAcrossThreadsGiveTheSameRows) {
  const int64_t rows = 300, n = 257;  // above the parallel threshold
  std::vector<float> x(static_cast<size_t>(rows * n)), y(x.size()), y1(static_cast<size_t>(n));
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-5.f, 5.f);
  for (float& v : x) v = u(rng);
  softmax_rows_f32(x.data(), n, y.data(), n, rows, n, false);
  for (int64_t r : {int64_t(0), rows / 2, rows - 1}) {
    softmax_rows_f32(x.data() + r * n, n, y1.data(), n, 1, n, false);
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(y[r * n + i], y1[i]);
  }
}

// The fused softmax + crossentropy rows: the softmax as above, and the loss
// -log(softmax[label]) = max + log(sum) - x[label] against float64, including a label whose
// probability underflows in float (the loss stays finite, where -log(sm) would be inf), and
// NaN/inf rows giving NaN loss and softmax, as the reference loop.
TEST(SoftmaxRows, FusedCrossentropyMatchesFloat64) {
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.f, 4.f);
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (Path path : kPaths)
    for (int64_t n : {1, 7, 10, 16, 17, 100, 1000}) {
      UsePath use(path);
      const int64_t rows = 5, stride = n + 3;
      std::vector<float> x(static_cast<size_t>(rows * stride));
      for (float& v : x) v = normal(rng);
      std::vector<int64_t> labels(rows);
      for (int64_t r = 0; r < rows; ++r) labels[r] = (r * 7) % n;
      if (n > 1) x[1 * stride + labels[1]] = -200.f;  // softmax[label] underflows in float
      x[3 * stride] = nan;                           // a NaN row
      x[4 * stride] = inf;                           // an inf row
      std::vector<float> loss(rows, -1.f), sm(static_cast<size_t>(rows * n), -1.f);
      softmax_xent_rows_f32(x.data(), stride, labels.data(), loss.data(), sm.data(), rows, n, use.vector);
      for (int64_t r = 0; r < rows; ++r) {
        const std::vector<float> row(x.begin() + r * stride, x.begin() + r * stride + n);
        if (r >= 3) {
          EXPECT_TRUE(std::isnan(loss[r])) << "row " << r << name(path);
          for (int64_t i = 0; i < n; ++i) EXPECT_TRUE(std::isnan(sm[r * n + i])) << "row " << r << name(path);
          continue;
        }
        const std::vector<double> logp = reference(row, true), p = reference(row, false);
        const double want = -logp[labels[r]];
        EXPECT_NEAR(loss[r], want, 3e-7 * std::abs(want) + 1e-6) << "n=" << n << " row " << r << name(path);
        for (int64_t i = 0; i < n; ++i)
          EXPECT_NEAR(sm[r * n + i], p[i], 3e-7 * p[i] + 1e-12) << "n=" << n << " row " << r << name(path);
      }
    }
}

}  // namespace
}  // namespace theon::backends::cpu
