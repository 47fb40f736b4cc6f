// LocalRewriter (src/rewrite/local_rewrite.hpp): rules keyed by kind, sweeps to a fixed
// point, the sweep cap, rules that return nothing or throw, the first firing rule winning,
// and replacements that would change a type.
#include <theon/theon.hpp>

#include "graph/function_graph.hpp"
#include "graph/op.hpp"
#include "graph/print.hpp"
#include "ops/elemwise.hpp"
#include "rewrite/local_rewrite.hpp"

#include "text_count.hpp"

#include <gtest/gtest.h>

namespace theon {
namespace {

using graph::Apply;
using graph::FunctionGraph;
using graph::OpKind;
using graph::VarPtr;
using ops::ScalarOpId;
using rewrite::LocalRewriter;
using rewrite::on_output0;
using rewrite::Replacements;
using theon::testing::count;

FunctionGraph graph_of(const std::vector<Var>& inputs, const std::vector<Var>& outputs) {
  std::vector<VarPtr> in, out;
  for (auto& v : inputs) in.push_back(v.node());
  for (auto& v : outputs) out.push_back(v.node());
  return FunctionGraph(in, out);
}

/// A rule function: f(x) -> g(x) for the Elemwise scalar ops f, g.
rewrite::RuleFn swap(ScalarOpId from, ScalarOpId to) {
  return on_output0([=](FunctionGraph&, Apply& node) -> VarPtr {
    const auto& op = graph::op_as<ops::Elemwise>(node.op());
    return op.scalar() == from ? ops::elemwise(to, {node.input(0)}) : nullptr;
  });
}

TEST(LocalRewriter, RulesRunToAFixedPointOverNodesTheyCreate) {
  Var x = tensor::vector("x");
  FunctionGraph fg = graph_of({x}, {tensor::exp(x)});
  // exp -> tanh makes a node the current sweep does not visit; the next sweep turns it into sin.
  LocalRewriter rw("test", {{"exp_to_tanh", {OpKind::Elemwise}, swap(ScalarOpId::Exp, ScalarOpId::Tanh)},
                            {"tanh_to_sin", {OpKind::Elemwise}, swap(ScalarOpId::Tanh, ScalarOpId::Sin)}},
                   8);
  auto r = rw.run(fg);
  fg.verify();
  std::string after = graph::debugprint(fg.outputs());
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(r.converged);
  EXPECT_EQ(r.sweeps, 3);  // exp -> tanh, tanh -> sin, then nothing
  EXPECT_EQ(r.fired, (std::vector<std::string>{"exp_to_tanh", "tanh_to_sin"}));
  EXPECT_EQ(count(after, "Elemwise{sin}"), 1u) << after;
  EXPECT_EQ(fg.nodes().size(), 1u) << after;
  auto again = rw.run(fg);
  EXPECT_FALSE(again.changed);
  EXPECT_EQ(again.sweeps, 1);
}

TEST(LocalRewriter, NodesRemovedEarlierInASweepAreSkipped) {
  Var x = tensor::vector("x");
  FunctionGraph fg = graph_of({x}, {-(-(-(-x)))});
  LocalRewriter rw("test",
                   {{"neg_neg", {OpKind::Elemwise}, on_output0([](FunctionGraph&, Apply& node) -> VarPtr {
                       auto is_neg = [](const Apply* a) {
                         const auto* op = a ? graph::op_if<ops::Elemwise>(a->op()) : nullptr;
                         return op && op->scalar() == ScalarOpId::Neg;
                       };
                       return is_neg(&node) && is_neg(node.input(0)->owner) ? node.input(0)->owner->input(0) : nullptr;
                     })}},
                   16);
  auto r = rw.run(fg);
  fg.verify();
  EXPECT_TRUE(r.converged);
  EXPECT_EQ(r.fired.size(), 2u);
  EXPECT_TRUE(fg.nodes().empty()) << graph::debugprint(fg.outputs());
  EXPECT_EQ(fg.outputs()[0], fg.inputs()[0]);
}

TEST(LocalRewriter, ReachingTheCapStopsWithAValidGraph) {
  Var x = tensor::vector("x");
  FunctionGraph fg = graph_of({x}, {tensor::exp(x)});
  // Always fires: exp(x) -> a fresh exp(x). Without the cap this would never stop.
  LocalRewriter rw("test", {{"exp_again", {OpKind::Elemwise}, swap(ScalarOpId::Exp, ScalarOpId::Exp)}}, 3);
  auto r = rw.run(fg);
  fg.verify();
  EXPECT_TRUE(r.changed);
  EXPECT_FALSE(r.converged);
  EXPECT_EQ(r.sweeps, 3);
  EXPECT_EQ(r.fired.size(), 3u);
  EXPECT_EQ(fg.nodes().size(), 1u);
  EXPECT_EQ(count(graph::debugprint(fg.outputs()), "Elemwise{exp}"), 1u);
}

TEST(LocalRewriter, OneSweepWhenTheCapIsOne) {
  Var x = tensor::vector("x");
  FunctionGraph fg = graph_of({x}, {tensor::exp(x)});
  LocalRewriter rw("test", {{"exp_to_tanh", {OpKind::Elemwise}, swap(ScalarOpId::Exp, ScalarOpId::Tanh)},
                            {"tanh_to_sin", {OpKind::Elemwise}, swap(ScalarOpId::Tanh, ScalarOpId::Sin)}},
                   1);
  auto r = rw.run(fg);
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(r.sweeps, 1);
  EXPECT_EQ(r.fired, std::vector<std::string>{"exp_to_tanh"});  // the new tanh waits for another run
  EXPECT_EQ(count(graph::debugprint(fg.outputs()), "Elemwise{tanh}"), 1u);
}

TEST(LocalRewriter, ARuleThatReturnsNothingChangesNothing) {
  Var x = tensor::vector("x");
  FunctionGraph fg = graph_of({x}, {tensor::exp(x) * 2.0});
  const std::string before = graph::debugprint(fg.outputs());
  int calls = 0;
  LocalRewriter rw("test", {{"nothing", {OpKind::Elemwise}, [&](FunctionGraph&, Apply&) -> Replacements {
                               ++calls;
                               return {};
                             }}},
                   16);
  auto r = rw.run(fg);
  EXPECT_FALSE(r.changed);
  EXPECT_TRUE(r.converged);
  EXPECT_EQ(r.sweeps, 1);
  EXPECT_TRUE(r.fired.empty());
  EXPECT_EQ(calls, 2);  // exp and mul, once each
  EXPECT_EQ(graph::debugprint(fg.outputs()), before);
}

TEST(LocalRewriter, TheFirstRuleThatFiresWinsAndLaterRowsAreTriedWhenEarlierOnesDecline) {
  Var x = tensor::vector("x");
  FunctionGraph fg = graph_of({x}, {tensor::exp(x)});
  int declined = 0, shadowed = 0;
  LocalRewriter rw("test",
                   {{"declines", {OpKind::Elemwise}, [&](FunctionGraph&, Apply&) -> Replacements {
                       ++declined;
                       return {};
                     }},
                    {"exp_to_tanh", {OpKind::Elemwise}, swap(ScalarOpId::Exp, ScalarOpId::Tanh)},
                    {"shadowed", {OpKind::Elemwise}, [&](FunctionGraph&, Apply&) -> Replacements {
                       ++shadowed;
                       return {};
                     }}},
                   1);
  auto r = rw.run(fg);
  EXPECT_EQ(r.fired, std::vector<std::string>{"exp_to_tanh"});
  EXPECT_EQ(declined, 1);
  EXPECT_EQ(shadowed, 0);  // exp_to_tanh fired first on the only node
}

TEST(LocalRewriter, RulesSeeOnlyTheKindsTheyAreKeyedOn) {
  Var a = tensor::matrix("a"), b = tensor::matrix("b");
  Var y = tensor::sum(tensor::exp(tensor::dot(a, tensor::transpose(b))) + 1.0);
  FunctionGraph fg = graph_of({a, b}, {y});
  std::vector<OpKind> seen_by_dot, seen_by_shuffle_or_sum;
  LocalRewriter rw("test",
                   {{"dot_only", {OpKind::Dot}, [&](FunctionGraph&, Apply& n) -> Replacements {
                       seen_by_dot.push_back(n.op().kind());
                       return {};
                     }},
                    {"shuffle_or_sum", {OpKind::DimShuffle, OpKind::Sum}, [&](FunctionGraph&, Apply& n) -> Replacements {
                       seen_by_shuffle_or_sum.push_back(n.op().kind());
                       return {};
                     }}},
                   4);
  size_t dimshuffles = 0, sums = 0;
  for (auto& n : fg.nodes()) {
    dimshuffles += n->op().kind() == OpKind::DimShuffle;
    sums += n->op().kind() == OpKind::Sum;
  }
  ASSERT_GE(dimshuffles, 1u);
  ASSERT_EQ(sums, 1u);
  EXPECT_FALSE(rw.run(fg).changed);
  EXPECT_EQ(seen_by_dot, std::vector<OpKind>{OpKind::Dot});
  EXPECT_EQ(seen_by_shuffle_or_sum.size(), dimshuffles + sums);
  for (OpKind k : seen_by_shuffle_or_sum) EXPECT_TRUE(k == OpKind::DimShuffle || k == OpKind::Sum);
}

TEST(LocalRewriter, ARuleThatThrowsAnErrorDoesNotFire) {
  Var x = tensor::vector("x");
  FunctionGraph fg = graph_of({x}, {tensor::exp(x)});
  LocalRewriter rw("test",
                   {{"refused", {OpKind::Elemwise}, [](FunctionGraph&, Apply&) -> Replacements {
                       throw TypeError("a builder refused");
                     }},
                    {"exp_to_tanh", {OpKind::Elemwise}, swap(ScalarOpId::Exp, ScalarOpId::Tanh)}},
                   1);
  auto r = rw.run(fg);
  EXPECT_EQ(r.fired, std::vector<std::string>{"exp_to_tanh"});
}

TEST(LocalRewriter, AReplacementOfAnotherTypeIsABugNamingPassAndRule) {
  Var x = tensor::vector("x");
  Var m = tensor::matrix("m");
  FunctionGraph fg = graph_of({x, m}, {tensor::exp(x)});
  VarPtr wrong = m.node();
  LocalRewriter rw("test", {{"bad_rule", {OpKind::Elemwise}, on_output0([&](FunctionGraph&, Apply&) { return wrong; })}}, 1);
  try {
    rw.run(fg);
    FAIL() << "expected InternalError";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("test: bad_rule"), std::string::npos) << e.what();
  }
}

TEST(LocalRewriter, MalformedTablesAreRejected) {
  auto none = [](FunctionGraph&, Apply&) -> Replacements { return {}; };
  EXPECT_THROW(LocalRewriter("test", {{"r", {OpKind::Elemwise}, none}}, 0), InternalError);
  EXPECT_THROW(LocalRewriter("test", {{"no_kinds", {}, none}}, 1), InternalError);
  EXPECT_THROW(LocalRewriter("test", {{"no_fn", {OpKind::Elemwise}, nullptr}}, 1), InternalError);
}

}  // namespace
}  // namespace theon
