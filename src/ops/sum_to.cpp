#include "ops/sum_to.hpp"
#include "ops/make_op.hpp"

#include "ops/elemwise.hpp"
#include "ops/reduce.hpp"
#include "util/dispatch.hpp"
#include "util/strided.hpp"

#include <theon/error.hpp>

namespace theon::ops {

using graph::Apply;
using graph::VarPtr;

VarPtr sum_to(const VarPtr& g, const VarPtr& like) {
  if (g->type.ndim() != like->type.ndim())
    throw InternalError("sum_to: rank of " + g->label() + " differs from " + like->label());
  VarPtr gg = cast(g, like->type.dtype);
  // Needed where `like` may have size 1 (statically, or unknown) while g may not.
  bool needed = false;
  for (int d = 0; d < like->type.ndim(); ++d)
    if (g->type.dims[d] != 1 && (like->type.dims[d] == 1 || like->type.dims[d] == graph::kUnknownDim)) needed = true;
  if (!needed) return gg;
  graph::TensorType t = like->type;
  return graph::make_output(std::make_shared<SumTo>(), {gg, like}, t);
}

VarPtr broadcast_like(const VarPtr& v, const VarPtr& like) {
  VarPtr vv = v, other = cast(like, v->type.dtype);
  return elemwise(ScalarOpId::Switch, {literal(1, true), vv, other});
}

std::vector<Shape> SumTo::infer_shape(const Apply& node, const std::vector<Array>& inputs) const {
  const Shape &g = inputs[0].shape(), &like = inputs[1].shape();
  for (size_t d = 0; d < g.size(); ++d)
    if (like[d] != 1 && like[d] != g[d])
      throw ShapeError(node.describe() + ": gradient of shape " + shape_str(g) + " cannot be summed to shape " +
                       shape_str(like));
  return {like};
}

std::vector<VarPtr> SumTo::L_op(const Apply& node, const std::vector<VarPtr>& output_grads) const {
  // d(sum_to(g))/dg broadcasts the output gradient back; `like` only lends its shape.
  return {broadcast_like(output_grads[0], node.input(0)), nullptr};
}

}  // namespace theon::ops

namespace theon::ops {

THEON_PROPLESS_FACTORY(SumTo, SumTo)

}  // namespace theon::ops
