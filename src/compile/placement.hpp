// Placement, the first lowering steps after optimization (DESIGN.md "Execution model",
// "Multi-GPU contexts"):
//   resolve_target: the default context (the device flag's, named as the device: "cpu",
//     "cuda0"), the contexts map (the `contexts` flag: user names such as "dev0"), and the
//     backend of each GPU (or everything on the CPU, with the reason, when function() already
//     applied on_fallback);
//   place: every node gets a context, by Theano's infer_context_name rule (graph/contexts.hpp,
//     shared with the fusion pass):
//       - a node runs on the context pinned on its outputs (TensorType::context: shared(...,
//         target=), a Transfer's output, a context scope), if any;
//       - else on the context of its first input that has one (pinned, or placed by this rule
//         on a named context); inputs without one (constants, the caller's inputs, unpinned
//         shared variables, values of the default context) follow;
//       - else the default context.
//     A node on a GPU context runs on that GPU when its backend supports it; otherwise on the
//     CPU with the backend's reason (function() then warns or raises, as on_fallback says:
//     never silently). Shape arithmetic (the Shape op and integer scalars or short vectors
//     computed only from shapes and constants) of a GPU context stays on the host, where the
//     ops that need those values read them. A node that runs on the CPU although its context
//     is a GPU's runs in the CPU's own context ("cpu"); its readers still follow its context;
//   place_leaves: where each value from outside the graph lives when a call starts.
#pragma once
#include "backends/backend.hpp"
#include "compile/program.hpp"
#include "graph/function_graph.hpp"
#include "runtime/contexts.hpp"

#include <theon/device.hpp>

#include <string>
#include <unordered_map>
#include <vector>

namespace theon::compile {

/// Where a function is lowered for.
struct LoweringTarget {
  Device device;                           // the default context's device (cpu after a fallback)
  const backends::Backend* gpu = nullptr;  // the backend of `device` when it is a GPU
  std::string fallback_reason;             // why GPUs asked for are not used ("" when they are)
  bool plan_only = false;                  // LowerOptions::plan_only
  runtime::ContextMap contexts;            // LowerOptions::contexts
  rewrite::Target passes() const {
    rewrite::Target t;
    t.device = device;
    return t;
  }
  /// The default context: named as its device ("cpu", "cuda0").
  runtime::Context default_context() const { return {device.str(), device}; }
  /// The context of `name` (a user name of the map, or a device's name). After a fallback a
  /// GPU context runs on the CPU: a user name keeps its name on the cpu device, a GPU's own
  /// context becomes the CPU's. A ValueError listing the known names for an unknown one.
  runtime::Context resolve(const std::string& name) const;
  /// The backend that runs nodes of a GPU context on `device` (cached per device; a
  /// DeviceError when its library cannot load).
  const backends::Backend* gpu_backend(Device device) const;

 private:
  mutable std::vector<std::pair<Device, const backends::Backend*>> gpu_backends_;
};

/// The target of `options` (DeviceError when a GPU is asked for and its backend cannot load).
/// `device`: the device flag, parsed once by the caller (function()); parsed from
/// options.device by the one-argument form.
LoweringTarget resolve_target(const LowerOptions& options, Device device);
LoweringTarget resolve_target(const LowerOptions& options);

/// True for ops that only read metadata and produce host values (Shape).
bool keeps_on_host(const graph::Apply& node);

struct NodePlacement {
  Device device;
  const backends::Backend* backend = nullptr;  // whose kernel runs the node
  std::string reason;     // for explain(): "device=cuda0", "shape arithmetic stays on the host", ...
  bool fallback = false;  // asked for a GPU but runs on the CPU because it cannot
  /// The context the rule gives it (what its readers follow).
  runtime::Context context;
  /// The context it runs in: `context`, or the CPU's own ("cpu") when it runs on the CPU
  /// although `context` is a GPU's (a fallback, shape arithmetic).
  runtime::Context runs_in;
};
using Placement = std::unordered_map<const graph::Apply*, NodePlacement>;

/// Places every node of `fgraph` (Transfer nodes on their destination).
Placement place(const graph::FunctionGraph& fgraph, const LoweringTarget& target);

/// Where each value from outside the graph lives when a call starts.
using Homes = std::unordered_map<const graph::Variable*, Device>;

/// Graph inputs live on the devices of the caller's arrays (`input_devices`, host when
/// missing). A constant or shared variable lives on the device of its first reader that is
/// not a metadata reader (host when that reader runs on the host or reads it there); a
/// shared variable read by no kernel stays where its value is. Moving a shared variable to
/// its home is an explicit later step (FunctionImpl), not a side effect of lowering.
/// Values from outside the graph belong to no context: they are ready when the call starts
/// and read-only during it, so any context on their device reads them without ordering.
Homes place_leaves(const graph::FunctionGraph& fgraph, const Placement& placement,
                   const std::vector<Device>& input_devices);

/// Where `v` lives: its home when it comes from outside the graph, else its producer's device.
Device location(const graph::Variable& v, const Placement& placement, const Homes& homes);

/// The context `v` is written in: its producer's (runs_in); null for values from outside
/// the graph (they belong to none, see place_leaves).
const runtime::Context* written_in(const graph::Variable& v, const Placement& placement);

}  // namespace theon::compile
