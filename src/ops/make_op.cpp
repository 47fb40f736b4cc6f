#include "ops/make_op.hpp"

#include "ops/dimshuffle.hpp"
#include "ops/elemwise.hpp"
#include "ops/reduce.hpp"

namespace theon::ops {

// GradientBlock belongs to autodiff, a layer above ops: its factory cannot live beside it.
THEON_NOT_REBUILDABLE(ZeroGrad, "GradientBlock belongs to autodiff, a layer above ops")
THEON_NOT_REBUILDABLE(DisconnectedGrad, "GradientBlock belongs to autodiff, a layer above ops")
THEON_NOT_REBUILDABLE(GradClip, "GradientTransform belongs to autodiff, a layer above ops")
THEON_NOT_REBUILDABLE(GradScale, "GradientTransform belongs to autodiff, a layer above ops")

std::shared_ptr<const graph::Op> make_op(graph::OpKind kind, const graph::OpProps& props) {
  PropReader p(kind, props);
  switch (kind) {
#define THEON_OP_KIND(k, cls, visibility) \
  case graph::OpKind::k: return p.done(op_from_props<graph::OpKind::k>(p));
#include <theon/ops.def>
#undef THEON_OP_KIND
  }
  throw InternalError("make_op: kind " + std::to_string(static_cast<int>(kind)) + " is not in the registry");
}

graph::OpProps rebuild_props(const graph::Op& op) {
  graph::OpProps p = op.props();
  if (const auto* e = graph::op_if<Elemwise>(op)) {
    if (e->scalar() != ScalarOpId::Cast) p.push_back({"out_dtype", std::string(dtype_name(e->out_dtype()))});
  } else if (const auto* d = graph::op_if<DimShuffle>(op)) {
    p.push_back({"input_ndim", std::to_string(d->input_ndim())});
  } else if (is_reduce(op.kind())) {
    p.push_back({"dtype", std::string(dtype_name(static_cast<const Reduce&>(op).out_dtype()))});
  }
  return p;
}

}  // namespace theon::ops
