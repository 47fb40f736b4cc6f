#include "ops/make_op.hpp"

#include "ops/dimshuffle.hpp"
#include "ops/elemwise.hpp"
#include "ops/reduce.hpp"

#include <map>
#include <mutex>

namespace theon::ops {

namespace {

std::mutex factories_mutex;
std::map<graph::OpKind, OpFactory>& upper_factories() {
  static std::map<graph::OpKind, OpFactory> factories;
  return factories;
}

}  // namespace

void register_op_factory(graph::OpKind kind, OpFactory factory) {
  std::lock_guard<std::mutex> lock(factories_mutex);
  upper_factories()[kind] = factory;
}

std::shared_ptr<const graph::Op> upper_layer_op(graph::OpKind kind, PropReader& props, const char* why) {
  OpFactory factory = nullptr;
  {
    std::lock_guard<std::mutex> lock(factories_mutex);
    if (auto it = upper_factories().find(kind); it != upper_factories().end()) factory = it->second;
  }
  if (!factory) props.not_rebuildable(why);
  return factory(props);
}

// The gradient ops belong to autodiff, a layer above ops: their factories are registered
// from there (autodiff::register_op_factories()).
THEON_UPPER_LAYER_FACTORY(ZeroGrad, "GradientBlock belongs to autodiff; call autodiff::register_op_factories()")
THEON_UPPER_LAYER_FACTORY(DisconnectedGrad, "GradientBlock belongs to autodiff; call autodiff::register_op_factories()")
THEON_UPPER_LAYER_FACTORY(GradClip, "GradientTransform belongs to autodiff; call autodiff::register_op_factories()")
THEON_UPPER_LAYER_FACTORY(GradScale, "GradientTransform belongs to autodiff; call autodiff::register_op_factories()")

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
