// The user's view (theon::ApplyInfo) of a graph node: for owner() and Function's monitor.
#pragma once
#include <theon/graph.hpp>

#include "graph/node.hpp"

namespace theon::detail {

/// `node` as ApplyInfo, asked about through its output `index`.
ApplyInfo apply_info(const graph::Apply& node, int index);

}  // namespace theon::detail
