// The rewrite pipeline: named, tagged passes run in order on a FunctionGraph. A mode is a
// tag query (fast_run runs passes tagged "fast_run", fast_compile those tagged
// "fast_compile", none runs none); optimizer_including / optimizer_excluding add or remove
// passes by name or tag. The graph is verified after every pass that changed it.
#pragma once
#include "graph/function_graph.hpp"

#include <functional>
#include <string>
#include <vector>

namespace theon::rewrite {

struct Pass {
  std::string name;
  std::vector<std::string> tags;
  double position = 0;  // passes run in increasing position
  /// Returns true when it changed the graph.
  std::function<bool(graph::FunctionGraph&)> run;
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

/// The device the graph being optimized is compiled for ("cpu", "cuda0", ...): lowering
/// sets it around optimize() (passes that depend on backends, like fusing reductions, read
/// it); outside such a scope it is config().device.
std::string target_device();
class TargetDeviceScope {
 public:
  explicit TargetDeviceScope(std::string device);
  ~TargetDeviceScope();
  TargetDeviceScope(const TargetDeviceScope&) = delete;
  TargetDeviceScope& operator=(const TargetDeviceScope&) = delete;

 private:
  std::string saved_;
  bool had_;
};

/// Runs the passes `mode` selects, adjusted by including/excluding (':'-separated names or tags).
std::vector<PassRecord> optimize(graph::FunctionGraph& fgraph, const std::string& mode,
                                 const std::string& including = "", const std::string& excluding = "");

}  // namespace theon::rewrite
