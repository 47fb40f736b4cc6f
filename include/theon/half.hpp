// theon::half: IEEE 754 binary16, the storage type of DType::Float16 (Theano's float16: a
// storage dtype; kernels compute in float32, docs/guide/float16.md).
//
//   theon::half h(0.1f);                  // rounds to nearest, ties to even: 0x2e66
//   float f = static_cast<float>(h);      // exact
//   Array a = Array::from_vector(std::vector<theon::half>{h, h});   // a float16 array
//
// The conversions are bit-exact and independent of the FPU's rounding mode and of compiler
// half-precision support: float16 -> float32/float64 is exact; float32/float64 -> float16
// rounds to nearest, ties to even (NumPy's npy_float_to_half / npy_double_to_half), with
// overflow to infinity, gradual underflow to subnormals and NaN kept NaN (sign and the top
// payload bits kept, the quiet bit set). This header is written once for every user: host
// code, the CPU kernels, the C++ the CPU generates for fused loops and the NVRTC kernels (it
// is embedded before src/ops/scalar/scalar_ops.hpp for generated code), so it includes only
// <cstdint> and <type_traits>, which NVRTC's in-memory shims provide.
#pragma once
#ifndef THEON_HALF_HPP
#define THEON_HALF_HPP
#include <cstdint>
#include <type_traits>

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define THEON_HALF_HD __host__ __device__ inline
#else
#define THEON_HALF_HD inline
#endif

namespace theon {
namespace half_detail {

THEON_HALF_HD uint32_t float_bits(float f) {
#if defined(__CUDA_ARCH__) || defined(__CUDACC_RTC__) || defined(__GPU_SIM__)
  return __float_as_uint(f);
#else
  uint32_t u;
  __builtin_memcpy(&u, &f, sizeof u);
  return u;
#endif
}
THEON_HALF_HD float bits_float(uint32_t u) {
#if defined(__CUDA_ARCH__) || defined(__CUDACC_RTC__) || defined(__GPU_SIM__)
  return __uint_as_float(u);
#else
  float f;
  __builtin_memcpy(&f, &u, sizeof f);
  return f;
#endif
}
THEON_HALF_HD uint64_t double_bits(double d) {
#if defined(__CUDA_ARCH__) || defined(__CUDACC_RTC__) || defined(__GPU_SIM__)
  return static_cast<uint64_t>(__double_as_longlong(d));
#else
  uint64_t u;
  __builtin_memcpy(&u, &d, sizeof u);
  return u;
#endif
}

// An IEEE binary format with `kMant` mantissa bits and exponent bias `kBias` (float32: 23,
// 127; float64: 52, 1023) rounded to binary16, from its bits.
template <class UInt, int kMant, int kBias>
THEON_HALF_HD uint16_t round_to_half(UInt bits) {
  constexpr int kBits = static_cast<int>(sizeof(UInt)) * 8;
  constexpr UInt kMantMask = (UInt(1) << kMant) - 1;
  constexpr int kExpMax = (1 << (kBits - 1 - kMant)) - 1;
  const uint16_t sign = static_cast<uint16_t>((bits >> (kBits - 1)) << 15);
  const int exp = static_cast<int>((bits >> kMant) & UInt(kExpMax));
  const UInt mant = bits & kMantMask;
  if (exp == kExpMax)  // infinity, or NaN: keep the top payload bits, set the quiet bit
    return mant == 0 ? uint16_t(sign | 0x7c00u)
                     : uint16_t(sign | 0x7e00u | static_cast<uint16_t>(mant >> (kMant - 10)));
  if (exp == 0) return sign;  // zero, or a subnormal of the wide format: far below 2^-25
  const int e = exp - kBias;  // value = 1.mant * 2^e
  if (e > 15) return uint16_t(sign | 0x7c00u);
  UInt keep, rest, half_way;
  uint32_t result;
  if (e >= -14) {  // a normal half (or, after rounding up, the next binade or infinity)
    constexpr int s = kMant - 10;
    keep = mant >> s;
    rest = mant & ((UInt(1) << s) - 1);
    half_way = UInt(1) << (s - 1);
    result = (static_cast<uint32_t>(e + 15) << 10) | static_cast<uint32_t>(keep);
  } else {  // a subnormal half: units of 2^-24
    if (e < -25) return sign;  // below half the smallest subnormal
    const UInt full = mant | (UInt(1) << kMant);
    const int s = kMant - (e + 24);  // in [kMant - 9, kMant + 1]
    keep = full >> s;
    rest = full & ((UInt(1) << s) - 1);
    half_way = UInt(1) << (s - 1);
    result = static_cast<uint32_t>(keep);
  }
  if (rest > half_way || (rest == half_way && (result & 1u))) ++result;  // a carry moves up a binade
  return static_cast<uint16_t>(sign | result);
}

}  // namespace half_detail

/// float32 -> binary16 bits, round to nearest even.
THEON_HALF_HD uint16_t float_to_half_bits(float f) {
  return half_detail::round_to_half<uint32_t, 23, 127>(half_detail::float_bits(f));
}
/// float64 -> binary16 bits, round to nearest even (directly: no double rounding via float32).
THEON_HALF_HD uint16_t double_to_half_bits(double d) {
  return half_detail::round_to_half<uint64_t, 52, 1023>(half_detail::double_bits(d));
}
/// binary16 bits -> float32, exact.
THEON_HALF_HD float half_bits_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0x1f) return half_detail::bits_float(sign | 0x7f800000u | (mant << 13));
  if (exp != 0) return half_detail::bits_float(sign | ((exp + 112u) << 23) | (mant << 13));
  if (mant == 0) return half_detail::bits_float(sign);
  // A subnormal: mant * 2^-24, normalised.
  uint32_t m = mant;
  int e = -14;
  while (!(m & 0x400u)) {
    m <<= 1;
    --e;
  }
  return half_detail::bits_float(sign | (static_cast<uint32_t>(e + 127) << 23) | ((m & 0x3ffu) << 13));
}

/// A float16 element: two bytes of storage with explicit, exact conversions. No arithmetic:
/// convert to float, compute, convert back (that is what every kernel does).
struct half {
  uint16_t bits = 0;

  half() = default;
  /// From any arithmetic value: float and double round to nearest even, integers and bool
  /// through double (exact up to 2^53; larger values are infinite in float16 anyway).
  template <class T>
  THEON_HALF_HD explicit half(T v) : bits(std::is_same_v<T, float> ? float_to_half_bits(static_cast<float>(v))
                                                                   : double_to_half_bits(static_cast<double>(v))) {}
  THEON_HALF_HD static half from_bits(uint16_t b) {
    half h;
    h.bits = b;
    return h;
  }
  /// To any arithmetic type: floats exactly; bool is `!= 0` (NaN is true); integers
  /// truncate toward zero, NaN and infinities giving int64's minimum wrapped to the type (the
  /// rule of every float -> int cast in Theon).
  template <class T>
  THEON_HALF_HD explicit operator T() const {
    const float f = half_bits_to_float(bits);
    if constexpr (std::is_same_v<T, bool>) {
      return f != 0.0f;
    } else if constexpr (std::is_integral_v<T>) {
      if (!(f >= -65504.0f && f <= 65504.0f)) return static_cast<T>(static_cast<uint64_t>(1) << 63);
      return static_cast<T>(static_cast<int64_t>(f));
    } else {
      return static_cast<T>(f);
    }
  }
};

}  // namespace theon
#endif  // THEON_HALF_HPP
