// Lowering steps that route values between contexts, as graph rewrites: Transfer nodes are
// ordinary nodes of the FunctionGraph, so debugprint, explain() and the profiler see every
// byte that crosses a bus and every handover between contexts.
//   insert_transfers: wherever a node reads a value that lives on another device, a Transfer
//     to the device it reads on; wherever it reads, on the same device, a value written in
//     another context, a Transfer to its own context (a handover: no copy, only ordering;
//     see program.hpp). One per value and context, shared by its readers. Values from outside
//     the graph belong to no context (placement.hpp): they cross only between devices;
//   remove_redundant_transfers: a Transfer to where its value already is, and round trips
//     (x to d and back), are bypassed.
#pragma once
#include "compile/placement.hpp"

namespace theon::compile {

/// Where `node` reads input `input`: on its own device, except inputs its kernel reads on
/// the host (shape vectors, index scalars), and metadata readers (Shape), which take a value
/// wherever it lives (`lives`).
Device read_location(const graph::Apply& node, int input, const NodePlacement& where, Device lives);

/// Inserts the Transfers; each is placed on its destination with a reason naming what it
/// moves and why. Returns how many it inserted.
int insert_transfers(graph::FunctionGraph& fgraph, Placement& placement, const Homes& homes);

/// Bypasses redundant Transfers. Returns how many readers it rerouted.
int remove_redundant_transfers(graph::FunctionGraph& fgraph, const Placement& placement, const Homes& homes);

}  // namespace theon::compile
