#include "compile/thunks.hpp"

#include "graph/user_names.hpp"
#include "ops/composite.hpp"
#include "ops/fused_reduce.hpp"
#include "util/device_ops.hpp"

#include <theon/error.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <unordered_map>

namespace theon::compile {

using graph::VarKind;

namespace {

void add_members(const ops::Composite& region, std::vector<std::string>& members) {
  for (const ops::CompositeInstr& instr : region.program()) members.emplace_back(ops::scalar_op_info(instr.op).name);
}

}  // namespace

runtime::Provenance provenance_of(const graph::Apply& node) {
  runtime::Provenance p;
  const auto* composite = graph::op_if<ops::Composite>(node.op());
  const auto* fused = graph::op_if<ops::FusedReduce>(node.op());
  if (composite) add_members(*composite, p.fused_members);
  if (fused) {
    add_members(fused->region(), p.fused_members);
    p.fused_members.emplace_back(ops::reduce_kind_name(fused->reduce_kind()));
  }
  // The user's expression of an unnamed fused output would spell out the whole region (a
  // deep chain: megabytes, and deep recursion): its members say what it computes.
  const bool fused_node = composite || fused;
  for (int i = 0; i < node.num_outputs(); ++i) {
    const graph::Variable& v = *node.output_raw(i);
    p.user_names.push_back(fused_node && v.name.empty() ? v.label() : graph::user_label(v));
  }
  return p;
}

std::string observer_label(const graph::Apply& node, const runtime::Provenance& provenance) {
  const graph::OpKind kind = node.op().kind();
  if (kind != graph::OpKind::Composite && kind != graph::OpKind::FusedReduce) return node.op().display();
  // Bounded, unlike display() (the whole region's expression).
  return std::string(graph::kind_name(kind)) + "{" + std::to_string(provenance.fused_members.size()) + " ops}";
}

void build_thunks(Program& prog, const Placement& placement, const Homes& homes) {
  const graph::FunctionGraph& fgraph = *prog.fgraph;
  std::unordered_map<const graph::Variable*, int> slot;
  auto slot_of = [&](const graph::VarPtr& v) {
    auto [it, inserted] = slot.try_emplace(v.get(), prog.num_slots);
    if (inserted) {
      ++prog.num_slots;
      const Device where = location(*v, placement, homes);
      prog.slot_device.push_back(where);
      if (v->kind == VarKind::Constant || v->kind == VarKind::Shared) {
        prog.leaves.push_back({it->second, v});
        prog.leaf_device.push_back(where);
        prog.leaf_values.emplace_back();
      }
    }
    return it->second;
  };
  for (auto& in : fgraph.inputs()) prog.input_slots.push_back(slot_of(in));
  for (auto& node : fgraph.nodes()) {
    const NodePlacement& where = placement.at(node.get());
    Thunk t;
    t.node = node;
    t.dev = where.device;
    t.device = where.device.str();
    t.exec.context = where.runs_in;
    t.exec.stream = {where.device, runtime::StreamKind::Compute, nullptr};  // bound by bind_streams
    t.reason = where.reason;
    t.is_transfer = node->op().kind() == graph::OpKind::Transfer;
    t.provenance = provenance_of(*node);
    t.op = observer_label(*node, t.provenance);
    t.backend = where.backend;
    t.kernel = &where.backend->kernel(*node);
    t.kernel_name = t.kernel->name();
    for (auto& in : node->inputs()) t.inputs.push_back(slot_of(in));
    auto views = node->op().view_map();
    auto through = node->op().pass_through_map();
    for (int i = 0; i < node->num_outputs(); ++i) {
      t.outputs.push_back(slot_of(node->output(i)));
      t.output_is_view.push_back(views.count(i) > 0);
      auto it = through.find(i);
      const bool valid = it != through.end() && it->second >= 0 && it->second < static_cast<int>(node->inputs().size());
      t.pass_through.push_back(valid && views.count(i) == 0 ? it->second : -1);
    }
    // A transfer between two contexts of one device is a handover: the reader gets the same
    // array (no copy); the ordering is the dependency plan's (dependencies.hpp).
    const bool handover = t.is_transfer && location(*node->input(0), placement, homes) == where.device;
    if (handover) t.pass_through = {0};
    t.on_copy_stream = t.is_transfer && !handover && where.device.is_cuda();
    if (where.fallback) {
      ++prog.num_fallbacks;
      prog.fallback_notes.push_back(node->op().display() + " (" + node->output_raw(0)->label() + "): " +
                                    where.reason.substr(std::string("fallback: ").size()));
    }
    prog.device_work = prog.device_work || t.dev.is_cuda();
    prog.thunks.push_back(std::move(t));
  }
  for (auto& out : fgraph.outputs()) prog.output_slots.push_back(slot_of(out));
}

void list_contexts(Program& prog, const runtime::Context& default_context) {
  auto& cs = prog.contexts;
  cs = {default_context};
  for (Thunk& t : prog.thunks) {
    const auto it = std::find_if(cs.begin(), cs.end(), [&](const runtime::Context& c) { return c.name == t.exec.context.name; });
    t.context_index = static_cast<int>(it - cs.begin());
    if (it == cs.end()) cs.push_back(t.exec.context);
  }
  prog.context_thunks.assign(cs.size(), 0);
  for (const Thunk& t : prog.thunks) ++prog.context_thunks[t.context_index];
  prog.cpu_contexts = 0;
  for (size_t k = 0; k < cs.size(); ++k) prog.cpu_contexts += cs[k].device.is_cpu() && prog.context_thunks[k] > 0;
}

void set_thread_budgets(Program& prog, const std::map<std::string, int>& context_threads, int cores) {
  const int share = std::max(1, cores / std::max(1, prog.cpu_contexts));
  for (Thunk& t : prog.thunks) {
    if (!t.exec.context.device.is_cpu()) continue;
    auto it = context_threads.find(t.exec.context.name);
    if (it != context_threads.end() && it->second > 0) t.exec.threads = it->second;
    else t.exec.threads = prog.cpu_contexts > 1 ? share : 0;  // one CPU context: the process's count
  }
}

void bind_streams(Program& prog) {
  for (Thunk& t : prog.thunks) {
    const runtime::ContextStreams streams = runtime::streams_of(t.exec.context);
    t.exec.stream = t.on_copy_stream ? streams.copy : streams.compute;
  }
}

void copy_constants_to_devices(Program& prog) {
  for (size_t k = 0; k < prog.leaves.size(); ++k) {
    const graph::VarPtr& v = prog.leaves[k].second;
    if (v->kind == VarKind::Constant && prog.leaf_device[k].is_cuda() && v->constant.defined())
      prog.leaf_values[k] = to_device(v->constant, prog.leaf_device[k]);
  }
}

namespace {

// A placeholder (no data) for what a slot will hold: the program's input shapes where given,
// else the static type with unknown dims as 2 (not 1: no broadcast is assumed); contiguous.
Array placeholder(const graph::Variable& v, const Shape* shape) {
  Shape s;
  if (shape) s = *shape;
  else
    for (int64_t d : v.type.dims) s.push_back(d < 0 ? 2 : d);
  return Array(nullptr, v.type.dtype, s, contiguous_strides(s));
}

backends::PrepareInfo prepare_info(const Program& prog, const Thunk& t, const std::vector<Shape>& input_shapes,
                                   const std::unordered_map<const graph::Variable*, size_t>& input_index,
                                   const std::unordered_map<const graph::Variable*, bool>& view_output) {
  backends::PrepareInfo info;
  info.options = prog.options;
  info.device = t.dev;
  for (auto& in : t.node->inputs()) {
    auto idx = input_index.find(in.get());
    const bool given = idx != input_index.end() && idx->second < input_shapes.size();
    info.inputs.push_back(placeholder(*in, given ? &input_shapes[idx->second] : nullptr));
    auto view = view_output.find(in.get());
    info.layout_known.push_back(view == view_output.end() || !view->second);
  }
  return info;
}

}  // namespace

void prepare_kernels(Program& prog, const std::vector<Shape>& input_shapes, bool plan_only) {
  const auto started = std::chrono::steady_clock::now();
  // Batches first: each backend compiles what its nodes need in one go (the CPU's module).
  std::unordered_map<const backends::Backend*, std::vector<const graph::Apply*>> batches;
  std::unordered_map<const graph::Variable*, size_t> input_index;
  std::unordered_map<const graph::Variable*, bool> view_output;
  for (size_t i = 0; i < prog.fgraph->inputs().size(); ++i) input_index[prog.fgraph->inputs()[i].get()] = i;
  std::vector<size_t> device_thunks;
  for (size_t k = 0; k < prog.thunks.size(); ++k) {
    Thunk& t = prog.thunks[k];
    // A handed-over input keeps its own layout (possibly strided): not known either.
    for (size_t o = 0; o < t.outputs.size(); ++o)
      view_output[t.node->output_raw(static_cast<int>(o))] = t.output_is_view[o] || t.pass_through[o] >= 0;
    if (!plan_only) batches[t.backend].push_back(t.node.get());  // plan-only lowering compiles nothing
    if (t.dev.is_cpu() || t.is_transfer) continue;  // prepared after their batch, below
    if (plan_only) {
      t.plan = std::make_shared<backends::KernelPlan>(prog.options);  // no device to load on
      continue;
    }
    device_thunks.push_back(k);
  }
  // The batches (the CPU's is a compiler run) overlap the device kernels' compiles.
  std::vector<std::future<void>> batch_runs;
  for (auto& [backend, nodes] : batches)
    batch_runs.push_back(std::async(device_thunks.empty() ? std::launch::deferred : std::launch::async,
                                    [&, backend = backend] { backend->prepare_batch(nodes, prog.options); }));
  // Device kernels compile on a few workers (NVRTC compiles of different kernels run at once).
  std::atomic<size_t> next{0};
  auto prepare_some = [&] {
    for (size_t i; (i = next++) < device_thunks.size();) {
      Thunk& t = prog.thunks[device_thunks[i]];
      try {
        t.plan = t.kernel->prepare(*t.node, prepare_info(prog, t, input_shapes, input_index, view_output));
      } catch (Error& e) {
        e.add_context("while preparing the kernel of " + t.node->describe() + " on " + t.device);
        throw;
      }
    }
  };
  const size_t workers = std::min<size_t>(device_thunks.size(), std::clamp(std::thread::hardware_concurrency(), 2u, 8u));
  std::vector<std::future<void>> device_runs;
  for (size_t w = 1; w < workers; ++w) device_runs.push_back(std::async(std::launch::async, prepare_some));
  prepare_some();
  for (auto& f : device_runs) f.get();
  for (auto& f : batch_runs) f.get();
  // Host kernels prepare after their batch (which compiled what they load).
  for (Thunk& t : prog.thunks) {
    if (t.plan) continue;
    t.plan = t.kernel->prepare(*t.node, prepare_info(prog, t, input_shapes, input_index, view_output));
  }
  if (runtime::Observer* o = runtime::observer())
    o->compile({"prepare kernels", std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(),
                false, std::to_string(prog.thunks.size()) + " thunks"});
}

}  // namespace theon::compile
