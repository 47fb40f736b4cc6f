// The semantics of every reduction, written once: per kind, the accumulator type, the
// identity (init), how an input element becomes an accumulator (load), how two
// accumulators combine (associative: the CPU folds left to right, CUDA reduces in trees),
// and how the result is finished. The CPU loop (ops/reduce_accumulate.hpp) instantiates
// these functors; generated CUDA reductions paste this same header's text (embedded at build
// time, as scalar_ops.hpp is for generated CPU kernels), so CPU and GPU results follow one
// definition. Integer sums and products wrap like NumPy (the scalar Add/Mul); max/min let a
// NaN win, as numpy.max.
#pragma once
#include "scalar_ops.hpp"

#include <cstdint>
#include <limits>
#include <type_traits>

namespace theon::reduce {

template <class T> THEON_HD bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) return v != v;
  else return false;
}

// -inf (+inf) for floats, the lowest (highest) value otherwise: the identities of max (min).
template <class T> THEON_HD T lowest() {
  if constexpr (std::is_floating_point_v<T>) return -std::numeric_limits<T>::infinity();
  else if constexpr (std::is_same_v<T, bool>) return false;
  else if constexpr (std::is_signed_v<T>) return T(std::make_unsigned_t<T>(1) << (sizeof(T) * 8 - 1));
  else return T(0);
}
template <class T> THEON_HD T highest() {
  if constexpr (std::is_floating_point_v<T>) return std::numeric_limits<T>::infinity();
  else if constexpr (std::is_same_v<T, bool>) return true;
  else if constexpr (std::is_signed_v<T>) return T(std::make_unsigned_t<T>(~std::make_unsigned_t<T>(0)) >> 1);
  else return T(~T(0));
}

// What every kind shares: loading converts, finishing returns the accumulator.
struct Fold {
  template <class A, class T> static THEON_HD A load(T v, int64_t) { return A(v); }
  template <class A> static THEON_HD A finish(A a, double) { return a; }
};

// Floats accumulate in double, integers (and bools) in int64. (NVRTC's <type_traits> shim has
// no std::conditional.)
template <bool kFloat> struct WideAccOf { using type = int64_t; };
template <> struct WideAccOf<true> { using type = double; };
template <class T> using WideAcc = typename WideAccOf<std::is_floating_point_v<T>>::type;

struct Sum : Fold {
  template <class T> using Acc = WideAcc<T>;
  template <class A> static THEON_HD A init() { return A(0); }
  template <class A> static THEON_HD A combine(A a, A b) { return scalar::Add{}(a, b); }
};
struct Prod : Fold {
  template <class T> using Acc = WideAcc<T>;
  template <class A> static THEON_HD A init() { return A(1); }
  template <class A> static THEON_HD A combine(A a, A b) { return scalar::Mul{}(a, b); }
};
/// The sum scaled by `scale` (1 / count, NaN for an empty reduction).
struct Mean : Fold {
  template <class T> using Acc = double;
  template <class A> static THEON_HD A init() { return A(0); }
  template <class A> static THEON_HD A combine(A a, A b) { return a + b; }
  template <class A> static THEON_HD A finish(A a, double scale) { return a * scale; }
};
// Max and min are exact in the input type. A NaN wins; on ties the first-seen value stays.
struct Max : Fold {
  template <class T> using Acc = T;
  template <class A> static THEON_HD A init() { return lowest<A>(); }
  template <class A> static THEON_HD A combine(A a, A b) { return (b > a || is_nan(b)) && !is_nan(a) ? b : a; }
};
struct Min : Fold {
  template <class T> using Acc = T;
  template <class A> static THEON_HD A init() { return highest<A>(); }
  template <class A> static THEON_HD A combine(A a, A b) { return (b < a || is_nan(b)) && !is_nan(a) ? b : a; }
};
struct Any : Fold {
  template <class T> using Acc = bool;
  template <class A> static THEON_HD A init() { return false; }
  template <class A> static THEON_HD A combine(A a, A b) { return a || b; }
};
struct All : Fold {
  template <class T> using Acc = bool;
  template <class A> static THEON_HD A init() { return true; }
  template <class A> static THEON_HD A combine(A a, A b) { return a && b; }
};

// Argmax/argmin accumulate (value, index) pairs; index -1 is the empty pair.
template <class T> struct ArgPair {
  T v;
  int64_t i;
};
template <bool kMax> struct ArgExtremum {
  template <class T> using Acc = ArgPair<T>;
  template <class A> static THEON_HD A init() {
    A r;
    r.v = decltype(r.v)(0);
    r.i = -1;
    return r;
  }
  template <class A, class T> static THEON_HD A load(T v, int64_t index) {
    A p;
    p.v = v;
    p.i = index;
    return p;
  }
  // A total order: empty < everything; NaN beats numbers; then the value; ties go to the
  // lower index (numpy's first occurrence, and the first NaN).
  template <class A> static THEON_HD A combine(A a, A b) {
    if (a.i < 0) return b;
    if (b.i < 0) return a;
    const bool an = is_nan(a.v), bn = is_nan(b.v);
    if (an || bn) return (an && bn) ? (a.i < b.i ? a : b) : (an ? a : b);
    if (kMax ? b.v > a.v : b.v < a.v) return b;
    if (kMax ? a.v > b.v : a.v < b.v) return a;
    return a.i < b.i ? a : b;
  }
  template <class A> static THEON_HD int64_t finish(A a, double) { return a.i; }
};
using ArgMax = ArgExtremum<true>;
using ArgMin = ArgExtremum<false>;

}  // namespace theon::reduce
