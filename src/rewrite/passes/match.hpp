// Pattern helpers the rewrite passes share: what a node computes, constants behind views,
// and the rule that lets an epilogue pass fold a relu in a training graph.
#pragma once
#include "graph/function_graph.hpp"
#include "ops/scalar/scalar_op_id.hpp"
#include "rewrite/local_rewrite.hpp"

#include <functional>
#include <vector>

namespace theon::ops {
class Elemwise;
}

namespace theon::rewrite {

/// `candidate` when it has exactly `out`'s type, else null (a rule that would change the
/// output's static type does not fire).
inline graph::VarPtr same_type(const graph::VarPtr& candidate, const graph::Variable& out) {
  return candidate && candidate->type == out.type ? candidate : nullptr;
}

/// The Elemwise op of `node` when it computes `id`, else null.
const ops::Elemwise* elemwise_is(const graph::Apply& node, ops::ScalarOpId id);

/// The node computing `v` when it is an Elemwise computing `id`, else null.
const graph::Apply* elemwise_owner(const graph::VarPtr& v, ops::ScalarOpId id);

/// The constant behind `v`, looking through DimShuffle and Cast nodes (which keep 0s and 1s).
const Array* constant_through(const graph::VarPtr& v);

/// Used by exactly one node of the graph (and not a graph output)?
bool single_use(const graph::FunctionGraph& fg, const graph::VarPtr& v);

/// A client that reads only the shape of its input `idx`: SumTo's `like`, Shape.
bool shape_only(const graph::Apply& client, int idx);

/// Used by `user` only (and not a graph output), apart from clients that read its shape?
/// Those are returned in `shape_clients` (when given; else they count as other uses): a fold
/// may rebuild them on the fused value when that has the same run-time shape. Gradient graphs
/// have them: an add's gradient is sum_to(g, like=operand).
bool single_use(const graph::FunctionGraph& fg, const graph::VarPtr& v, const graph::Apply& user,
                std::vector<graph::Apply*>* shape_clients);

/// (old, new) pairs: `node`'s output 0 becomes `fused`, and each shape client of `old` is
/// rebuilt (same op, same output types) reading `fused` instead; a shape client reading
/// another one (sum_to(sum_to(g, z), z)) reads that one's rebuilt node. Empty when `fused`'s
/// type is not exactly that of `node`'s output 0. The caller has made sure that `fused` has
/// `old`'s run-time shape.
Replacements with_shape_clients(graph::Apply& node, const graph::VarPtr& old, const graph::VarPtr& fused,
                                const std::vector<graph::Apply*>& shape_clients);

/// Is `v` a non-empty constant (through DimShuffle and Cast) whose elements all equal `value`?
bool is_constant_all(const graph::VarPtr& v, double value);

/// gt(z, 0) -> gt(relu(z), 0) when relu(z) is in the graph and `foldable(z)`: exactly equal
/// (relu(z) > 0 iff z > 0, NaN false in both). relu's gradient mask then reads relu's output,
/// so z's only value client is the relu and an epilogue pass can fold it (conv_epilogue,
/// gemm_epilogue). Null when it does not apply.
graph::VarPtr relu_mask_from_output(graph::FunctionGraph& fg, graph::Apply& node,
                                    const std::function<bool(const graph::VarPtr& z)>& foldable);

/// categorical_crossentropy(softmax(x, axis=1), labels), x a float matrix and integer labels
/// -> SoftmaxCrossentropy(x, labels) (ops/nnet_fused.hpp): the (old, new) pairs for the
/// crossentropy and its softmax (whose other uses then read the fused node's softmax), or none
/// when the pattern or the types do not match exactly. A row of stabilize (its loss is finite
/// where the label's probability underflows) and of specialize.
Replacements softmax_crossentropy_fusion(graph::FunctionGraph& fg, graph::Apply& xent);

}  // namespace theon::rewrite
