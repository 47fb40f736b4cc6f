// Local rewrites as data: a rule is a row {name, the op kinds it triggers on, a function of
// (graph, node) that returns the replacements or nothing}; a LocalRewriter holds a table of
// rules and applies them over a FunctionGraph in sweeps until a sweep changes nothing or
// the sweep cap is reached. The sweep/live-set/refresh bookkeeping lives here only.
//
// One sweep visits a snapshot of the graph's nodes in topological order. A node removed by
// an earlier replacement of the same sweep is skipped; nodes a replacement creates are seen
// in the next sweep. On each node the rules keyed on its kind are tried in table order and
// the first that returns replacements wins (one replace_all, reason "<pass>: <rule>").
// Impure nodes (random, transfer, print) are never offered to rules. A rule that throws a
// theon::Error (a builder refusing the replacement) does not fire. Every replacement must
// keep the exact static type (FunctionGraph::replace_all raises InternalError otherwise).
//
// Adding a rewrite: write `Replacements fn(FunctionGraph&, Apply&)` (or a VarPtr function
// for output 0 wrapped by on_output0) and add one row to the pass's table.
#pragma once
#include "graph/function_graph.hpp"
#include "graph/op_kind.hpp"

#include <array>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace theon::rewrite {

/// (old, new) pairs a rule asks for; empty: the rule does not fire.
using Replacements = std::vector<std::pair<graph::VarPtr, graph::VarPtr>>;
using RuleFn = std::function<Replacements(graph::FunctionGraph&, graph::Apply&)>;

struct LocalRule {
  std::string name;
  std::vector<graph::OpKind> kinds;  // the rule is tried only on nodes of these kinds
  RuleFn fn;
};

/// Adapts a rule that replaces the output of a single-output node (null: does not fire);
/// nodes with several outputs are left alone.
RuleFn on_output0(std::function<graph::VarPtr(graph::FunctionGraph&, graph::Apply&)> fn);

/// What one run did.
struct LocalRewriteResult {
  bool changed = false;
  int sweeps = 0;          // sweeps run (the last one changed nothing when converged)
  bool converged = false;  // false: the cap stopped it while rules were still firing
  std::vector<std::string> fired;  // rule names, in the order they fired
};

class LocalRewriter {
 public:
  /// `pass` names the pass in replacement reasons; at most `max_sweeps` sweeps run (1: a
  /// single pass over the graph, no fixed point). Reaching the cap is not an error: the
  /// graph is valid after every replacement, the result says converged=false.
  LocalRewriter(std::string pass, std::vector<LocalRule> rules, int max_sweeps);

  LocalRewriteResult run(graph::FunctionGraph& fgraph) const;

  const std::string& pass() const { return pass_; }
  const std::vector<LocalRule>& rules() const { return rules_; }
  int max_sweeps() const { return max_sweeps_; }

 private:
  std::string pass_;
  std::vector<LocalRule> rules_;
  int max_sweeps_;
  std::array<std::vector<int>, graph::op_kinds.size()> by_kind_;  // kind -> rule indices
};

}  // namespace theon::rewrite
