// The CPU's float32 softmax rows (backends/cpu/softmax_rows): against a float64 softmax on
// rows of many lengths (vector body and padded tail), and the reference's NaN/inf rules.
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

TEST(SoftmaxRows, MatchesFloat64ForEveryRowLength) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.f, 4.f);
  for (bool vector : {true, false})
  for (bool log : {false, true})
    for (int64_t n : {1, 3, 7, 8, 9, 16, 31, 100, 1000}) {
      const int64_t rows = 3, stride = n + 5;  // rows apart in memory, as a slice of a wider matrix
      std::vector<float> x(static_cast<size_t>(rows * stride)), y(static_cast<size_t>(rows * n), -1.f);
      for (float& v : x) v = normal(rng);
      softmax_rows_f32(x.data(), stride, y.data(), n, rows, n, log, vector);
      for (int64_t r = 0; r < rows; ++r) {
        const std::vector<float> row(x.begin() + r * stride, x.begin() + r * stride + n);
        const std::vector<double> want = reference(row, log);
        for (int64_t i = 0; i < n; ++i)
          EXPECT_NEAR(y[r * n + i], want[i], 3e-7 * std::abs(want[i]) + (log ? 1e-6 : 1e-12))
              << "n=" << n << " row " << r << " i=" << i << (log ? " log" : "") << (vector ? "" : " scalar");
      }
    }
}

TEST(SoftmaxRows, NanAndInfinityRowsAreNanAsTheReference) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (bool vector : {true, false})
  for (bool log : {false, true}) {
    std::vector<float> x = {1.f, nan, 2.f, /**/ -inf, -inf, -inf, /**/ 0.f, inf, 1.f, /**/ -inf, 0.f, 1.f};
    std::vector<float> y(12);
    softmax_rows_f32(x.data(), 3, y.data(), 3, 4, 3, log, vector);
    for (int i = 0; i < 9; ++i) EXPECT_TRUE(std::isnan(y[i])) << i << (log ? " log" : "");
    EXPECT_EQ(y[9], log ? -inf : 0.f);  // a -inf among finite values: probability 0
    EXPECT_FALSE(std::isnan(y[10]) || std::isnan(y[11]));
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

}  // namespace
}  // namespace theon::backends::cpu
