// Reductions on the CPU: Reduce (every kind), SumTo, ArgMax, CumSum/CumProd, Sort/ArgSort, FlatNonZero and FusedReduce. Accumulation
// follows the functors of ops/scalar/reduce_ops.hpp (reduce_accumulate.hpp), as the generated
// CUDA reductions do.
#include "backends/cpu/cpu_backend.hpp"
#include "backends/cpu/cpu_kernels.hpp"
#include "backends/cpu/parallel.hpp"
#include "backends/cpu/reduce_accumulate.hpp"
#include "ops/argmax.hpp"
#include "ops/cumulative.hpp"
#include "ops/elemwise.hpp"
#include "ops/fused_reduce.hpp"
#include "ops/reduce.hpp"
#include "ops/nonzero.hpp"
#include "ops/sort.hpp"
#include "util/dispatch.hpp"
#include "util/strided.hpp"

#include <theon/error.hpp>

#include <algorithm>
#include <cmath>
#include <optional>

namespace theon::backends::cpu {

using graph::Apply;
using ops::FusedReduce;

void for_each_lane(const Shape& shape, int axis, const std::vector<Strides>& strides,
                   const std::function<void(const std::vector<int64_t>& offsets)>& fn) {
  // The lane's axis goes last so OuterLoop walks all the others.
  Shape outer;
  std::vector<Strides> st(strides.size());
  for (int d = 0; d < static_cast<int>(shape.size()); ++d)
    if (d != axis) {
      outer.push_back(shape[d]);
      for (size_t k = 0; k < strides.size(); ++k) st[k].push_back(strides[k][d]);
    }
  outer.push_back(shape[axis]);
  for (size_t k = 0; k < strides.size(); ++k) st[k].push_back(strides[k][axis]);
  std::vector<const Strides*> ptrs;
  for (auto& s : st) ptrs.push_back(&s);
  detail::OuterLoop loop(outer, ptrs, std::vector<int64_t>(strides.size(), 0));
  for (int64_t r = 0; r < loop.count(); ++r, loop.next()) fn(loop.offsets());
}


namespace {

// ---- Reduce ----

// Accumulates in the functor's accumulator type (double for float sums, int64 for integer
// ones, the input type for max/min), then converts once.
template <class Op, class T>
void reduce_loop(const Array& in, const std::vector<int>& axes, Array& out) {
  using Acc = typename Op::template Acc<T>;
  const int nd = in.ndim();
  Array acc_arr = Array::empty(out.shape(), dtype_of<Acc>());
  Acc* acc = acc_arr.data<Acc>();
  const int64_t n_out = out.size();
  std::fill(acc, acc + n_out, Op::template init<Acc>());
  int64_t count = 1;
  for (int a : axes) count *= in.shape()[a];

  if (in.size() > 0) {
    // Output strides seen from the input's dims: 0 along reduced dims.
    Strides out_st(nd, 0);
    Strides out_contig = contiguous_strides(out.shape());
    for (int d = 0, k = 0; d < nd; ++d)
      if (!std::binary_search(axes.begin(), axes.end(), d)) out_st[d] = out_contig[k++];
    reduce_fold<Op>(in.shape(), in.strides(), out_st, in.data<T>(), acc);
  }
  reduce_finish<Op>(acc, n_out, count);
  Array converted = acc_arr.astype(out.dtype());
  std::copy_n(static_cast<const char*>(converted.data()), out.nbytes(), static_cast<char*>(out.data()));
}

void reduce_loop_kernel(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) {
  const auto& op = static_cast<const ops::Reduce&>(node.op());
  const ops::ReduceKind kind_ = op.reduce_kind();
  const std::vector<int>& axes_ = op.axes();
  const DType out_dtype_ = op.out_dtype();
  const Array& in = inputs[0];
  if (kind_ == ReduceKind::Count) {
    int64_t count = 1;
    for (int a : axes_) count *= in.shape()[a];
    detail::visit_dtype(out_dtype_, [&]<class T>() { outputs[0].data<T>()[0] = static_cast<T>(count); });
    return;
  }
  visit_reduce_op(kind_, [&]<class Op>() {
    detail::visit_dtype(in.dtype(), [&]<class T>() { reduce_loop<Op, T>(in, axes_, outputs[0]); });
  });
}


// ---- SumTo ----

void sum_to_loop(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) {
  const Array& g = inputs[0];
  Array& out = outputs[0];
  if (out.size() == 0) return;
  // Sum g into out, whose broadcast strides are 0 along the summed dims.
  detail::visit_dtype(g.dtype(), [&]<class T>() {
    T* o = out.data<T>();
    std::fill(o, o + out.size(), T(0));
    if (g.size() == 0) return;
    Shape shape = g.shape();
    std::vector<Strides> st = {g.strides(), detail::broadcast_strides(out, shape)};
    detail::collapse_dims(shape, st);
    detail::OuterLoop loop(shape, {&st[0], &st[1]}, {0, 0});
    const T* src = g.data<T>();
    const int64_t n = shape.back(), is = st[0].back(), os = st[1].back();
    for (int64_t r = 0; r < loop.count(); ++r, loop.next()) {
      const T* p = src + loop.offsets()[0];
      T* a = o + loop.offsets()[1];
      if constexpr (std::is_same_v<T, bool>) {
        for (int64_t i = 0; i < n; ++i) a[i * os] = a[i * os] || p[i * is];
      } else if (is == 1 && os == 1) {  // a row added into the sums (a bias's gradient): vectorised
        for (int64_t i = 0; i < n; ++i) a[i] += p[i];
      } else {
        for (int64_t i = 0; i < n; ++i) a[i * os] += p[i * is];
      }
    }
  });
  (void)node;
}

// ---- ArgMax ----

// The index of the extreme of n values starting at p with stride s. NaN beats everything and
// the first NaN is kept, so numpy's "NaN is the maximum (and the minimum)" holds.
template <class T>
int64_t arg_extreme(const T* p, int64_t n, int64_t s, bool is_max) {
  int64_t best = 0;
  T v0 = p[0];
  if constexpr (std::is_floating_point_v<T>)
    if (std::isnan(v0)) return 0;
  for (int64_t i = 1; i < n; ++i) {
    T v = p[i * s];
    if constexpr (std::is_floating_point_v<T>)
      if (std::isnan(v)) return i;
    if (is_max ? v > v0 : v < v0) {
      v0 = v;
      best = i;
    }
  }
  return best;
}

void argmax_loop(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) {
  const auto& op = graph::op_as<ops::ArgMax>(node.op());
  const std::optional<int> axis_ = op.axis();
  const bool is_max_ = op.is_max();
  // Flattened: row-major order of the logical tensor, whatever its layout.
  const Array in = axis_ ? inputs[0] : inputs[0].contiguous().reshape({inputs[0].size()});
  const int axis = axis_.value_or(0);
  Array& out = outputs[0];
  int64_t* po = out.data<int64_t>();
  Strides out_st(in.ndim(), 0);
  Strides out_contig = contiguous_strides(out.shape());
  for (int d = 0, k = 0; d < in.ndim(); ++d)
    if (d != axis) out_st[d] = out_contig[k++];
  const int64_t n = in.shape()[axis], s = in.strides()[axis];
  detail::visit_dtype(in.dtype(), [&]<class T>() {
    const T* pi = in.data<T>();
    for_each_lane(in.shape(), axis, {in.strides(), out_st}, [&](const std::vector<int64_t>& off) {
      po[off[1]] = arg_extreme(pi + off[0], n, s, is_max_);
    });
  });
}

// ---- CumSum, CumProd ----

// A running Sum or Prod (reduce_ops.hpp's functors: double for floats, wrapping int64 for
// integers and bools), each prefix finished and converted once, in lane order: the CUDA
// scan's order too.
template <class F, class T>
void scan_lanes(const ops::Cumulative& op, const Array& in, Array& out) {
  using Acc = typename F::template Acc<T>;
  using O = std::conditional_t<std::is_floating_point_v<T>, T, int64_t>;  // ops::cumulative_dtype
  const int axis = op.axis();
  const bool reverse = op.reverse();
  const int64_t n = in.shape()[axis], si = in.strides()[axis], so = out.strides()[axis];
  const T* pi = in.data<T>();
  O* po = out.data<O>();
  for_each_lane(in.shape(), axis, {in.strides(), out.strides()}, [&](const std::vector<int64_t>& off) {
    Acc acc = F::template init<Acc>();
    for (int64_t k = 0; k < n; ++k) {
      const int64_t i = reverse ? n - 1 - k : k;
      acc = F::combine(acc, F::template load<Acc>(pi[off[0] + i * si], i));
      po[off[1] + i * so] = static_cast<O>(F::finish(acc, 1.0));
    }
  });
}

void cumulative_loop(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) {
  const ops::Cumulative& op = *ops::Cumulative::of(node.op());
  if (inputs[0].size() == 0) return;
  detail::visit_dtype(inputs[0].dtype(), [&]<class T>() {
    if (op.reduce_kind() == ops::ReduceKind::Sum) scan_lanes<reduce::Sum, T>(op, inputs[0], outputs[0]);
    else scan_lanes<reduce::Prod, T>(op, inputs[0], outputs[0]);
  });
}

}  // namespace

// ---- Sort, ArgSort ----

// Each lane: its positions stably sorted by value (ops::sort_less: NaN last), then written out
// as values (Sort) or positions (ArgSort). Lanes run in parallel.
template <class T>
void sort_lanes(const ops::Sort& op, const Array& in, Array& out) {
  const int axis = op.axis();
  const int64_t n = in.shape()[axis], si = in.strides()[axis], so = out.strides()[axis];
  const T* pi = in.data<T>();
  std::vector<int64_t> lane_in, lane_out;  // the lanes' first offsets, then sorted in parallel
  for_each_lane(in.shape(), axis, {in.strides(), out.strides()}, [&](const std::vector<int64_t>& off) {
    lane_in.push_back(off[0]);
    lane_out.push_back(off[1]);
  });
  const int64_t lanes = static_cast<int64_t>(lane_in.size());
  const int threads = lanes > 1 ? parallel_threads(lanes * n) : 1;  // parallel.hpp
  (void)threads;
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    std::vector<int64_t> order(n);
#pragma omp for schedule(static)
    for (int64_t l = 0; l < lanes; ++l) {
      const T* x = pi + lane_in[l];
      for (int64_t k = 0; k < n; ++k) order[k] = k;
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t a, int64_t b) { return ops::sort_less(x[a * si], x[b * si]); });
      if (op.indices()) {
        int64_t* po = out.data<int64_t>() + lane_out[l];
        for (int64_t k = 0; k < n; ++k) po[k * so] = order[k];
      } else {
        T* po = out.data<T>() + lane_out[l];
        for (int64_t k = 0; k < n; ++k) po[k * so] = x[order[k] * si];
      }
    }
  }
}

void sort_loop(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) {
  const ops::Sort& op = *ops::Sort::of(node.op());
  if (inputs[0].size() == 0) return;
  detail::visit_dtype(inputs[0].dtype(), [&]<class T>() { sort_lanes<T>(op, inputs[0], outputs[0]); });
}

// ---- FlatNonZero ----

// The positions of the non-zero elements of the (1-d, strided) input, in order.
void flat_nonzero_loop(const Apply&, const std::vector<Array>& inputs, std::vector<Array>& outputs) {
  const Array& x = inputs[0];
  int64_t* po = outputs[0].data<int64_t>();
  const int64_t n = x.size(), cap = outputs[0].size(), s = x.ndim() ? x.strides()[0] : 0;
  detail::visit_dtype(x.dtype(), [&]<class T>() {
    const T* px = x.data<T>();
    int64_t k = 0;
    for (int64_t i = 0; i < n && k < cap; ++i)
      if (px[i * s] != T(0)) po[k++] = i;
  });
}

// ---- FusedReduce ----

namespace {

// Elements per chunk: the scratch block (256-512 KiB) stays in L2 between being written by the
// region and read by the reduction, and is large enough for the generated region kernel to
// use both threads (it goes parallel from 32K elements).
constexpr int64_t kChunkElements = 65536;

bool reduced(const std::vector<int>& axes, int d) { return std::binary_search(axes.begin(), axes.end(), d); }

// Folds a contiguous chunk into the accumulators: Reduce's own accumulation
// (ops/reduce_accumulate.hpp), in the same order, so the results are Reduce's bits.
template <class Op, class T, class Acc>
void fold(const Array& chunk, const Strides& acc_strides, Acc* acc) {
  reduce_fold<Op>(chunk.shape(), chunk.strides(), acc_strides, chunk.data<T>(), acc);
}

template <class Op, class T>
void run_typed(const FusedReduce& op, const Shape& full, const std::vector<Array>& inputs, Array& out,
               const RegionChunkFn& chunk_fn) {
  using Acc = typename Op::template Acc<T>;
  const auto& axes = op.axes();
  const int nd = static_cast<int>(full.size());
  Array acc_arr = Array::empty(out.shape(), dtype_of<Acc>());
  Acc* acc = acc_arr.data<Acc>();
  std::fill(acc, acc + acc_arr.size(), Op::template init<Acc>());
  // The accumulators seen from the region's dims: stride 0 along reduced dims.
  Strides acc_st(nd, 0);
  const Strides out_contig = contiguous_strides(out.shape());
  for (int d = 0, k = 0; d < nd; ++d)
    if (!reduced(axes, d)) acc_st[d] = out_contig[k++];
  if (shape_size(full) > 0) {
    // Chunks are ranges of the first dim longer than 1 (all dims before it have size 1), so
    // visiting them in order visits the region in row-major order.
    int d0 = 0;
    while (d0 < nd && full[d0] == 1) ++d0;
    const DType t = op.region().value_dtype(op.region().outputs()[0]);
    if (d0 == nd) {
      Array scratch = Array::empty(full, t);
      chunk_fn(inputs, scratch);
      fold<Op, T>(scratch, acc_st, acc);
    } else {
      int64_t inner = 1;
      for (int d = d0 + 1; d < nd; ++d) inner *= full[d];
      const int64_t rows = std::max<int64_t>(1, kChunkElements / std::max<int64_t>(inner, 1));
      Shape cshape = full;
      cshape[d0] = std::min(rows, full[d0]);
      Array scratch = Array::empty(cshape, t);
      std::vector<Array> views(inputs.size());
      for (int64_t r0 = 0; r0 < full[d0]; r0 += rows) {
        const int64_t r1 = std::min(full[d0], r0 + rows);
        for (size_t k = 0; k < inputs.size(); ++k)
          views[k] = inputs[k].shape()[d0] == 1 ? inputs[k] : inputs[k].slice(d0, r0, r1);
        cshape[d0] = r1 - r0;
        Array part(scratch.buffer(), t, cshape, contiguous_strides(cshape));
        chunk_fn(views, part);
        fold<Op, T>(part, acc_st, acc + r0 * acc_st[d0]);
      }
    }
  }
  int64_t count = 1;
  for (int a : axes) count *= full[a];
  reduce_finish<Op>(acc, acc_arr.size(), count);
  Array converted = acc_arr.astype(out.dtype());
  std::copy_n(static_cast<const char*>(converted.data()), out.nbytes(), static_cast<char*>(out.data()));
}

}  // namespace

void run_fused_reduce(const FusedReduce& op, const Apply& node, const std::vector<Array>& inputs,
                      std::vector<Array>& outputs, const RegionChunkFn& chunk) {
  const Shape full = ops::broadcast_shapes(node, inputs);
  const DType t = op.region().value_dtype(op.region().outputs()[0]);
  // The accumulator type per input dtype is the functor's, as in the Reduce loop.
  visit_reduce_op(op.reduce_kind(), [&]<class Op>() {
    detail::visit_dtype(t, [&]<class T>() { run_typed<Op, T>(op, full, inputs, outputs[0], chunk); });
  });
}

void fused_reduce_loop(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) {
  const auto& op = graph::op_as<ops::FusedReduce>(node.op());
  run_fused_reduce(op, node, inputs, outputs, [&](const std::vector<Array>& in, Array& out) {
    std::vector<Array> outs{out};
    run_composite(op.region(), node, in, outs);
  });
}


void register_reduce_loops(CpuBackend& backend) {
  for (const auto& info : graph::op_kinds)
    if (ops::reduce_kind_of(info.kind)) register_loop(backend, info.kind, reduce_loop_kernel);
  register_loop(backend, graph::OpKind::SumTo, sum_to_loop);
  register_loop(backend, graph::OpKind::ArgMax, argmax_loop);
  register_loop(backend, graph::OpKind::CumSum, cumulative_loop);
  register_loop(backend, graph::OpKind::CumProd, cumulative_loop);
  register_loop(backend, graph::OpKind::FusedReduce, fused_reduce_loop);
  register_loop(backend, graph::OpKind::Sort, sort_loop);
  register_loop(backend, graph::OpKind::ArgSort, sort_loop);
  register_loop(backend, graph::OpKind::FlatNonZero, flat_nonzero_loop);
}

}  // namespace theon::backends::cpu
