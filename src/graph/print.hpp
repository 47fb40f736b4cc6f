// Text form of graphs: debugprint (Theano's indented tree with [id X] back-references).
#pragma once
#include "graph/node.hpp"

#include <string>
#include <vector>

namespace theon::graph {

std::string debugprint(const std::vector<VarPtr>& outputs);

}  // namespace theon::graph
