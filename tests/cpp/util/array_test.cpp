// Array: factories, views, conversion and printing.
#include <theon/array.hpp>
#include <theon/config.hpp>
#include <theon/error.hpp>

#include <gtest/gtest.h>

#include <cmath>

namespace theon {
namespace {

TEST(Array, FromVectorAndViews) {
  Array a = Array::from_vector<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  EXPECT_EQ(a.shape(), (Shape{2, 3}));
  EXPECT_TRUE(a.is_contiguous());
  Array t = a.transpose();
  EXPECT_EQ(t.shape(), (Shape{3, 2}));
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(t.buffer(), a.buffer());  // a view
  Array s = a.slice(1, 2, -4, -1);     // Python a[:, 2:-4:-1]: columns 2, 1, 0
  EXPECT_EQ(s.to_vector<float>(), (std::vector<float>{3, 2, 1, 6, 5, 4}));
  EXPECT_EQ(a.slice(1, 2, 0, -1).to_vector<float>(), (std::vector<float>{3, 2, 6, 5}));
  EXPECT_EQ(a.slice(0, -1, 2).to_vector<float>(), (std::vector<float>{4, 5, 6}));
  EXPECT_EQ(a.slice(0, 5, 10).shape(), (Shape{0, 3}));
  EXPECT_THROW(Array::from_vector<float>({1, 2, 3}, Shape{2, 2}), ShapeError);
}

TEST(Array, FactoriesAndConversion) {
  EXPECT_EQ(Array::zeros({2, 2}, DType::Int32).to_vector<int32_t>(), (std::vector<int32_t>{0, 0, 0, 0}));
  EXPECT_EQ(Array::full({3}, 2.5, DType::Float64).to_vector<double>(), (std::vector<double>{2.5, 2.5, 2.5}));
  EXPECT_EQ(Array::arange(4).to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(Array::arange(3).astype(DType::Bool).to_vector<bool>(), (std::vector<bool>{false, true, true}));
  EXPECT_EQ(Array::scalar(3, DType::Int8).ndim(), 0);
  EXPECT_EQ(Array::scalar(3, DType::Int8).item(), 3);
  EXPECT_THROW(Array::empty({-1}, DType::Float32), ShapeError);
  EXPECT_THROW(Array::empty({2}, DType::BFloat16), TypeError);
}

TEST(Array, RandomIsSeededAndFloatX) {
  Array a = Array::randn({1000}, 7), b = Array::randn({1000}, 7), c = Array::randn({1000}, 8);
  EXPECT_EQ(a.dtype(), config().floatX);
  EXPECT_EQ(a.to_vector<float>(), b.to_vector<float>());
  EXPECT_NE(a.to_vector<float>(), c.to_vector<float>());
  double mean = 0, var = 0;
  for (float v : a.to_vector<float>()) mean += v / 1000.0;
  for (float v : a.to_vector<float>()) var += (v - mean) * (v - mean) / 1000.0;
  EXPECT_NEAR(mean, 0, 0.15);
  EXPECT_NEAR(var, 1, 0.15);
  for (double v : Array::rand({500}, 3, DType::Float64).to_vector<double>()) {
    EXPECT_GE(v, 0);
    EXPECT_LT(v, 1);
  }
  EXPECT_THROW(Array::randn({2}, 1, DType::Int32), TypeError);
}

TEST(Array, BroadcastToAndReshape) {
  Array v = Array::from_vector<int32_t>({1, 2, 3});
  Array b = v.broadcast_to({2, 3});
  EXPECT_EQ(b.strides(), (Strides{0, 1}));
  EXPECT_EQ(b.to_vector<int32_t>(), (std::vector<int32_t>{1, 2, 3, 1, 2, 3}));
  EXPECT_THROW(v.broadcast_to({2, 4}), ShapeError);
  Array m = Array::arange(6).reshape({2, 3});
  EXPECT_EQ(m.transpose().reshape({6}).to_vector<int64_t>(), (std::vector<int64_t>{0, 3, 1, 4, 2, 5}));
  EXPECT_THROW(m.reshape({4}), ShapeError);
}

TEST(Array, PrintsLikeNumpy) {
  Array a = Array::from_vector<int32_t>({1, 2, 3, 4}, Shape{2, 2});
  EXPECT_EQ(a.to_string(), "[[1, 2],\n [3, 4]] (int32, shape (2, 2))");
  EXPECT_EQ(Array::from_vector<bool>({true, false}).to_string(), "[True, False] (bool, shape (2,))");
  EXPECT_NE(Array::zeros({100, 100}, DType::Float32).to_string().find("..."), std::string::npos);
}

TEST(Array, Allclose) {
  Array a = Array::from_vector<double>({1, 2, NAN});
  Array b = Array::from_vector<double>({1, 2 + 1e-9, NAN});
  EXPECT_TRUE(allclose(a, b));
  EXPECT_FALSE(allclose(a, Array::from_vector<double>({1, 2.1, NAN})));
}

}  // namespace
}  // namespace theon
