#include "ops/make_op.hpp"

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

}  // namespace theon::ops
