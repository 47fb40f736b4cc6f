#include "ops/composite.hpp"
#include "ops/make_op.hpp"

#include "ops/elemwise.hpp"
#include "ops/scalar/scalar_ops.hpp"
#include "util/dispatch.hpp"
#include "util/strided.hpp"

#include <theon/error.hpp>

#include <algorithm>
#include <cstring>
#include <utility>

namespace theon::ops {

using graph::Apply;

namespace {

std::string dtype_list(const std::vector<DType>& ts) {
  std::string s;
  for (size_t i = 0; i < ts.size(); ++i) s += (i ? "," : "") + std::string(dtype_name(ts[i]));
  return s;
}

}  // namespace

Composite::Composite(std::vector<DType> input_dtypes, std::vector<CompositeInstr> program, std::vector<int> outputs)
    : input_dtypes_(std::move(input_dtypes)), program_(std::move(program)), outputs_(std::move(outputs)) {
  const int ni = num_inputs();
  std::vector<std::vector<bool>> deps(ni + program_.size(), std::vector<bool>(ni, false));
  for (int k = 0; k < ni; ++k) deps[k][k] = true;
  for (size_t k = 0; k < program_.size(); ++k) {
    const auto& in = program_[k];
    if (static_cast<int>(in.args.size()) != scalar_op_info(in.op).arity)
      throw InternalError("Composite: instruction " + std::to_string(k) + " has the wrong number of operands");
    for (int a : in.args) {
      if (a < 0 || a >= ni + static_cast<int>(k))
        throw InternalError("Composite: instruction " + std::to_string(k) + " reads a value not yet computed");
      for (int j = 0; j < ni; ++j)
        if (deps[a][j]) deps[ni + k][j] = true;
    }
  }
  if (outputs_.empty()) throw InternalError("Composite: no outputs");
  for (int o : outputs_) {
    if (o < ni || o >= ni + static_cast<int>(program_.size()))
      throw InternalError("Composite: an output must be an instruction result");
    output_deps_.push_back(deps[o]);
  }
}

DType Composite::value_dtype(int v) const {
  const int ni = num_inputs();
  return v < ni ? input_dtypes_[v] : program_[v - ni].dtype;
}

std::string Composite::expression(int v, const std::vector<std::string>* names) const {
  const int ni = num_inputs();
  if (v < ni) return names && v < static_cast<int>(names->size()) ? (*names)[v] : "i" + std::to_string(v);
  const CompositeInstr& in = program_[v - ni];
  std::string s(scalar_op_info(in.op).name);
  if (in.op == ScalarOpId::Cast) s += "{" + std::string(dtype_name(in.dtype)) + "}";
  s += "(";
  for (size_t i = 0; i < in.args.size(); ++i) s += (i ? (names ? ", " : ",") : "") + expression(in.args[i], names);
  return s + ")";
}

std::string Composite::render(const std::vector<std::string>& inputs, int output) const {
  if (output < 0 || output >= static_cast<int>(outputs_.size())) return Op::render(inputs, output);
  return expression(outputs_[output], &inputs);
}

graph::OpProps Composite::props() const {
  // The program in full: op:dtype(operands) per instruction, then the output value ids.
  std::string prog;
  for (size_t k = 0; k < program_.size(); ++k) {
    const auto& in = program_[k];
    prog += (k ? ";" : "") + std::string(scalar_op_info(in.op).name) + ":" + std::string(dtype_name(in.dtype)) + "(";
    for (size_t i = 0; i < in.args.size(); ++i) prog += (i ? "," : "") + std::to_string(in.args[i]);
    prog += ")";
  }
  std::string outs;
  for (size_t i = 0; i < outputs_.size(); ++i) outs += (i ? "," : "") + std::to_string(outputs_[i]);
  graph::OpProps p = {{"inputs", dtype_list(input_dtypes_)}, {"program", prog}, {"outputs", outs}};
  if (inplace_ >= 0) p.push_back({"inplace", std::to_string(inplace_)});
  return p;
}

std::shared_ptr<Composite> Composite::with_inplace(int k) const {
  if (k < 0 || k >= num_inputs() || input_dtypes_[k] != value_dtype(outputs_[0]))
    throw InternalError("Composite: input " + std::to_string(k) + " cannot be overwritten by output 0");
  auto op = std::make_shared<Composite>(*this);
  op->inplace_ = k;
  return op;
}

std::string Composite::display() const {
  std::string s = "Composite{";
  for (size_t i = 0; i < outputs_.size(); ++i) s += (i ? ", " : "") + expression(outputs_[i]);
  if (inplace_ >= 0) s += ", inplace(" + std::to_string(inplace_) + ")";
  return s + "}";
}

std::vector<Shape> Composite::infer_shape(const Apply& node, const std::vector<Array>& inputs) const {
  Shape full = broadcast_shapes(node, inputs);  // checks every input against every other
  std::vector<Shape> shapes;
  for (const auto& deps : output_deps_) {
    Shape s(full.size(), 1);
    for (size_t k = 0; k < inputs.size(); ++k)
      if (deps[k])
        for (int d = 0; d < inputs[k].ndim(); ++d)
          if (inputs[k].shape()[d] != 1) s[d] = inputs[k].shape()[d];
    shapes.push_back(std::move(s));
  }
  return shapes;
}

graph::Cost Composite::cost(const Apply& node, const std::vector<Shape>& input_shapes) const {
  graph::Cost c = Op::cost(node, input_shapes);
  int64_t n = 1;
  for (auto& s : input_shapes) n = std::max(n, shape_size(s));
  c.flops = static_cast<double>(n) * static_cast<double>(program_.size());
  for (int o : outputs_) c.bytes += static_cast<double>(n) * static_cast<double>(itemsize(value_dtype(o)));
  return c;
}

std::vector<graph::VarPtr> Composite::L_op(const Apply& node, const std::vector<graph::VarPtr>&) const {
  throw NotImplementedError(node.describe() +
                            ": Composite has no gradient: fusion runs when a function is compiled, after grad() "
                            "built the gradient graph; differentiate the unfused graph instead");
}

}  // namespace theon::ops

namespace theon::ops {

THEON_NOT_REBUILDABLE(Composite, "a fused region holds a scalar program that its props print but do not rebuild")

}  // namespace theon::ops
