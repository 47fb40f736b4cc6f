// The scalar semantics of every elementwise op, written once. CPU kernels instantiate these
// functors; fused kernels (generated C++ and, later, the NVRTC preamble) include this same
// header, so fused and unfused results cannot disagree. Integer semantics follow NumPy:
// wrap-around on overflow, floor_div/mod by zero give 0, mod takes the divisor's sign.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

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
    if constexpr (std::is_same_v<To, bool>) return a != From(0);
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
