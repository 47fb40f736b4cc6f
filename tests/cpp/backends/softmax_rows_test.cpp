// The CPU's float32 softmax rows (backends/cpu/softmax_rows): against a float64 softmax on
// rows of many lengths (vector body and padded tail), and the reference's NaN/inf rules; the
// fused softmax + crossentropy rows likewise.
#include "backends/cpu/softmax_rows.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
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


// ---- extreme spreads (issue 29) ----
// Rows whose spread exceeds FLT_MAX (x - max overflows float to -inf), +-FLT_MAX, denormals,
// +-inf and NaN, at every lane class: the first lane, inside and at the end of the 8- and
// 16-lane bodies, the padded tail, and rows shorter than one vector. Expected: the float64
// reference (NumPy's exp(x - max) / sum): NaN or +inf anywhere makes the row NaN (inf - inf),
// an all -inf row is NaN, a -inf lane gives 0 (log_softmax -inf), and float64 results that
// leave float's range round to +-inf as the cast does.
constexpr int64_t kExtremeLengths[] = {2, 3, 7, 8, 9, 12, 16, 17, 21, 37};

// The lanes to put a special value at in a row of n: the first, either side of 8, 16 and 32,
// and the last.
std::vector<int64_t> lane_classes(int64_t n) {
  std::vector<int64_t> at;
  for (int64_t i : {int64_t(0), int64_t(1), int64_t(7), int64_t(8), int64_t(15), int64_t(16), int64_t(31),
                    int64_t(32), n - 1})
    if (i < n && (at.empty() || at.back() < i)) at.push_back(i);
  return at;
}

std::vector<std::vector<float>> extreme_rows(int64_t n) {
  const float big = std::numeric_limits<float>::max(), inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN(), tiny = std::numeric_limits<float>::denorm_min();
  std::vector<std::vector<float>> rows;
  std::vector<float> base(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) base[i] = 0.25f * float(i % 7) - 0.5f;
  auto with = [&](std::vector<float> row, std::initializer_list<std::pair<int64_t, float>> set) {
    for (auto [i, v] : set) row[i] = v;
    rows.push_back(std::move(row));
  };
  const std::vector<float> all_minus_big(static_cast<size_t>(n), -big), all_minus_inf(static_cast<size_t>(n), -inf);
  const std::vector<float> denormals(static_cast<size_t>(n), 3 * tiny);
  rows.push_back(all_minus_inf);  // NaN (-inf - -inf)
  rows.push_back(denormals);      // uniform
  for (int64_t at : lane_classes(n)) {
    const int64_t other = (at + n / 2 + 1) % n == at ? (at + 1) % n : (at + n / 2 + 1) % n;
    with(base, {{at, big}, {other, -big}});           // spread 2 * FLT_MAX: one-hot
    with(base, {{at, -big}, {other, big}});
    with(base, {{at, 1.8e38f}, {other, -1.8e38f}});   // issue 29's row
    with(base, {{at, -big}});                          // x - max rounds to -FLT_MAX
    with(base, {{at, big}});
    with(all_minus_big, {{at, big}});                  // every other lane overflows
    with(all_minus_big, {{at, -inf}, {other, big}});
    with(all_minus_inf, {{at, -big}});                 // the maximum is -FLT_MAX
    with(all_minus_inf, {{at, big}, {other, -big}});
    with(base, {{at, -inf}});                          // probability 0 (log: -inf)
    with(base, {{at, -inf}, {other, big}});
    with(base, {{at, inf}});                           // NaN: inf - inf
    with(base, {{at, inf}, {other, -inf}});
    with(all_minus_big, {{at, inf}, {other, big}});
    with(base, {{at, nan}});                           // NaN
    with(base, {{at, nan}, {other, big}});
    with(all_minus_big, {{at, nan}, {other, -big}});
    with(denormals, {{at, tiny}, {other, -tiny}});    // denormal inputs
    with(base, {{at, -90.f}, {other, -100.f}});       // denormal probabilities
    with(all_minus_big, {{at, -2 * tiny}, {other, tiny}});
  }
  return rows;
}

// got against the float64 want rounded to float: NaN for NaN, the same infinity, 0 exactly
// where want is 0, else within a few ulp (log_softmax: 1e-6 absolute, as above).
::testing::AssertionResult float_near(float got, double want, bool log) {
  const float w = static_cast<float>(want);
  const bool ok = std::isnan(w)                      ? std::isnan(got)
                  : std::isinf(w) || want == 0       ? got == w
                                                     : std::abs(got - w) <= 3e-7 * std::abs(w) + (log ? 1e-6 : 3e-45);
  if (ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << got << ", want " << w;
}

std::string row_str(const std::vector<float>& row) {
  std::string s = "[";
  for (float v : row) s += " " + ::testing::PrintToString(v);
  return s + " ]";
}

TEST(SoftmaxRows, ExtremeSpreadsAtEveryLaneClassAsFloat64) {
  for (Path path : kPaths)
    for (bool log : {false, true})
      for (int64_t n : kExtremeLengths) {
        UsePath use(path);
        const std::vector<std::vector<float>> rows = extreme_rows(n);
        const int64_t r_count = static_cast<int64_t>(rows.size()), stride = n + 3;
        std::vector<float> x(static_cast<size_t>(r_count * stride), 0.f), y(static_cast<size_t>(r_count * n), -1.f);
        for (int64_t r = 0; r < r_count; ++r) std::copy(rows[r].begin(), rows[r].end(), x.begin() + r * stride);
        softmax_rows_f32(x.data(), stride, y.data(), n, r_count, n, log, use.vector);
        for (int64_t r = 0; r < r_count; ++r) {
          const std::vector<double> want = reference(rows[r], log);
          for (int64_t i = 0; i < n; ++i)
            EXPECT_TRUE(float_near(y[r * n + i], want[i], log))
                << (log ? "log_softmax" : "softmax") << name(path) << " of " << row_str(rows[r]) << " at " << i;
        }
      }
}

TEST(SoftmaxRows, FusedCrossentropyOfExtremeSpreadsAsFloat64) {
  for (Path path : kPaths)
    for (int64_t n : kExtremeLengths) {
      UsePath use(path);
      const std::vector<std::vector<float>> rows = extreme_rows(n);
      const int64_t r_count = static_cast<int64_t>(rows.size()), stride = n + 1;
      std::vector<float> x(static_cast<size_t>(r_count * stride), 0.f);
      for (int64_t r = 0; r < r_count; ++r) std::copy(rows[r].begin(), rows[r].end(), x.begin() + r * stride);
      for (int64_t label : lane_classes(n)) {
        const std::vector<int64_t> labels(static_cast<size_t>(r_count), label);
        std::vector<float> loss(static_cast<size_t>(r_count), -1.f), sm(static_cast<size_t>(r_count * n), -1.f);
        softmax_xent_rows_f32(x.data(), stride, labels.data(), loss.data(), sm.data(), r_count, n, use.vector);
        for (int64_t r = 0; r < r_count; ++r) {
          EXPECT_TRUE(float_near(loss[r], -reference(rows[r], true)[label], true))
              << "softmax_xent loss" << name(path) << " of " << row_str(rows[r]) << " label " << label;
          const std::vector<double> p = reference(rows[r], false);
          for (int64_t i = 0; i < n; ++i)
            EXPECT_TRUE(float_near(sm[r * n + i], p[i], false))
                << "softmax_xent" << name(path) << " of " << row_str(rows[r]) << " label " << label << " at " << i;
        }
      }
    }
}

}  // namespace
}  // namespace theon::backends::cpu

namespace theon::backends::cpu {
namespace {

// Rows of equal huge values (found by the graph fuzzer): log(sum) must survive next to the
// row's maximum, so log_softmax is -log(n) and the fused loss log(n), not 0.
TEST(SoftmaxRows, LogOfTheSumSurvivesAHugeRowMaximum) {
  for (float big : {1e17f, -1e17f, 3e38f}) {
    for (bool vector : {true, false}) {
      const std::vector<float> x(3, big);
      std::vector<float> y(3), sm(3), loss(1);
      softmax_rows_f32(x.data(), 3, y.data(), 3, 1, 3, /*log=*/true, vector);
      for (float v : y) EXPECT_FLOAT_EQ(v, -std::log(3.0f)) << big << (vector ? " vector" : " scalar");
      const std::vector<int64_t> label{1};
      softmax_xent_rows_f32(x.data(), 3, label.data(), loss.data(), sm.data(), 1, 3, vector);
      EXPECT_FLOAT_EQ(loss[0], std::log(3.0f)) << big;
      for (float v : sm) EXPECT_FLOAT_EQ(v, 1.0f / 3.0f);
    }
  }
}

}  // namespace
}  // namespace theon::backends::cpu

namespace theon::backends::cpu {
namespace {

// A lane whose exp is 0 (x - max is -inf) is +0 on every path, as NumPy's softmax gives it
// (the vector paths gave -0 where the row maximum was positive).
TEST(SoftmaxRows, ZeroProbabilitiesArePositiveZeros) {
  const float ninf = -std::numeric_limits<float>::infinity();
  for (int64_t n : {2, 3, 9, 17, 40}) {
    std::vector<float> x(static_cast<size_t>(n), 0.f);
    x[0] = 1.8e38f;
    x[1] = ninf;
    x[static_cast<size_t>(n) - 1] = -1.8e38f;
    for (bool avx512 : {true, false}) {
      softmax_rows_avx512(avx512);
      for (bool vector : {true, false}) {
        std::vector<float> y(static_cast<size_t>(n));
        softmax_rows_f32(x.data(), n, y.data(), n, 1, n, false, vector);
        for (int64_t i = 1; i < n; ++i)
          EXPECT_FALSE(std::signbit(y[static_cast<size_t>(i)]) || y[static_cast<size_t>(i)] != 0.f)
              << "n " << n << " lane " << i << " avx512 " << avx512 << " vector " << vector << ": " << y[static_cast<size_t>(i)];
      }
    }
    softmax_rows_avx512(true);
  }
}

}  // namespace
}  // namespace theon::backends::cpu
