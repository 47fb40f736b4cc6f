// Placement, the first lowering steps after optimization (DESIGN.md "Execution model"):
//   resolve_target: the device asked for and its backend (or the CPU, with the reason, when
//     function() already applied on_fallback);
//   place: every node gets a device, the backend whose kernel runs it, and a reason. With a
//     CPU target everything runs on the CPU. With cudaN a node runs on the GPU when its
//     backend supports it; otherwise on the CPU with the backend's reason (function() then
//     warns or raises, as on_fallback says: never silently). Shape arithmetic (the Shape op
//     and integer scalars or short vectors computed only from shapes and constants) stays
//     on the host, where the ops that need those values read them;
//   place_leaves: where each value from outside the graph lives when a call starts.
#pragma once
#include "backends/backend.hpp"
#include "compile/program.hpp"
#include "graph/function_graph.hpp"

#include <theon/device.hpp>

#include <string>
#include <unordered_map>
#include <vector>

namespace theon::compile {

/// Where a function is lowered for.
struct LoweringTarget {
  Device device;                           // the device asked for, or cpu after a fallback
  const backends::Backend* gpu = nullptr;  // the backend of `device` when it is a GPU
  std::string fallback_reason;             // why an asked-for GPU is not used ("" when it is)
  bool plan_only = false;                  // LowerOptions::plan_only
  rewrite::Target passes() const { return {device}; }
};

/// The target of `options` (DeviceError when a GPU is asked for and its backend cannot load).
LoweringTarget resolve_target(const LowerOptions& options);

/// True for ops that only read metadata and produce host values (Shape).
bool keeps_on_host(const graph::Apply& node);

struct NodePlacement {
  Device device;
  const backends::Backend* backend = nullptr;  // whose kernel runs the node
  std::string reason;     // for explain(): "device=cuda0", "shape arithmetic stays on the host", ...
  bool fallback = false;  // asked for a GPU but runs on the CPU because it cannot
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
Homes place_leaves(const graph::FunctionGraph& fgraph, const Placement& placement,
                   const std::vector<Device>& input_devices);

/// Where `v` lives: its home when it comes from outside the graph, else its producer's device.
Device location(const graph::Variable& v, const Placement& placement, const Homes& homes);

}  // namespace theon::compile
