// The scalar semantics of every elementwise op, written once. CPU kernels instantiate these
// functors; fused kernels (generated C++ and, later, the NVRTC preamble) include this same
// header, so fused and unfused results cannot disagree. Integer semantics follow NumPy:
// wrap-around on overflow, floor_div/mod by zero give 0, mod takes the divisor's sign.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#ifndef THEON_HALF_HPP  // generated code has theon/half.hpp pasted before this file
#include <theon/half.hpp>
#endif

#ifdef __CUDACC__
#define THEON_HD __host__ __device__ inline
#else
#define THEON_HD inline
#endif

namespace theon::scalar {

template <class T> using Unsigned = std::make_unsigned_t<T>;

// Signed overflow is undefined in C++: wrap through the unsigned type, as NumPy does.
template <class T> THEON_HD T wrap_add(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) return T(Unsigned<T>(a) + Unsigned<T>(b));
  else return a + b;
}
template <class T> THEON_HD T wrap_sub(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) return T(Unsigned<T>(a) - Unsigned<T>(b));
  else return a - b;
}
template <class T> THEON_HD T wrap_mul(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
    return T(static_cast<Unsigned<T>>(static_cast<uint64_t>(Unsigned<T>(a)) * static_cast<uint64_t>(Unsigned<T>(b))));
  else return a * b;
}

struct Identity { template <class T> THEON_HD T operator()(T a) const { return a; } };
struct Add {
  template <class T> THEON_HD T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a || b;
    else return wrap_add(a, b);
  }
};
struct Sub { template <class T> THEON_HD T operator()(T a, T b) const { return wrap_sub(a, b); } };
struct Mul {
  template <class T> THEON_HD T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a && b;
    else return wrap_mul(a, b);
  }
};
struct TrueDiv { template <class T> THEON_HD T operator()(T a, T b) const { return a / b; } };
struct FloorDiv {
  template <class T> THEON_HD T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (b == 0) return a / b;  // inf or nan, as NumPy
      T r = std::fmod(a, b), q = (a - r) / b;
      if (r != 0 && ((r < 0) != (b < 0))) q -= 1;
      return q;
    } else {
      if (b == 0) return T(0);
      if constexpr (std::is_signed_v<T>) {
        if (b == T(-1)) return wrap_sub(T(0), a);  // avoids INT_MIN / -1
        T q = a / b;
        if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
        return q;
      } else {
        return a / b;
      }
    }
  }
};
struct Mod {
  template <class T> THEON_HD T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (b == 0) return std::fmod(a, b);  // nan
      T r = std::fmod(a, b);
      if (r != 0 && ((r < 0) != (b < 0))) r += b;
      return r;
    } else {
      if (b == 0) return T(0);
      if constexpr (std::is_signed_v<T>) {
        if (b == T(-1)) return T(0);
        T r = a % b;
        if (r != 0 && ((r < 0) != (b < 0))) r += b;
        return r;
      } else {
        return a % b;
      }
    }
  }
};
struct Pow {
  template <class T> THEON_HD T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      return std::pow(a, b);
    } else {
      // Integer power by squaring with wrap-around; a negative exponent gives the
      // truncated result (1 for a == 1, +-1 for a == -1, else 0) instead of NumPy's error.
      if constexpr (std::is_signed_v<T>) {
        if (b < 0) return a == 1 ? T(1) : a == T(-1) ? ((b % 2) ? T(-1) : T(1)) : T(0);
      }
      T result = 1, base = a;
      for (auto e = static_cast<Unsigned<T>>(b); e; e >>= 1) {
        if (e & 1) result = wrap_mul(result, base);
        base = wrap_mul(base, base);
      }
      return result;
    }
  }
};
struct Neg { template <class T> THEON_HD T operator()(T a) const { return wrap_sub(T(0), a); } };
struct Abs {
  template <class T> THEON_HD T operator()(T a) const {
    if constexpr (std::is_floating_point_v<T>) return std::fabs(a);
    else if constexpr (std::is_signed_v<T>) return a < 0 ? wrap_sub(T(0), a) : a;
    else return a;
  }
};
struct Sign {
  template <class T> THEON_HD T operator()(T a) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (a != a) return a;
      return a > 0 ? T(1) : a < 0 ? T(-1) : T(0);
    } else {
      return a > 0 ? T(1) : (std::is_signed_v<T> && a < 0) ? T(-1) : T(0);
    }
  }
};
struct Sqr { template <class T> THEON_HD T operator()(T a) const { return wrap_mul(a, a); } };
struct Maximum {
  template <class T> THEON_HD T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (a != a) return a;  // NaN propagates, as numpy.maximum
      if (b != b) return b;
    }
    return a > b ? a : b;
  }
};
struct Minimum {
  template <class T> THEON_HD T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (a != a) return a;
      if (b != b) return b;
    }
    return a < b ? a : b;
  }
};
struct Clip {
  template <class T> THEON_HD T operator()(T x, T lo, T hi) const { return Minimum()(Maximum()(x, lo), hi); }
};
struct Relu {
  template <class T> THEON_HD T operator()(T a) const {
    if constexpr (std::is_floating_point_v<T>)
      if (a != a) return a;
    return a > T(0) ? a : T(0);
  }
};
struct Lt { template <class T> THEON_HD bool operator()(T a, T b) const { return a < b; } };
struct Gt { template <class T> THEON_HD bool operator()(T a, T b) const { return a > b; } };
struct Le { template <class T> THEON_HD bool operator()(T a, T b) const { return a <= b; } };
struct Ge { template <class T> THEON_HD bool operator()(T a, T b) const { return a >= b; } };
struct Eq { template <class T> THEON_HD bool operator()(T a, T b) const { return a == b; } };
struct Neq { template <class T> THEON_HD bool operator()(T a, T b) const { return a != b; } };
struct And {
  template <class T> THEON_HD T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a && b;
    else return T(a & b);
  }
};
struct Or {
  template <class T> THEON_HD T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a || b;
    else return T(a | b);
  }
};
struct Xor {
  template <class T> THEON_HD T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a != b;
    else return T(a ^ b);
  }
};
struct Not {
  template <class T> THEON_HD T operator()(T a) const {
    if constexpr (std::is_same_v<T, bool>) return !a;
    else return T(~a);
  }
};
struct Exp { template <class T> THEON_HD T operator()(T a) const { return std::exp(a); } };
struct Log { template <class T> THEON_HD T operator()(T a) const { return std::log(a); } };
struct Log1p { template <class T> THEON_HD T operator()(T a) const { return std::log1p(a); } };
struct Expm1 { template <class T> THEON_HD T operator()(T a) const { return std::expm1(a); } };
struct Sqrt { template <class T> THEON_HD T operator()(T a) const { return std::sqrt(a); } };
struct Tanh { template <class T> THEON_HD T operator()(T a) const { return std::tanh(a); } };
struct Erf { template <class T> THEON_HD T operator()(T a) const { return std::erf(a); } };
struct Erfc { template <class T> THEON_HD T operator()(T a) const { return std::erfc(a); } };
// ---- special functions (Theano's erfinv, gamma, gammaln, psi, tri_gamma, xlogx, xlogy0, softsign) ----
// Computed in double for every float dtype and rounded once, so float32 results are the
// correctly rounded double ones on the CPU, in generated C++ and under NVRTC alike (NVRTC's
// erfinv builtin is not used: the CPU has none, and both must be the same function).
namespace special {
constexpr double kPi = 3.14159265358979323846;
// erf^-1 on (-1, 1): Giles' single-precision approximation ("Approximating the erfinv
// function", GPU Computing Gems, 2011) refined by two Newton steps on erf (on erfc for |x| >=
// 0.5, where 1 - |x| is exact and erf(y) - x would cancel). +-1 give +-inf, |x| > 1 and NaN NaN.
THEON_HD double erfinv(double x) {
  if (x != x || x < -1.0 || x > 1.0) return std::numeric_limits<double>::quiet_NaN();
  if (x == 1.0) return std::numeric_limits<double>::infinity();
  if (x == -1.0) return -std::numeric_limits<double>::infinity();
  const double a = std::fabs(x);
  double w = -std::log((1.0 - a) * (1.0 + a)), p;
  if (w < 5.0) {
    w -= 2.5;
    p = 2.81022636e-08;
    p = 3.43273939e-07 + p * w; p = -3.5233877e-06 + p * w; p = -4.39150654e-06 + p * w;
    p = 0.00021858087 + p * w; p = -0.00125372503 + p * w; p = -0.00417768164 + p * w;
    p = 0.246640727 + p * w; p = 1.50140941 + p * w;
  } else {
    w = std::sqrt(w) - 3.0;
    p = -0.000200214257;
    p = 0.000100950558 + p * w; p = 0.00134934322 + p * w; p = -0.00367342844 + p * w;
    p = 0.00573950773 + p * w; p = -0.0076224613 + p * w; p = 0.00943887047 + p * w;
    p = 1.00167406 + p * w; p = 2.83297682 + p * w;
  }
  double y = p * a;
  for (int i = 0; i < 3; ++i) {  // Newton: quadratic convergence from ~1e-7
    const double f = a < 0.5 ? std::erf(y) - a : (1.0 - a) - std::erfc(y);
    const double d = 1.1283791670955126 * std::exp(-y * y);  // erf'(y)
    if (d == 0.0) break;
    y -= f / d;
  }
  return x < 0 ? -y : y;
}
// digamma (psi): reflection for x < 0, the recurrence psi(x) = psi(x + 1) - 1/x up to x >= 10,
// then the asymptotic series. Poles (0, -1, -2, ...) give NaN.
THEON_HD double digamma(double x) {
  if (x != x) return x;
  if (x <= 0.0 && std::floor(x) == x) return std::numeric_limits<double>::quiet_NaN();
  double r = 0.0;
  if (x < 0.0) {  // psi(x) = psi(1 - x) - pi / tan(pi x)
    r = -kPi / std::tan(kPi * x);
    x = 1.0 - x;
  }
  while (x < 10.0) { r -= 1.0 / x; x += 1.0; }
  const double z = 1.0 / (x * x);
  const double series =
      z * (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (1.0 / 240 - z * (1.0 / 132 - z * (691.0 / 32760 - z / 12))))));
  return r + std::log(x) - 0.5 / x - series;
}
// trigamma (psi'): reflection, recurrence psi1(x) = psi1(x + 1) + 1/x^2, asymptotic series.
THEON_HD double trigamma(double x) {
  if (x != x) return x;
  if (x <= 0.0 && std::floor(x) == x) return std::numeric_limits<double>::quiet_NaN();
  double r = 0.0, sign = 1.0;
  if (x < 0.0) {  // psi1(x) = pi^2 / sin^2(pi x) - psi1(1 - x)
    const double s = std::sin(kPi * x);
    r = kPi * kPi / (s * s);
    sign = -1.0;
    x = 1.0 - x;
  }
  double acc = 0.0;
  while (x < 10.0) { acc += 1.0 / (x * x); x += 1.0; }
  const double z = 1.0 / (x * x);
  const double series = 1.0 / x + z / 2 +
                        z / x * (1.0 / 6 - z * (1.0 / 30 - z * (1.0 / 42 - z * (1.0 / 30 - z * (5.0 / 66 - z * (691.0 / 2730 - z * 7.0 / 6))))));
  return r + sign * (acc + series);
}
}  // namespace special

struct Erfinv { template <class T> THEON_HD T operator()(T a) const { return T(special::erfinv(double(a))); } };
struct Gamma { template <class T> THEON_HD T operator()(T a) const { return T(std::tgamma(double(a))); } };
struct GammaLn { template <class T> THEON_HD T operator()(T a) const { return T(std::lgamma(double(a))); } };
struct Psi { template <class T> THEON_HD T operator()(T a) const { return T(special::digamma(double(a))); } };
struct TriGamma { template <class T> THEON_HD T operator()(T a) const { return T(special::trigamma(double(a))); } };
// x * log(x), 0 at x = 0 (Theano's xlogx); x * log(y), 0 at x = 0 (xlogy0).
struct XlogX {
  template <class T> THEON_HD T operator()(T a) const { return a == T(0) ? T(0) : T(double(a) * std::log(double(a))); }
};
struct XlogY0 {
  template <class T> THEON_HD T operator()(T a, T b) const {
    return a == T(0) ? T(0) : T(double(a) * std::log(double(b)));
  }
};
// x / (1 + |x|) (Theano's nnet.softsign).
struct Softsign { template <class T> THEON_HD T operator()(T a) const { return a / (T(1) + std::fabs(a)); } };
struct Sigmoid {
  template <class T> THEON_HD T operator()(T a) const {  // stable on both tails
    if (a >= 0) return T(1) / (T(1) + std::exp(-a));
    T e = std::exp(a);
    return e / (T(1) + e);
  }
};
struct Softplus {
  template <class T> THEON_HD T operator()(T a) const {  // log(1 + exp(a)) without overflow
    return a > 0 ? a + std::log1p(std::exp(-a)) : std::log1p(std::exp(a));
  }
};
struct Sin { template <class T> THEON_HD T operator()(T a) const { return std::sin(a); } };
struct Cos { template <class T> THEON_HD T operator()(T a) const { return std::cos(a); } };
struct Floor { template <class T> THEON_HD T operator()(T a) const { return std::floor(a); } };
struct Ceil { template <class T> THEON_HD T operator()(T a) const { return std::ceil(a); } };
struct Trunc { template <class T> THEON_HD T operator()(T a) const { return std::trunc(a); } };
// Ties to the even neighbour (numpy.round, Theano's default), independent of the FPU's
// rounding mode: a - floor(a) is exact, so the tie test is too.
struct RoundHalfToEven {
  template <class T> THEON_HD T operator()(T a) const {
    const T f = std::floor(a), d = a - f;
    if (d > T(0.5)) return f + T(1);
    if (d < T(0.5)) return f;  // NaN and infinities fall through to f + 1: NaN and inf
    return std::fmod(f, T(2)) == T(0) ? f : f + T(1);
  }
};
struct RoundHalfAwayFromZero { template <class T> THEON_HD T operator()(T a) const { return std::round(a); } };
struct Switch { template <class T> THEON_HD T operator()(bool c, T a, T b) const { return c ? a : b; } };
struct Cast {
  template <class To, class From> THEON_HD To convert(From a) const {
    // float16 (theon::half, storage only): through float32, which holds every half exactly;
    // to float16 from float32 or float64 directly (one rounding, to nearest even).
    if constexpr (std::is_same_v<From, theon::half>) return convert<To>(theon::half_bits_to_float(a.bits));
    else if constexpr (std::is_same_v<To, theon::half>) return theon::half(a);
    else if constexpr (std::is_same_v<To, bool>) return a != From(0);
    else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
      // Out-of-range and NaN float->int casts are undefined in C++: go through int64 (NaN and
      // out-of-range give int64's minimum, as x86 does) and wrap to the narrower type.
      if (!(a >= From(-9223372036854775808.0) && a < From(9223372036854775808.0)))
        return To(std::numeric_limits<int64_t>::min());
      return To(static_cast<int64_t>(a));
    } else {
      return To(a);
    }
  }
};

}  // namespace theon::scalar
