// visit_dtype: calls a templated functor with the C++ type of a runtime DType.
//   visit_dtype(a.dtype(), [&]<class T>() { sum += a.data<T>()[0]; });
// visit_storage_dtype also visits float16 (theon::half): only for code that moves or converts
// elements (Array fills and copies, the Cast kernels); everything else computes in float32
// (the float16 pass), so the compute kernels never see float16.
#pragma once
#include <theon/dtype.hpp>
#include <theon/error.hpp>

#include <cstdint>
#include <string>
#include <utility>

namespace theon::detail {

template <class F>
decltype(auto) visit_dtype(DType t, F&& f) {
  switch (t) {
    case DType::Bool: return f.template operator()<bool>();
    case DType::Int8: return f.template operator()<int8_t>();
    case DType::Int16: return f.template operator()<int16_t>();
    case DType::Int32: return f.template operator()<int32_t>();
    case DType::Int64: return f.template operator()<int64_t>();
    case DType::UInt8: return f.template operator()<uint8_t>();
    case DType::Float32: return f.template operator()<float>();
    case DType::Float64: return f.template operator()<double>();
    default: break;
  }
  throw TypeError("dtype " + std::string(dtype_name(t)) + " is not supported yet");
}

template <class F>
decltype(auto) visit_storage_dtype(DType t, F&& f) {
  if (t == DType::Float16) return f.template operator()<half>();
  return visit_dtype(t, std::forward<F>(f));
}

}  // namespace theon::detail
