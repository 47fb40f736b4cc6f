// FlatNonZero: numpy.flatnonzero, the int64 row-major positions of the non-zero elements of
// a vector (the builder flattens first). Its length is data: the builder also passes the
// count (sum(x != 0), a reduction that runs wherever x is), which infer_shape reads on the host
// as ARange reads its bounds; the kernels then write the positions in order. NaN counts as
// non-zero, -0.0 as zero (NumPy). nonzero and nonzero_values are built from it (src/api).
#pragma once
#include "graph/op.hpp"

namespace theon::ops {

class FlatNonZero final : public graph::Op {
 public:
  static constexpr graph::OpKind kKind = graph::OpKind::FlatNonZero;
  graph::OpKind kind() const override { return kKind; }
  graph::OpProps props() const override { return {}; }
  /// (count,): input 1 (the count) read on the host; ValueError when it is not the number of
  /// non-zero elements' plausible length (negative or above x's size).
  std::vector<Shape> infer_shape(const graph::Apply& node, const std::vector<Array>& inputs) const override;
  /// Positions are piecewise constant in x: no gradient (Theano's nonzero has none either).
  std::vector<graph::VarPtr> L_op(const graph::Apply& node, const std::vector<graph::VarPtr>& output_grads) const override;
  std::string render(const std::vector<std::string>& inputs, int output = 0) const override;
};

/// flatnonzero(x): x flattened, then the positions of its non-zero elements (int64 vector).
graph::VarPtr flatnonzero(const graph::VarPtr& x);

}  // namespace theon::ops
