// The accumulation of a reduction, written once: Reduce::perform runs it over its input and
// FusedReduce over each chunk its region computes, so the two give the same bits. Floats
// accumulate in double, integers in int64 with NumPy's wrap-around, bools in bool.
#pragma once
#include "ops/reduce.hpp"
#include "util/strided.hpp"

#include <theon/array.hpp>

#include <cstdint>
#include <limits>
#include <type_traits>

namespace theon::ops {

template <class Acc> Acc reduce_initial(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::Prod: case ReduceKind::All: return Acc(1);
    // -inf/+inf for floats, so an all -inf (+inf) row gives -inf (+inf), as NumPy.
    case ReduceKind::Max:
      return std::numeric_limits<Acc>::has_infinity ? -std::numeric_limits<Acc>::infinity()
                                                    : std::numeric_limits<Acc>::lowest();
    case ReduceKind::Min:
      return std::numeric_limits<Acc>::has_infinity ? std::numeric_limits<Acc>::infinity()
                                                    : std::numeric_limits<Acc>::max();
    default: return Acc(0);
  }
}

/// Folds the elements of `src` (shape `shape`, strides `src_strides`) into `acc`, whose
/// strides seen from the same dims are `acc_strides` (0 along reduced dims), element by
/// element in row-major order.
template <class T, class Acc>
void reduce_fold(ReduceKind kind, Shape shape, const Strides& src_strides, const Strides& acc_strides, const T* src,
                 Acc* acc) {
  if (shape_size(shape) == 0) return;
  std::vector<Strides> st = {src_strides, acc_strides};
  theon::detail::collapse_dims(shape, st);
  if (shape.empty()) {  // 0-d: one element
    shape = {1};
    st = {{0}, {0}};
  }
  theon::detail::OuterLoop loop(shape, {&st[0], &st[1]}, {0, 0});
  const int64_t n = shape.back(), is = st[0].back(), os = st[1].back();
  for (int64_t r = 0; r < loop.count(); ++r, loop.next()) {
    const T* p = src + loop.offsets()[0];
    Acc* a = acc + loop.offsets()[1];
    switch (kind) {
      case ReduceKind::Sum: case ReduceKind::Mean:
        if constexpr (std::is_same_v<Acc, bool>) break;
        else if constexpr (std::is_integral_v<Acc>)  // wrap like NumPy instead of overflowing
          for (int64_t i = 0; i < n; ++i) a[i * os] = Acc(uint64_t(a[i * os]) + uint64_t(Acc(p[i * is])));
        else
          for (int64_t i = 0; i < n; ++i) a[i * os] += Acc(p[i * is]);
        break;
      case ReduceKind::Prod:
        if constexpr (std::is_same_v<Acc, bool>) break;
        else if constexpr (std::is_integral_v<Acc>)
          for (int64_t i = 0; i < n; ++i) a[i * os] = Acc(uint64_t(a[i * os]) * uint64_t(Acc(p[i * is])));
        else
          for (int64_t i = 0; i < n; ++i) a[i * os] *= Acc(p[i * is]);
        break;
      case ReduceKind::Max:
        for (int64_t i = 0; i < n; ++i) {
          Acc v = Acc(p[i * is]);
          if (v > a[i * os] || v != v) a[i * os] = v;  // NaN wins, as numpy.max
        }
        break;
      case ReduceKind::Min:
        for (int64_t i = 0; i < n; ++i) {
          Acc v = Acc(p[i * is]);
          if (v < a[i * os] || v != v) a[i * os] = v;
        }
        break;
      case ReduceKind::Any:
        for (int64_t i = 0; i < n; ++i) a[i * os] = a[i * os] || bool(p[i * is]);
        break;
      case ReduceKind::All:
        for (int64_t i = 0; i < n; ++i) a[i * os] = a[i * os] && bool(p[i * is]);
        break;
      case ReduceKind::Count: break;
    }
  }
}

/// Mean: scales the `n` accumulated sums by 1/count (NaN when count is 0).
template <class Acc> void reduce_finish_mean(Acc* acc, int64_t n, int64_t count) {
  if constexpr (std::is_floating_point_v<Acc>) {
    const Acc c = count == 0 ? std::numeric_limits<Acc>::quiet_NaN() : Acc(1) / Acc(count);
    for (int64_t i = 0; i < n; ++i) acc[i] = count == 0 ? c : acc[i] * c;
  }
}

}  // namespace theon::ops
