#include "ops/argmax.hpp"
#include "ops/make_op.hpp"

#include "ops/dimshuffle.hpp"
#include "ops/reduce.hpp"
#include "util/dispatch.hpp"
#include "util/strided.hpp"

#include <theon/error.hpp>

#include <cmath>

namespace theon::ops {

using graph::Apply;
using graph::VarPtr;

namespace {

std::string op_word(bool is_max) { return is_max ? "argmax" : "argmin"; }

std::string empty_message(const std::string& where, bool is_max, const std::string& label, const std::string& shape) {
  return where + ": attempt to get " + op_word(is_max) + " of an empty sequence (" + label + " has shape " + shape +
         ")";
}

}  // namespace

graph::OpProps ArgMax::props() const {
  return {{"", is_max_ ? "max" : "min"}, {"axis", axis_ ? std::to_string(*axis_) : "None"}};
}

VarPtr argmax(const VarPtr& x, std::optional<int> axis_in, bool keepdims, bool is_max) {
  const std::string what = op_word(is_max) + "(" + x->label() + ")";
  require_supported(x->type.dtype, what);
  const int nd = x->type.ndim();
  std::optional<int> axis;
  if (axis_in) axis = normalize_axes(what, x, {*axis_in})[0];
  // A statically empty reduction can never run: say so now rather than at call time.
  for (int d = 0; d < nd; ++d)
    if ((!axis || *axis == d) && x->type.dims[d] == 0)
      throw ValueError(empty_message(what, is_max, x->label(), x->type.str()));
  graph::TensorType t;
  t.dtype = DType::Int64;
  if (axis)
    for (int d = 0; d < nd; ++d)
      if (d != *axis) t.dims.push_back(x->type.dims[d]);
  VarPtr r = graph::make_output(std::make_shared<ArgMax>(is_max, axis), {x}, t);
  if (!keepdims) return r;
  std::vector<int> pattern;
  for (int d = 0, k = 0; d < nd; ++d) pattern.push_back(axis && *axis != d ? k++ : -1);
  return dimshuffle(r, pattern);
}

std::vector<Shape> ArgMax::infer_shape(const Apply& node, const std::vector<Array>& inputs) const {
  const Shape& in = inputs[0].shape();
  const int64_t reduced = axis_ ? in[*axis_] : shape_size(in);
  if (reduced == 0)
    throw ValueError(empty_message(node.describe(), is_max_, node.input(0)->label(), shape_str(in)));
  Shape out;
  if (axis_)
    for (int d = 0; d < static_cast<int>(in.size()); ++d)
      if (d != *axis_) out.push_back(in[d]);
  return {out};
}

graph::Cost ArgMax::cost(const Apply& node, const std::vector<Shape>& input_shapes) const {
  graph::Cost c = Op::cost(node, input_shapes);
  const Shape& in = input_shapes[0];
  c.flops = static_cast<double>(shape_size(in));
  int64_t out = 1;  // one index per lane
  for (int d = 0; axis_ && d < static_cast<int>(in.size()); ++d)
    if (d != *axis_) out *= in[d];
  c.bytes += static_cast<double>(out * 8);
  return c;
}

}  // namespace theon::ops

namespace theon::ops {

std::vector<VarPtr> ArgMax::L_op(const Apply&, const std::vector<VarPtr>&) const {
  return {nullptr};  // an index is piecewise constant in x: disconnected, as in Theano
}

}  // namespace theon::ops

namespace theon::ops {

// The builders of the argmax/argmin rows of theon/ops.def (signature class ArgReduce).
VarPtr argmax(const VarPtr& x, std::optional<int> axis, bool keepdims) { return argmax(x, axis, keepdims, true); }
VarPtr argmin(const VarPtr& x, std::optional<int> axis, bool keepdims) { return argmax(x, axis, keepdims, false); }

template <>
std::shared_ptr<const graph::Op> op_from_props<graph::OpKind::ArgMax>(PropReader& p) {
  const bool is_max = p.word("max", "min");
  const std::optional<int64_t> axis = p.integer_or_none("axis");
  return std::make_shared<const ArgMax>(is_max, axis ? std::optional<int>(static_cast<int>(*axis)) : std::nullopt);
}

}  // namespace theon::ops
