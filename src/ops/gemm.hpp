// Gemm: out = alpha * (a . b) + beta * c, an internal op (not in ops.def) that the specialize
// pass forms from dot(a, b) + c and alpha * dot(a, b) + beta * c. Inputs (c, a, b): a and b
// matrices, c a matrix of the same dtype; the product and c broadcast against each other as
// the elementwise add they replace did (either may have size-1 dims at run time). The CPU
// backend runs float32 through oneDNN and float64 through CBLAS (gemm_kernel.cpp), integers
// through an exact loop (wrapping, as NumPy; blas_reference.cpp).
#pragma once
#include "graph/op.hpp"

namespace theon::ops {

class Gemm final : public graph::Op {
 public:
  Gemm(double alpha, double beta) : alpha_(alpha), beta_(beta) {}
  double alpha() const { return alpha_; }
  double beta() const { return beta_; }

  static constexpr graph::OpKind kKind = graph::OpKind::Gemm;

  graph::OpKind kind() const override { return kKind; }
  graph::OpProps props() const override;
  std::vector<Shape> infer_shape(const graph::Apply& node, const std::vector<Array>& inputs) const override;
  graph::Cost cost(const graph::Apply& node, const std::vector<Shape>& input_shapes) const override;
  /// Expressed with dot, sum_to and elementwise builders (float dtypes only).
  std::vector<graph::VarPtr> L_op(const graph::Apply& node, const std::vector<graph::VarPtr>& output_grads) const override;

 private:
  double alpha_, beta_;
};

/// Builds gemm(c, a, b): a, b and c matrices of one (non-bool) dtype; the output type is the
/// static broadcast of the product's dims and c's. TypeError/ShapeError name the operands.
graph::VarPtr gemm(const graph::VarPtr& c, const graph::VarPtr& a, const graph::VarPtr& b, double alpha, double beta);

/// Run-time shape of a Gemm node's output (the broadcast of (m, n) and c's shape), checking
/// the inner dimensions; ShapeError names the node.
Shape gemm_output_shape(const graph::Apply& node, const Shape& c, const Shape& a, const Shape& b);

}  // namespace theon::ops
