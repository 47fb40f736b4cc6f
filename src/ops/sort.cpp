#include "ops/sort.hpp"

#include "ops/arange.hpp"
#include "ops/dimshuffle.hpp"
#include "ops/elemwise.hpp"
#include "ops/make_op.hpp"
#include "ops/reduce.hpp"
#include "ops/shape.hpp"
#include "ops/subtensor.hpp"

#include <theon/error.hpp>

#include <cmath>

namespace theon::ops {

using graph::Apply;
using graph::OpKind;
using graph::VarPtr;

namespace {

VarPtr make_sort(OpKind kind, const VarPtr& x, int axis) {
  graph::TensorType t = x->type;
  if (kind == OpKind::ArgSort) t.dtype = DType::Int64;
  return graph::make_output(std::make_shared<Sort>(kind, axis), {x}, t);
}

VarPtr build(OpKind kind, const VarPtr& x_in, std::optional<int> axis_in) {
  const std::string what = std::string(kind == OpKind::Sort ? "sort" : "argsort") + "(" + x_in->label() +
                           (axis_in ? ", axis=" + std::to_string(*axis_in) : std::string(", axis=None")) + ")";
  require_supported(x_in->type.dtype, what);
  VarPtr x = x_in;
  int axis = 0;
  if (axis_in) {
    if (x->type.ndim() == 0) throw ShapeError(what + ": a scalar has no axis to sort along (pass axis=None)");
    axis = normalize_axes(what, x, {*axis_in})[0];
  } else if (x->type.ndim() != 1) {
    x = flatten(x, 1);
  }
  return make_sort(kind, x, axis);
}

VarPtr i64(int64_t v) { return constant(Array::scalar(static_cast<double>(v), DType::Int64)); }

}  // namespace

const Sort* Sort::of(const graph::Op& op) {
  return op.kind() == OpKind::Sort || op.kind() == OpKind::ArgSort ? static_cast<const Sort*>(&op) : nullptr;
}

VarPtr sort(const VarPtr& x, std::optional<int> axis) { return build(OpKind::Sort, x, axis); }
VarPtr argsort(const VarPtr& x, std::optional<int> axis) { return build(OpKind::ArgSort, x, axis); }

std::vector<Shape> Sort::infer_shape(const Apply&, const std::vector<Array>& inputs) const {
  return {inputs[0].shape()};
}

graph::Cost Sort::cost(const Apply& node, const std::vector<Shape>& input_shapes) const {
  graph::Cost c = Op::cost(node, input_shapes);
  const double size = static_cast<double>(shape_size(input_shapes[0]));
  const double n = input_shapes[0].empty() ? 1.0 : static_cast<double>(input_shapes[0][axis_]);
  c.flops = size * std::log2(std::max(2.0, n));
  return c;
}

std::string Sort::render(const std::vector<std::string>& inputs, int output) const {
  if (output != 0 || inputs.size() != 1) return Op::render(inputs, output);
  return std::string(indices() ? "argsort(" : "sort(") + inputs[0] + ", axis=" + std::to_string(axis_) + ")";
}

std::vector<VarPtr> Sort::L_op(const Apply& node, const std::vector<VarPtr>& output_grads) const {
  const VarPtr& g = output_grads[0];
  if (indices() || !g) return {nullptr};
  const VarPtr& x = node.input(0);
  if (!is_float(x->type.dtype)) return {nullptr};
  // x's element at position i along the axis went to position rank[i] = argsort(argsort(x))[i],
  // so its gradient is g[rank[i]] on the same lane: a gather along the axis, done on the
  // tensors transposed so the axis is last and flattened (lane base + rank).
  const int nd = x->type.ndim();
  VarPtr rank = make_sort(OpKind::ArgSort, make_sort(OpKind::ArgSort, x, axis_), axis_);
  std::vector<int> perm, inverse(nd);
  for (int d = 0; d < nd; ++d)
    if (d != axis_) perm.push_back(d);
  perm.push_back(axis_);
  for (int d = 0; d < nd; ++d) inverse[perm[d]] = d;
  VarPtr g_t = transpose(g, perm), r_t = transpose(rank, perm);
  VarPtr n = subtensor(shape_of(g), {Index(static_cast<int64_t>(axis_))});
  VarPtr p = arange(i64(0), size_of(g), i64(1), DType::Int64);
  VarPtr base = elemwise(ScalarOpId::Sub, {p, elemwise(ScalarOpId::Mod, {p, n})});
  VarPtr idx = elemwise(ScalarOpId::Add, {base, flatten(r_t, 1)});
  VarPtr gathered = reshape(take(flatten(g_t, 1), idx, 0), shape_of(g_t));
  VarPtr back = transpose(gathered, inverse);
  return {back->type.dtype == x->type.dtype ? back : cast(back, x->type.dtype)};
}

template <>
std::shared_ptr<const graph::Op> op_from_props<OpKind::Sort>(PropReader& p) {
  return std::make_shared<const Sort>(OpKind::Sort, static_cast<int>(p.integer("axis")));
}
template <>
std::shared_ptr<const graph::Op> op_from_props<OpKind::ArgSort>(PropReader& p) {
  return std::make_shared<const Sort>(OpKind::ArgSort, static_cast<int>(p.integer("axis")));
}

}  // namespace theon::ops
