#include "ops/nonzero.hpp"

#include "ops/elemwise.hpp"
#include "ops/make_op.hpp"
#include "ops/reduce.hpp"
#include "ops/shape.hpp"
#include "graph/user_names.hpp"

#include <theon/error.hpp>

namespace theon::ops {

using graph::Apply;
using graph::VarPtr;

VarPtr flatnonzero(const VarPtr& x_in) {
  const std::string what = "flatnonzero(" + x_in->label() + ")";
  require_supported(x_in->type.dtype, what);
  VarPtr x = x_in->type.ndim() == 1 ? x_in : flatten(x_in, 1);
  VarPtr count = reduce(ReduceKind::Sum, elemwise(ScalarOpId::Neq, {x, literal(0, true)}), std::nullopt, false);
  graph::TensorType t;
  t.dtype = DType::Int64;
  t.dims = {graph::kUnknownDim};
  return graph::make_output(std::make_shared<FlatNonZero>(), {x, cast(count, DType::Int64)}, t);
}

std::vector<Shape> FlatNonZero::infer_shape(const Apply& node, const std::vector<Array>& inputs) const {
  const Array c = inputs[1].on_host() ? inputs[1] : inputs[1].to_host();
  const int64_t n = c.astype(DType::Int64).data<int64_t>()[0];
  if (n < 0 || n > inputs[0].size())
    throw InternalError(graph::user_describe(node) + ": count " + std::to_string(n) + " for " +
                        std::to_string(inputs[0].size()) + " elements");
  return {Shape{n}};
}

std::vector<VarPtr> FlatNonZero::L_op(const Apply&, const std::vector<VarPtr>&) const { return {nullptr, nullptr}; }

std::string FlatNonZero::render(const std::vector<std::string>& inputs, int output) const {
  if (output != 0 || inputs.empty()) return Op::render(inputs, output);
  return "flatnonzero(" + inputs[0] + ")";
}

template <>
std::shared_ptr<const graph::Op> op_from_props<graph::OpKind::FlatNonZero>(PropReader&) {
  return std::make_shared<const FlatNonZero>();
}

}  // namespace theon::ops
