// Element and byte counts of shapes are checked for overflow (util/checked_size.hpp), in the
// helper and in every Array factory and view that makes a new shape (issue 11).
#include <theon/theon.hpp>

#include "util/checked_size.hpp"

#include <gtest/gtest.h>

#include "error_of.hpp"

#include <cstdint>
#include <limits>
#include <string>

// Under AddressSanitizer a huge malloc must return null, as glibc's does, not abort the test.
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }

namespace theon {
namespace {

constexpr int64_t k2_31 = int64_t{1} << 31;
constexpr int64_t k2_32 = int64_t{1} << 32;
constexpr int64_t k2_62 = int64_t{1} << 62;

using testing_util::error_of;

TEST(CheckedSize, CountsThatFitAndCountsThatDoNot) {
  int64_t n = -1;
  EXPECT_TRUE(detail::try_shape_size({}, n));
  EXPECT_EQ(n, 1);
  EXPECT_TRUE(detail::try_shape_size({k2_31, k2_31}, n));
  EXPECT_EQ(n, int64_t{1} << 62);
  EXPECT_TRUE(detail::try_shape_size({std::numeric_limits<int64_t>::max()}, n));
  EXPECT_FALSE(detail::try_shape_size({k2_62, 4}, n));        // 2**64: wraps to 0
  EXPECT_FALSE(detail::try_shape_size({k2_32, k2_32}, n));     // 2**64
  EXPECT_FALSE(detail::try_shape_size({3, k2_62}, n));         // 3 * 2**62: wraps negative
  EXPECT_FALSE(detail::try_shape_size({0, k2_62, 4}, n));      // NumPy refuses these too
  EXPECT_TRUE(detail::try_shape_size({0, k2_32}, n));
  EXPECT_EQ(n, 0);
  EXPECT_TRUE(detail::try_nbytes({int64_t{1} << 60}, DType::Float32, n));
  EXPECT_EQ(n, int64_t{1} << 62);
  EXPECT_FALSE(detail::try_nbytes({int64_t{1} << 61}, DType::Float32, n));  // 2**63 bytes
  EXPECT_FALSE(detail::try_nbytes({int64_t{1} << 61, 0}, DType::Float64, n));
}

TEST(CheckedSize, TheErrorNamesWhatAndTheShape) {
  EXPECT_EQ(error_of<ShapeError>([] { detail::checked_nbytes({k2_62, 4}, DType::Float32, "alloc(1.5, n, 4)"); }),
            "alloc(1.5, n, 4): shape (4611686018427387904, 4) is too big: 1.8e+19 elements of float32 (7.4e+19 bytes) "
            "exceed the largest possible array (2**63 - 1 bytes)");
  EXPECT_EQ(error_of<ShapeError>([] { detail::checked_size({k2_32, k2_32}, "reshape"); }),
            "reshape: shape (4294967296, 4294967296) is too big: 1.8e+19 elements exceed the largest possible array "
            "(2**63 - 1 elements)");
  bool called = false;  // the message is built only on failure
  detail::checked_size({2, 3}, [&] {
    called = true;
    return std::string("x");
  });
  EXPECT_FALSE(called);
}

TEST(CheckedSize, ShapeSizeNeverWraps) {
  EXPECT_EQ(shape_size({2, 3, 4}), 24);
  EXPECT_THROW(shape_size({k2_62, 4}), ShapeError);
  EXPECT_THROW(shape_size({k2_32, k2_32}), ShapeError);
}

TEST(CheckedSize, ArrayFactoriesAndViewsRefuseImpossibleShapes) {
  // Before: these made 0-byte (or wrapped-size) buffers for shapes with 2**64 elements.
  std::string msg = error_of<ShapeError>([] { Array::empty({k2_62, 4}, DType::Float32); });
  EXPECT_NE(msg.find("Array: shape (4611686018427387904, 4) is too big"), std::string::npos) << msg;
  EXPECT_THROW(Array::zeros({k2_32, k2_32}, DType::Float32), ShapeError);
  EXPECT_THROW(Array::full({int64_t{1} << 61}, 1.0, DType::Float64), ShapeError);  // 2**64 bytes
  EXPECT_THROW(Array::empty({0, k2_62, 4}, DType::Float32), ShapeError);           // as NumPy
  const Array empty = Array::zeros({0}, DType::Float32);
  msg = error_of<ShapeError>([&] { empty.reshape({k2_32, k2_32}); });
  EXPECT_NE(msg.find("Array::reshape: shape (4294967296, 4294967296) is too big"), std::string::npos) << msg;
  EXPECT_THROW(empty.reshape({-2, -2, 0}), ShapeError);
  const Array one = Array::ones({1}, DType::Float32);
  msg = error_of<ShapeError>([&] { one.broadcast_to({k2_32, k2_32}); });
  EXPECT_NE(msg.find("Array::broadcast_to: shape (4294967296, 4294967296) is too big"), std::string::npos) << msg;
  EXPECT_THROW(one.broadcast_to({-1}), ShapeError);
  // What fits still works: a broadcast view of 2**40 elements owns 4 bytes.
  EXPECT_EQ(one.broadcast_to({int64_t{1} << 20, int64_t{1} << 20}).size(), int64_t{1} << 40);
}

TEST(CheckedSize, AFailedHostAllocationIsAMemoryError) {
  // 2**45 float32 = 2**47 bytes: a valid size that no allocator can give (see exec/sizes_test).
  try {
    Array::empty({int64_t{1} << 45}, DType::Float32);
    FAIL() << "no error";
  } catch (const MemoryError& e) {
    EXPECT_EQ(e.bytes(), size_t{1} << 47);
    EXPECT_EQ(e.device(), "cpu");
    EXPECT_STREQ(e.what(), "out of memory on cpu: cannot allocate 140737488355328 bytes (128.0 TiB)");
  }
  // Beyond PTRDIFF_MAX nothing is even tried.
  EXPECT_THROW(Buffer::allocate_host(std::numeric_limits<size_t>::max() - 8), MemoryError);
  // The allocator works afterwards.
  EXPECT_EQ(Array::ones({3}, DType::Float32).to_vector<float>(), (std::vector<float>{1, 1, 1}));
}

TEST(CheckedSize, HumanBytes) {
  EXPECT_EQ(detail::human_bytes(512), "512 bytes");
  EXPECT_EQ(detail::human_bytes(1536), "1.5 KiB");
  EXPECT_EQ(detail::human_bytes(static_cast<double>(int64_t{1} << 47)), "128.0 TiB");
}

}  // namespace
}  // namespace theon
