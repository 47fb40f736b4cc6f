// FusedReduce: a reduction that absorbed the elementwise region feeding it (made by the
// fusion pass, never by users: internal like Composite). sum(exp(x - m)) is one node that
// computes exp(x - m) a chunk of rows at a time into a small scratch buffer (cache-sized, never
// the whole intermediate) and folds each chunk into the accumulators at once: one pass over
// the inputs instead of writing and re-reading a full-size temporary.
//
// The region is a Composite with one output (the value reduced); its inputs are the node's
// inputs. The reduction follows Reduce's CPU loop exactly (accumulators in double for floats,
// int64 for integers, bool for any/all; the same order of accumulation: row-major over the
// region), so results equal the unfused Composite + Reduce bit for bit. The CPU backend
// (backends/cpu/reduce_cpu.cpp, fused_cpu.cpp) computes the chunks with the Composite's
// generated kernel, or its interpreter.
#pragma once
#include "ops/composite.hpp"
#include "ops/reduce.hpp"

#include <functional>
#include <memory>
#include <vector>

namespace theon::ops {

class FusedReduce final : public graph::Op {
 public:
  /// `region` must have exactly one output; `axes` are sorted dims of the region's rank;
  /// `kind` is not Count; `out_dtype` is the Reduce's result dtype.
  FusedReduce(std::shared_ptr<const Composite> region, ReduceKind kind, std::vector<int> axes, DType out_dtype);

  const Composite& region() const { return *region_; }
  const std::shared_ptr<const Composite>& region_ptr() const { return region_; }
  ReduceKind reduce_kind() const { return kind_; }
  const std::vector<int>& axes() const { return axes_; }
  DType out_dtype() const { return out_dtype_; }

  static constexpr graph::OpKind kKind = graph::OpKind::FusedReduce;

  graph::OpKind kind() const override { return kKind; }
  graph::OpProps props() const override;
  /// "FusedReduce{sum{axes=(1,)}, exp(sub(i0,i1))}".
  std::string display() const override;
  std::vector<Shape> infer_shape(const graph::Apply& node, const std::vector<Array>& inputs) const override;
  graph::Cost cost(const graph::Apply& node, const std::vector<Shape>& input_shapes) const override;
  /// Fusion runs after gradients are built, so a FusedReduce is never differentiated.
  std::vector<graph::VarPtr> L_op(const graph::Apply& node, const std::vector<graph::VarPtr>& output_grads) const override;

 private:
  std::shared_ptr<const Composite> region_;
  ReduceKind kind_;
  std::vector<int> axes_;
  DType out_dtype_;
};


}  // namespace theon::ops
