// Theano's infer_context_name, on names (the graph layer holds context names only; compile
// resolves them to devices): a node runs on the context pinned on its outputs
// (TensorType::context), if any; else on the context of its first input that has one (pinned,
// or its producer's); inputs without one (constants, graph inputs, unpinned shared variables)
// follow; else the default context (""). Placement (compile/placement.hpp) places by it, and
// the fusion pass fuses only nodes of one context.
#pragma once
#include "graph/function_graph.hpp"

#include <string>
#include <unordered_map>

namespace theon::graph {

struct NodeContext {
  std::string name;  // "" : the default context
  /// What decided it: -1 a pinned output, -2 none (the default), else the input's position.
  int decided_by = -2;
};

/// The context of `node` given those of the nodes before it (`placed`).
NodeContext infer_context(const Apply& node, const std::unordered_map<const Apply*, NodeContext>& placed);

/// Every node's context, in `fgraph`'s order.
std::unordered_map<const Apply*, NodeContext> infer_contexts(const FunctionGraph& fgraph);

}  // namespace theon::graph
