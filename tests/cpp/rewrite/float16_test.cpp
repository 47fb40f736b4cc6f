// float16 (Theano's storage dtype): the float16 pass (graph before and after), that it runs in
// every mode, and the values of float16 graphs against float64 references at float16
// tolerance: elementwise (fused and not), a sum that accumulates in float32, a dot, a
// softmax, random draws, updates of float16 shared variables.
#include <theon/theon.hpp>

#include "backends/backend.hpp"
#include "graph/function_graph.hpp"
#include "graph/print.hpp"
#include "rewrite/passes/passes.hpp"

#include "text_count.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace theon {
namespace {

using theon::testing::count;
constexpr DType H = DType::Float16;

// Values of float16 arrays, as double.
std::vector<double> values(const Array& a) { return a.to_vector<double>(); }

// Float16 tolerance: a few half ulps of the reference (float16 has 11 significant bits).
void expect_close16(const std::vector<double>& got, const std::vector<double>& want, double rel = 4e-3,
                    double abs = 1e-4) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], abs + rel * std::fabs(want[i])) << "element " << i;
}

Array half_vector(const std::vector<double>& v) { return Array::from_vector<double>(v).astype(H); }

TEST(Float16Pass, ComputingNodesRunInFloat32BetweenCasts) {
  Var x = tensor::vector("x", H), y = tensor::vector("y", H);
  Var z = tensor::exp(x) + y;
  EXPECT_EQ(z.dtype(), H);
  graph::FunctionGraph fg({x.node(), y.node()}, {z.node()});
  const std::string before = graph::debugprint(fg.outputs());
  EXPECT_EQ(count(before, "Cast"), 0u) << before;
  EXPECT_TRUE(rewrite::float16_pass(fg));
  const std::string after = graph::debugprint(fg.outputs());
  // exp and add each read float32 casts of their float16 inputs; their results go back to
  // float16: 3 casts in (x, exp's result, y), 2 out.
  EXPECT_EQ(count(after, "Elemwise{cast, float32}"), 3u) << after;
  EXPECT_EQ(count(after, "Elemwise{cast, float16}"), 2u) << after;
  EXPECT_EQ(fg.outputs()[0]->type.dtype, H);
  for (auto& node : fg.nodes()) {
    if (node->op().kind() != graph::OpKind::Elemwise || count(node->op().display(), "cast") > 0) continue;
    for (auto& in : node->inputs()) EXPECT_EQ(in->type.dtype, DType::Float32) << node->describe();
    EXPECT_EQ(node->output_raw(0)->type.dtype, DType::Float32) << node->describe();
  }
  EXPECT_FALSE(rewrite::float16_pass(fg));  // a fixed point
  fg.verify();
}

TEST(Float16Pass, ViewsAndCastsKeepFloat16) {
  Var x = tensor::matrix("x", H);
  Var v = tensor::cast(x.T().reshape({-1}), DType::Float32);
  graph::FunctionGraph fg({x.node()}, {v.node()});
  EXPECT_FALSE(rewrite::float16_pass(fg)) << graph::debugprint(fg.outputs());
}

TEST(Float16Pass, TheBackendsSayWhyAComputingFloat16NodeNeedsIt) {
  Var x = tensor::vector("x", H);
  Var z = tensor::exp(x);
  backends::Support s = backends::cpu_backend().supports(*z.node()->owner);
  EXPECT_FALSE(s.ok);
  EXPECT_NE(s.reason.find("float16 pass"), std::string::npos) << s.reason;
  EXPECT_TRUE(backends::cpu_backend().supports(*tensor::cast(x, DType::Float32).node()->owner).ok);
}

TEST(Float16, ElementwiseValuesInEveryMode) {
  Var x = tensor::vector("x", H), y = tensor::vector("y", H);
  Var z = tensor::tanh(x) * y + 0.5;
  EXPECT_EQ(z.dtype(), H);  // the literal is weak
  const std::vector<double> xv = {-2, -0.5, 0, 0.25, 1, 3}, yv = {1, 2, -3, 0.1, 7.5, -0.25};
  const Array xa = half_vector(xv), ya = half_vector(yv);
  std::vector<double> want;
  for (size_t i = 0; i < xv.size(); ++i) want.push_back(std::tanh(values(xa)[i]) * values(ya)[i] + 0.5);
  for (const char* mode : {"fast_run", "fast_compile", "none"}) {
    Function f = function({x, y}, {z}, {.mode = mode});
    Array out = f({xa, ya})[0];
    EXPECT_EQ(out.dtype(), H) << mode;
    expect_close16(values(out), want);
  }
  // fast_run fuses the casts with the float32 ops: half in, float math, half out.
  Function f = function({x, y}, {z});
  const std::string compiled = f.debugprint();
  EXPECT_EQ(count(compiled, "Composite"), 1u) << compiled;
}

TEST(Float16, PromotionFollowsNumPy) {
  Var h = tensor::vector("h", H), s = tensor::vector("s", DType::Float32);
  Var b = tensor::vector("b", DType::Int8), i = tensor::vector("i", DType::Int32);
  EXPECT_EQ((h + h).dtype(), H);
  EXPECT_EQ((h + s).dtype(), DType::Float32);
  EXPECT_EQ((h + b).dtype(), H);
  EXPECT_EQ((h + i).dtype(), DType::Float64);
  EXPECT_EQ((h * 2).dtype(), H);
  EXPECT_EQ((h * 2.5).dtype(), H);
  Function f = function({h, s}, {h + s});
  Array out = f({half_vector({1, 2}), Array::from_vector<float>({0.5f, 0.25f})})[0];
  EXPECT_EQ(out.dtype(), DType::Float32);
  EXPECT_EQ(out.to_vector<float>(), (std::vector<float>{1.5f, 2.25f}));
}

TEST(Float16, SumAccumulatesInFloat32AndReturnsFloat16) {
  Var x = tensor::vector("x", H);
  Var s = tensor::sum(x);
  EXPECT_EQ(s.dtype(), H);
  Function f = function({x}, {s, tensor::mean(x)});
  // 4096 ones: a float16 accumulator would stop at 2048 (2049 is not a half).
  auto out = f({Array::ones({4096}, H)});
  EXPECT_EQ(out[0].dtype(), H);
  EXPECT_EQ(out[0].item(), 4096.0);
  EXPECT_EQ(out[1].item(), 1.0);
  Function g = function({x}, {s}, {.mode = "fast_compile"});
  EXPECT_EQ(g({Array::ones({4096}, H)})[0].item(), 4096.0);
}

TEST(Float16, DotSoftmaxAndGradientsAgainstFloat64) {
  Var a = tensor::matrix("a", H), w = tensor::matrix("w", H);
  Var p = tensor::softmax(tensor::dot(a, w));
  Var cost = tensor::sum(p * p);
  std::vector<Var> g = grad(cost, {w});
  EXPECT_EQ(p.dtype(), H);
  EXPECT_EQ(g[0].dtype(), H);
  Function f = function({a, w}, {p, g[0]});
  Var a64 = tensor::dmatrix("a64"), w64 = tensor::dmatrix("w64");
  Var p64 = tensor::softmax(tensor::dot(a64, w64));
  Function f64 = function({a64, w64}, {p64, grad(tensor::sum(p64 * p64), {w64})[0]});
  const Array av = Array::randn({5, 4}, 1).astype(H), wv = Array::randn({4, 3}, 2).astype(H);
  auto out = f({av, wv});
  auto ref = f64({av.astype(DType::Float64), wv.astype(DType::Float64)});
  EXPECT_EQ(out[0].dtype(), H);
  EXPECT_EQ(out[1].dtype(), H);
  expect_close16(values(out[0]), values(ref[0]), 4e-3, 1e-3);
  expect_close16(values(out[1]), values(ref[1]), 1e-2, 2e-3);
}

TEST(Float16, SharedVariableUpdatesStoreFloat16) {
  SharedVar w = shared(half_vector({1, 2, 3}), "w");
  EXPECT_EQ(w.dtype(), H);
  Var x = tensor::vector("x", H);
  Function step = function({x}, {tensor::sum(w * x)}, {.updates = {{w, w - 0.5 * x}}});
  auto out = step({half_vector({1, 1, 2})});
  EXPECT_EQ(out[0].dtype(), H);
  EXPECT_EQ(out[0].item(), 9.0);
  Array now = w.get_value();
  EXPECT_EQ(now.dtype(), H);
  EXPECT_EQ(values(now), (std::vector<double>{0.5, 1.5, 2.0}));
}

TEST(Float16, RandomDrawsAndAlloc) {
  RandomStreams rng(42);
  Var u = rng.uniform({1000}, 0.0, 1.0, H);
  EXPECT_EQ(u.dtype(), H);
  Var filled = tensor::alloc(constant(Array::scalar(2, H)), std::vector<int64_t>{3}) + 1;
  EXPECT_EQ(filled.dtype(), H);
  Function f = function({}, {u, filled});
  auto out = f({});
  EXPECT_EQ(out[0].dtype(), H);
  double lo = 1, hi = 0, mean = 0;
  for (double v : values(out[0])) lo = std::min(lo, v), hi = std::max(hi, v), mean += v / 1000;
  EXPECT_GE(lo, 0.0);
  EXPECT_LE(hi, 1.0);
  EXPECT_NEAR(mean, 0.5, 0.05);
  EXPECT_EQ(values(out[1]), (std::vector<double>{3, 3, 3}));
}

// The rules that read a constant's value (x + 0, 1 - sigmoid(x), a Gemm's alpha) read float16
// constants too: they used to throw on them, and a throwing rule silently does not apply, so
// float16 graphs lost the stabilizing rewrites (found by the graph fuzzer).
TEST(Float16, RulesReadFloat16Constants) {
  Var x = tensor::matrix("x", H), w = tensor::matrix("w", H), b = tensor::matrix("b", H);
  Function stable = function({x}, {tensor::log(1.0 - tensor::sigmoid(x))}, {.mode = "fast_run"});
  EXPECT_EQ(values(stable({Array::from_vector<double>({12, 20}, Shape{1, 2}).astype(H)})[0]),
            (std::vector<double>{-12, -20}));  // log(0) = -inf without the rewrite
  EXPECT_NE(stable.explain().find("softplus"), std::string::npos) << stable.explain();

  Function gemm = function({x, w, b}, {tensor::dot(x, w) * 0.5 + b}, {.mode = "fast_run"});
  EXPECT_NE(gemm.explain().find("Gemm{alpha=0.5"), std::string::npos) << gemm.explain();
  Function plus_zero = function({x}, {tensor::exp(x + 0.0)}, {.mode = "fast_run"});
  EXPECT_EQ(plus_zero.explain().find("add"), std::string::npos) << plus_zero.explain();
}

}  // namespace
}  // namespace theon
