// The rewrite pipeline: named, tagged passes run in order on a FunctionGraph. A mode is a
// tag query (fast_run runs passes tagged "fast_run", fast_compile those tagged
// "fast_compile", none runs none); optimizer_including / optimizer_excluding add or remove
// passes by name or tag, optimizer_requiring narrows them to those matching every name it
// lists (Theano's meaning). A name no pass or tag has warns once. The graph is verified after
// every pass that changed it.
#pragma once
#include "backends/backend.hpp"
#include "graph/function_graph.hpp"

#include <theon/device.hpp>

#include <functional>
#include <string>
#include <vector>

namespace theon::rewrite {

/// What the graph is optimized for. Passes that depend on what the backends offer read it
/// (fusing a reduction into its elementwise producer only where a backend runs the result);
/// lowering passes it, so nothing reads a thread-local or config() during a pass.
struct Target {
  Device device = Device::cpu();
  /// The kernel options frozen by function() (constant_fold runs kernels with them).
  backends::KernelOptions kernel_options;
};

struct Pass {
  std::string name;
  std::vector<std::string> tags;
  double position = 0;  // passes run in increasing position
  /// Returns true when it changed the graph.
  std::function<bool(graph::FunctionGraph&, const Target&)> run;
  /// A lowering pass kernels rely on (float16): it runs in every mode, "none" included, and
  /// optimizer_excluding cannot remove it.
  bool required = false;
};

/// What ran: one entry per pass, for explain() and the profiler.
struct PassRecord {
  std::string name;
  bool changed = false;
  double seconds = 0;
};

/// The registered passes (the optimizer issue adds merge, canonicalize, fusion, ...).
std::vector<Pass>& registered_passes();
void register_pass(Pass pass);

/// Runs the passes `mode` selects, adjusted by including/excluding (':'-separated names or
/// tags) and narrowed by requiring (each selected pass must match every name), for `target`.
/// Required passes run whatever the query.
std::vector<PassRecord> optimize(graph::FunctionGraph& fgraph, const std::string& mode,
                                 const std::string& including = "", const std::string& excluding = "",
                                 const Target& target = {}, const std::string& requiring = "");

}  // namespace theon::rewrite
