// Internal ops of the softmax + categorical cross-entropy specialisation (Theano's
// CrossentropySoftmaxArgmax1HotWithBias / CrossentropySoftmax1HotWithBiasDx, without the
// bias and argmax outputs). Users never build them: the `stabilize` pass (and `specialize`) turns
// categorical_crossentropy(softmax(x), labels) into SoftmaxCrossentropy, and Softmax::L_op
// emits SoftmaxCrossentropyGrad for that pair's gradient. Integer labels only: a dense
// target matrix keeps the log_softmax form (already stable; see docs/guide/optimizer.md).
#pragma once
#include "graph/op.hpp"

namespace theon::ops {

/// SoftmaxCrossentropy(x, labels) -> (loss, sm): per row i of the float matrix x, one pass
/// computes m = max_j x[i, j], lse = log(sum_j exp(x[i, j] - m)), loss[i] = m + lse -
/// x[i, labels[i]] and sm[i, :] = softmax(x[i, :]). The loss never goes through log(sm), so
/// it stays finite where the label's probability underflows. Labels outside [0, classes)
/// raise IndexError.
class SoftmaxCrossentropy final : public graph::Op {
 public:
  static constexpr graph::OpKind kKind = graph::OpKind::SoftmaxCrossentropy;
  graph::OpKind kind() const override { return kKind; }
  std::vector<Shape> infer_shape(const graph::Apply& node, const std::vector<Array>& inputs) const override;
  graph::Cost cost(const graph::Apply& node, const std::vector<Shape>& input_shapes) const override;
  /// x: softmax_crossentropy_grad(g_loss, sm, labels) plus the softmax rule for g_sm;
  /// labels: none.
  std::vector<graph::VarPtr> L_op(const graph::Apply& node, const std::vector<graph::VarPtr>& output_grads) const override;
};

/// The two outputs {loss, sm} of SoftmaxCrossentropy(x, labels). `x` a float matrix, `labels`
/// an integer vector with as many rows; TypeError/ShapeError naming both otherwise.
std::vector<graph::VarPtr> softmax_crossentropy(const graph::VarPtr& x, const graph::VarPtr& labels);

/// SoftmaxCrossentropyGrad(dy, sm, labels)[i, j] = dy[i] * (sm[i, j] - (j == labels[i])):
/// the gradient of SoftmaxCrossentropy's loss with respect to x, written in one pass.
class SoftmaxCrossentropyGrad final : public graph::Op {
 public:
  static constexpr graph::OpKind kKind = graph::OpKind::SoftmaxCrossentropyGrad;
  graph::OpKind kind() const override { return kKind; }
  std::vector<Shape> infer_shape(const graph::Apply& node, const std::vector<Array>& inputs) const override;
  graph::Cost cost(const graph::Apply& node, const std::vector<Shape>& input_shapes) const override;
  /// dy: sum(g * sm, 1) - label_gather(g, labels); sm: g * dy[:, None]; labels: none.
  std::vector<graph::VarPtr> L_op(const graph::Apply& node, const std::vector<graph::VarPtr>& output_grads) const override;
};

/// dy is cast to sm's dtype; `sm` a float matrix, `labels` an integer vector.
graph::VarPtr softmax_crossentropy_grad(const graph::VarPtr& dy, const graph::VarPtr& sm, const graph::VarPtr& labels);

/// How errors of both ops name the call: "SoftmaxCrossentropy(x, y), the fused
/// categorical_crossentropy(softmax(x), y)" (or "..., the gradient of ...").
std::string softmax_crossentropy_call(const graph::Apply& node);

}  // namespace theon::ops
