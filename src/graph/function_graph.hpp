// FunctionGraph: a private clone of the user's graph between a function's inputs and
// outputs. Rewrites and placement change only this clone, never the user's variables.
#pragma once
#include "graph/node.hpp"

#include <unordered_map>
#include <vector>

namespace theon::graph {

/// Nodes between `inputs` and `outputs` in a topological order (inputs first).
std::vector<ApplyPtr> toposort(const std::vector<VarPtr>& outputs);
/// Every leaf (input, constant, shared) reachable from `outputs`.
std::vector<VarPtr> graph_leaves(const std::vector<VarPtr>& outputs);

class FunctionGraph {
 public:
  /// Clones the graph from `inputs` to `outputs`, substituting `givens` (old -> new) first.
  /// Leaves that are neither inputs nor constants nor shared variables are reported as
  /// missing inputs (TypeError naming them). Extra outputs (e.g. update values) may follow.
  FunctionGraph(const std::vector<VarPtr>& inputs, const std::vector<VarPtr>& outputs,
                const std::vector<std::pair<VarPtr, VarPtr>>& givens = {});

  const std::vector<VarPtr>& inputs() const { return inputs_; }
  const std::vector<VarPtr>& outputs() const { return outputs_; }
  /// Shared variables the graph reads, in first-use order.
  std::vector<VarPtr> shared_inputs() const;
  /// Nodes in topological order (recomputed after replace).
  const std::vector<ApplyPtr>& nodes() const { return nodes_; }
  /// Users of each variable: (node, input position); outputs of the graph are not listed.
  std::vector<std::pair<Apply*, int>> clients(const Variable* v) const;

  /// Makes every user of `old_var` (and the graph outputs) use `new_var` instead. The type
  /// must be identical: a rewrite that changes a type is a bug (InternalError).
  void replace(const VarPtr& old_var, const VarPtr& new_var, const std::string& reason = "");
  /// Several replacements with one re-sort at the end (passes that change many nodes).
  void replace_all(const std::vector<std::pair<VarPtr, VarPtr>>& pairs, const std::string& reason = "");

  /// Input `input` of `node` (a node of this graph) becomes `value` (same type), for each
  /// change; one re-sort at the end. For lowering steps that route one reader's input (a
  /// Transfer for a reader on another device) while other readers keep the original.
  struct InputChange {
    Apply* node;
    int input;
    VarPtr value;
  };
  void change_inputs(const std::vector<InputChange>& changes, const std::string& reason = "");

  /// Checks invariants (acyclic, inputs reachable, types unchanged); throws InternalError.
  void verify() const;

 private:
  void rebuild();
  std::vector<VarPtr> inputs_;
  std::vector<VarPtr> outputs_;
  std::vector<ApplyPtr> nodes_;
  std::unordered_map<const Variable*, std::vector<std::pair<Apply*, int>>> clients_;
};

}  // namespace theon::graph
