// Gemm: out = act(alpha * (a . b) + beta * c), an internal op (not in ops.def) that the
// specialize pass forms from dot(a, b) + c and alpha * dot(a, b) + beta * c, and whose
// epilogue the gemm_epilogue pass fills in (a bias vector instead of a broadcast matrix, a
// relu after the add). Inputs (c, a, b): a and b matrices of one dtype; c, per the epilogue's
// addend:
// - matrix: a matrix; the product and c broadcast against each other as the elementwise add
//   they replace did (either may have size-1 dims at run time);
// - row: a vector of length n (or 1) added to every row of the (m, n) product (a bias);
// - col: a vector of length m (or 1) added to every column;
// - none: no c at all (relu(dot(a, b)), act(alpha * a.b)): the node's inputs are (a, b) and
//   beta is 0. A separate input count rather than an ignored c: nothing is read that does
//   not matter, and the node's inputs are exactly its operands.
// act is none or relu (relu keeps NaN, as the Relu scalar op). The per-element semantics are
// gemm_epilogue in ops/scalar/nnet_ops.hpp, shared by the CPU loops and the CUDA kernels.
// The CPU backend runs float32 through oneDNN and float64 through CBLAS (gemm_kernel.cpp),
// integers through an exact loop (wrapping, as NumPy; blas_reference.cpp).
#pragma once
#include "graph/op.hpp"

#include <array>
#include <cstdint>

namespace theon::ops {

/// How Gemm's c is added to the product.
enum class GemmAddend : uint8_t { Matrix, Row, Col, None };
/// The activation applied after the add.
enum class GemmAct : uint8_t { None, Relu };

struct GemmEpilogue {
  GemmAddend addend = GemmAddend::Matrix;
  GemmAct act = GemmAct::None;
  bool operator==(const GemmEpilogue&) const = default;
};

/// "matrix", "row", "col", "none"; "none", "relu".
const char* gemm_addend_name(GemmAddend a);
const char* gemm_act_name(GemmAct a);

class Gemm final : public graph::Op {
 public:
  Gemm(double alpha, double beta, GemmEpilogue epilogue = {}) : alpha_(alpha), beta_(beta), epilogue_(epilogue) {}
  double alpha() const { return alpha_; }
  double beta() const { return beta_; }
  const GemmEpilogue& epilogue() const { return epilogue_; }

  static constexpr graph::OpKind kKind = graph::OpKind::Gemm;

  graph::OpKind kind() const override { return kKind; }
  /// alpha, beta, then bias=row|col|none and act=relu only when not the defaults (matrix, none).
  graph::OpProps props() const override;
  std::vector<Shape> infer_shape(const graph::Apply& node, const std::vector<Array>& inputs) const override;
  graph::Cost cost(const graph::Apply& node, const std::vector<Shape>& input_shapes) const override;
  /// Expressed with dot, sum_to, reductions and elementwise builders (float dtypes only).
  std::vector<graph::VarPtr> L_op(const graph::Apply& node, const std::vector<graph::VarPtr>& output_grads) const override;

 private:
  double alpha_, beta_;
  GemmEpilogue epilogue_;
};

/// Builds gemm(c, a, b) with an epilogue: a, b matrices and c (a matrix, or a vector for a
/// row or col addend) of one (non-bool) dtype; the output type is the static broadcast of
/// the product's dims and c's (as a (1, n) or (m, 1) matrix for row / col). TypeError and
/// ShapeError name the operands. The none addend takes the overload below (TypeError here).
graph::VarPtr gemm(const graph::VarPtr& c, const graph::VarPtr& a, const graph::VarPtr& b, double alpha, double beta,
                   GemmEpilogue epilogue = {});
/// Builds act(alpha * a.b) with no addend (GemmAddend::None, beta 0; inputs (a, b)).
graph::VarPtr gemm(const graph::VarPtr& a, const graph::VarPtr& b, double alpha, GemmAct act);

/// Index of a in a Gemm node's inputs: 0 without an addend (inputs (a, b)), else 1 ((c, a, b)).
inline int gemm_a_index(GemmAddend addend) { return addend == GemmAddend::None ? 0 : 1; }
/// A Gemm node's run-time operands: c undefined for the none addend.
struct GemmOperands {
  Array c;
  const Array& a;
  const Array& b;
};
GemmOperands gemm_operands(GemmAddend addend, const std::vector<Array>& inputs);

/// c's shape as the matrix it is added as: (1, L) for a row addend of length L, (L, 1) for
/// a col addend, c's own shape for a matrix, (1, 1) for none (it broadcasts to anything; c
/// is then the empty shape) (a fixed pair: shape checks run on every call).
std::array<int64_t, 2> gemm_addend_shape(GemmAddend addend, const Shape& c);
/// c as that matrix: a view (stride 0 along the broadcast dim), no copy; for none, c itself
/// (an undefined Array).
Array gemm_addend_view(GemmAddend addend, const Array& c);

/// Run-time shape of a Gemm node's output (the broadcast of (m, n) and c's matrix shape),
/// checking the inner dimensions and c's rank (c the empty shape for none); ShapeError
/// names the node.
Shape gemm_output_shape(const graph::Apply& node, const Shape& c, const Shape& a, const Shape& b);

}  // namespace theon::ops
