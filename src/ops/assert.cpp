#include "ops/assert.hpp"
#include "ops/make_op.hpp"

#include <theon/error.hpp>

#include <charconv>

namespace theon::ops {

using graph::Apply;
using graph::VarPtr;

std::string scalar_text(const Array& value) {
  const Array v = value.to_host();
  if (is_integer(v.dtype()) || v.dtype() == DType::Bool) return std::to_string(v.astype(DType::Int64).data<int64_t>()[0]);
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v.item());
  return std::string(buf, r.ptr);
}

graph::OpProps Assert::props() const {
  graph::OpProps p = {{"message", message_}};
  if (error_ == AssertError::Shape) p.emplace_back("error", "ShapeError");
  for (const std::string& name : shown_) p.emplace_back("shown", name);
  return p;
}

std::vector<Shape> Assert::infer_shape(const Apply&, const std::vector<Array>& inputs) const {
  return {inputs[0].shape()};
}

void Assert::perform(const Apply&, const std::vector<Array>& inputs, std::vector<Array>& outputs) const {
  const size_t first_shown = inputs.size() - shown_.size();
  for (size_t i = 1; i < first_shown; ++i) {
    if (inputs[i].to_host().item() != 0) continue;
    std::string msg = message_;
    for (size_t s = 0; s < shown_.size(); ++s)
      msg += (s ? ", " : ", got ") + shown_[s] + " = " + scalar_text(inputs[first_shown + s]);
    if (error_ == AssertError::Shape) throw ShapeError(msg);
    throw ValueError(msg);
  }
  outputs[0] = inputs[0];
}

std::vector<VarPtr> Assert::L_op(const Apply& node, const std::vector<VarPtr>& output_grads) const {
  std::vector<VarPtr> grads(node.inputs().size(), nullptr);
  grads[0] = output_grads[0];
  return grads;
}

VarPtr assert_op(const VarPtr& x, const std::vector<VarPtr>& conditions, const std::string& message,
                 const std::vector<ShownValue>& shown, AssertError error) {
  std::vector<VarPtr> inputs = {x};
  for (const VarPtr& c : conditions) {
    if (c->type.ndim() != 0 || c->type.dtype != DType::Bool)
      throw TypeError("assert (" + message + "): the condition " + c->label() + " must be a bool scalar, got " +
                      c->type.str());
    inputs.push_back(c);
  }
  std::vector<std::string> names;
  for (const ShownValue& s : shown) {
    if (s.value->type.ndim() != 0)
      throw TypeError("assert (" + message + "): the shown value " + s.name + " must be a scalar, got " +
                      s.value->type.str());
    names.push_back(s.name);
    inputs.push_back(s.value);
  }
  return graph::make_output(std::make_shared<Assert>(message, std::move(names), error), std::move(inputs), x->type);
}

template <>
std::shared_ptr<const graph::Op> op_from_props<graph::OpKind::Assert>(PropReader& p) {
  const std::string message = p.text("message");
  const std::string error = p.text("error", "ValueError");
  if (error != "ValueError" && error != "ShapeError")
    throw ValueError("make_op(Assert): prop 'error' must be ValueError or ShapeError, got '" + error + "'");
  std::vector<std::string> shown;
  for (std::string name; (name = p.text("shown", "\x01")) != "\x01";) shown.push_back(name);
  return p.done(std::make_shared<const Assert>(message, std::move(shown),
                                               error == "ShapeError" ? AssertError::Shape : AssertError::Value));
}

}  // namespace theon::ops
