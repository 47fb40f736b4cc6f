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

namespace {

// "dev0 (cuda0)", or the device alone for its own context ("cuda0").
std::string context_text(const runtime::Context& c) {
  return c.name == c.device.str() ? c.name : c.name + " (" + c.device.str() + ")";
}

// Whether `v` can be read in `context` as it is: written there, or from outside the graph
// and on that context's device.
bool already_in(const graph::Variable& v, const runtime::Context& context, const Placement& placement,
                const Homes& homes) {
  if (const runtime::Context* w = written_in(v, placement)) return w->name == context.name;
  return location(v, placement, homes) == context.device;
}

}  // namespace

int insert_transfers(graph::FunctionGraph& fgraph, Placement& placement, const Homes& homes) {
  std::vector<graph::FunctionGraph::InputChange> changes;
  std::map<std::pair<const graph::Variable*, std::string>, graph::VarPtr> copies;  // (value, context) -> its copy
  for (auto& node : fgraph.nodes()) {
    if (graph::op_if<ops::Transfer>(node->op())) continue;  // an explicit transfer reads where the value is
    const NodePlacement& where = placement.at(node.get());
    for (int i = 0; i < static_cast<int>(node->inputs().size()); ++i) {
      const graph::VarPtr& in = node->input(i);
      const Device lives = location(*in, placement, homes);
      const Device wanted = read_location(*node, i, where, lives);
      const runtime::Context* from = written_in(*in, placement);
      runtime::Context to;
      std::string why;
      // Made only for an input that crosses (a fused node's display is long to make).
      auto what = [&] { return "input " + in->label() + " of " + node->op().display(); };
      if (wanted != lives) {
        to = wanted == where.device ? where.runs_in : runtime::Context{wanted.str(), wanted};
        why = what() + " lives on " + (from ? context_text(*from) : lives.str());
      } else if (from && wanted == where.device && from->name != where.runs_in.name && !keeps_on_host(*node)) {
        to = where.runs_in;
        why = "handover: " + what() + " is written in " + from->name + ", read in " + where.runs_in.name +
              " (one device: no copy, ordered)";
      } else {
        continue;
      }
      graph::VarPtr& copy = copies[{in.get(), to.name}];
      if (!copy) {
        copy = ops::transfer(in, to.name);
        // The CPU backend's Transfer kernel copies between any two devices (through DeviceOps).
        placement[copy->owner] = {to.device, backends::backend_for(Device::cpu()), why, false, to, to};
      }
      changes.push_back({node.get(), i, copy});
    }
  }
  if (!changes.empty()) fgraph.change_inputs(changes, "insert_transfers");
  return static_cast<int>(copies.size());
}

int remove_redundant_transfers(graph::FunctionGraph& fgraph, const Placement& placement, const Homes& homes) {
  // The value a Transfer's reader can read instead: the source itself when it is already
  // where the Transfer moves it (directly, or through a chain of Transfers), else the chain's
  // start.
  auto origin = [&](const graph::VarPtr& copy) -> graph::VarPtr {
    const runtime::Context& to = placement.at(copy->owner).runs_in;
    graph::VarPtr source = copy->owner->input(0);
    while (source->owner && graph::op_if<ops::Transfer>(source->owner->op())) {
      if (already_in(*source, to, placement, homes)) return source;
      source = source->owner->input(0);
    }
    return already_in(*source, to, placement, homes) ? source : nullptr;
  };
  std::vector<graph::FunctionGraph::InputChange> changes;
  for (auto& node : fgraph.nodes())
    for (int i = 0; i < static_cast<int>(node->inputs().size()); ++i) {
      const graph::VarPtr& in = node->input(i);
      if (!in->owner || !graph::op_if<ops::Transfer>(in->owner->op())) continue;
      if (graph::VarPtr direct = origin(in)) changes.push_back({node.get(), i, direct});
    }
  if (!changes.empty()) fgraph.change_inputs(changes, "remove_redundant_transfers");
  return static_cast<int>(changes.size());
}

}  // namespace theon::compile
