// The standard passes in one table: name, tags (modes are tag queries, see pipeline.hpp) and
// position (passes run in increasing position). Why each runs where it does is at the top of
// its file; in short: merge and constant_fold first (each value once, constants folded), then
// shape_of (shapes read from inputs, so expressions only measured are not computed), then
// the local rewrites (canonicalize, stabilize, specialize, conv_epilogue, gemm_epilogue) on plain nodes, then fusion (which hides
// Elemwise nodes inside Composites; float16, required in every mode, just before it: float16
// values computed in float32 between casts that fusion then fuses), then inplace on the final nodes, then merge again.
#include "rewrite/passes/passes.hpp"
#include "rewrite/pipeline.hpp"

#include <mutex>

namespace theon::rewrite {

namespace {

// A pass that does the same on every target.
std::function<bool(graph::FunctionGraph&, const Target&)> any_target(bool (*pass)(graph::FunctionGraph&)) {
  return [pass](graph::FunctionGraph& g, const Target&) { return pass(g); };
}

}  // namespace

void register_standard_passes() {
  static std::once_flag once;
  std::call_once(once, [] {
    const std::vector<Pass> standard = {
        // {name, tags, position, run}
        {"merge", {"fast_run", "fast_compile", "merge"}, 0, any_target(merge_pass)},
        {"constant_fold", {"fast_run", "fast_compile", "canonicalize"}, 1, [](graph::FunctionGraph& g, const Target& t) { return constant_fold_pass(g, t); }},
        {"shape_of", {"fast_run", "fast_compile", "shape_of"}, 5, any_target(shape_of_pass)},
        {"canonicalize", {"fast_run", "canonicalize"}, 10, any_target(canonicalize_pass)},
        {"stabilize", {"fast_run", "fast_compile", "stabilize"}, 20, any_target(stabilize_pass)},
        {"specialize", {"fast_run", "specialize"}, 40, any_target(specialize_pass)},
        {"conv_epilogue", {"fast_run", "conv_epilogue"}, 45, any_target(conv_epilogue_pass)},
        {"gemm_epilogue", {"fast_run", "specialize", "gemm_epilogue"}, 46, any_target(gemm_epilogue_pass)},
        {"float16", {"float16"}, 47, any_target(float16_pass), /*required=*/true},
        {"fusion", {"fast_run", "fusion"}, 50, [](graph::FunctionGraph& g, const Target& t) { return fusion_pass(g, t); }},
        {"inplace", {"fast_run", "inplace"}, 90, any_target(inplace_pass)},
        {"merge_again", {"fast_run", "fast_compile", "merge"}, 100, any_target(merge_pass)},
    };
    for (const Pass& p : standard) register_pass(p);
  });
}

}  // namespace theon::rewrite
