// DType: Theon's element types and NumPy 2 (NEP 50) type promotion.
//
//   DType t = promote_types(DType::Int32, DType::Float32);      // float64
//   DType w = result_type({{DType::Float32, false}, {DType::Float64, /*weak=*/true}});  // float32
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <theon/half.hpp>

namespace theon {

enum class DType : uint8_t { Bool, Int8, Int16, Int32, Int64, UInt8, Float16, BFloat16, Float32, Float64 };

inline constexpr DType kAllDTypes[] = {DType::Bool,    DType::Int8,     DType::Int16,   DType::Int32, DType::Int64,
                                       DType::UInt8,   DType::Float16,  DType::BFloat16, DType::Float32,
                                       DType::Float64};

/// NumPy's name ("float32", "int64", "bool", ...).
std::string_view dtype_name(DType t);
/// Parses a NumPy/Theano dtype name; throws TypeError naming the bad string.
DType parse_dtype(std::string_view name);
size_t itemsize(DType t);
bool is_float(DType t);
bool is_integer(DType t);  // signed or unsigned, not bool
bool is_signed(DType t);
/// bfloat16 is named but has no kernels yet: true for the others. float16 is supported as
/// Theano has it: a storage dtype, computed in float32 (the float16 pass, docs/guide/float16.md).
bool is_supported(DType t);
/// Throws TypeError ("<what>: dtype bfloat16 is not supported yet") for an unsupported dtype.
void require_supported(DType t, std::string_view what);

/// NumPy's promote_types for two strong (array) dtypes.
DType promote_types(DType a, DType b);
/// True when every value of `from` is representable in `to` (numpy.can_cast(..., "safe")).
bool can_cast_safely(DType from, DType to);

/// An operand for result_type: a Python/C++ scalar literal is "weak" (NEP 50).
struct DTypeOperand {
  DType dtype;
  bool weak = false;
};
/// NEP 50: a weak operand takes the strong operands' dtype when its kind is not higher
/// (float32 + 3.0 -> float32, int8 + 3 -> int8); a float literal beside integers takes
/// `float_default` (floatX), an int literal beside bools int64.
DType result_type(const std::vector<DTypeOperand>& operands, DType float_default = DType::Float32);

/// The float dtype an integer is computed in by float-valued ops (exp, log, true_div): NumPy's
/// rule (int8/int16/uint8/bool -> float32 when floatX is float32, int32/int64 -> float64).
DType upcast_to_float(DType t);

/// Maps a C++ element type to its DType.
template <class T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<bool>() { return DType::Bool; }
template <> constexpr DType dtype_of<int8_t>() { return DType::Int8; }
template <> constexpr DType dtype_of<int16_t>() { return DType::Int16; }
template <> constexpr DType dtype_of<int32_t>() { return DType::Int32; }
template <> constexpr DType dtype_of<int64_t>() { return DType::Int64; }
template <> constexpr DType dtype_of<uint8_t>() { return DType::UInt8; }
template <> constexpr DType dtype_of<half>() { return DType::Float16; }
template <> constexpr DType dtype_of<float>() { return DType::Float32; }
template <> constexpr DType dtype_of<double>() { return DType::Float64; }

}  // namespace theon
