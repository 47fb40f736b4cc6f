// Elementwise fusion: before/after graphs (debugprint), regions with external uses, several
// outputs, results equal to mode=none (the interpreter runs: ctest sets cxx=), the kill switch.
#include <theon/theon.hpp>

#include "backends/cpu/cpu_kernels.hpp"
#include "graph/function_graph.hpp"
#include "graph/print.hpp"
#include "ops/composite.hpp"
#include "ops/elemwise.hpp"
#include "rewrite/passes/passes.hpp"
#include "rewrite/pipeline.hpp"

#include "text_count.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <sstream>

namespace theon {
namespace {

using theon::testing::count;

// Distinct Composite nodes in a debugprint (a node with several outputs prints once per output).
size_t composites(const std::string& dp) {
  std::set<std::string> ids;
  std::istringstream in(dp);
  for (std::string line; std::getline(in, line);) {
    size_t start = line.find_first_not_of(" |");
    if (start == std::string::npos || line.compare(start, 10, "Composite{") != 0) continue;
    size_t id = line.find("[id ");
    if (id != std::string::npos) ids.insert(line.substr(id, line.find(']', id) - id));
  }
  return ids.size();
}

size_t count_op(const graph::FunctionGraph& fg, const std::string& name) {
  size_t n = 0;
  for (auto& node : fg.nodes()) n += node->op().name() == name;
  return n;
}

TEST(FusionPass, ChainOfFiveBecomesOneComposite) {
  Var a = tensor::matrix("a"), b = tensor::matrix("b"), c = tensor::matrix("c");
  Var y = tensor::exp(tensor::tanh(a * b + c) - a);  // mul, add, tanh, sub, exp
  graph::FunctionGraph fg({a.node(), b.node(), c.node()}, {y.node()});
  std::string before = graph::debugprint(fg.outputs());
  EXPECT_EQ(count(before, "Elemwise{"), 5u) << before;
  EXPECT_TRUE(rewrite::fusion_pass(fg));
  fg.verify();
  std::string after = graph::debugprint(fg.outputs());
  EXPECT_EQ(fg.nodes().size(), 1u) << after;
  EXPECT_EQ(count(after, "Elemwise{"), 0u) << after;
  EXPECT_EQ(count(after, "Composite{exp(sub(tanh(add(mul(i0,i1),i2)),i0))}"), 1u) << after;
  EXPECT_FALSE(rewrite::fusion_pass(fg)) << "a fixed point";
}

TEST(FusionPass, IntermediateUsedOutsideBecomesAnExtraOutput) {
  Var a = tensor::vector("a"), b = tensor::vector("b");
  Var t = tensor::tanh(a * b);
  Var y = tensor::exp(t) + 1.0;
  Var s = tensor::sum(t);  // t is also used by a reduction outside the region
  graph::FunctionGraph fg({a.node(), b.node()}, {y.node(), s.node()});
  EXPECT_TRUE(rewrite::fusion_pass(fg));
  fg.verify();
  std::string after = graph::debugprint(fg.outputs());
  EXPECT_EQ(count_op(fg, "Composite"), 1u) << after;
  EXPECT_EQ(count_op(fg, "Elemwise"), 0u) << after;
  const graph::Apply* comp = nullptr;
  for (auto& n : fg.nodes())
    if (n->op().name() == "Composite") comp = n.get();
  ASSERT_NE(comp, nullptr);
  EXPECT_EQ(comp->num_outputs(), 2) << after;

  Array av = Array::randn({7}, 1), bv = Array::randn({7}, 2);
  auto fused = function({a, b}, {y, s})({av, bv});
  auto ref = function({a, b}, {y, s}, {.mode = "none"})({av, bv});
  EXPECT_TRUE(allclose(fused[0], ref[0], 1e-6, 1e-6));
  EXPECT_TRUE(allclose(fused[1], ref[1], 1e-6, 1e-6));
}

TEST(FusionPass, GraphOutputsInsideARegionAreKept) {
  Var a = tensor::dvector("a");
  Var t = a * a, u = tensor::exp(t), v = u - t;
  Function f = function({a}, {t, u, v});
  std::string dp = f.debugprint();
  EXPECT_EQ(composites(dp), 1u) << dp;
  EXPECT_EQ(count(dp, "Elemwise{"), 0u) << dp;
  Array av = Array::from_vector<double>({0.5, -1.0, 2.0});
  auto r = f({av});
  auto ref = function({a}, {t, u, v}, {.mode = "none"})({av});
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(allclose(r[i], ref[i], 0, 0)) << i;
}

TEST(FusionPass, NonConvexRegionsAreNotFormed) {
  // t feeds both the region (via z) and a sum whose result comes back into the region: fusing
  // t with z would create a cycle through the sum.
  Var a = tensor::matrix("a");
  Var t = tensor::exp(a);
  Var m = tensor::sum(t, std::vector<int>{1}, true);
  Var z = tensor::tanh(t) / m;
  graph::FunctionGraph fg({a.node()}, {z.node()});
  rewrite::fusion_pass(fg);
  fg.verify();
  Array av = Array::randn({3, 4}, 5);
  auto fused = function({a}, {z})({av})[0];
  auto ref = function({a}, {z}, {.mode = "none"})({av})[0];
  EXPECT_TRUE(allclose(fused, ref, 1e-6, 1e-6));
}

TEST(FusionPass, BroadcastingAndSmallerIntermediates) {
  // r = row(1, n) computations reused at full shape and also returned on their own shape.
  Var x = tensor::matrix("x"), row = tensor::matrix("row");
  Var r = tensor::exp(row) * 2.0;
  Var y = tensor::tanh(x + r) * r;
  Function f = function({x, row}, {y, r});
  std::string dp = f.debugprint();
  EXPECT_EQ(composites(dp), 1u) << dp;
  Array xv = Array::randn({4, 5}, 7), rv = Array::randn({1, 5}, 8);
  auto got = f({xv, rv});
  auto ref = function({x, row}, {y, r}, {.mode = "none"})({xv, rv});
  EXPECT_EQ(got[1].shape(), (Shape{1, 5}));
  EXPECT_TRUE(allclose(got[0], ref[0], 1e-6, 1e-6));
  EXPECT_TRUE(allclose(got[1], ref[1], 1e-6, 1e-6));
}

TEST(FusionPass, NonContiguousInputsAndMixedDtypes) {
  Var x = tensor::dmatrix("x"), k = tensor::tensor(DType::Int32, {-1, -1}, "k");
  Var y = tensor::switch_(x > 0.0, tensor::sigmoid(x) * k, tensor::log1p(tensor::abs(x)) - k);
  Function f = function({x, k}, {y});
  EXPECT_EQ(composites(f.debugprint()), 1u) << f.debugprint();
  Array big = Array::randn({6, 8}, 11, DType::Float64);
  Array xv = big.transpose().slice(0, 1, 7, 2);  // (3, 6), strided
  Array kv = Array::arange(18, DType::Int32).reshape({3, 6});
  ASSERT_FALSE(xv.is_contiguous());
  Array got = f({xv, kv})[0];
  Array ref = function({x, k}, {y}, {.mode = "none"})({xv, kv})[0];
  EXPECT_TRUE(allclose(got, ref, 1e-12, 1e-12));
}

TEST(FusionPass, RandomInputsEqualModeNone) {
  Var a = tensor::matrix("a"), b = tensor::matrix("b"), c = tensor::matrix("c");
  Var y = tensor::tanh(a * b + c) * tensor::exp(-a * a) + tensor::sigmoid(c);
  Function f = function({a, b, c}, {y});
  EXPECT_EQ(composites(f.debugprint()), 1u) << f.debugprint();
  Function g = function({a, b, c}, {y}, {.mode = "none"});
  const Shape shapes[][3] = {{{33, 1500}, {33, 1500}, {33, 1500}},
                             {{1, 1500}, {33, 1}, {33, 1500}},
                             {{1, 1}, {33, 1500}, {1, 1500}},
                             {{0, 3}, {1, 3}, {0, 1}}};
  uint64_t seed = 1;
  for (auto& s : shapes) {
    Array av = Array::randn(s[0], seed++), bv = Array::randn(s[1], seed++), cv = Array::randn(s[2], seed++);
    Array got = f({av, bv, cv})[0], ref = g({av, bv, cv})[0];
    EXPECT_TRUE(allclose(got, ref, 1e-6, 1e-6)) << shape_str(s[0]);
  }
}

TEST(FusionPass, OptimizerExcludingFusionKeepsThemApart) {
  Var a = tensor::vector("a");
  Var y = tensor::exp(tensor::tanh(a) * 2.0);
  std::string saved = config().optimizer_excluding;
  config().optimizer_excluding = "fusion";
  std::string dp = function({a}, {y}).debugprint();
  config().optimizer_excluding = saved;
  EXPECT_EQ(count(dp, "Composite"), 0u) << dp;
  EXPECT_EQ(count(dp, "Elemwise{"), 3u) << dp;
  std::string fused = function({a}, {y}).debugprint();
  EXPECT_EQ(count(fused, "Composite"), 1u) << fused;
  std::string compiled = function({a}, {y}, {.mode = "fast_compile"}).debugprint();
  EXPECT_EQ(count(compiled, "Composite"), 0u) << compiled;
}

TEST(CompositeOp, PropsDisplayAndGradientMessage) {
  using ops::ScalarOpId;
  ops::Composite op({DType::Float32, DType::Float32},
                    {{ScalarOpId::Mul, DType::Float32, {0, 1}}, {ScalarOpId::Exp, DType::Float32, {2}},
                     {ScalarOpId::Gt, DType::Bool, {3, 0}}},
                    {3, 4});
  EXPECT_EQ(op.display(), "Composite{exp(mul(i0,i1)), gt(exp(mul(i0,i1)),i0)}");
  ops::Composite same({DType::Float32, DType::Float32},
                      {{ScalarOpId::Mul, DType::Float32, {0, 1}}, {ScalarOpId::Exp, DType::Float32, {2}},
                       {ScalarOpId::Gt, DType::Bool, {3, 0}}},
                      {3, 4});
  EXPECT_TRUE(op.equals(same));
  ops::Composite other({DType::Float32, DType::Float32}, {{ScalarOpId::Mul, DType::Float32, {0, 1}}}, {2});
  EXPECT_FALSE(op.equals(other));
  EXPECT_THROW(ops::Composite({DType::Float32}, {{ScalarOpId::Exp, DType::Float32, {1}}}, {1}), InternalError);

  // The CPU interpreter: two outputs of different dtypes.
  Var x = tensor::vector("x"), w = tensor::vector("w");
  graph::TensorType tf = x.node()->type, tb = tf;
  tb.dtype = DType::Bool;
  auto node = graph::Apply::make(std::make_shared<ops::Composite>(op), {x.node(), w.node()}, {tf, tb});
  std::vector<Array> ins = {Array::from_vector<float>({0, 1, -2}), Array::from_vector<float>({1, 2, 3})};
  auto shapes = op.infer_shape(*node, ins);
  std::vector<Array> outs = {Array::empty(shapes[0], DType::Float32), Array::empty(shapes[1], DType::Bool)};
  backends::cpu::run_composite(op, *node, ins, outs);
  auto e = outs[0].to_vector<float>();
  EXPECT_FLOAT_EQ(e[1], std::exp(2.0f));
  EXPECT_EQ(outs[1].to_vector<bool>(), (std::vector<bool>{true, true, true}));
  EXPECT_THROW(op.L_op(*node, {nullptr, nullptr}), NotImplementedError);
}

}  // namespace
}  // namespace theon
