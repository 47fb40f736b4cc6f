#include "compile/placement.hpp"

#include "backends/registry.hpp"
#include "graph/contexts.hpp"
#include "ops/transfer.hpp"

#include <theon/error.hpp>

#include <unordered_set>

namespace theon::compile {

using graph::VarKind;

runtime::Context LoweringTarget::resolve(const std::string& name) const {
  runtime::Context c = contexts.resolve(name);
  if (!fallback_reason.empty() && c.device.is_cuda())
    return c.name == c.device.str() ? runtime::Context{"cpu", Device::cpu()} : runtime::Context{c.name, Device::cpu()};
  return c;
}

const backends::Backend* LoweringTarget::gpu_backend(Device d) const {
  if (gpu && d == device) return gpu;
  for (auto& [known, backend] : gpu_backends_)
    if (known == d) return backend;
  const backends::Backend* backend = backends::backend_for(d, plan_only);
  if (!backend) throw DeviceError("context on " + d.str() + ": the CUDA backend could not be loaded");
  gpu_backends_.emplace_back(d, backend);
  return backend;
}

LoweringTarget resolve_target(const LowerOptions& options) { return resolve_target(options, Device::parse(options.device)); }

LoweringTarget resolve_target(const LowerOptions& options, Device device) {
  LoweringTarget target;
  target.device = device;
  target.plan_only = options.plan_only;
  target.contexts = options.contexts;
  if (!options.fallback_reason.empty()) {  // function() already warned or raised
    target.fallback_reason = options.fallback_reason;
    target.device = Device::cpu();
  } else if (target.device.is_cuda()) {
    target.gpu = backends::backend_for(target.device, options.plan_only);
    if (!target.gpu) throw DeviceError("device=" + options.device + ": the CUDA backend could not be loaded");
  }
  return target;
}

bool keeps_on_host(const graph::Apply& node) { return node.op().kind() == graph::OpKind::Shape; }

namespace {

bool small_integer(const graph::Variable& v) {
  const auto& t = v.type;
  if (is_float(t.dtype) || t.ndim() > 1) return false;
  if (t.ndim() == 0) return true;
  return t.dims[0] >= 0 && t.dims[0] <= 8;
}

// Where one node runs, given its context (and why it is there) and whether it is shape
// arithmetic.
NodePlacement place_node(const graph::Apply& node, const LoweringTarget& target, const runtime::Context& context,
                         const std::string& why, bool host_shape_work) {
  const backends::Backend* cpu = backends::backend_for(Device::cpu());
  const runtime::Context host{"cpu", Device::cpu()};
  if (graph::op_if<ops::Transfer>(node.op()))  // the CPU's Transfer kernel copies anywhere
    return {context.device, cpu, "an explicit transfer", false, context, context};
  if (context.device.is_cpu()) return {Device::cpu(), cpu, why, false, context, context};
  if (host_shape_work) return {Device::cpu(), cpu, "shape arithmetic stays on the host", false, context, host};
  const backends::Backend* gpu = target.gpu_backend(context.device);
  if (backends::Support s = gpu->supports(node); s.ok)
    return {context.device, gpu, why + (s.reason.empty() ? "" : " (" + s.reason + ")"), false, context, context};
  else
    return {Device::cpu(), cpu, "fallback: " + s.reason, true, context, host};
}

}  // namespace

Placement place(const graph::FunctionGraph& fgraph, const LoweringTarget& target) {
  Placement placement;
  // Variables that hold shape values: outputs of Shape, small integer constants, and small
  // integer results computed from those alone.
  std::unordered_set<const graph::Variable*> shape_values;
  std::unordered_map<std::string, runtime::Context> resolved;  // name -> context, each resolved once
  std::unordered_map<const graph::Apply*, graph::NodeContext> names;
  auto context_named = [&](const std::string& name, const graph::Variable& pinned) -> const runtime::Context& {
    auto it = resolved.find(name);
    if (it != resolved.end()) return it->second;
    try {
      return resolved.emplace(name, target.resolve(name)).first->second;
    } catch (Error& e) {
      e.add_context("placing " + pinned.label() + ", pinned to context '" + name + "'");
      throw;
    }
  };
  const runtime::Context default_context = target.default_context();
  const std::string default_why =
      target.fallback_reason.empty() ? "device=" + target.device.str() : "fallback: " + target.fallback_reason;
  for (auto& node : fgraph.nodes()) {
    bool from_shapes = true;
    for (auto& in : node->inputs()) {
      const bool constant = in->kind == VarKind::Constant && small_integer(*in);
      from_shapes = from_shapes && (constant || shape_values.count(in.get()));
    }
    bool outputs_small = true;
    for (int o = 0; o < node->num_outputs(); ++o) outputs_small = outputs_small && small_integer(*node->output_raw(o));
    const bool host_shape_work = keeps_on_host(*node) || (from_shapes && outputs_small && !node->inputs().empty());
    if (host_shape_work)
      for (int o = 0; o < node->num_outputs(); ++o) shape_values.insert(node->output_raw(o));
    // Theano's infer_context_name (graph/contexts.hpp): a pinned output, else the first input
    // with a context.
    const graph::NodeContext named = graph::infer_context(*node, names);
    names.emplace(node.get(), named);
    const runtime::Context* context = &default_context;
    std::string why = default_why;
    if (named.decided_by == -1) {
      const graph::Variable* pinned = node->output_raw(0);
      for (int o = 0; o < node->num_outputs(); ++o)
        if (!node->output_raw(o)->type.context.empty()) {
          pinned = node->output_raw(o);
          break;
        }
      context = &context_named(named.name, *pinned);
      why = "pinned to " + named.name;
    } else if (named.decided_by >= 0) {
      const graph::Variable& in = *node->input(named.decided_by);
      context = &context_named(named.name, in);
      why = "follows its input " + in.label() + " (" + named.name + ")";
    }
    NodePlacement p = place_node(*node, target, *context, why, host_shape_work);
    if (p.device.is_cpu()) {
      const backends::Support s = p.backend->supports(*node);
      if (!s.ok) throw InternalError(node->describe() + ": the CPU backend does not support it: " + s.reason);
    }
    placement.emplace(node.get(), std::move(p));
  }
  return placement;
}

Homes place_leaves(const graph::FunctionGraph& fgraph, const Placement& placement,
                   const std::vector<Device>& input_devices) {
  Homes homes;
  for (size_t i = 0; i < fgraph.inputs().size(); ++i)
    homes.emplace(fgraph.inputs()[i].get(), i < input_devices.size() ? input_devices[i] : Device::cpu());
  for (auto& node : fgraph.nodes()) {
    if (keeps_on_host(*node)) continue;  // a metadata reader does not decide where a value lives
    const NodePlacement& p = placement.at(node.get());
    for (int i = 0; i < static_cast<int>(node->inputs().size()); ++i) {
      const graph::Variable* in = node->input(i).get();
      if (in->kind != VarKind::Constant && in->kind != VarKind::Shared) continue;
      const bool on_host = p.device.is_cpu() || p.backend->host_input(*node, i);
      homes.emplace(in, on_host ? Device::cpu() : p.device);  // the first reader decides
    }
  }
  // Read by no kernel (an output as it is, or only its shape taken): a shared variable stays
  // where its value is, a constant on the host.
  auto unread_leaf = [&](const graph::VarPtr& v) {
    if (v->kind != VarKind::Constant && v->kind != VarKind::Shared) return;
    Device d = Device::cpu();
    if (v->kind == VarKind::Shared)
      if (Array value = v->storage->get(); value.defined()) d = value.device();
    homes.emplace(v.get(), d);
  };
  for (auto& node : fgraph.nodes())
    for (auto& in : node->inputs()) unread_leaf(in);
  for (auto& out : fgraph.outputs()) unread_leaf(out);
  return homes;
}

Device location(const graph::Variable& v, const Placement& placement, const Homes& homes) {
  if (v.owner) return placement.at(v.owner).device;
  auto it = homes.find(&v);
  return it == homes.end() ? Device::cpu() : it->second;
}

const runtime::Context* written_in(const graph::Variable& v, const Placement& placement) {
  return v.owner ? &placement.at(v.owner).runs_in : nullptr;
}

}  // namespace theon::compile
