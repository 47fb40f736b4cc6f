// Walking and cloning symbolic graphs (Theano's theano.gof.graph and theano.clone).
//
//   std::optional<ApplyInfo> a = owner(y);        // y = x * 2: op "Elemwise{mul}", inputs {x, 2}
//   std::vector<Var> c = clone({y}, {{x, z}});     // z * 2, a new graph; y is unchanged
#pragma once
#include <theon/array.hpp>
#include <theon/var.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace theon {

/// What a graph variable is: a symbolic input, an op's result, a constant or a shared variable.
enum class VarRole { Input, Output, Constant, Shared };
VarRole role(const Var& v);

/// The node (Theano's Apply) that computes an op result.
struct ApplyInfo {
  std::string op;       // as printed: "Elemwise{add}", "Sum{axes=(0,), keepdims=False}"
  std::string op_kind;  // the op's kind (a row of theon/ops.def): "Elemwise", "Sum"
  /// The op's parameters: two nodes compute the same function of their inputs when their
  /// kinds and props are equal (what the merge pass uses).
  std::vector<std::pair<std::string, std::string>> op_props;
  bool op_pure = true;  // false for random draws and other ops never merged
  std::vector<Var> inputs;
  std::vector<Var> outputs;
  int index = 0;        // which output of the node the variable asked about is
  uintptr_t id = 0;     // the node's identity (equal for every output of one node)
};

/// The node computing `v`, or nullopt for an input, a constant or a shared variable.
std::optional<ApplyInfo> owner(const Var& v);

/// The value of a constant (a copy; ValueError for any other variable).
Array constant_value(const Var& v);

/// A copy of the graphs from the leaves to `outputs`, with the variables of `replace`
/// (old, new) replaced by their new ones (used as they are; the graph above a replaced
/// variable is not walked). Every node between the leaves and the outputs is new; the
/// outputs keep their names. share_inputs: the leaves (symbolic inputs, shared variables,
/// constants) are the originals; otherwise symbolic inputs are new input variables of the
/// same type and name, and shared variables new graph variables over the same value.
/// strict: a replacement must have the old variable's dtype, rank and static sizes (it may
/// know a size the old one did not), and results keep the types they had. strict=false (as
/// Theano's): only the rank must match, and every node above a replacement of another type
/// is re-typed: arithmetic, reductions, dot, dimshuffle and softmax as their builders type
/// them (x * 2 of a float64 replacement for a float32 x is float64), other ops with the
/// dtype they follow and static sizes left unknown (checked when the function runs); an op
/// that cannot be re-typed for another dtype throws NotImplementedError naming it.
/// TypeError names both variables.
std::vector<Var> clone(const std::vector<Var>& outputs, const std::vector<std::pair<Var, Var>>& replace = {},
                       bool strict = true, bool share_inputs = true);

}  // namespace theon
