// BatchedMatmul: numpy.matmul. Leading (batch) dims broadcast NumPy-style; a 1-d first
// operand is a (1, k) row and a 1-d second one a (k, 1) column, whose dim is then dropped
// from the result. Operands are promoted to one dtype by the builder (NEP 50, as dot).
// The CPU backend runs float32/float64 batches through oneDNN/CBLAS, other dtypes through an
// exact loop (double accumulation for floats, wrapping uint64 for integers).
#pragma once
#include "graph/op.hpp"

#include <functional>

namespace theon::ops {

class BatchedMatmul final : public graph::Op {
 public:
  static constexpr graph::OpKind kKind = graph::OpKind::BatchedMatmul;
  graph::OpKind kind() const override { return kKind; }
  std::vector<Shape> infer_shape(const graph::Apply& node, const std::vector<Array>& inputs) const override;
  graph::Cost cost(const graph::Apply& node, const std::vector<Shape>& input_shapes) const override;
  /// ga = matmul(gz, swapaxes(b)), gb = matmul(swapaxes(a), gz), vectors promoted and
  /// broadcast batch dims summed back to each operand's shape.
  std::vector<graph::VarPtr> L_op(const graph::Apply& node, const std::vector<graph::VarPtr>& output_grads) const override;
};

/// matmul(a, b) for ranks >= 1. Throws ShapeError (naming both operands and their types)
/// for scalars, inner dims or batch dims that statically disagree.
graph::VarPtr matmul(const graph::VarPtr& a, const graph::VarPtr& b);

/// The user's name for input `i` of `node`, looking through a Cast the builder inserted
/// for dtype promotion (whose output has only a generated name). Shared with the nnet ops.
std::string input_label(const graph::Apply& node, int i);

/// The geometry of one matmul call: `batch` matrices out(m, n) = a(m, k) . b(k, n).
struct MatmulShape {
  Shape batch;  // the broadcast batch dims
  int64_t m = 1, n = 1, k = 1;
  Shape out;    // batch + (m if a is not a vector) + (n if b is not a vector)
};
/// Run-time shape rule; ShapeError names the node, both operands and their shapes.
MatmulShape matmul_shape(const graph::Apply& node, const Shape& a, const Shape& b);

/// Element strides of an operand's matrices seen as 2-d: (m, k) for a, (k, n) for b; 0 for
/// the size-1 dim of a promoted vector.
struct MatrixStrides {
  int64_t rows = 0, cols = 0;
};
MatrixStrides lhs_matrix_strides(const Array& a);
MatrixStrides rhs_matrix_strides(const Array& b);

/// Calls fn(a_offset, b_offset, out_offset) for each matrix of the batch, in row-major batch
/// order: element offsets of a's and b's first matrix element (broadcast batch dims repeat
/// the same matrix) and of the contiguous output's.
void for_each_matmul_batch(const MatmulShape& g, const Array& a, const Array& b,
                           const std::function<void(int64_t, int64_t, int64_t)>& fn);

}  // namespace theon::ops
