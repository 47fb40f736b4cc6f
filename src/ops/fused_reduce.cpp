#include "ops/fused_reduce.hpp"

#include "ops/elemwise.hpp"
#include "ops/reduce_accumulate.hpp"
#include "util/dispatch.hpp"
#include "util/strided.hpp"

#include <theon/error.hpp>

#include <algorithm>
#include <cstring>
#include <limits>

namespace theon::ops {

using graph::Apply;

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

FusedReduce::FusedReduce(std::shared_ptr<const Composite> region, ReduceKind kind, std::vector<int> axes,
                         DType out_dtype)
    : region_(std::move(region)), kind_(kind), axes_(std::move(axes)), out_dtype_(out_dtype) {
  if (!region_ || region_->outputs().size() != 1) throw InternalError("FusedReduce: the region must have one output");
  if (kind_ == ReduceKind::Count) throw InternalError("FusedReduce: count is not a reduction to fuse");
  if (!std::is_sorted(axes_.begin(), axes_.end())) throw InternalError("FusedReduce: axes must be sorted");
}

graph::OpProps FusedReduce::props() const {
  graph::OpProps p = region_->props();
  std::string a = "(";
  for (size_t i = 0; i < axes_.size(); ++i) a += (i ? ", " : "") + std::to_string(axes_[i]);
  a += axes_.size() == 1 ? ",)" : ")";
  p.push_back({"reduce", std::string(reduce_kind_name(kind_))});
  p.push_back({"axes", a});
  p.push_back({"dtype", std::string(dtype_name(out_dtype_))});
  return p;
}

std::string FusedReduce::display() const {
  std::string a;
  for (size_t i = 0; i < axes_.size(); ++i) a += (i ? "," : "") + std::to_string(axes_[i]);
  return "FusedReduce{" + std::string(reduce_kind_name(kind_)) + "{axes=(" + a + (axes_.size() == 1 ? ",)" : ")") +
         "}, " + region_->expression(region_->outputs()[0]) + "}";
}

std::vector<Shape> FusedReduce::infer_shape(const Apply& node, const std::vector<Array>& inputs) const {
  const Shape full = broadcast_shapes(node, inputs);
  Shape out;
  for (int d = 0; d < static_cast<int>(full.size()); ++d) {
    if (!reduced(axes_, d)) out.push_back(full[d]);
    else if (full[d] == 0 && (kind_ == ReduceKind::Max || kind_ == ReduceKind::Min))
      throw ValueError(node.describe() + ": zero-size array to reduction operation " +
                       std::string(reduce_kind_name(kind_)) + " which has no identity (the reduced value " +
                       region_->expression(region_->outputs()[0]) + " has shape " + shape_str(full) + ")");
  }
  return {out};
}

void run_fused_reduce(const FusedReduce& op, const Apply& node, const std::vector<Array>& inputs,
                      std::vector<Array>& outputs, const RegionChunkFn& chunk) {
  const Shape full = broadcast_shapes(node, inputs);
  const DType t = op.region().value_dtype(op.region().outputs()[0]);
  // The accumulator type per input dtype is the functor's, as in Reduce::perform.
  visit_reduce_op(op.reduce_kind(), [&]<class Op>() {
    detail::visit_dtype(t, [&]<class T>() { run_typed<Op, T>(op, full, inputs, outputs[0], chunk); });
  });
}

void FusedReduce::perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const {
  run_fused_reduce(*this, node, inputs, outputs, [&](const std::vector<Array>& in, Array& out) {
    std::vector<Array> outs{out};
    run_composite(*region_, node, in, outs);
  });
}

graph::Cost FusedReduce::cost(const Apply& node, const std::vector<Shape>& input_shapes) const {
  graph::Cost c = Op::cost(node, input_shapes);
  int64_t n = 1;
  for (auto& s : input_shapes) n = std::max(n, shape_size(s));
  c.flops = static_cast<double>(n) * static_cast<double>(region_->program().size() + 1);
  return c;
}

std::vector<graph::VarPtr> FusedReduce::L_op(const Apply& node, const std::vector<graph::VarPtr>&) const {
  throw NotImplementedError(node.describe() +
                            ": FusedReduce has no gradient: fusion runs when a function is compiled, after grad() "
                            "built the gradient graph; differentiate the unfused graph instead");
}

}  // namespace theon::ops
