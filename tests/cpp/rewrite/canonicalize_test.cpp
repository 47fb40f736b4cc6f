// canonicalize: one before/after test per rule (debugprint text) and a negative test per rule
// where it must not fire (the type would change, the pattern is not exact, ...).
#include <theon/theon.hpp>

#include "graph/function_graph.hpp"
#include "graph/print.hpp"
#include "ops/sum_to.hpp"
#include "rewrite/passes/passes.hpp"
#include "rewrite/pipeline.hpp"

#include "pass_run.hpp"
#include "text_count.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace theon {
namespace {

using theon::testing::count;

using Canon = testing::PassRun;

Canon canonicalize(const std::vector<Var>& inputs, const Var& output) {
  return testing::run_pass(inputs, {output}, rewrite::canonicalize_pass, /*fixed_point=*/true);
}

// fast_run and none agree on `values` (the rewrites keep results).
void expect_same_results(const std::vector<Var>& inputs, const Var& output, const std::vector<Array>& values,
                         double tol = 1e-6) {
  Array a = function(inputs, {output}, {.mode = "fast_run"})(values)[0];
  Array b = function(inputs, {output}, {.mode = "none"})(values)[0];
  EXPECT_TRUE(allclose(a, b, tol, tol)) << "fast_run:\n" << a << "\nnone:\n" << b;
}

// ---- maximum(x, 0) -> relu(x) ----

TEST(Canonicalize, MaximumWithZeroIsRelu) {
  Var x = tensor::matrix("x");
  for (Var y : {tensor::maximum(x, as_var(0.0)), tensor::maximum(as_var(0), x)}) {
    Canon c = canonicalize({x}, y);
    EXPECT_TRUE(c.changed) << c.why();
    EXPECT_EQ(count(c.after, "relu"), 1u) << c.why();
    EXPECT_EQ(count(c.after, "maximum"), 0u) << c.why();
    const float nan = std::numeric_limits<float>::quiet_NaN();
    expect_same_results({x}, y, {Array::from_vector<float>({-1.5f, 0.f, 2.f, nan}, Shape{2, 2})});
  }
  // Not when the zero broadcasts x to a larger shape, or is not zero.
  Var v = tensor::vector("v");
  EXPECT_FALSE(canonicalize({v}, tensor::maximum(v, constant(Array::zeros({3, 1}, DType::Float32)))).changed);
  EXPECT_FALSE(canonicalize({v}, tensor::maximum(v, as_var(0.5))).changed);
}

// ---- x * 1, 1 * x, x + 0, 0 + x, x - 0, x / 1 ----

TEST(Canonicalize, MulByOneIsRemoved) {
  Var x = tensor::matrix("x");
  for (Var y : {x * 1.0, 1.0 * x, x * constant(Array::ones({1, 1}, DType::Float32))}) {
    Canon c = canonicalize({x}, y);
    EXPECT_TRUE(c.changed) << c.why();
    EXPECT_EQ(count(c.before, "Elemwise{mul}"), 1u) << c.why();
    EXPECT_EQ(c.nodes, 0u) << c.why();
    EXPECT_EQ(c.out, c.in0) << c.why();
  }
  Var i = tensor::tensor(DType::Int32, {-1, -1}, "i");  // integers too
  EXPECT_EQ(canonicalize({i}, i * 1).nodes, 0u);
}

TEST(Canonicalize, MulByOneThatBroadcastsIsKept) {
  // x is (?, 1); the constant (1, 3) broadcasts it to (?, 3): the product's type is not x's.
  Var x = tensor::tensor(DType::Float32, {-1, 1}, "x");
  Canon c = canonicalize({x}, x * constant(Array::ones({1, 3}, DType::Float32)));
  EXPECT_FALSE(c.changed) << c.why();
  EXPECT_EQ(count(c.after, "Elemwise{mul}"), 1u) << c.why();
  // A float literal promotes an integer x to float: only the cast the builder inserted stays.
  Var i = tensor::tensor(DType::Int32, {-1}, "i");
  Canon ci = canonicalize({i}, i * 1.0);
  EXPECT_EQ(ci.nodes, 1u) << ci.why();
  EXPECT_EQ(count(ci.after, "Elemwise{cast, float32}"), 1u) << ci.why();
  // Not all ones.
  Var m = tensor::matrix("m");
  EXPECT_FALSE(canonicalize({m}, m * constant(Array::from_vector<float>({1, 2}, Shape{1, 2}))).changed);
  EXPECT_FALSE(canonicalize({m}, m * 2.0).changed);
}

TEST(Canonicalize, AddAndSubZeroAreRemoved) {
  Var x = tensor::matrix("x");
  for (Var y : {x + 0.0, 0.0 + x, x - 0.0, x + constant(Array::zeros({1, 1}, DType::Float32))}) {
    Canon c = canonicalize({x}, y);
    EXPECT_TRUE(c.changed) << c.why();
    EXPECT_EQ(c.out, c.in0) << c.why();
  }
}

TEST(Canonicalize, AddZeroOfLargerShapeIsKept) {
  Var x = tensor::vector("x");  // (?,) + (2, 3) zeros: rank and shape grow
  Canon c = canonicalize({x}, x + constant(Array::zeros({2, 3}, DType::Float32)));
  EXPECT_FALSE(c.changed) << c.why();
  EXPECT_EQ(count(c.after, "Elemwise{add}"), 1u) << c.why();
  Var m = tensor::matrix("m");
  EXPECT_FALSE(canonicalize({m}, 0.0 - m).changed);  // 0 - x is not x
  EXPECT_FALSE(canonicalize({m}, m + 1e-30).changed);
}

TEST(Canonicalize, DivByOneIsRemoved) {
  Var x = tensor::matrix("x");
  Canon c = canonicalize({x}, x / 1.0);
  EXPECT_TRUE(c.changed) << c.why();
  EXPECT_EQ(count(c.before, "Elemwise{true_div}"), 1u) << c.why();
  EXPECT_EQ(c.out, c.in0) << c.why();
}

TEST(Canonicalize, DivByOneThatBroadcastsOrOneOverXIsKept) {
  Var x = tensor::matrix("x");
  EXPECT_FALSE(canonicalize({x}, 1.0 / x).changed);  // 1 / x is not x
  Var r = tensor::tensor(DType::Float32, {1, -1}, "r");  // (1, ?) / ones (4, 1): (4, ?)
  Canon c = canonicalize({r}, r / constant(Array::ones({4, 1}, DType::Float32)));
  EXPECT_FALSE(c.changed) << c.why();
  // int / 1 divides cast(i) (a float): the division goes, the cast stays.
  Var i = tensor::tensor(DType::Int64, {-1, -1}, "i");
  Canon ci = canonicalize({i}, i / 1);
  EXPECT_EQ(ci.nodes, 1u) << ci.why();
  EXPECT_EQ(count(ci.after, "Elemwise{cast, float64}"), 1u) << ci.why();
}

// ---- neg(neg x), log(exp x) ----

TEST(Canonicalize, DoubleNegationIsRemoved) {
  Var x = tensor::matrix("x");
  Canon c = canonicalize({x}, -(-x));
  EXPECT_TRUE(c.changed) << c.why();
  EXPECT_EQ(count(c.before, "Elemwise{neg}"), 2u) << c.why();
  EXPECT_EQ(c.out, c.in0) << c.why();
  // To a fixed point: four negations and multiplications by one vanish entirely.
  Canon d = canonicalize({x}, -(-(-(-(x * 1.0) * 1.0))));
  EXPECT_EQ(d.nodes, 0u) << d.why();
  // Three leave one.
  Canon e = canonicalize({x}, -(-(-x)));
  EXPECT_EQ(e.nodes, 1u) << e.why();
  EXPECT_EQ(count(e.after, "Elemwise{neg}"), 1u) << e.why();
}

TEST(Canonicalize, SingleNegationOrNegOfOtherOpIsKept) {
  Var x = tensor::matrix("x");
  EXPECT_FALSE(canonicalize({x}, -x).changed);
  EXPECT_FALSE(canonicalize({x}, -tensor::abs(-x) * 2.0).changed);
}

TEST(Canonicalize, LogOfExpIsRemoved) {
  Var x = tensor::matrix("x", DType::Float64);
  Canon c = canonicalize({x}, tensor::log(tensor::exp(x)) + 1.0);
  EXPECT_TRUE(c.changed) << c.why();
  EXPECT_EQ(count(c.after, "exp"), 0u) << c.why();
  EXPECT_EQ(count(c.after, "log"), 0u) << c.why();
  EXPECT_EQ(c.nodes, 1u) << c.why();
}

TEST(Canonicalize, ExpOfLogAndLookalikesAreKept) {
  Var x = tensor::matrix("x");
  Canon c = canonicalize({x}, tensor::exp(tensor::log(x)));  // not exact (x < 0 gives NaN)
  EXPECT_FALSE(c.changed) << c.why();
  EXPECT_FALSE(canonicalize({x}, tensor::log(tensor::exp(x) + 1.0)).changed);
  EXPECT_FALSE(canonicalize({x}, tensor::log(tensor::expm1(x))).changed);
}

// ---- log(sigmoid), log(1 - sigmoid) (log(softmax): stabilize_test.cpp) ----

TEST(Canonicalize, LogOfSigmoidBecomesSoftplus) {
  Var x = tensor::matrix("x");
  Canon c = canonicalize({x}, tensor::log(tensor::sigmoid(x)));
  EXPECT_TRUE(c.changed) << c.why();
  EXPECT_EQ(count(c.after, "Elemwise{softplus}"), 1u) << c.why();
  EXPECT_EQ(count(c.after, "Elemwise{neg}"), 2u) << c.why();
  EXPECT_EQ(count(c.after, "sigmoid"), 0u) << c.why();
  Var y = tensor::log(tensor::sigmoid(x));
  Array in = Array::from_vector<float>({-200, 0, 3, 50}, Shape{2, 2});
  auto out = function({x}, {y}, {.mode = "fast_run"})({in})[0].to_vector<float>();
  EXPECT_NEAR(out[0], -200.0f, 1e-3);  // log(sigmoid(-200)) is -inf in float32 without the rule
  EXPECT_NEAR(out[1], std::log(0.5f), 1e-6);
  expect_same_results({x}, y, {Array::randn({3, 4}, 2, DType::Float32)});
}

TEST(Canonicalize, LogOfOneMinusSigmoidBecomesSoftplus) {
  Var x = tensor::matrix("x", DType::Float64);
  Canon c = canonicalize({x}, tensor::log(1.0 - tensor::sigmoid(x)));
  EXPECT_TRUE(c.changed) << c.why();
  EXPECT_EQ(count(c.after, "Elemwise{softplus}"), 1u) << c.why();
  EXPECT_EQ(count(c.after, "Elemwise{neg}"), 1u) << c.why();
  EXPECT_EQ(count(c.after, "sigmoid"), 0u) << c.why();
  Var y = tensor::log(1.0 - tensor::sigmoid(x));
  auto out = function({x}, {y}, {.mode = "fast_run"})({Array::from_vector<double>({100, 0}, Shape{1, 2})})[0]
                 .to_vector<double>();
  EXPECT_NEAR(out[0], -100.0, 1e-9);  // 1 - sigmoid(100) is 0 in float64 without the rule
  EXPECT_NEAR(out[1], std::log(0.5), 1e-12);
  expect_same_results({x}, y, {Array::randn({3, 4}, 3, DType::Float64)}, 1e-12);
}

TEST(Canonicalize, LogSigmoidLookalikesAreKept) {
  Var x = tensor::matrix("x");
  EXPECT_FALSE(canonicalize({x}, tensor::log(2.0 - tensor::sigmoid(x))).changed);
  EXPECT_FALSE(canonicalize({x}, tensor::log(tensor::sigmoid(x) * 0.5)).changed);
  // 1 of a larger shape than x broadcasts: the type would change.
  Var v = tensor::vector("v");
  Canon c = canonicalize({v}, tensor::log(constant(Array::ones({2, 3}, DType::Float32)) - tensor::sigmoid(v)));
  EXPECT_FALSE(c.changed) << c.why();
}

// ---- dimshuffle and reshape chains, sum of a broadcast scalar ----

TEST(Canonicalize, DimShuffleChainsBecomeOne) {
  Var x = tensor::matrix("x");
  Canon c = canonicalize({x}, tensor::transpose(tensor::transpose(x)) + 1.0);
  EXPECT_TRUE(c.changed) << c.why();
  EXPECT_EQ(count(c.before, "DimShuffle"), 2u) << c.why();
  EXPECT_EQ(count(c.after, "DimShuffle"), 0u) << c.why();
  // (n, m) -> (n, 1, m) -> drop the new dim and transpose: one transpose.
  Canon d = canonicalize({x}, tensor::dimshuffle(tensor::dimshuffle(x, {0, -1, 1}), {2, 0}));
  EXPECT_TRUE(d.changed) << d.why();
  EXPECT_EQ(d.nodes, 1u) << d.why();
  EXPECT_EQ(count(d.after, "DimShuffle{(1,0)}"), 1u) << d.why();
  Var y = tensor::dimshuffle(tensor::dimshuffle(x, {0, -1, 1}), {2, 0});
  expect_same_results({x}, y, {Array::randn({3, 4}, 4, DType::Float32)}, 0);
}

TEST(Canonicalize, SingleDimShuffleIsKept) {
  Var x = tensor::matrix("x");
  EXPECT_FALSE(canonicalize({x}, tensor::transpose(x)).changed);
  EXPECT_FALSE(canonicalize({x}, tensor::dimshuffle(tensor::exp(tensor::transpose(x)), {1, 0, -1})).changed);
}

TEST(Canonicalize, ReshapeChainsBecomeOne) {
  Var x = tensor::matrix("x");
  Var y = tensor::reshape(tensor::reshape(x, std::vector<int64_t>{-1}), std::vector<int64_t>{3, -1});
  Canon c = canonicalize({x}, y);
  EXPECT_TRUE(c.changed) << c.why();
  EXPECT_EQ(count(c.before, "Reshape"), 2u) << c.why();
  EXPECT_EQ(count(c.after, "Reshape"), 1u) << c.why();
  expect_same_results({x}, y, {Array::randn({2, 6}, 5, DType::Float32)}, 0);
  // Through a flatten too.
  Var z = tensor::reshape(tensor::flatten(x, 1), std::vector<int64_t>{2, 3});
  EXPECT_EQ(count(canonicalize({x}, z).after, "Reshape"), 1u);
}

TEST(Canonicalize, FlattenOfReshapeIsKept) {
  // flatten keeps its input's leading dims, which the inner reshape decides.
  Var x = tensor::matrix("x");
  Var y = tensor::flatten(tensor::reshape(x, std::vector<int64_t>{3, -1, 2}), 2);
  Canon c = canonicalize({x}, y);
  EXPECT_FALSE(c.changed) << c.why();
  EXPECT_EQ(count(c.after, "Reshape"), 2u) << c.why();
}

TEST(Canonicalize, SumOfBroadcastScalarIsAProduct) {
  Var s = tensor::scalar("s", DType::Float64);
  Var y = tensor::sum(tensor::broadcast_to(s, {3, 4}));
  Canon c = canonicalize({s}, y);
  EXPECT_TRUE(c.changed) << c.why();
  EXPECT_EQ(count(c.after, "Sum"), 0u) << c.why();
  EXPECT_EQ(count(c.after, "Elemwise{mul}"), 1u) << c.why();
  auto out = function({s}, {y})({Array::scalar(0.25, DType::Float64)})[0].to_vector<double>();
  EXPECT_EQ(out[0], 3.0);
}

TEST(Canonicalize, PartialSumOfBroadcastIsKept) {
  Var s = tensor::scalar("s", DType::Float64);
  EXPECT_FALSE(canonicalize({s}, tensor::sum(tensor::broadcast_to(s, {3, 4}), std::vector<int>{0})).changed);
  Var v = tensor::vector("v", DType::Float64);  // not a 0-d value
  EXPECT_FALSE(canonicalize({v}, tensor::sum(tensor::broadcast_to(v, {3, 4}))).changed);
}

// ---- the pipeline ----

TEST(Canonicalize, RunsInFastRunOnly) {
  Var x = tensor::matrix("x");
  Var y = tensor::log(tensor::exp(-(-x))) * 1.0;
  auto nodes_after = [&](const std::string& mode) {
    graph::FunctionGraph fg({x.node()}, {y.node()});
    rewrite::optimize(fg, mode);
    return fg.nodes().size();
  };
  EXPECT_EQ(nodes_after("fast_run"), 0u);
  EXPECT_EQ(nodes_after("none"), 5u);
  EXPECT_EQ(nodes_after("fast_compile"), 5u);
  expect_same_results({x}, y, {Array::randn({2, 3}, 6, DType::Float32)});
}


// ---- sum_to(g, like) -> g when the static shapes are equal ----

// A SumTo node as a graph holds it after a substitution made its operands' shapes static (the
// sum_to builder itself makes none where it can tell).
Var raw_sum_to(const Var& g, const Var& like) {
  return Var(graph::make_output(std::make_shared<ops::SumTo>(), {g.node(), like.node()}, like.node()->type));
}

TEST(Canonicalize, SumToOfEqualStaticShapesIsRemoved) {
  Var g = tensor::tensor(DType::Float64, {3, 4}, "g"), like = tensor::tensor(DType::Float64, {3, 4}, "like");
  Var y = raw_sum_to(g, like) * 2.0;
  Canon c = canonicalize({g, like}, y);
  EXPECT_TRUE(c.changed) << c.why();
  EXPECT_EQ(count(c.after, "SumTo"), 0u) << c.why();
  const std::vector<Array> vals = {Array::randn({3, 4}, 1, DType::Float64), Array::randn({3, 4}, 2, DType::Float64)};
  expect_same_results({g, like}, y, vals, 1e-12);
}

TEST(Canonicalize, SumToThatMaySumIsKept) {
  // like's dim 0 unknown (it may be 1 at run time: a real sum), or statically 1.
  for (const std::vector<int64_t>& dims : {std::vector<int64_t>{-1, 4}, std::vector<int64_t>{1, 4}}) {
    Var g = tensor::tensor(DType::Float64, {3, 4}, "g"), like = tensor::tensor(DType::Float64, dims, "like");
    Var y = raw_sum_to(g, like) * 2.0;
    Canon c = canonicalize({g, like}, y);
    EXPECT_EQ(count(c.after, "SumTo"), 1u) << c.why();
    const std::vector<Array> vals = {Array::randn({3, 4}, 1, DType::Float64), Array::randn({1, 4}, 2, DType::Float64)};
    expect_same_results({g, like}, y, vals, 1e-12);
  }
}

}  // namespace
}  // namespace theon
