// NumPy 2 type promotion (NEP 50) and dtype facts.
#include <theon/dtype.hpp>
#include <theon/error.hpp>

#include <gtest/gtest.h>

namespace theon {
namespace {

using D = DType;

TEST(DType, NamesRoundTrip) {
  for (D t : kAllDTypes) EXPECT_EQ(parse_dtype(dtype_name(t)), t);
  EXPECT_THROW(parse_dtype("float128"), TypeError);
  EXPECT_EQ(itemsize(D::Float64), 8u);
  EXPECT_EQ(itemsize(D::Bool), 1u);
}

TEST(DType, PromoteTypesMatchesNumpy) {
  // Values from numpy.promote_types.
  EXPECT_EQ(promote_types(D::Int32, D::Float32), D::Float64);
  EXPECT_EQ(promote_types(D::Int16, D::Float32), D::Float32);
  EXPECT_EQ(promote_types(D::Int8, D::Float32), D::Float32);
  EXPECT_EQ(promote_types(D::Int64, D::Float64), D::Float64);
  EXPECT_EQ(promote_types(D::UInt8, D::Int8), D::Int16);
  EXPECT_EQ(promote_types(D::UInt8, D::Int16), D::Int16);
  EXPECT_EQ(promote_types(D::UInt8, D::Int32), D::Int32);
  EXPECT_EQ(promote_types(D::Bool, D::Int8), D::Int8);
  EXPECT_EQ(promote_types(D::Bool, D::Bool), D::Bool);
  EXPECT_EQ(promote_types(D::Float32, D::Float64), D::Float64);
  EXPECT_EQ(promote_types(D::Int32, D::Int64), D::Int64);
  EXPECT_EQ(promote_types(D::UInt8, D::Float32), D::Float32);
  for (D a : kAllDTypes)
    for (D b : kAllDTypes) EXPECT_EQ(promote_types(a, b), promote_types(b, a)) << dtype_name(a) << " " << dtype_name(b);
}

TEST(DType, WeakLiteralsFollowNep50) {
  // float32 array + Python float -> float32; int8 array + Python int -> int8.
  EXPECT_EQ(result_type({{D::Float32}, {D::Float64, true}}), D::Float32);
  EXPECT_EQ(result_type({{D::Int8}, {D::Int64, true}}), D::Int8);
  EXPECT_EQ(result_type({{D::UInt8}, {D::Int64, true}}), D::UInt8);
  // A float literal beside integers takes floatX (DESIGN.md), not float64.
  EXPECT_EQ(result_type({{D::Int32}, {D::Float64, true}}, D::Float32), D::Float32);
  EXPECT_EQ(result_type({{D::Int32}, {D::Float64, true}}, D::Float64), D::Float64);
  // An int literal beside bools is int64 (numpy: bool_array + 1 -> int64).
  EXPECT_EQ(result_type({{D::Bool}, {D::Int64, true}}), D::Int64);
  // Strong operands still promote among themselves.
  EXPECT_EQ(result_type({{D::Float32}, {D::Float64}}), D::Float64);
  // Only literals: float literal -> floatX, int literal -> int64.
  EXPECT_EQ(result_type({{D::Float64, true}}, D::Float32), D::Float32);
  EXPECT_EQ(result_type({{D::Int64, true}}), D::Int64);
}

TEST(DType, SafeCasts) {
  EXPECT_TRUE(can_cast_safely(D::Float32, D::Float64));
  EXPECT_TRUE(can_cast_safely(D::Int16, D::Float32));
  EXPECT_FALSE(can_cast_safely(D::Float64, D::Float32));
  EXPECT_FALSE(can_cast_safely(D::Int32, D::Float32));
  EXPECT_FALSE(can_cast_safely(D::Int64, D::Int32));
  EXPECT_TRUE(can_cast_safely(D::Bool, D::UInt8));
}

TEST(DType, BFloat16IsNamedButUnsupported) {
  EXPECT_TRUE(is_supported(D::Float16));  // storage, computed in float32 (docs/guide/float16.md)
  EXPECT_FALSE(is_supported(D::BFloat16));
  try {
    require_supported(D::BFloat16, "exp(x)");
    FAIL() << "expected TypeError";
  } catch (const TypeError& e) {
    EXPECT_NE(std::string(e.what()).find("exp(x): dtype bfloat16 is not supported yet"), std::string::npos);
  }
}

}  // namespace
}  // namespace theon
