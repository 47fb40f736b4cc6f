#include "ops/assert.hpp"
#include "ops/make_op.hpp"

#include <theon/error.hpp>

namespace theon::ops {

using graph::Apply;
using graph::VarPtr;

std::vector<Shape> Assert::infer_shape(const Apply&, const std::vector<Array>& inputs) const {
  return {inputs[0].shape()};
}

void Assert::perform(const Apply&, const std::vector<Array>& inputs, std::vector<Array>& outputs) const {
  for (size_t i = 1; i < inputs.size(); ++i)
    if (inputs[i].to_host().item() == 0) throw ValueError(message_);
  outputs[0] = inputs[0];
}

std::vector<VarPtr> Assert::L_op(const Apply& node, const std::vector<VarPtr>& output_grads) const {
  std::vector<VarPtr> grads(node.inputs().size(), nullptr);
  grads[0] = output_grads[0];
  return grads;
}

VarPtr assert_op(const VarPtr& x, const std::vector<VarPtr>& conditions, const std::string& message) {
  std::vector<VarPtr> inputs = {x};
  for (const VarPtr& c : conditions) {
    if (c->type.ndim() != 0 || c->type.dtype != DType::Bool)
      throw TypeError("assert (" + message + "): the condition " + c->label() + " must be a bool scalar, got " +
                      c->type.str());
    inputs.push_back(c);
  }
  return graph::make_output(std::make_shared<Assert>(message), std::move(inputs), x->type);
}

template <>
std::shared_ptr<const graph::Op> op_from_props<graph::OpKind::Assert>(PropReader& p) {
  return std::make_shared<const Assert>(p.text("message"));
}

}  // namespace theon::ops
