// DimShuffle: reorders dims, inserts broadcastable dims ('x', written -1) and drops dims of
// static size 1. Always a view of its input (Theano's DimShuffle; transpose is one).
#pragma once
#include "graph/op.hpp"

#include <vector>

namespace theon::ops {

class DimShuffle final : public graph::Op {
 public:
  /// `pattern[i]` is the input dim that becomes output dim i, or -1 for a new size-1 dim.
  DimShuffle(int input_ndim, std::vector<int> pattern) : input_ndim_(input_ndim), pattern_(std::move(pattern)) {}
  const std::vector<int>& pattern() const { return pattern_; }
  int input_ndim() const { return input_ndim_; }

  static constexpr graph::OpKind kKind = graph::OpKind::DimShuffle;

  graph::OpKind kind() const override { return kKind; }
  graph::OpProps props() const override;
  std::vector<Shape> infer_shape(const graph::Apply& node, const std::vector<Array>& inputs) const override;
  void perform(const graph::Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const override;
  std::map<int, int> view_map() const override { return {{0, 0}}; }
  graph::Cost cost(const graph::Apply&, const std::vector<Shape>&) const override { return {0, 0, 0}; }
  std::vector<graph::VarPtr> L_op(const graph::Apply& node, const std::vector<graph::VarPtr>& output_grads) const override;
  /// Only adding or dropping broadcastable dims (the input's dims kept in order) presents the input.
  bool presents_input() const override;
  Shape presented_shape(const Shape& shape) const override;

 private:
  int input_ndim_;
  std::vector<int> pattern_;
};

/// Theano's x.dimshuffle(pattern): -1 stands for 'x'. Dims left out must be broadcastable.
graph::VarPtr dimshuffle(const graph::VarPtr& x, const std::vector<int>& pattern);
/// Reverses the axes, or permutes them by `axes`.
graph::VarPtr transpose(const graph::VarPtr& x, std::vector<int> axes = {});

}  // namespace theon::ops
