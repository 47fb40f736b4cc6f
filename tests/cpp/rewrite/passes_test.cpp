// Rewrite passes: before/after graphs (debugprint), modes and the including/excluding flags.
#include <theon/theon.hpp>

#include "graph/function_graph.hpp"
#include "graph/print.hpp"
#include "rewrite/passes/passes.hpp"
#include "rewrite/pipeline.hpp"

#include "text_count.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace theon {
namespace {

using theon::testing::count;

TEST(MergePass, CommonSubexpressionsBecomeOne) {
  Var x = tensor::vector("x");
  Var a = tensor::exp(x) * 2.0, b = tensor::exp(x) * 2.0;
  graph::FunctionGraph fg({x.node()}, {(a + b).node()});
  EXPECT_EQ(fg.nodes().size(), 5u);  // exp, mul, exp, mul, add
  EXPECT_TRUE(rewrite::merge_pass(fg));
  std::string after = graph::debugprint(fg.outputs());
  EXPECT_EQ(fg.nodes().size(), 3u) << after;
  EXPECT_EQ(count(after, "Elemwise{exp} [id"), 1u) << after;
  EXPECT_FALSE(rewrite::merge_pass(fg));  // a fixed point
  fg.verify();
}

TEST(MergePass, DifferentPropsOrInputsDoNotMerge) {
  Var x = tensor::matrix("x"), y = tensor::matrix("y");
  graph::FunctionGraph fg({x.node(), y.node()},
                          {(tensor::sum(x, std::vector<int>{0}) + tensor::sum(x, std::vector<int>{1})).node(),
                           (tensor::exp(x) + tensor::exp(y)).node()});
  EXPECT_FALSE(rewrite::merge_pass(fg)) << graph::debugprint(fg.outputs());
}

TEST(ConstantFoldPass, ConstantSubgraphsBecomeConstants) {
  Var x = tensor::dvector("x");
  Var c = constant(Array::from_vector<double>({1, 2, 3}), "c");
  Var y = x + tensor::exp(c) * 2.0;
  graph::FunctionGraph fg({x.node()}, {y.node()});
  EXPECT_TRUE(rewrite::constant_fold_pass(fg));
  std::string after = graph::debugprint(fg.outputs());
  EXPECT_EQ(fg.nodes().size(), 1u) << after;
  EXPECT_EQ(count(after, "exp"), 0u) << after;
  Function f = function({x}, {y});
  auto out = f({Array::from_vector<double>({0, 0, 0})})[0].to_vector<double>();
  EXPECT_NEAR(out[2], 2 * std::exp(3.0), 1e-12);
}

TEST(ConstantFoldPass, SharedVariablesAreNotConstants) {
  SharedVar s = shared(Array::from_vector<double>({1, 2}), "s");
  Var y = tensor::exp(s);
  graph::FunctionGraph fg({}, {y.node()});
  EXPECT_FALSE(rewrite::constant_fold_pass(fg));
}

TEST(Pipeline, ModesAndFlagsSelectPasses) {
  Var x = tensor::vector("x");
  Var y = tensor::exp(x) + tensor::exp(x);
  // Fusion is excluded here: this test is about merge (fusion_test.cpp covers fusion).
  auto nodes_after = [&](const std::string& mode, const std::string& inc, const std::string& exc) {
    graph::FunctionGraph fg({x.node()}, {y.node()});
    auto records = rewrite::optimize(fg, mode, inc, exc.empty() ? "fusion" : exc + ":fusion");
    return fg.nodes().size();
  };
  EXPECT_EQ(nodes_after("fast_run", "", ""), 2u);
  EXPECT_EQ(nodes_after("FAST_COMPILE", "", ""), 2u);
  EXPECT_EQ(nodes_after("none", "", ""), 3u);
  EXPECT_EQ(nodes_after("none", "merge", ""), 2u);           // including by tag
  EXPECT_EQ(nodes_after("fast_run", "", "merge"), 3u);       // excluding by tag
  EXPECT_EQ(nodes_after("fast_run", "", "merge:merge_again"), 3u);
}

TEST(Pipeline, ModeNoneStillRunsAndGivesTheSameResults) {
  Var x = tensor::vector("x");
  Var y = tensor::exp(x) + tensor::exp(x) * 1.0;
  Array in = Array::randn({5}, 3);
  auto a = function({x}, {y}, {.mode = "none"})({in})[0];
  auto b = function({x}, {y}, {.mode = "FAST_RUN"})({in})[0];
  EXPECT_TRUE(allclose(a, b, 0, 0));
}

}  // namespace
}  // namespace theon
