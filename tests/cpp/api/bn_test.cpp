// theon::nnet batch normalization (theon/bn.hpp) from C++: values against a float64 loop
// reference, running averages with Theano's m / (m - 1), gradients by finite differences,
// errors naming the argument.
#include <theon/theon.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace theon {
namespace {

Array random(const Shape& shape, uint64_t seed, double shift = 0) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> n;
  Array a = Array::empty(shape, DType::Float64);
  double* p = a.data<double>();
  for (int64_t i = 0; i < a.size(); ++i) p[i] = n(rng) + shift;
  return a;
}

TEST(BatchNorm, SpatialTrainMatchesLoopReference) {
  // x (N=4, C=3, H=2, W=5); statistics per channel over N, H, W (m = 40 values each).
  const Shape shape{4, 3, 2, 5};
  Var x = tensor::tensor(DType::Float64, {-1, -1, -1, -1}, "x");
  Var g = tensor::vector("gamma", DType::Float64), b = tensor::vector("beta", DType::Float64);
  Var rm = tensor::vector("rm", DType::Float64), rv = tensor::vector("rv", DType::Float64);
  nnet::BnTrainResult r = nnet::batch_normalization_train(x, g, b, "spatial", 1e-3, 0.25, rm, rv);
  Function f = function({x, g, b, rm, rv}, {r.out, r.mean, r.invstd, r.running_mean, r.running_var});
  const Array xv = random(shape, 1), gv = random({3}, 2), bv = random({3}, 3), rmv = random({3}, 4),
              rvv = random({3}, 5, 3.0);
  const std::vector<Array> got = f({xv, gv, bv, rmv, rvv});
  ASSERT_EQ(got[1].shape(), Shape{3});  // gamma of rank 1: statistics come back squeezed
  const double* px = xv.data<double>();
  const auto at = [&](int n, int c, int h, int w) { return px[((n * 3 + c) * 2 + h) * 5 + w]; };
  for (int c = 0; c < 3; ++c) {
    double s = 0, ss = 0;
    for (int n = 0; n < 4; ++n)
      for (int h = 0; h < 2; ++h)
        for (int w = 0; w < 5; ++w) s += at(n, c, h, w);
    const double mean = s / 40;
    for (int n = 0; n < 4; ++n)
      for (int h = 0; h < 2; ++h)
        for (int w = 0; w < 5; ++w) ss += (at(n, c, h, w) - mean) * (at(n, c, h, w) - mean);
    const double var = ss / 40, invstd = 1 / std::sqrt(var + 1e-3);
    EXPECT_NEAR(got[1].data<double>()[c], mean, 1e-12);
    EXPECT_NEAR(got[2].data<double>()[c], invstd, 1e-12);
    EXPECT_NEAR(got[3].data<double>()[c], rmv.data<double>()[c] * 0.75 + mean * 0.25, 1e-12);
    EXPECT_NEAR(got[4].data<double>()[c], rvv.data<double>()[c] * 0.75 + var * 40.0 / 39.0 * 0.25, 1e-12);
    for (int n = 0; n < 4; ++n)
      for (int h = 0; h < 2; ++h)
        for (int w = 0; w < 5; ++w)
          EXPECT_NEAR(got[0].data<double>()[((n * 3 + c) * 2 + h) * 5 + w],
                      (at(n, c, h, w) - mean) * invstd * gv.data<double>()[c] + bv.data<double>()[c], 1e-12);
  }
}

TEST(BatchNorm, GradientsMatchFiniteDifferences) {
  verify_grad(
      [](const std::vector<Var>& v) {
        nnet::BnTrainResult r = nnet::batch_normalization_train(v[0], v[1], v[2], "per-activation");
        return r.out + tensor::sum(r.invstd);
      },
      {random({5, 3}, 6), random({3}, 7), random({3}, 8)});
  verify_grad(
      [](const std::vector<Var>& v) {
        return nnet::batch_normalization_test(v[0], v[1], v[2], v[3], v[4], std::vector<int>{0, 2});
      },
      {random({3, 4, 2}, 9), random({4}, 10), random({4}, 11), random({4}, 12), random({4}, 13, 3.0)});
}

TEST(BatchNorm, ErrorsNameTheArgument) {
  Var x = tensor::tensor3("x", DType::Float64);
  Var m = tensor::matrix("gamma2", DType::Float64);
  try {
    nnet::batch_normalization_train(x, tensor::scalar("s", DType::Float64), m);
    FAIL() << "expected a ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("gamma"), std::string::npos) << e.what();
  }
  EXPECT_THROW(nnet::batch_normalization_train(x, m, m, "channels"), ValueError);
  EXPECT_THROW(nnet::batch_normalization_train(x, m, m, "per-activation", 1e-4, 0.1, m), ValueError);
}

}  // namespace
}  // namespace theon
