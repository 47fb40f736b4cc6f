// Array: factories, views, conversion and printing.
#include <theon/array.hpp>
#include <theon/config.hpp>
#include <theon/error.hpp>

#include "error_of.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

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

// Issue 29: a view whose extent exceeded its buffer was accepted and segfaulted when read; its
// extent is checked when it is made, and the error names the view and the buffer.
TEST(Array, ViewMustStayInsideItsBuffer) {
  using testing_util::error_of;
  const auto buffer = Buffer::allocate_host(4 * sizeof(float));  // 4 floats
  const std::string big = error_of<ShapeError>([&] { Array(buffer, DType::Float32, {1000, 1000}, {1000, 1}); });
  EXPECT_NE(big.find("shape (1000, 1000), strides (1000, 1), offset 0 and dtype float32"), std::string::npos) << big;
  EXPECT_NE(big.find("4000000 bytes"), std::string::npos) << big;
  EXPECT_NE(big.find("its buffer holds 16 bytes"), std::string::npos) << big;
  // One element too far, through the offset or a stride.
  EXPECT_THROW(Array(buffer, DType::Float32, {4}, {1}, 1), ShapeError);
  EXPECT_THROW(Array(buffer, DType::Float32, {2}, {4}), ShapeError);
  EXPECT_THROW(Array(buffer, DType::Float64, {3}, {1}), ShapeError);  // 24 bytes of 16
  // Negative strides reach down from the offset; before element 0 is outside.
  EXPECT_NE(error_of<ShapeError>([&] { Array(buffer, DType::Float32, {4}, {-1}, 2); }).find("reaches element -1"),
            std::string::npos);
  EXPECT_THROW(Array(buffer, DType::Float32, {1}, {1}, -1), ShapeError);
  // Extents that overflow int64 and negative dims are refused, not wrapped.
  const int64_t huge = std::numeric_limits<int64_t>::max() / 2;
  EXPECT_NE(error_of<ShapeError>([&] { Array(buffer, DType::Float32, {3}, {huge}); }).find("beyond the int64 range"),
            std::string::npos);
  EXPECT_THROW(Array(buffer, DType::Float32, {2, 2}, {huge, -huge}, 1), ShapeError);
  EXPECT_THROW(Array(buffer, DType::Float32, {-1}, {1}), ShapeError);
  // Views that fit: reversed, broadcast (stride 0), the whole buffer, empty ones anywhere.
  EXPECT_NO_THROW(Array(buffer, DType::Float32, {4}, {-1}, 3));
  EXPECT_NO_THROW(Array(buffer, DType::Float32, {1000, 4}, {0, 1}));
  EXPECT_NO_THROW(Array(buffer, DType::Float32, {2, 2}, {2, 1}));
  EXPECT_NO_THROW(Array(buffer, DType::Float32, {0, 1000}, {1000, 1}, 99));
  EXPECT_NO_THROW(Array(nullptr, DType::Float32, {1000, 1000}, {1000, 1}));  // a shape-only placeholder
  Array ok(buffer, DType::Float32, {2, 2}, {1, 2});
  EXPECT_EQ(ok.shape(), (Shape{2, 2}));
}

}  // namespace
}  // namespace theon
