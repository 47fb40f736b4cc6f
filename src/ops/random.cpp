#include "ops/random.hpp"
#include "ops/make_op.hpp"

#include "graph/user_names.hpp"
#include "ops/elemwise.hpp"
#include "ops/shape.hpp"
#include "util/checked_size.hpp"

#include <theon/error.hpp>

namespace theon::ops {

using graph::Apply;
using graph::VarPtr;
using random::Distribution;

const char* distribution_name(Distribution d) { return d == Distribution::Normal ? "normal" : "uniform"; }

graph::OpProps RandomDraw::props() const {
  return {{"distribution", distribution_name(distribution_)},
          {"dtype", std::string(dtype_name(dtype_))},
          {"stream", std::to_string(stream_)}};
}

std::string RandomDraw::render(const std::vector<std::string>& inputs, int output) const {
  std::string size;
  for (size_t i = 1; i < inputs.size(); ++i) size += (i > 1 ? ", " : "") + inputs[i];
  if (inputs.size() == 2) size += ",";
  const std::string call = std::string(distribution_name(distribution_)) + "(size=(" + size + "), dtype=" +
                           std::string(dtype_name(dtype_)) + ", state=" + (inputs.empty() ? "?" : inputs[0]) + ")";
  return output == 0 ? call : "next_state(" + call + ")";
}

std::vector<Shape> RandomDraw::infer_shape(const Apply& node, const std::vector<Array>& inputs) const {
  if (inputs[0].ndim() != 1 || inputs[0].size() != 2)
    throw ValueError(graph::user_describe(node) + ": the random state " + graph::user_label(*node.input(0)) +
                     " must hold 2 values [seed, calls], got shape " + shape_str(inputs[0].shape()));
  Shape out;
  for (size_t i = 1; i < inputs.size(); ++i) {
    const int64_t n = scalar_int(inputs[i]);
    if (n < 0)
      throw ShapeError(graph::user_describe(node) + ": negative size " + std::to_string(n) + " given by " +
                       graph::user_label(*node.input(static_cast<int>(i))));
    out.push_back(n);
  }
  detail::checked_nbytes(out, dtype_, [&] { return graph::user_describe(node); });
  return {out, Shape{2}};
}

std::vector<VarPtr> RandomDraw::L_op(const Apply& node, const std::vector<VarPtr>&) const {
  return std::vector<VarPtr>(node.inputs().size(), nullptr);  // no gradient reaches state or sizes
}

std::pair<VarPtr, VarPtr> random_draw(Distribution distribution, const VarPtr& state, const std::vector<VarPtr>& shape,
                                      DType dtype, uint32_t stream, const std::string& what) {
  if (dtype != DType::Float16 && dtype != DType::Float32 && dtype != DType::Float64)
    throw TypeError(what + ": dtype must be float16, float32 or float64, got " + std::string(dtype_name(dtype)));
  if (state->type.dtype != DType::Int64 || state->type.ndim() != 1 ||
      (state->type.dims[0] != graph::kUnknownDim && state->type.dims[0] != 2))
    throw TypeError(what + ": the random state " + label_type(state) + " must be an int64 vector [seed, calls]");
  std::vector<VarPtr> inputs = {state};
  graph::TensorType t{dtype, {}, ""};
  for (const VarPtr& s : shape) {
    require_int_scalar(s, what + ": size");
    int64_t n = graph::kUnknownDim;
    if (s->kind == graph::VarKind::Constant) {
      n = scalar_int(s->constant);
      if (n < 0) throw ShapeError(what + ": negative size " + std::to_string(n));
    }
    t.dims.push_back(n);
    inputs.push_back(s->type.dtype == DType::Int64 ? s : cast(s, DType::Int64));
  }
  const graph::TensorType state_t{DType::Int64, {2}, ""};
  graph::ApplyPtr node =
      Apply::make(std::make_shared<RandomDraw>(distribution, dtype, stream), std::move(inputs), {t, state_t});
  return {node->output(0), node->output(1)};
}

template <>
std::shared_ptr<const graph::Op> op_from_props<graph::OpKind::RandomDraw>(PropReader& p) {
  const std::string d = p.text("distribution");
  if (d != "uniform" && d != "normal") throw ValueError("RandomDraw: unknown distribution '" + d + "'");
  const DType dtype = parse_dtype(p.text("dtype"));
  const auto stream = static_cast<uint32_t>(p.integer("stream"));
  return std::make_shared<const RandomDraw>(d == "normal" ? Distribution::Normal : Distribution::Uniform, dtype, stream);
}

}  // namespace theon::ops
