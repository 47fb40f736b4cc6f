// Dot: Theano's dot for vectors and matrices (vector.vector, matrix.vector, vector.matrix,
// matrix.matrix). Integer products are exact (int64 accumulation, NumPy's wrap on store).
// The CPU backend runs float32 through oneDNN and float64 through CBLAS, other dtypes through
// exact loops (double accumulation; backends/cpu/blas_reference.cpp).
#pragma once
#include "graph/op.hpp"

namespace theon::ops {

class Dot final : public graph::Op {
 public:
  static constexpr graph::OpKind kKind = graph::OpKind::Dot;
  graph::OpKind kind() const override { return kKind; }
  std::vector<Shape> infer_shape(const graph::Apply& node, const std::vector<Array>& inputs) const override;
  graph::Cost cost(const graph::Apply& node, const std::vector<Shape>& input_shapes) const override;
  std::vector<graph::VarPtr> L_op(const graph::Apply& node, const std::vector<graph::VarPtr>& output_grads) const override;
};

/// dot(a, b) for ranks 1 and 2 (operands promoted to a common dtype); higher ranks go to matmul.
graph::VarPtr dot(const graph::VarPtr& a, const graph::VarPtr& b);

/// Matrix-product geometry of a Dot node's inputs: out(m, n) = a(m, k) . b(k, n), with
/// the vector cases as m == 1 / n == 1. Throws ShapeError naming the node and both shapes.
struct GemmShape {
  int64_t m, n, k;
};
GemmShape dot_geometry(const graph::Apply& node, const Shape& a, const Shape& b);

}  // namespace theon::ops
