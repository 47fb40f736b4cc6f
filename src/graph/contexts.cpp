#include "graph/contexts.hpp"

namespace theon::graph {

NodeContext infer_context(const Apply& node, const std::unordered_map<const Apply*, NodeContext>& placed) {
  for (int o = 0; o < node.num_outputs(); ++o)
    if (const std::string& pin = node.output_raw(o)->type.context; !pin.empty()) return {pin, -1};
  for (int i = 0; i < static_cast<int>(node.inputs().size()); ++i) {
    const Variable& in = *node.input(i);
    if (!in.type.context.empty()) return {in.type.context, i};
    if (!in.owner) continue;
    auto it = placed.find(in.owner);
    if (it != placed.end() && !it->second.name.empty()) return {it->second.name, i};
  }
  return {};
}

std::unordered_map<const Apply*, NodeContext> infer_contexts(const FunctionGraph& fgraph) {
  std::unordered_map<const Apply*, NodeContext> placed;
  for (auto& node : fgraph.nodes()) placed.emplace(node.get(), infer_context(*node, placed));
  return placed;
}

}  // namespace theon::graph
