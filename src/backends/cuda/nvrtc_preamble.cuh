// The in-memory headers NVRTC compiles Theon's kernels with. NVRTC has no C++ standard
// library, and the scalar functors (src/ops/scalar/scalar_ops.hpp, shared with the CPU so
// fused, unfused, CPU and GPU results follow one definition) and the reduction functors
// (src/ops/scalar/reduce_ops.hpp, pasted into reduction kernels) include <cmath>, <cstdint>,
// <limits> and <type_traits>: these shims give them the few names they use, on top of
// CUDA's own device math functions. This file is split into the named headers at the
// "//@@ name" lines (nvrtc_compiler.cpp).
//@@ cstdint
#pragma once
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
namespace std {
using ::int8_t; using ::int16_t; using ::int32_t; using ::int64_t;
using ::uint8_t; using ::uint16_t; using ::uint32_t; using ::uint64_t;
}
//@@ type_traits
#pragma once
namespace std {
template <class A, class B> inline constexpr bool is_same_v = false;
template <class A> inline constexpr bool is_same_v<A, A> = true;
template <class T> struct theon_integral { static constexpr bool value = false; };
#define THEON_INTEGRAL(T) template <> struct theon_integral<T> { static constexpr bool value = true; };
THEON_INTEGRAL(bool) THEON_INTEGRAL(char) THEON_INTEGRAL(signed char) THEON_INTEGRAL(unsigned char)
THEON_INTEGRAL(short) THEON_INTEGRAL(unsigned short) THEON_INTEGRAL(int) THEON_INTEGRAL(unsigned int)
THEON_INTEGRAL(long) THEON_INTEGRAL(unsigned long) THEON_INTEGRAL(long long) THEON_INTEGRAL(unsigned long long)
#undef THEON_INTEGRAL
template <class T> inline constexpr bool is_integral_v = theon_integral<T>::value;
template <class T> inline constexpr bool is_floating_point_v = is_same_v<T, float> || is_same_v<T, double>;
template <class T> inline constexpr bool is_signed_v = is_floating_point_v<T> || (is_integral_v<T> && T(-1) < T(0));
template <class T> struct make_unsigned { using type = T; };
template <> struct make_unsigned<signed char> { using type = unsigned char; };
template <> struct make_unsigned<char> { using type = unsigned char; };
template <> struct make_unsigned<short> { using type = unsigned short; };
template <> struct make_unsigned<int> { using type = unsigned int; };
template <> struct make_unsigned<long> { using type = unsigned long; };
template <> struct make_unsigned<long long> { using type = unsigned long long; };
template <class T> using make_unsigned_t = typename make_unsigned<T>::type;
}
//@@ limits
#pragma once
namespace std {
template <class T> struct numeric_limits;
template <> struct numeric_limits<long long> {
  static constexpr long long min() { return -9223372036854775807LL - 1; }
  static constexpr long long max() { return 9223372036854775807LL; }
};
template <> struct numeric_limits<float> {
  static __device__ float infinity() { return __int_as_float(0x7f800000); }
  static __device__ float quiet_NaN() { return __int_as_float(0x7fc00000); }
  static constexpr float max() { return 3.402823466e+38f; }
  static constexpr float lowest() { return -3.402823466e+38f; }
};
template <> struct numeric_limits<double> {
  static __device__ double infinity() { return __longlong_as_double(0x7ff0000000000000LL); }
  static __device__ double quiet_NaN() { return __longlong_as_double(0x7ff8000000000000LL); }
  static constexpr double max() { return 1.7976931348623157e+308; }
  static constexpr double lowest() { return -1.7976931348623157e+308; }
};
}
//@@ cmath
#pragma once
// CUDA declares the math functions (with float overloads) in the global namespace.
namespace std {
using ::fmod; using ::exp; using ::expm1; using ::log; using ::log1p; using ::sqrt; using ::tanh;
using ::sin; using ::cos; using ::tan; using ::pow; using ::fabs; using ::floor; using ::ceil; using ::isnan; using ::isinf;
using ::erf; using ::erfc; using ::lgamma; using ::tgamma; using ::log2; using ::exp2; using ::trunc; using ::round;
}
//@@ theon_device.cuh
#pragma once
// Helpers every generated kernel may use.
#include <cstdint>
#define THEON_MAX_RANK 8
// Shapes and strides (in elements) of one operand, passed by value as a kernel argument.
struct TheonStrides {
  long long s[THEON_MAX_RANK];
};
struct TheonShape {
  long long d[THEON_MAX_RANK];
};
// Offset of the element with flat (row-major) index `i` in an operand of rank `rank`.
template <int rank>
__device__ __forceinline__ long long theon_offset(long long i, const TheonShape& shape, const TheonStrides& st) {
  long long off = 0;
#pragma unroll
  for (int d = rank - 1; d >= 0; --d) {
    const long long n = shape.d[d];
    off += (i % n) * st.s[d];
    i /= n;
  }
  return off;
}
// The same with the rank known only at run time (one kernel serves every rank).
__device__ __forceinline__ long long theon_offset_n(long long i, int rank, const TheonShape& shape,
                                                    const TheonStrides& st) {
  long long off = 0;
  for (int d = rank - 1; d >= 0; --d) {
    const long long n = shape.d[d];
    off += (i % n) * st.s[d];
    i /= n;
  }
  return off;
}
