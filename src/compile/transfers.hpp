// Lowering steps that route values between devices, as graph rewrites: Transfer nodes are
// ordinary nodes of the FunctionGraph, so debugprint, explain() and the profiler see every
// byte that crosses a bus.
//   insert_transfers: wherever a node reads a value that lives on another device, a Transfer
//     to the device it reads on (one per value and device, shared by its readers);
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
/// moves. Returns how many it inserted.
int insert_transfers(graph::FunctionGraph& fgraph, Placement& placement, const Homes& homes);

/// Bypasses redundant Transfers. Returns how many readers it rerouted.
int remove_redundant_transfers(graph::FunctionGraph& fgraph, const Placement& placement, const Homes& homes);

}  // namespace theon::compile
