// Identity ops that change only how gradients flow: disconnected_grad and zero_grad
// (GradientBlock), grad_clip and grad_scale (GradientTransform).
#pragma once
#include "graph/op.hpp"

namespace theon::autodiff {

class GradientBlock final : public graph::Op {
 public:
  explicit GradientBlock(bool zero) : zero_(zero) {}
  graph::OpKind kind() const override { return zero_ ? graph::OpKind::ZeroGrad : graph::OpKind::DisconnectedGrad; }
  std::vector<Shape> infer_shape(const graph::Apply&, const std::vector<Array>& inputs) const override {
    return {inputs[0].shape()};
  }
  void perform(const graph::Apply&, const std::vector<Array>& inputs, std::vector<Array>& outputs) const override {
    outputs[0] = inputs[0];
  }
  std::map<int, int> view_map() const override { return {{0, 0}}; }
  graph::Cost cost(const graph::Apply&, const std::vector<Shape>&) const override { return {0, 0, 0}; }
  std::vector<graph::VarPtr> L_op(const graph::Apply& node, const std::vector<graph::VarPtr>& output_grads) const override;

 private:
  bool zero_;
};

/// grad_clip(x, lower, upper) (kind GradClip: the gradient clipped to [lower, upper]) and
/// grad_scale(x, multiplier) (kind GradScale: the gradient times multiplier, `a`). Forward,
/// x itself (a view, as GradientBlock).
class GradientTransform final : public graph::Op {
 public:
  GradientTransform(graph::OpKind kind, double a, double b) : kind_(kind), a_(a), b_(b) {}
  graph::OpKind kind() const override { return kind_; }
  graph::OpProps props() const override;
  std::vector<Shape> infer_shape(const graph::Apply&, const std::vector<Array>& inputs) const override {
    return {inputs[0].shape()};
  }
  void perform(const graph::Apply&, const std::vector<Array>& inputs, std::vector<Array>& outputs) const override {
    outputs[0] = inputs[0];
  }
  std::map<int, int> view_map() const override { return {{0, 0}}; }
  graph::Cost cost(const graph::Apply&, const std::vector<Shape>&) const override { return {0, 0, 0}; }
  std::vector<graph::VarPtr> L_op(const graph::Apply& node, const std::vector<graph::VarPtr>& output_grads) const override;
  double lower() const { return a_; }
  double upper() const { return b_; }
  double multiplier() const { return a_; }

 private:
  graph::OpKind kind_;
  double a_, b_;
};

/// Registers the gradient ops' factories with make_op (ops sits below autodiff), so that
/// serialization rebuilds them from their props. Idempotent; the api layer calls it before it
/// records or rebuilds nodes.
void register_op_factories();

}  // namespace theon::autodiff
