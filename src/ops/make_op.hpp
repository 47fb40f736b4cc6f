// make_op: an op rebuilt from its kind and props, the basis of serialization. It covers the
// kinds whose props describe the op fully; for the others it throws NotImplementedError
// saying what the props lack (rebuildable_from_props tells which without throwing).
#pragma once
#include "graph/op.hpp"

#include <memory>
#include <string>

namespace theon::ops {

/// The op of `kind` with `props` (as Op::props() prints them). Throws ValueError for props the
/// kind does not take or cannot read, NotImplementedError for a kind not rebuildable from props.
std::shared_ptr<const graph::Op> make_op(graph::OpKind kind, const graph::OpProps& props);

/// Empty when make_op rebuilds `kind`; else why it cannot (what the props lack).
std::string not_rebuildable_reason(graph::OpKind kind);

}  // namespace theon::ops
