#include "compile/transfers.hpp"

#include "backends/registry.hpp"
#include "ops/transfer.hpp"

#include <map>

namespace theon::compile {

Device read_location(const graph::Apply& node, int input, const NodePlacement& where, Device lives) {
  if (keeps_on_host(node)) return lives;  // shapes are host metadata: x.shape copies nothing
  if (where.device.is_cuda() && where.backend->host_input(node, input)) return Device::cpu();
  return where.device;
}

int insert_transfers(graph::FunctionGraph& fgraph, Placement& placement, const Homes& homes) {
  std::vector<graph::FunctionGraph::InputChange> changes;
  std::map<std::pair<const graph::Variable*, std::string>, graph::VarPtr> copies;  // (value, device) -> its copy
  for (auto& node : fgraph.nodes()) {
    if (graph::op_if<ops::Transfer>(node->op())) continue;  // an explicit transfer reads where the value is
    const NodePlacement& where = placement.at(node.get());
    for (int i = 0; i < static_cast<int>(node->inputs().size()); ++i) {
      const graph::VarPtr& in = node->input(i);
      const Device lives = location(*in, placement, homes);
      const Device wanted = read_location(*node, i, where, lives);
      if (wanted == lives) continue;
      graph::VarPtr& copy = copies[{in.get(), wanted.str()}];
      if (!copy) {
        copy = ops::transfer(in, wanted);
        // The CPU backend's Transfer kernel copies between any two devices (through DeviceOps).
        placement[copy->owner] = {wanted, backends::backend_for(Device::cpu()),
                                  "input " + in->label() + " of " + node->op().display() + " lives on " + lives.str(),
                                  false};
      }
      changes.push_back({node.get(), i, copy});
    }
  }
  if (!changes.empty()) fgraph.change_inputs(changes, "insert_transfers");
  return static_cast<int>(copies.size());
}

int remove_redundant_transfers(graph::FunctionGraph& fgraph, const Placement& placement, const Homes& homes) {
  // The value a Transfer's reader can read instead: the source itself when it already lives
  // on the destination (directly, or through a chain of Transfers), else the chain's start.
  auto origin = [&](const graph::VarPtr& copy, Device to) -> graph::VarPtr {
    graph::VarPtr source = copy->owner->input(0);
    while (source->owner && graph::op_if<ops::Transfer>(source->owner->op())) {
      if (location(*source, placement, homes) == to) return source;
      source = source->owner->input(0);
    }
    return location(*source, placement, homes) == to ? source : nullptr;
  };
  std::vector<graph::FunctionGraph::InputChange> changes;
  for (auto& node : fgraph.nodes())
    for (int i = 0; i < static_cast<int>(node->inputs().size()); ++i) {
      const graph::VarPtr& in = node->input(i);
      if (!in->owner || !graph::op_if<ops::Transfer>(in->owner->op())) continue;
      if (graph::VarPtr direct = origin(in, location(*in, placement, homes)))
        changes.push_back({node.get(), i, direct});
    }
  if (!changes.empty()) fgraph.change_inputs(changes, "remove_redundant_transfers");
  return static_cast<int>(changes.size());
}

}  // namespace theon::compile
