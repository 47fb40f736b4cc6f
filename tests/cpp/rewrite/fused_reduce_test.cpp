// Reductions absorb the elementwise work that feeds them (fusion pass -> FusedReduce):
// before/after graphs (debugprint), when a region is not absorbed, and results equal to
// mode=none bit for bit (the interpreter runs: ctest sets cxx=; fused_cpu_test.cpp checks the
// generated-code path) over dtypes, reduce kinds, axes, keepdims, size-0 and size-1 dims,
// broadcasting, non-contiguous inputs and regions larger than one chunk.
#include <theon/theon.hpp>

#include "graph/function_graph.hpp"
#include "graph/print.hpp"
#include "ops/fused_reduce.hpp"
#include "rewrite/passes/passes.hpp"

#include "text_count.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <optional>

namespace theon {
namespace {

using theon::testing::count;

// Same shape, dtype and values (NaN equal to NaN): what "bit-identical to mode none" means here.
// Equal element for element. Generated C++ (cxx set) may reduce in another order than the
// interpreter (vector lanes) and uses SLEEF's 1-ulp functions: a float result may then differ
// by a few ulps per reduced element (up to 300 here), relative to the element's size.
::testing::AssertionResult same(const Array& got, const Array& want) {
  const double rel = config().cxx.empty() || !is_float(want.dtype()) ? 0.0
                     : want.dtype() == DType::Float64            ? 1e-11
                                                                  : 1e-4;
  if (got.dtype() != want.dtype())
    return ::testing::AssertionFailure() << "dtype " << dtype_name(got.dtype()) << " vs " << dtype_name(want.dtype());
  if (got.shape() != want.shape())
    return ::testing::AssertionFailure() << "shape " << shape_str(got.shape()) << " vs " << shape_str(want.shape());
  auto g = got.to_vector<double>(), w = want.to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i)
    if (!(g[i] == w[i] || (std::isnan(g[i]) && std::isnan(w[i])) ||
          std::abs(g[i] - w[i]) <= rel * std::max(1.0, std::abs(w[i]))))
      return ::testing::AssertionFailure() << "element " << i << ": " << g[i] << " vs " << w[i];
  return ::testing::AssertionSuccess();
}

TEST(FusedReduce, SumOfExpOfDifferenceIsOneNode) {
  Var x = tensor::matrix("x");
  Var m = tensor::max(x, std::vector<int>{1}, true);
  Var s = tensor::sum(tensor::exp(x - m), std::vector<int>{1});
  s.set_name("s");
  graph::FunctionGraph fg({x.node()}, {s.node()});
  const std::string before = graph::debugprint(fg.outputs());
  EXPECT_EQ(count(before, "Sum{axes=(1,)}"), 1u) << before;
  EXPECT_EQ(count(before, "Elemwise{exp}"), 1u) << before;
  EXPECT_EQ(count(before, "Elemwise{sub}"), 1u) << before;
  EXPECT_TRUE(rewrite::fusion_pass(fg));
  fg.verify();
  const std::string after = graph::debugprint(fg.outputs());
  // exp(x - m): the sub and exp form a Composite, which the sum absorbs; max reads x directly.
  EXPECT_EQ(count(after, "FusedReduce{sum{axes=(1,)}, exp(sub(i0,i1))}"), 1u) << after;
  EXPECT_EQ(count(after, "Elemwise{"), 0u) << after;
  EXPECT_EQ(count(after, "Composite{"), 0u) << after;
  EXPECT_EQ(count(after, "Sum{"), 0u) << after;
  EXPECT_EQ(count(after, "Max{axes=(1,)}"), 1u) << after;
  EXPECT_EQ(fg.outputs()[0]->type, s.node()->type) << "the output keeps its type";
  EXPECT_EQ(fg.outputs()[0]->name, "s") << "and the user's name";
  EXPECT_FALSE(rewrite::fusion_pass(fg)) << "a fixed point";
}

TEST(FusedReduce, ASingleElemwiseIsAbsorbed) {
  Var x = tensor::vector("x");
  Var s = tensor::sum(x * x);
  graph::FunctionGraph fg({x.node()}, {s.node()});
  EXPECT_TRUE(rewrite::fusion_pass(fg));
  const std::string after = graph::debugprint(fg.outputs());
  EXPECT_EQ(count(after, "FusedReduce{sum{axes=(0,)}, mul(i0,i0)}"), 1u) << after;
  EXPECT_EQ(fg.nodes().size(), 1u) << after;
}

TEST(FusedReduce, RegionsUsedElsewhereAreNotAbsorbed) {
  Var x = tensor::matrix("x");
  Var e = tensor::exp(x * 2.0);
  Var s = tensor::sum(e, std::vector<int>{0});
  // e is also a graph output: the Composite must stay (the reduction would hide it).
  graph::FunctionGraph fg({x.node()}, {s.node(), e.node()});
  rewrite::fusion_pass(fg);
  std::string after = graph::debugprint(fg.outputs());
  EXPECT_EQ(count(after, "FusedReduce{"), 0u) << after;
  EXPECT_EQ(count(after, "Sum{axes=(0,)}"), 1u) << after;
  // Used by two reductions: neither absorbs it.
  Var t = tensor::max(e, std::vector<int>{1});
  graph::FunctionGraph fg2({x.node()}, {s.node(), t.node()});
  rewrite::fusion_pass(fg2);
  after = graph::debugprint(fg2.outputs());
  EXPECT_EQ(count(after, "FusedReduce{"), 0u) << after;
  // A reduction of an input (no elementwise work) stays a Reduce.
  graph::FunctionGraph fg3({x.node()}, {tensor::sum(x).node()});
  EXPECT_FALSE(rewrite::fusion_pass(fg3));
}

TEST(FusedReduce, PropsAndGradientMessage) {
  Var x = tensor::vector("x");
  Var s = tensor::mean(tensor::tanh(x));
  graph::FunctionGraph fg({x.node()}, {s.node()});
  rewrite::fusion_pass(fg);
  const auto& op = fg.outputs()[0]->owner->op();
  EXPECT_EQ(op.name(), "FusedReduce");
  EXPECT_EQ(op.display(), "FusedReduce{mean{axes=(0,)}, tanh(i0)}");
  bool has_reduce = false;
  for (auto& [k, v] : op.props()) has_reduce = has_reduce || (k == "reduce" && v == "mean");
  EXPECT_TRUE(has_reduce);
  EXPECT_THROW(op.L_op(*fg.outputs()[0]->owner, {nullptr}), NotImplementedError);
}

// One function per (graph, mode); compares fast_run (FusedReduce present) with mode none.
struct Both {
  Function fused, ref;
  Both(const std::vector<Var>& in, const Var& out)
      : fused(function(in, {out})), ref(function(in, {out}, {.mode = "none"})) {
    EXPECT_NE(fused.debugprint().find("FusedReduce{"), std::string::npos) << fused.debugprint();
  }
  ::testing::AssertionResult check(const std::vector<Array>& args) {
    return same(fused(args)[0], ref(args)[0]);
  }
};

TEST(FusedReduce, ResultsEqualModeNoneOverKindsAxesAndDtypes) {
  for (DType dt : {DType::Float32, DType::Float64}) {
    SCOPED_TRACE(dtype_name(dt));
    Var x = tensor::tensor(dt, {-1, -1, -1}, "x"), y = tensor::tensor(dt, {-1, -1, -1}, "y");
    struct Kind {
      const char* name;
      std::function<Var(const Var&, std::optional<std::vector<int>>, bool)> f;
    } kinds[] = {
        {"sum", [](const Var& v, auto a, bool k) { return tensor::sum(v, a, k); }},
        {"mean", [](const Var& v, auto a, bool k) { return tensor::mean(v, a, k); }},
        {"max", [](const Var& v, auto a, bool k) { return tensor::max(v, a, k); }},
        {"prod", [](const Var& v, auto a, bool k) { return tensor::prod(v, a, k); }},
    };
    const std::optional<std::vector<int>> axes_list[] = {std::nullopt, std::vector<int>{1}, std::vector<int>{0, 2},
                                                         std::vector<int>{2}, std::vector<int>{}};
    Array xv = Array::randn({5, 1, 300}, 1, dt), yv = Array::randn({5, 7, 300}, 2, dt);
    Array x2 = Array::randn({5, 7, 600}, 3, dt).slice(2, 0, 600, 2);  // non-contiguous
    Array big = Array::randn({40, 30, 70}, 4, dt);                    // 84000 elements: two chunks
    Array empty = Array::randn({5, 0, 300}, 5, dt), ones = Array::randn({1, 1, 1}, 6, dt);
    for (auto& kind : kinds)
      for (const auto& axes : axes_list)
        for (bool keep : {false, true}) {
          SCOPED_TRACE(std::string(kind.name) + (axes ? " axes=" + std::to_string(axes->size()) : " all") +
                       (keep ? " keepdims" : ""));
          Var e = tensor::tanh(x * y) + tensor::exp(-x);
          Both b({x, y}, kind.f(e, axes, keep));
          EXPECT_TRUE(b.check({xv, yv}));             // broadcast along dim 1 (size-1 dim)
          EXPECT_TRUE(b.check({x2, yv}));             // strided input
          EXPECT_TRUE(b.check({big, big.slice(0, 0, 40)}));
          EXPECT_TRUE(b.check({ones, ones}));
          if (std::string(kind.name) != "max") {
            EXPECT_TRUE(b.check({empty, empty}));  // size-0 dim
          }
        }
  }
}

TEST(FusedReduce, IntegerBoolAndEmptyCases) {
  Var n = tensor::tensor(DType::Int32, {-1, -1}, "n");
  Array nv = Array::arange(3000, DType::Int32).reshape({30, 100});
  Both s({n}, tensor::sum(n * n, std::vector<int>{1}));  // int64 result, wrapping like NumPy
  EXPECT_TRUE(s.check({nv}));
  Both m({n}, tensor::mean(n % 7, std::vector<int>{0}));  // float64 mean of integers
  EXPECT_TRUE(m.check({nv}));
  Var x = tensor::matrix("x");
  Array xv = Array::randn({20, 50}, 7);
  Both any({x}, tensor::any(x > 1.5, std::vector<int>{1}));
  EXPECT_TRUE(any.check({xv}));
  Both all({x}, tensor::all(tensor::abs(x) < 3.0));
  EXPECT_TRUE(all.check({xv}));
  Both mn({x}, tensor::min(tensor::log(x), std::vector<int>{0}));  // NaN wins, as numpy.min
  EXPECT_TRUE(mn.check({xv}));
  // max over a size-0 dim raises in both modes.
  Both mx({x}, tensor::max(x * 2.0, std::vector<int>{0}));
  EXPECT_THROW(mx.fused({Array::randn({0, 4}, 8)}), ValueError);
  EXPECT_THROW(mx.ref({Array::randn({0, 4}, 8)}), ValueError);
}

}  // namespace
}  // namespace theon
