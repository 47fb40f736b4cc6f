#include "compile/placement.hpp"

#include <unordered_set>

namespace theon::compile {

bool keeps_on_host(const graph::Apply& node) { return node.op().kind() == graph::OpKind::Shape; }

namespace {

bool small_integer(const graph::Variable& v) {
  const auto& t = v.type;
  if (is_float(t.dtype) || t.ndim() > 1) return false;
  if (t.ndim() == 0) return true;
  return t.dims[0] >= 0 && t.dims[0] <= 8;
}

}  // namespace

std::vector<NodePlacement> place(const graph::FunctionGraph& fgraph, Device target, const backends::Backend* cuda) {
  std::vector<NodePlacement> out;
  const std::string asked = "device=" + target.str();
  // Variables that hold shape values: outputs of Shape, small integer constants, and small
  // integer results computed from those alone.
  std::unordered_set<const graph::Variable*> shape_values;
  for (auto& node : fgraph.nodes()) {
    NodePlacement p;
    bool from_shapes = true;
    for (auto& in : node->inputs()) {
      const bool constant = in->kind == graph::VarKind::Constant && small_integer(*in);
      from_shapes = from_shapes && (constant || shape_values.count(in.get()));
    }
    bool outputs_small = true;
    for (int o = 0; o < node->num_outputs(); ++o) outputs_small = outputs_small && small_integer(*node->output_raw(o));
    const bool host_shape_work = keeps_on_host(*node) || (from_shapes && outputs_small && !node->inputs().empty());
    if (host_shape_work)
      for (int o = 0; o < node->num_outputs(); ++o) shape_values.insert(node->output_raw(o));

    if (target.is_cpu()) {
      p.device = Device::cpu();
      p.reason = asked;
    } else if (host_shape_work) {
      p.device = Device::cpu();
      p.reason = "shape arithmetic stays on the host";
    } else if (!cuda) {
      p.device = Device::cpu();
      p.reason = "fallback: the CUDA backend is not available";
      p.fallback = true;
    } else if (backends::Support s = cuda->supports(*node); s.ok) {
      p.device = target;
      p.reason = asked + (s.reason.empty() ? "" : " (" + s.reason + ")");
    } else {
      p.device = Device::cpu();
      p.reason = "fallback: " + s.reason;
      p.fallback = true;
    }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace theon::compile
