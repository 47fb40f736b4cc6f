#include "ops/join.hpp"
#include "ops/make_op.hpp"

#include "graph/user_names.hpp"
#include "ops/elemwise.hpp"
#include "ops/shape.hpp"
#include "util/checked_size.hpp"

#include <theon/config.hpp>
#include <theon/error.hpp>

namespace theon::ops {

using graph::Apply;
using graph::TensorType;
using graph::VarPtr;

namespace {

std::string call_text(bool stack, const std::vector<VarPtr>& xs, int axis) {
  std::string s = stack ? "stack([" : "concatenate([";
  for (size_t i = 0; i < xs.size(); ++i) s += (i ? ", " : "") + xs[i]->label();
  return s + "], axis=" + std::to_string(axis) + ")";
}

std::string inputs_text(const std::vector<VarPtr>& xs) {
  std::string s;
  for (size_t i = 0; i < xs.size(); ++i) s += (i ? ", " : "") + label_type(xs[i]);
  return s;
}

// Is dim d of the inputs one that must agree (all but the concatenation axis)?
bool must_agree(bool stack, int axis, int d) { return stack || d != axis; }

}  // namespace

graph::OpProps Join::props() const {
  graph::OpProps p = {{"axis", std::to_string(axis_)}};
  if (stack_) p.push_back({"stack", "True"});
  return p;
}

namespace {

VarPtr join(const std::vector<VarPtr>& xs_in, int axis_in, bool stack) {
  if (xs_in.empty())
    throw ValueError(std::string(stack ? "stack" : "concatenate") + ": need at least one array to join");
  const std::string what = call_text(stack, xs_in, axis_in);
  for (auto& x : xs_in) require_supported(x->type.dtype, what);
  const int nd = xs_in[0]->type.ndim();
  for (auto& x : xs_in)
    if (x->type.ndim() != nd)
      throw ShapeError(what + ": all inputs must have the same rank; inputs: " + inputs_text(xs_in));
  if (!stack && nd == 0)
    throw ShapeError(what + ": zero-dimensional arrays cannot be concatenated (use stack); inputs: " +
                     inputs_text(xs_in));
  const int out_nd = stack ? nd + 1 : nd;
  int axis = axis_in < 0 ? axis_in + out_nd : axis_in;
  if (axis < 0 || axis >= out_nd)
    throw ShapeError(what + ": axis " + std::to_string(axis_in) + " is out of bounds for a result of rank " +
                     std::to_string(out_nd) + "; inputs: " + inputs_text(xs_in));

  std::vector<DTypeOperand> operands;
  for (auto& x : xs_in) operands.push_back({x->type.dtype, x->weak});
  const DType dtype = result_type(operands, config().floatX);
  std::vector<VarPtr> xs;
  for (auto& x : xs_in) xs.push_back(cast(x, dtype));

  TensorType t;
  t.dtype = dtype;
  t.dims.assign(nd, graph::kUnknownDim);
  int64_t joined = 0;
  for (auto& x : xs) {
    for (int d = 0; d < nd; ++d) {
      const int64_t n = x->type.dims[d];
      if (!must_agree(stack, axis, d) || n < 0) continue;
      if (t.dims[d] >= 0 && t.dims[d] != n)
        throw ShapeError(what + ": input dims must match except along the " +
                         (stack ? std::string("new axis") : "concatenation axis " + std::to_string(axis)) +
                         ", but dim " + std::to_string(d) + " differs; inputs: " + inputs_text(xs_in));
      t.dims[d] = n;
    }
    const int64_t n = stack ? 1 : x->type.dims[axis];
    if (joined < 0 || n < 0) joined = graph::kUnknownDim;
    else if (!detail::checked_add(joined, n, joined)) detail::throw_too_big(what, x->type.dims, std::nullopt);
  }
  if (stack) t.dims.insert(t.dims.begin() + axis, static_cast<int64_t>(xs.size()));
  else t.dims[axis] = joined;
  return graph::make_output(std::make_shared<Join>(axis, stack), xs, t);
}

}  // namespace

VarPtr concatenate(const std::vector<VarPtr>& xs, int axis) { return join(xs, axis, false); }
VarPtr stack(const std::vector<VarPtr>& xs, int axis) { return join(xs, axis, true); }

std::vector<Shape> Join::infer_shape(const Apply& node, const std::vector<Array>& inputs) const {
  Shape out = inputs[0].shape();
  for (size_t k = 1; k < inputs.size(); ++k) {
    const Shape& s = inputs[k].shape();
    bool ok = s.size() == out.size();
    for (size_t d = 0; ok && d < s.size(); ++d) ok = !must_agree(stack_, axis_, static_cast<int>(d)) || s[d] == out[d];
    if (!ok) {
      std::string shapes;
      for (size_t j = 0; j < inputs.size(); ++j)
        shapes += (j ? ", " : "") + graph::user_value(*node.input(static_cast<int>(j)), inputs[j].shape());
      throw ShapeError(graph::user_describe(node) + ": input shapes must match except along the " +
                       (stack_ ? std::string("new axis") : "concatenation axis " + std::to_string(axis_)) +
                       "; got " + shapes);
    }
    if (!stack_ && !detail::checked_add(out[axis_], s[axis_], out[axis_]))
      detail::throw_too_big(graph::user_describe(node), out, std::nullopt);
  }
  if (stack_) out.insert(out.begin() + axis_, static_cast<int64_t>(inputs.size()));
  detail::checked_nbytes(out, node.output_raw(0)->type.dtype, [&] { return graph::user_describe(node); });
  return {out};
}

graph::Cost Join::cost(const Apply& node, const std::vector<Shape>& input_shapes) const {
  graph::Cost c = Op::cost(node, input_shapes);
  c.bytes *= 2;  // every input element is read once and written once
  return c;
}

}  // namespace theon::ops

namespace theon::ops {

template <>
std::shared_ptr<const graph::Op> op_from_props<graph::OpKind::Join>(PropReader& p) {
  const int axis = static_cast<int>(p.integer("axis"));
  return std::make_shared<const Join>(axis, p.flag("stack"));
}

}  // namespace theon::ops
