// Graphs as plain records, for saving and loading them (Python's pickle: theon/_pickle.py).
// A node is recorded as its op's kind and props and rebuilt only by make_op(kind, props),
// which validates them: nothing a record holds reaches generated source, compiler flags or
// paths. docs/guide/python.md ("Saving and loading") describes the format's use.
//
//   std::optional<NodeRecord> r = node_record(y);          // y = x * 2: Elemwise{mul}, inputs {x, 2}
//   std::vector<Var> outs = rebuild_node(r->kind, r->props, {x2, two}, output_types_of(*r));
#pragma once
#include <theon/array.hpp>
#include <theon/var.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace theon {

/// A node as a record: what rebuild_node needs to make it again over the same inputs.
struct NodeRecord {
  std::string kind;  // the op's kind (a row of theon/ops.def): "Elemwise", "Sum"
  /// The props make_op rebuilds the op from (the printed props and what they leave out).
  std::vector<std::pair<std::string, std::string>> props;
  std::vector<Var> inputs;
  std::vector<Var> outputs;
  int index = 0;  // which output of the node the variable asked about is
};

/// The type and name of one output of a node to rebuild.
struct OutputRecord {
  std::string dtype;           // "float32"
  std::vector<int64_t> shape;  // static sizes, -1 unknown
  std::string name;
  std::string context;         // the context it is pinned to ("" for none), as the saver named it
};

/// The node computing `v` as a record, or nullopt for a leaf (an input, a constant, a shared
/// variable). NotImplementedError naming `v` and the op when make_op cannot rebuild the op
/// (checked here, so saving fails rather than loading).
std::optional<NodeRecord> node_record(const Var& v);

/// The outputs of a new node: the op make_op(kind, props) makes, over `inputs`, with outputs
/// of the types given (pinned to their contexts: the caller checks that those exist here). ValueError naming the kind for an unknown kind, props the kind does
/// not take, or output types that are no types or disagree with the op.
std::vector<Var> rebuild_node(const std::string& kind, const std::vector<std::pair<std::string, std::string>>& props,
                              const std::vector<Var>& inputs, const std::vector<OutputRecord>& outputs);

/// True for a weak constant (a Python number in an expression: NEP 50 promotion).
bool is_weak_constant(const Var& v);
/// A constant holding `value` (copied), weak or strong.
Var make_constant(const Array& value, bool weak, const std::string& name = "");

}  // namespace theon
