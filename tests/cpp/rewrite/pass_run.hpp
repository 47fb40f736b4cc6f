// One rewrite pass run over a graph built from the user's variables, for the rewrite tests'
// before/after checks: the debugprint text on both sides, whether it changed anything, and
// the graph it left (FunctionGraph clones the user's variables, so tests read these).
#pragma once
#include <theon/theon.hpp>

#include "graph/function_graph.hpp"
#include "graph/print.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace theon::testing {

struct PassRun {
  std::string before, after;
  bool changed = false;
  size_t nodes = 0;
  graph::VarPtr out;  // the (first) output after the pass
  graph::VarPtr in0;  // the graph's first input
  std::string why() const { return "before:\n" + before + "after:\n" + after; }
};

/// Runs `pass` once; with `fixed_point`, also checks that a second run changes nothing.
template <class Pass>
PassRun run_pass(const std::vector<Var>& inputs, const std::vector<Var>& outputs, Pass&& pass, bool fixed_point) {
  std::vector<graph::VarPtr> ins, outs;
  for (auto& v : inputs) ins.push_back(v.node());
  for (auto& v : outputs) outs.push_back(v.node());
  graph::FunctionGraph fg(ins, outs);
  PassRun r;
  r.before = graph::debugprint(fg.outputs());
  r.changed = pass(fg);
  fg.verify();
  r.after = graph::debugprint(fg.outputs());
  r.nodes = fg.nodes().size();
  r.out = fg.outputs()[0];
  r.in0 = fg.inputs().empty() ? nullptr : fg.inputs()[0];
  if (fixed_point) {
    EXPECT_FALSE(pass(fg)) << "not a fixed point\n" << r.why();
  }
  return r;
}

}  // namespace theon::testing
