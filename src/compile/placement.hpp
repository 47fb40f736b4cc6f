// Placement: which device runs each node of an optimized graph, and why. A lowering step
// every mode runs (DESIGN.md). With device=cpu everything runs on the CPU. With
// device=cudaN each node runs on the GPU when the CUDA backend supports it; otherwise it
// runs on the CPU and the reason is recorded (function() then warns or raises, as
// on_fallback says: never silently). Shape arithmetic (the Shape op and integer scalars
// or short vectors computed only from shapes and constants) stays on the host, where the
// ops that need those values read them.
#pragma once
#include "backends/backend.hpp"
#include "graph/function_graph.hpp"

#include <theon/device.hpp>

#include <string>
#include <vector>

namespace theon::compile {

/// True for ops that only read metadata and produce host values (Shape).
bool keeps_on_host(const graph::Apply& node);

struct NodePlacement {
  Device device;
  std::string reason;     // for explain(): "device=cuda0", "shape arithmetic stays on the host", ...
  bool fallback = false;  // asked for a GPU but runs on the CPU because it cannot
};

/// Places every node of `fgraph` (in its toposort order). `cuda` is the CUDA backend
/// when `target` is a CUDA device and the backend is usable, else nullptr.
std::vector<NodePlacement> place(const graph::FunctionGraph& fgraph, Device target, const backends::Backend* cuda);

}  // namespace theon::compile
