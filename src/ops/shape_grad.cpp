// Gradients (L_op) of the shape, join and indexing families, Theano's rules, written with
// the same builders users call so that gradients of gradients work:
//   reshape/flatten     gz reshaped to x's run-time shape
//   broadcast_to/alloc  gz summed over the broadcast dims (leading ones first, then sum_to)
//   shape/size          none (integer outputs)
//   concatenate/stack   each input gets its slice of gz along the axis (stack: dim dropped)
//   x[idx]              inc_subtensor(zeros_like(x)[idx], gz)
//   take(x, i)          gz accumulated into zeros_like(x) at i (repeated indices add up)
//   set/inc_subtensor   x: gz (set: with the region zeroed); y: gz[idx] summed to y's shape
// Integer inputs (sizes, bounds, indices) and non-float tensors get no gradient (nullptr).
#include "ops/elemwise.hpp"
#include "ops/join.hpp"
#include "ops/reduce.hpp"
#include "ops/shape.hpp"
#include "ops/subtensor.hpp"
#include "ops/sum_to.hpp"

#include <numeric>

namespace theon::ops {

using graph::Apply;
using graph::VarPtr;

namespace {

// g (rank >= like's) summed to like's run-time shape: the leading dims broadcasting added
// are reduced away, then the dims where like has size 1 (sum_to).
VarPtr sum_to_like(const VarPtr& g, const VarPtr& like) {
  VarPtr r = cast(g, like->type.dtype);
  const int lead = r->type.ndim() - like->type.ndim();
  if (lead > 0) {
    std::vector<int> axes(lead);
    std::iota(axes.begin(), axes.end(), 0);
    r = cast(reduce(ReduceKind::Sum, r, axes, false), like->type.dtype);
  }
  return sum_to(r, like);
}

VarPtr zeros_like(const VarPtr& x) { return fill_like(x, 0.0, x->type.dtype, "zeros_like"); }

VarPtr int64_constant(int64_t n) { return ops::constant(Array::scalar(static_cast<double>(n), DType::Int64)); }

// x.shape[d]: a constant where the dim is static, else Shape(x)[d].
VarPtr dim_size(const VarPtr& x, int d) {
  const int64_t n = x->type.dims[d];
  if (n >= 0) return int64_constant(n);
  return subtensor(shape_of(x), {Index(static_cast<int64_t>(d))});
}

std::vector<VarPtr> bound_inputs(const Apply& node, int first) {
  std::vector<VarPtr> b;
  for (int i = first; i < static_cast<int>(node.inputs().size()); ++i) b.push_back(node.input(i));
  return b;
}

// A scalar zero of x's dtype, for set_subtensor(gz[idx], 0).
VarPtr zero_of(const VarPtr& x) { return cast(literal(0, false), x->type.dtype); }

}  // namespace

// ---- shape family ----

std::vector<VarPtr> Reshape::L_op(const Apply& node, const std::vector<VarPtr>& output_grads) const {
  std::vector<VarPtr> grads(node.inputs().size());
  const VarPtr& x = node.input(0);
  const VarPtr& gz = output_grads[0];
  if (!gz || !is_float(x->type.dtype)) return grads;
  bool known = true;
  for (int64_t n : x->type.dims) known = known && n >= 0;
  // A static shape keeps the gradient's static dims; else x's run-time shape (Shape op).
  grads[0] = known ? reshape(gz, x->type.dims) : reshape(gz, shape_of(x));
  return grads;  // the shape input: no gradient
}

std::vector<VarPtr> BroadcastTo::L_op(const Apply& node, const std::vector<VarPtr>& output_grads) const {
  const VarPtr& x = node.input(0);
  const VarPtr& gz = output_grads[0];
  if (!gz || !is_float(x->type.dtype)) return {nullptr};
  return {sum_to_like(gz, x)};
}

std::vector<VarPtr> ShapeOf::L_op(const Apply&, const std::vector<VarPtr>&) const { return {nullptr}; }

std::vector<VarPtr> Alloc::L_op(const Apply& node, const std::vector<VarPtr>& output_grads) const {
  std::vector<VarPtr> grads(node.inputs().size());  // the sizes: no gradient
  const VarPtr& value = node.input(0);
  const VarPtr& gz = output_grads[0];
  if (!gz || !is_float(value->type.dtype)) return grads;
  grads[0] = sum_to_like(gz, value);
  return grads;
}

// ---- join ----

std::vector<VarPtr> Join::L_op(const Apply& node, const std::vector<VarPtr>& output_grads) const {
  const int n = static_cast<int>(node.inputs().size());
  std::vector<VarPtr> grads(n);
  const DType dtype = node.input(0)->type.dtype;  // the builder cast every input to it
  if (!output_grads[0] || !is_float(dtype)) return grads;
  const VarPtr gz = cast(output_grads[0], dtype);
  std::vector<Index> idx(axis_ + 1, Index(Slice{}));
  if (stack_) {
    for (int k = 0; k < n; ++k) {
      idx[axis_] = Index(static_cast<int64_t>(k));
      grads[k] = subtensor(gz, idx);
    }
    return grads;
  }
  // The offset along the axis: a static part plus, once some input's size is only known
  // at run time, a symbolic part (sums of Shape(x)[axis]).
  int64_t offset = 0;
  VarPtr offset_var;
  auto bound = [&]() {
    Bound b;
    if (!offset_var) b.value = offset;
    else b.var = offset ? elemwise(ScalarOpId::Add, {offset_var, int64_constant(offset)}) : offset_var;
    return b;
  };
  for (int k = 0; k < n; ++k) {
    const VarPtr& x = node.input(k);
    const Bound start = bound();
    if (x->type.dims[axis_] >= 0) offset += x->type.dims[axis_];
    else offset_var = offset_var ? elemwise(ScalarOpId::Add, {offset_var, dim_size(x, axis_)}) : dim_size(x, axis_);
    idx[axis_] = Index(Slice{start, bound(), {}});
    grads[k] = subtensor(gz, idx);
  }
  return grads;
}

// ---- indexing ----

std::vector<VarPtr> Subtensor::L_op(const Apply& node, const std::vector<VarPtr>& output_grads) const {
  std::vector<VarPtr> grads(node.inputs().size());  // the bounds: no gradient
  const VarPtr& x = node.input(0);
  if (!output_grads[0] || !is_float(x->type.dtype)) return grads;
  std::vector<VarPtr> inputs = {zeros_like(x), cast(output_grads[0], x->type.dtype)};
  for (auto& b : bound_inputs(node, 1)) inputs.push_back(b);
  grads[0] = graph::make_output(std::make_shared<IncSubtensor>(spec_, /*set=*/false), inputs, x->type);
  return grads;
}

std::vector<VarPtr> IncSubtensor::L_op(const Apply& node, const std::vector<VarPtr>& output_grads) const {
  std::vector<VarPtr> grads(node.inputs().size());  // the bounds: no gradient
  const VarPtr &x = node.input(0), &y = node.input(1);
  if (!output_grads[0] || !is_float(x->type.dtype)) return grads;
  const VarPtr gz = cast(output_grads[0], x->type.dtype);
  const std::vector<VarPtr> bounds = bound_inputs(node, 2);
  if (set_) {
    // The region was overwritten: x gets gz with that region zeroed.
    std::vector<VarPtr> inputs = {gz, zero_of(x)};
    inputs.insert(inputs.end(), bounds.begin(), bounds.end());
    grads[0] = graph::make_output(std::make_shared<IncSubtensor>(spec_, /*set=*/true), inputs, x->type);
  } else {
    grads[0] = gz;
  }
  grads[1] = sum_to_like(subtensor_spec(gz, spec_, bounds), y);  // y broadcast into the region
  return grads;
}

std::vector<VarPtr> AdvancedSubtensor1::L_op(const Apply& node, const std::vector<VarPtr>& output_grads) const {
  const VarPtr& x = node.input(0);
  std::vector<VarPtr> grads(node.inputs().size());  // none for the indices
  if (!output_grads[0] || !is_float(x->type.dtype)) return grads;
  // Accumulating: a repeated index collects every gradient row that came from it.
  std::vector<VarPtr> inputs = {zeros_like(x), cast(output_grads[0], x->type.dtype)};
  inputs.insert(inputs.end(), node.inputs().begin() + 1, node.inputs().end());
  grads[0] = graph::make_output(std::make_shared<AdvancedIncSubtensor1>(axis_, /*set=*/false), inputs, x->type);
  return grads;
}

std::vector<VarPtr> AdvancedIncSubtensor1::L_op(const Apply& node, const std::vector<VarPtr>& output_grads) const {
  const VarPtr &x = node.input(0), &y = node.input(1);
  const std::vector<VarPtr> indices(node.inputs().begin() + 2, node.inputs().end());
  std::vector<VarPtr> grads(node.inputs().size());
  if (!output_grads[0] || !is_float(x->type.dtype)) return grads;
  const VarPtr gz = cast(output_grads[0], x->type.dtype);
  grads[0] = gz;
  if (set_) {
    std::vector<VarPtr> inputs = {gz, zero_of(x)};
    inputs.insert(inputs.end(), indices.begin(), indices.end());
    grads[0] = graph::make_output(std::make_shared<AdvancedIncSubtensor1>(axis_, /*set=*/true), inputs, x->type);
  }
  // Theano's rule: every indexed row of gz flows to y (with set and repeated indices, the
  // rows that lost the write get a gradient too, as in Theano).
  grads[1] = sum_to_like(take(gz, indices, axis_), y);
  return grads;
}

}  // namespace theon::ops
