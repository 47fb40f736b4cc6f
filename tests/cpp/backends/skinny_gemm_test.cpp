// The narrow-output matrix product (backends/cpu/skinny_gemm): the dispatched path (AVX2+FMA on
// this machine) and the portable path against a float64 product, on every n up to the limit
// (one vector, two vectors, the spill of whole-vector stores into the next rows), row counts
// around the row block, strided and transposed operands, each addend kind, alpha/beta, relu
// with NaN, and the threaded split of many rows (whose chunk boundaries must not be spilled
// over).
#include "backends/cpu/skinny_gemm.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace theon::backends::cpu {
namespace {

enum class Add { None, Row, Col, Matrix, Scalar };

template <class T>
struct Problem {
  int64_t m, n, k;
  bool a_trans, b_trans;  // operands stored column-major (transposed views)
  int64_t pad;            // extra elements between rows (a slice of a wider matrix)
  Add add;
  double alpha, beta;
  bool relu;
};

template <class T>
void check(const Problem<T>& pr, bool portable, std::mt19937& rng) {
  const int64_t m = pr.m, n = pr.n, k = pr.k;
  std::normal_distribution<double> normal;
  // a: (m, k); row-major with row stride k + pad, or column-major with column stride m + pad.
  const int64_t a_ld = pr.a_trans ? m + pr.pad : k + pr.pad, b_ld = pr.b_trans ? k + pr.pad : n + pr.pad;
  std::vector<T> a(static_cast<size_t>((pr.a_trans ? k : m) * a_ld)), b(static_cast<size_t>((pr.b_trans ? n : k) * b_ld));
  for (T& v : a) v = static_cast<T>(normal(rng));
  for (T& v : b) v = static_cast<T>(normal(rng));
  std::vector<T> c(static_cast<size_t>(m * n * 2 + 1));
  for (T& v : c) v = static_cast<T>(normal(rng));
  SkinnyGemm<T> g;
  g.m = m;
  g.n = n;
  g.k = k;
  g.alpha = static_cast<T>(pr.alpha);
  g.beta = static_cast<T>(pr.beta);
  g.a = a.data();
  g.a_rs = pr.a_trans ? 1 : a_ld;
  g.a_cs = pr.a_trans ? a_ld : 1;
  g.b = b.data();
  g.b_rs = pr.b_trans ? 1 : b_ld;
  g.b_cs = pr.b_trans ? b_ld : 1;
  g.relu = pr.relu;
  if (pr.add != Add::None) g.c = c.data();
  // Row: c[j]; Col: c[2i]; Matrix: c[i * 2n + j] (row stride 2n); Scalar: c[0].
  g.c_rs = pr.add == Add::Col ? 2 : pr.add == Add::Matrix ? 2 * n : 0;
  g.c_cs = pr.add == Add::Row || pr.add == Add::Matrix ? 1 : 0;
  // Guard elements around the output catch a store outside it.
  const T guard = static_cast<T>(-12345);
  std::vector<T> buf(static_cast<size_t>(m * n + 32), guard);
  g.out = buf.data() + 16;
  if (portable) detail::skinny_gemm_portable(g);
  else skinny_gemm(g);
  const double tol = sizeof(T) == 4 ? 2e-5 : 1e-12;
  const std::string what = "m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k) +
                           (pr.a_trans ? " a^T" : "") + (pr.b_trans ? " b^T" : "") + " pad=" + std::to_string(pr.pad) +
                           " add=" + std::to_string(static_cast<int>(pr.add)) + (pr.relu ? " relu" : "") +
                           (portable ? " portable" : "") + (sizeof(T) == 4 ? " f32" : " f64");
  for (int i = 0; i < 16; ++i) {
    ASSERT_EQ(buf[static_cast<size_t>(i)], guard) << what << ": written before the output";
    ASSERT_EQ(buf[static_cast<size_t>(16 + m * n + i)], guard) << what << ": written after the output";
  }
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0, mag = 0;
      for (int64_t p = 0; p < k; ++p) {
        const double x = a[static_cast<size_t>(i * g.a_rs + p * g.a_cs)], y = b[static_cast<size_t>(p * g.b_rs + j * g.b_cs)];
        s += x * y;
        mag += std::abs(x * y);
      }
      double v = pr.alpha * s;
      if (g.c) v += pr.beta * double(c[static_cast<size_t>(i * g.c_rs + j * g.c_cs)]);
      if (pr.relu && !(v > 0)) v = 0;
      const double got = g.out[i * n + j];
      ASSERT_NEAR(got, v, tol * (std::abs(pr.alpha) * mag + 1)) << what << " at (" << i << ", " << j << ")";
    }
}

TEST(SkinnyGemm, MatchesFloat64ForEveryNarrowShape) {
  std::mt19937 rng(18);
  for (bool portable : {false, true})
    for (int64_t n = 1; n <= kSkinnyMaxN<float>; ++n)
      for (int64_t m : {1, 2, 7, 8, 9, 17, 33})
        for (int64_t k : {1, 3, 10}) {
          check<float>({m, n, k, false, false, 0, Add::Row, 1, 1, false}, portable, rng);
          if (n <= kSkinnyMaxN<double>) check<double>({m, n, k, false, false, 0, Add::Row, 1, 1, true}, portable, rng);
        }
}

TEST(SkinnyGemm, StridedTransposedOperandsAndEveryAddend) {
  std::mt19937 rng(19);
  for (bool portable : {false, true})
    for (Add add : {Add::None, Add::Row, Add::Col, Add::Matrix, Add::Scalar})
      for (bool at : {false, true})
        for (bool bt : {false, true})
          for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{13, 5, 10}, {6, 12, 7}, {25, 16, 256}, {3, 8, 2}}) {
            check<float>({m, n, k, at, bt, 3, add, 2.0, -0.5, add == Add::Col}, portable, rng);
            if (n <= kSkinnyMaxN<double>) check<double>({m, n, k, at, bt, 1, add, 1.0, 1.0, add == Add::Row}, portable, rng);
          }
}

TEST(SkinnyGemm, ManyRowsSplitOverThreads) {
  // m * k above openmp_elemwise_minsize's default (200,000): the rows run on several threads
  // where OpenMP has them; the whole-vector stores must stay inside each thread's rows.
  std::mt19937 rng(20);
  for (int64_t n : {1, 5, 8, 11})
    check<float>({30011, n, 10, false, false, 0, Add::Row, 1, 1, true}, false, rng);
  check<double>({30011, 5, 10, false, false, 0, Add::Col, 1, 1, false}, false, rng);
}

TEST(SkinnyGemm, ReluKeepsNaNAndZeroesNegatives) {
  for (bool portable : {false, true}) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    // a (3, 1) . b (1, 5): rows of -1, NaN, +1 times b = (1, -1, 0, 2, -0.5), bias 0.
    std::vector<float> a = {-1.f, nan, 1.f}, b = {1.f, -1.f, 0.f, 2.f, -0.5f}, out(15, 7.f);
    SkinnyGemm<float> g;
    g.m = 3;
    g.n = 5;
    g.k = 1;
    g.a = a.data();
    g.a_rs = 1;
    g.a_cs = 1;
    g.b = b.data();
    g.b_rs = 5;
    g.b_cs = 1;
    g.relu = true;
    g.out = out.data();
    if (portable) detail::skinny_gemm_portable(g);
    else skinny_gemm(g);
    const std::vector<float> want_row0 = {0.f, 1.f, 0.f, 0.f, 0.5f}, want_row2 = {1.f, 0.f, 0.f, 2.f, 0.f};
    for (int j = 0; j < 5; ++j) {
      EXPECT_EQ(out[j], want_row0[j]) << j;
      EXPECT_FALSE(std::signbit(out[j])) << "relu gives +0, not -0, at " << j;
      EXPECT_TRUE(std::isnan(out[5 + j])) << "NaN passes relu at " << j;
      EXPECT_EQ(out[10 + j], want_row2[j]) << j;
    }
  }
}

}  // namespace
}  // namespace theon::backends::cpu
