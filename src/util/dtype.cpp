#include <theon/dtype.hpp>
#include <theon/error.hpp>

#include <algorithm>

namespace theon {
namespace {

enum Kind { kBool = 0, kInt = 1, kFloat = 2 };

Kind kind_of(DType t) {
  if (t == DType::Bool) return kBool;
  return is_float(t) ? kFloat : kInt;
}

DType signed_int_of_size(size_t bytes) {
  switch (bytes) {
    case 1: return DType::Int8;
    case 2: return DType::Int16;
    case 4: return DType::Int32;
    default: return DType::Int64;
  }
}

DType float_of_size(size_t bytes) {
  if (bytes <= 2) return DType::Float16;
  return bytes <= 4 ? DType::Float32 : DType::Float64;
}

// Smallest float size that holds every value of an integer dtype (NumPy's table).
size_t float_bytes_for_int(DType t) {
  switch (t) {
    case DType::Bool: case DType::Int8: case DType::UInt8: return 2;
    case DType::Int16: return 4;
    default: return 8;
  }
}

}  // namespace

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::Bool: return "bool";
    case DType::Int8: return "int8";
    case DType::Int16: return "int16";
    case DType::Int32: return "int32";
    case DType::Int64: return "int64";
    case DType::UInt8: return "uint8";
    case DType::Float16: return "float16";
    case DType::BFloat16: return "bfloat16";
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
  }
  return "?";
}

DType parse_dtype(std::string_view name) {
  for (DType t : kAllDTypes)
    if (dtype_name(t) == name) return t;
  if (name == "floatX") throw TypeError("parse_dtype: 'floatX' must be resolved through config().floatX");
  throw TypeError("unknown dtype '" + std::string(name) +
                  "' (expected one of bool, int8, int16, int32, int64, uint8, float16, bfloat16, float32, float64)");
}

size_t itemsize(DType t) {
  switch (t) {
    case DType::Bool: case DType::Int8: case DType::UInt8: return 1;
    case DType::Int16: case DType::Float16: case DType::BFloat16: return 2;
    case DType::Int32: case DType::Float32: return 4;
    case DType::Int64: case DType::Float64: return 8;
  }
  return 0;
}

bool is_float(DType t) {
  return t == DType::Float16 || t == DType::BFloat16 || t == DType::Float32 || t == DType::Float64;
}
bool is_integer(DType t) { return !is_float(t) && t != DType::Bool; }
bool is_signed(DType t) { return is_float(t) || (is_integer(t) && t != DType::UInt8); }
bool is_supported(DType t) { return t != DType::BFloat16; }

void require_supported(DType t, std::string_view what) {
  if (!is_supported(t))
    throw TypeError(std::string(what) + ": dtype " + std::string(dtype_name(t)) +
                    " is not supported yet (supported: bool, int8, int16, int32, int64, uint8, float16, float32, float64)");
}

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  Kind ka = kind_of(a), kb = kind_of(b);
  if (ka < kb) return promote_types(b, a);  // make `a` the higher kind
  if (ka == kBool) return DType::Bool;
  if (ka == kFloat && kb == kFloat) {
    if ((a == DType::BFloat16) != (b == DType::BFloat16) && std::max(itemsize(a), itemsize(b)) == 2)
      return DType::Float32;  // float16 and bfloat16 hold different ranges
    return itemsize(a) >= itemsize(b) ? a : b;
  }
  if (ka == kFloat) {  // float with int or bool
    size_t need = float_bytes_for_int(b);
    if (a == DType::BFloat16) return need <= 2 ? DType::BFloat16 : float_of_size(std::max<size_t>(need, 4));
    return float_of_size(std::max(itemsize(a), need));
  }
  if (kb == kBool) return a;
  // Two integers.
  bool ua = a == DType::UInt8, ub = b == DType::UInt8;
  if (ua == ub) return itemsize(a) >= itemsize(b) ? a : b;
  DType u = ua ? a : b, s = ua ? b : a;
  if (itemsize(s) > itemsize(u)) return s;
  return signed_int_of_size(itemsize(u) * 2);
}

bool can_cast_safely(DType from, DType to) { return promote_types(from, to) == to; }

DType result_type(const std::vector<DTypeOperand>& operands, DType float_default) {
  bool any_strong = false;
  DType strong = DType::Bool;
  Kind weak_kind = kBool;
  for (const auto& op : operands) {
    if (op.weak) {
      weak_kind = std::max(weak_kind, kind_of(op.dtype));
    } else {
      strong = any_strong ? promote_types(strong, op.dtype) : op.dtype;
      any_strong = true;
    }
  }
  if (!any_strong) {
    if (weak_kind == kFloat) return float_default;
    return weak_kind == kInt ? DType::Int64 : DType::Bool;
  }
  if (weak_kind <= kind_of(strong)) return strong;
  if (weak_kind == kFloat) return float_default;
  return DType::Int64;  // an int literal beside bools
}

DType upcast_to_float(DType t) {
  if (is_float(t)) return t;
  switch (t) {
    case DType::Int32: case DType::Int64: return DType::Float64;
    default: return DType::Float32;
  }
}

}  // namespace theon
