// The standard rewrite passes. Each is a small function `bool pass(FunctionGraph&)` that
// returns whether it changed the graph; register_standard_passes() adds them to the
// pipeline with their positions and tags (modes are tag queries, see pipeline.hpp).
#pragma once
#include "graph/function_graph.hpp"

namespace theon::rewrite {

/// Common-subexpression elimination: nodes with equal ops (equals()) and the same inputs
/// become one; equal constants (dtype, shape, bytes) become one. Impure ops never merge.
bool merge_pass(graph::FunctionGraph& fgraph);

/// Evaluates pure nodes whose inputs are all constants (up to a size limit) and replaces
/// them by constants. Shared variables are not constants.
bool constant_fold_pass(graph::FunctionGraph& fgraph);

/// Registers the passes above (idempotent). Called by the pipeline on first use.
void register_standard_passes();

}  // namespace theon::rewrite
