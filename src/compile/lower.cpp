#include "compile/placement.hpp"
#include "compile/program.hpp"

#include "ops/transfer.hpp"
#include "backends/cpu/fused_cpu.hpp"  // prepare_fused_kernels (fused CPU hook)

#include <theon/error.hpp>

#include <algorithm>
#include <map>
#include <unordered_map>

namespace theon::compile {

using graph::VarKind;

std::shared_ptr<Program> lower(std::shared_ptr<graph::FunctionGraph> fgraph, const LowerOptions& options) {
  auto prog = std::make_shared<Program>();
  {
    // Passes that depend on what the backends offer see where this graph will run.
    const bool fell_back = !options.fallback_reason.empty();
    rewrite::TargetDeviceScope scope(fell_back ? "cpu" : Device::parse(options.device).str());
    prog->passes = rewrite::optimize(*fgraph, options.mode, options.optimizer_including, options.optimizer_excluding);
  }
  prog->fgraph = fgraph;

  // Placement. function() has already applied on_fallback (warned or raised) when the
  // requested device is unavailable; then everything runs on the CPU with that reason.
  Device target = Device::parse(options.device);
  backends::Backend* cuda = nullptr;
  if (target.is_cuda()) {
    if (!options.fallback_reason.empty()) {
      prog->fallback_notes.push_back(options.fallback_reason);
      target = Device::cpu();
    } else {
      cuda = backends::cuda_backend(options.plan_only);
      if (!cuda) throw DeviceError("device=" + options.device + ": the CUDA backend could not be loaded");
    }
  }
  prog->device = options.fallback_reason.empty() ? target.str() : "cpu";
  std::vector<NodePlacement> placed = place(*fgraph, target, cuda);
  if (!options.fallback_reason.empty())
    for (auto& p : placed) p.reason = "fallback: " + options.fallback_reason;

  std::unordered_map<const graph::Variable*, int> slot;
  auto slot_of = [&](const graph::VarPtr& v, Device where) {
    auto [it, inserted] = slot.try_emplace(v.get(), prog->num_slots);
    if (inserted) {
      ++prog->num_slots;
      prog->slot_device.push_back(where);
      if (v->kind == VarKind::Constant || v->kind == VarKind::Shared) {
        prog->leaves.push_back({it->second, v});
        prog->leaf_device.push_back(where);
        // Constants read on a GPU are copied there once, now.
        const bool copy_now =
            v->kind == VarKind::Constant && where.is_cuda() && v->constant.defined() && !options.plan_only;
        prog->leaf_values.push_back(copy_now ? to_device(v->constant, where) : Array());
      }
    }
    return it->second;
  };
  for (size_t i = 0; i < fgraph->inputs().size(); ++i)
    prog->input_slots.push_back(
        slot_of(fgraph->inputs()[i], i < options.input_devices.size() ? options.input_devices[i] : Device::cpu()));

  // Where a leaf (constant or shared variable) should live: on the device of its first
  // consumer (shared variables move there now and stay: DESIGN.md), else the host.
  std::unordered_map<const graph::Variable*, Device> leaf_home;
  const auto& nodes = fgraph->nodes();
  for (size_t n = 0; n < nodes.size(); ++n)
    for (int i = 0; i < static_cast<int>(nodes[n]->inputs().size()); ++i) {
      const graph::VarPtr& in = nodes[n]->input(i);
      // A metadata-only reader (Shape) does not decide where a value lives.
      if (keeps_on_host(*nodes[n])) continue;
      if ((in->kind == VarKind::Constant || in->kind == VarKind::Shared) && !leaf_home.count(in.get())) {
        const bool on_host = placed[n].device.is_cpu() || cuda->host_input(*nodes[n], i);
        leaf_home.emplace(in.get(), on_host ? Device::cpu() : placed[n].device);
      }
    }
  auto leaf_device = [&](const graph::VarPtr& v) {
    auto it = leaf_home.find(v.get());
    Device d = it == leaf_home.end() ? Device::cpu() : it->second;
    if (it == leaf_home.end() && v->kind == VarKind::Shared) {
      // Read by no kernel (an output as it is, or only its shape taken): it stays where it is.
      Array value = v->storage->get();
      if (value.defined()) d = value.device();
    }
    if (v->kind == VarKind::Shared && !options.plan_only && d.is_cuda()) {
      Array value = v->storage->get();
      if (value.defined() && value.device() != d) v->storage->set(to_device(value, d));
    }
    return d;
  };

  backends::Backend& cpu = backends::cpu_backend();
  std::map<std::pair<int, int>, int> moved;  // (slot, device index or -1 for host) -> slot of the copy
  auto kernel_for = [&](const graph::Apply& node, Device d) -> const backends::Kernel* {
    if (d.is_cpu()) {
      backends::Support s = cpu.supports(node);
      if (!s.ok) throw InternalError(node.describe() + ": the CPU backend does not support it: " + s.reason);
      return &cpu.kernel(node);
    }
    return &cuda->kernel(node);
  };
  for (size_t n = 0; n < nodes.size(); ++n) {
    const auto& node = nodes[n];
    const NodePlacement& where = placed[n];
    Thunk t;
    t.node = node;
    t.dev = where.device;
    t.device = where.device.str();
    t.reason = where.reason;
    t.kernel = kernel_for(*node, where.device);
    for (int i = 0; i < static_cast<int>(node->inputs().size()); ++i) {
      const graph::VarPtr& in = node->input(i);
      const bool leaf = in->kind == VarKind::Constant || in->kind == VarKind::Shared;
      int s = slot.count(in.get()) ? slot.at(in.get()) : slot_of(in, leaf ? leaf_device(in) : Device::cpu());
      const Device have = prog->slot_device[s];
      // Inputs the kernel reads on the host (shape vectors, index scalars) stay there; an op
      // reading only metadata (Shape) takes its input wherever it lives: shapes are host
      // metadata, so x.shape of a device array copies nothing.
      const Device want = keeps_on_host(*node)                                   ? have
                          : where.device.is_cuda() && cuda->host_input(*node, i) ? Device::cpu()
                                                                                 : where.device;
      if (have != want) {
        // A value read on another device: one Transfer per (value, device) per call.
        const auto key = std::make_pair(s, want.is_cpu() ? -1 : want.index);
        auto it = moved.find(key);
        if (it == moved.end()) {
          graph::VarPtr copy = ops::transfer(in, want);
          Thunk tr;
          tr.node = copy->owner_ptr();
          tr.dev = want;
          tr.device = want.str();
          tr.is_transfer = true;
          tr.reason = "input " + in->label() + " of " + node->op().display() + " lives on " + have.str();
          tr.kernel = &cpu.kernel(*tr.node);  // the CPU's Transfer kernel copies through the device ops
          tr.inputs = {s};
          const int out = slot_of(copy, want);
          tr.outputs = {out};
          tr.output_is_view = {false};
          prog->device_work = prog->device_work || want.is_cuda();
          prog->thunks.push_back(std::move(tr));
          it = moved.emplace(key, out).first;
        }
        s = it->second;
      }
      t.inputs.push_back(s);
    }
    auto views = node->op().view_map();
    for (int i = 0; i < node->num_outputs(); ++i) {
      t.outputs.push_back(slot_of(node->output(i), where.device));
      t.output_is_view.push_back(views.count(i) > 0);
    }
    if (where.fallback) {
      ++prog->num_fallbacks;
      prog->fallback_notes.push_back(node->op().display() + " (" + node->output_raw(0)->label() + "): " +
                                     where.reason.substr(std::string("fallback: ").size()));
    }
    prog->device_work = prog->device_work || t.dev.is_cuda();
    prog->thunks.push_back(std::move(t));
  }
  for (auto& out : fgraph->outputs()) {
    const bool leaf = out->kind == VarKind::Constant || out->kind == VarKind::Shared;
    prog->output_slots.push_back(slot.count(out.get()) ? slot.at(out.get())
                                                       : slot_of(out, leaf ? leaf_device(out) : Device::cpu()));
  }
  // Fused CPU hook (issue 4): the kernels of every CPU Composite compiled in one compiler run
  // now, instead of one run per node at its first call (backends/cpu/fused_cpu.hpp).
  std::vector<graph::ApplyPtr> cpu_nodes;
  for (auto& t : prog->thunks)
    if (t.dev.is_cpu() && !options.plan_only) cpu_nodes.push_back(t.node);
  backends::cpu::prepare_fused_kernels(cpu_nodes);

  // Memory plan: a slot is dead after its last reader, unless it is an output, an input or
  // a leaf (those are never recycled by the executor).
  std::vector<int> last(prog->num_slots, -1);
  for (size_t i = 0; i < prog->thunks.size(); ++i) {
    for (int s : prog->thunks[i].inputs) last[s] = static_cast<int>(i);
    for (int s : prog->thunks[i].outputs)
      if (last[s] < 0) last[s] = static_cast<int>(i);  // unused outputs die where they are made
  }
  std::vector<bool> keep(prog->num_slots, false);
  for (int s : prog->output_slots) keep[s] = true;
  for (int s : prog->input_slots) keep[s] = true;
  for (auto& [s, v] : prog->leaves) keep[s] = true;
  for (int s = 0; s < prog->num_slots; ++s)
    if (!keep[s] && last[s] >= 0) prog->thunks[last[s]].release.push_back(s);

  // Destroy check: an output may overwrite an input only where the op says so (destroy_map),
  // the output is not a view, and the input's slot dies at this thunk (so it is not a graph
  // input, output, constant or shared variable, and no later thunk reads it).
  for (auto& t : prog->thunks) {
    t.destroy.assign(t.outputs.size(), -1);
    bool any = false;
    for (auto [o, i] : t.node->op().destroy_map()) {
      if (o < 0 || o >= static_cast<int>(t.outputs.size()) || i < 0 || i >= static_cast<int>(t.inputs.size()))
        throw InternalError(t.node->describe() + ": destroy_map refers to a missing input or output");
      if (t.output_is_view[o]) continue;
      const int s = t.inputs[i];
      if (std::find(t.release.begin(), t.release.end(), s) == t.release.end()) continue;
      t.destroy[o] = i;
      any = true;
    }
    prog->num_inplace += any;
  }
  return prog;
}

}  // namespace theon::compile
