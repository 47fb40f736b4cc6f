// The accumulation of a reduction, written once: the CPU's Reduce loop runs it over its input
// and FusedReduce's over each chunk its region computes, so the two give the same bits. The
// per-kind semantics (accumulator type, init, load, combine, finish) are the functors of
// ops/scalar/reduce_ops.hpp, which the generated CUDA reductions include as well.
#pragma once
#include "ops/reduce.hpp"
#include "ops/scalar/reduce_ops.hpp"
#include "util/strided.hpp"

#include <theon/array.hpp>
#include <theon/error.hpp>

#include <cstdint>
#include <limits>
#include <type_traits>

namespace theon::backends::cpu {

using ops::ReduceKind;
using ops::reduce_kind_name;

/// Calls f.template operator()<Functor>() with the reduce_ops.hpp functor of `kind` (the one
/// place a ReduceKind becomes its semantics). Count folds nothing: it has no functor.
template <class F> decltype(auto) visit_reduce_op(ReduceKind kind, F&& f) {
  switch (kind) {
    case ReduceKind::Sum: return f.template operator()<reduce::Sum>();
    case ReduceKind::Prod: return f.template operator()<reduce::Prod>();
    case ReduceKind::Max: return f.template operator()<reduce::Max>();
    case ReduceKind::Min: return f.template operator()<reduce::Min>();
    case ReduceKind::Any: return f.template operator()<reduce::Any>();
    case ReduceKind::All: return f.template operator()<reduce::All>();
    case ReduceKind::Mean: return f.template operator()<reduce::Mean>();
    case ReduceKind::Count: break;
  }
  throw InternalError("visit_reduce_op: " + std::string(reduce_kind_name(kind)) + " has no reduction functor");
}

/// Folds the elements of `src` (shape `shape`, strides `src_strides`) into `acc`, whose
/// strides seen from the same dims are `acc_strides` (0 along reduced dims), element by
/// element in row-major order.
template <class Op, class T, class Acc>
void reduce_fold(Shape shape, const Strides& src_strides, const Strides& acc_strides, const T* src, Acc* acc) {
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
    for (int64_t i = 0; i < n; ++i) a[i * os] = Op::combine(a[i * os], Op::template load<Acc>(p[i * is], 0));
  }
}

/// Finishes the `n` accumulators in place: `scale` is 1 / count (NaN when count is 0).
template <class Op, class Acc> void reduce_finish(Acc* acc, int64_t n, int64_t count) {
  const double scale = count == 0 ? std::numeric_limits<double>::quiet_NaN() : 1.0 / static_cast<double>(count);
  for (int64_t i = 0; i < n; ++i) acc[i] = Acc(Op::finish(acc[i], scale));
}

}  // namespace theon::backends::cpu
