// Identity ops that change only how gradients flow: disconnected_grad and zero_grad.
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

}  // namespace theon::autodiff
