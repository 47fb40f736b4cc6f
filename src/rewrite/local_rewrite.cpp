#include "rewrite/local_rewrite.hpp"

#include "graph/op.hpp"

#include <theon/error.hpp>

#include <unordered_set>

namespace theon::rewrite {

RuleFn on_output0(std::function<graph::VarPtr(graph::FunctionGraph&, graph::Apply&)> fn) {
  return [fn = std::move(fn)](graph::FunctionGraph& fg, graph::Apply& node) -> Replacements {
    if (node.num_outputs() != 1) return {};
    graph::VarPtr r = fn(fg, node);
    if (!r) return {};
    return {{node.output(0), std::move(r)}};
  };
}

LocalRewriter::LocalRewriter(std::string pass, std::vector<LocalRule> rules, int max_sweeps)
    : pass_(std::move(pass)), rules_(std::move(rules)), max_sweeps_(max_sweeps) {
  if (max_sweeps_ < 1) throw InternalError("LocalRewriter '" + pass_ + "': max_sweeps must be at least 1");
  for (size_t i = 0; i < rules_.size(); ++i) {
    if (!rules_[i].fn || rules_[i].kinds.empty())
      throw InternalError("LocalRewriter '" + pass_ + "': rule '" + rules_[i].name + "' needs kinds and a function");
    for (graph::OpKind k : rules_[i].kinds) by_kind_[static_cast<size_t>(k)].push_back(static_cast<int>(i));
  }
}

LocalRewriteResult LocalRewriter::run(graph::FunctionGraph& fgraph) const {
  LocalRewriteResult result;
  std::unordered_set<const graph::Apply*> live;
  auto refresh = [&] {
    live.clear();
    for (auto& n : fgraph.nodes()) live.insert(n.get());
  };
  while (result.sweeps < max_sweeps_) {
    ++result.sweeps;
    bool any = false;
    const std::vector<graph::ApplyPtr> nodes = fgraph.nodes();  // a snapshot: replace re-sorts
    refresh();
    for (const graph::ApplyPtr& node : nodes) {
      if (!live.count(node.get())) continue;  // removed by an earlier replacement
      if (!node->op().pure()) continue;
      for (int r : by_kind_[static_cast<size_t>(node->op().kind())]) {
        const LocalRule& rule = rules_[r];
        Replacements pairs;
        try {
          pairs = rule.fn(fgraph, *node);
        } catch (const Error&) {
          continue;  // a builder refused the replacement: the rule does not apply
        }
        if (pairs.empty()) continue;
        fgraph.replace_all(pairs, pass_ + ": " + rule.name);
        result.fired.push_back(rule.name);
        any = true;
        refresh();
        break;
      }
    }
    if (!any) {
      result.converged = true;
      break;
    }
    result.changed = true;
  }
  return result;
}

}  // namespace theon::rewrite
