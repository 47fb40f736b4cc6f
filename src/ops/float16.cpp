#include "ops/float16.hpp"

#include "graph/op.hpp"
#include "ops/composite.hpp"
#include "ops/elemwise.hpp"
#include "ops/fused_reduce.hpp"

namespace theon::ops {

namespace {

// Whether only Cast instructions read or write float16 values in `c`'s program.
bool casts_only(const Composite& c) {
  for (const CompositeInstr& in : c.program()) {
    bool half = in.dtype == DType::Float16;
    for (int a : in.args) half = half || c.value_dtype(a) == DType::Float16;
    if (half && in.op != ScalarOpId::Cast) return false;
  }
  return true;
}

}  // namespace

bool touches_float16(const graph::Apply& node) {
  for (auto& in : node.inputs())
    if (in->type.dtype == DType::Float16) return true;
  for (int i = 0; i < node.num_outputs(); ++i)
    if (node.output_raw(i)->type.dtype == DType::Float16) return true;
  return false;
}

bool handles_float16(const graph::Apply& node) {
  using graph::OpKind;
  switch (node.op().kind()) {
    case OpKind::Elemwise: return graph::op_as<Elemwise>(node.op()).scalar() == ScalarOpId::Cast;
    case OpKind::DimShuffle:
    case OpKind::Reshape:
    case OpKind::BroadcastTo:
    case OpKind::Subtensor:
    case OpKind::Shape:
    case OpKind::ZeroGrad:
    case OpKind::DisconnectedGrad:
    case OpKind::GradClip:
    case OpKind::GradScale:
    case OpKind::Assert:
    case OpKind::Transfer: return true;
    case OpKind::Composite: return casts_only(graph::op_as<Composite>(node.op()));
    case OpKind::FusedReduce: {  // a region that may load half, reduced in its output's dtype
      const auto& f = graph::op_as<FusedReduce>(node.op());
      return node.output_raw(0)->type.dtype != DType::Float16 && casts_only(f.region());
    }
    default: return false;
  }
}

}  // namespace theon::ops
