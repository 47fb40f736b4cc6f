// stabilize: a before/after test per rule (debugprint text), the lookalikes each must leave
// alone, and the values the rewrites exist for: a finite cost and the gradient softmax(x) - y
// where a probability underflows to 0 (issue 29), in fast_run and fast_compile.
#include <theon/theon.hpp>

#include "graph/function_graph.hpp"
#include "graph/print.hpp"
#include "rewrite/passes/passes.hpp"
#include "rewrite/pipeline.hpp"

#include "pass_run.hpp"
#include "text_count.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <set>

namespace theon {
namespace {

using theon::testing::count;

// How many distinct nodes debugprint shows whose text starts with `op` (a node printed again
// is referred to by its id).
size_t nodes(const std::string& text, const std::string& op) {
  std::set<std::string> ids;
  for (size_t p = text.find(op); p != std::string::npos; p = text.find(op, p + 1)) {
    if (p > 0 && text[p - 1] != '|' && text[p - 1] != '\n') continue;
    const size_t id = text.find("[id ", p), end = text.find(']', id);
    if (id != std::string::npos && end != std::string::npos) ids.insert(text.substr(id, end - id));
  }
  return ids.size();
}

using Stab = testing::PassRun;

Stab stabilize(const std::vector<Var>& inputs, const std::vector<Var>& outputs) {
  return testing::run_pass(inputs, outputs, rewrite::stabilize_pass, /*fixed_point=*/true);
}

// fast_run and none agree on `values` for every output.
void expect_same_results(const std::vector<Var>& inputs, const std::vector<Var>& outputs,
                         const std::vector<Array>& values, double tol) {
  std::vector<Array> a = function(inputs, outputs, {.mode = "fast_run"})(values);
  std::vector<Array> b = function(inputs, outputs, {.mode = "none"})(values);
  for (size_t k = 0; k < a.size(); ++k)
    EXPECT_TRUE(allclose(a[k], b[k], tol, tol)) << "output " << k << "\nfast_run:\n" << a[k] << "\nnone:\n" << b[k];
}

// The hand-written softmax of the tutorials: exp(x - max) / sum(exp(x - max)), keepdims.
Var handwritten_softmax(const Var& x, bool shift = true, bool block_max = false) {
  Var z = x;
  if (shift) z = x - (block_max ? disconnected_grad(tensor::max(x, 1, true)) : tensor::max(x, 1, true));
  Var e = tensor::exp(z);
  return e / tensor::sum(e, 1, true);
}

// ---- exp(z) / sum(exp(z), axis, keepdims) -> softmax(z, axis) ----

TEST(Stabilize, ExpOverSumOfExpBecomesSoftmax) {
  Var x = tensor::matrix("x"), v = tensor::vector("v");
  Var ex = tensor::exp(x), ev = tensor::exp(v);
  const struct {
    Var in, p;
    const char* softmax;
  } cases[] = {
      {x, ex / tensor::sum(ex, 1, true), "Softmax{axis=1}"},
      {x, ex / tensor::sum(ex, 1).dimshuffle({0, -1}), "Softmax{axis=1}"},  // Theano's form
      {x, ex / tensor::sum(ex, 0, true), "Softmax{axis=0}"},
      {v, ev / tensor::sum(ev), "Softmax{axis=0}"},  // the 0-d sum broadcast as (1,)
  };
  for (const auto& c : cases) {
    Stab s = stabilize({c.in}, {c.p});
    EXPECT_TRUE(s.changed) << s.why();
    EXPECT_EQ(nodes(s.after, c.softmax), 1u) << s.why();
    EXPECT_EQ(nodes(s.after, "Elemwise{exp}"), 0u) << s.why();
    EXPECT_EQ(nodes(s.after, "Elemwise{true_div}"), 0u) << s.why();
    Array value = c.in.ndim() == 2 ? Array::randn({3, 4}, 1, DType::Float32) : Array::randn({5}, 2, DType::Float32);
    expect_same_results({c.in}, {c.p}, {value}, 1e-6);
  }
}

TEST(Stabilize, ExpOverSumLookalikesAreKept) {
  Var x = tensor::matrix("x"), y = tensor::matrix("y");
  Var ex = tensor::exp(x);
  for (Var p : {
           ex / tensor::sum(ex, 1),                     // a (n,) sum broadcast along the rows: not a softmax
           ex / tensor::sum(ex),                        // over every axis
           ex / tensor::sum(tensor::exp(y), 1, true),   // another tensor's sum
           ex / tensor::sum(x, 1, true),                // not a sum of the exponentials
           ex / tensor::max(ex, 1, true),               // not a sum
           tensor::exp(x + 1.0) / tensor::sum(ex, 1, true),
       }) {
    Stab s = stabilize({x, y}, {p});
    EXPECT_FALSE(s.changed) << s.why();
    EXPECT_EQ(nodes(s.after, "Softmax"), 0u) << s.why();
  }
}

// ---- softmax(x - max(x, axis, keepdims)) -> softmax(x) ----

TEST(Stabilize, SoftmaxOfMaxShiftedInputIsSoftmaxOfInput) {
  Var x = tensor::matrix("x");
  Var m = tensor::max(x, 1, true);
  const struct {
    Var y;
    const char* op;
  } cases[] = {
      {tensor::softmax(x - m), "Softmax{axis=1}"},
      {tensor::log_softmax(x - m), "LogSoftmax{axis=1}"},
      {tensor::softmax(x - disconnected_grad(m)), "Softmax{axis=1}"},                   // stop-gradient max
      {tensor::softmax(x - zero_grad(tensor::max(x, 1)).dimshuffle({0, -1})), "Softmax{axis=1}"},  // block inside
      {tensor::softmax(x - tensor::max(x, 0, true), 0), "Softmax{axis=0}"},
      {handwritten_softmax(x), "Softmax{axis=1}"},  // the simplifier's softmax(x - max) in turn
  };
  for (const auto& c : cases) {
    Stab s = stabilize({x}, {c.y});
    EXPECT_TRUE(s.changed) << s.why();
    EXPECT_EQ(nodes(s.after, c.op), 1u) << s.why();
    EXPECT_EQ(nodes(s.after, "Max{"), 0u) << s.why();
    EXPECT_EQ(nodes(s.after, "Elemwise{sub}"), 0u) << s.why();
    // softmax subtracts the lane's maximum itself: the same values.
    expect_same_results({x}, {c.y}, {Array::randn({4, 5}, 3, DType::Float32)}, 1e-6);
  }
}

TEST(Stabilize, ShiftsThatAreNotTheLaneMaximumAreKept) {
  Var x = tensor::matrix("x"), y = tensor::matrix("y");
  for (Var s : {
           tensor::softmax(x - tensor::max(x, 0, true)),  // the max over the other axis
           tensor::softmax(x - tensor::max(y, 1, true)),  // another tensor's max
           tensor::softmax(x - tensor::min(x, 1, true)),
           tensor::softmax(x - tensor::max(x)),           // over every axis
           tensor::softmax(tensor::max(x, 1, true) - x),
       }) {
    Stab st = stabilize({x, y}, {s});
    EXPECT_FALSE(st.changed) << st.why();
  }
}

// ---- log(softmax(x)) -> log_softmax(x) ----

TEST(Stabilize, LogOfSoftmaxBecomesLogSoftmax) {
  Var x = tensor::matrix("x");
  Stab s = stabilize({x}, {tensor::log(tensor::softmax(x))});
  EXPECT_TRUE(s.changed) << s.why();
  EXPECT_EQ(nodes(s.before, "Softmax{axis=1}"), 1u) << s.why();
  EXPECT_EQ(nodes(s.after, "LogSoftmax{axis=1}"), 1u) << s.why();
  EXPECT_EQ(nodes(s.after, "Elemwise{log}"), 0u) << s.why();
  // Finite where softmax underflows.
  Var y = tensor::log(tensor::softmax(x));
  Array in = Array::from_vector<float>({0, 200, -200, 0}, Shape{2, 2});
  auto out = function({x}, {y}, {.mode = "fast_run"})({in})[0].to_vector<float>();
  EXPECT_NEAR(out[0], -200.0f, 1e-3);
  expect_same_results({x}, {tensor::log(tensor::softmax(x, 0))}, {Array::randn({3, 4}, 1, DType::Float32)}, 1e-6);
}

TEST(Stabilize, LogOfScaledSoftmaxIsKept) {
  Var x = tensor::matrix("x");
  Stab s = stabilize({x}, {tensor::log(tensor::softmax(x) * 2.0)});
  EXPECT_FALSE(s.changed) << s.why();
  EXPECT_EQ(nodes(s.after, "LogSoftmax"), 0u) << s.why();
}

// ---- the gradients ----

TEST(Stabilize, GradientOfLogSoftmaxDividesByNothing) {
  // categorical_crossentropy with a one-hot matrix is -sum(t * log(softmax(x)), 1): grad()
  // writes (a / sm - sum(a / sm * sm)) * sm, which becomes a - sum(a) * sm.
  Var x = tensor::dmatrix("x"), t = tensor::dmatrix("t");
  Var cost = tensor::sum(tensor::categorical_crossentropy(tensor::softmax(x), t));
  Var g = grad(cost, x);
  Stab s = stabilize({x, t}, {cost, g});
  EXPECT_TRUE(s.changed) << s.why();
  EXPECT_EQ(nodes(s.before, "Elemwise{true_div}"), 1u) << s.why();
  EXPECT_EQ(nodes(s.after, "Elemwise{true_div}"), 0u) << s.why();
  EXPECT_EQ(nodes(s.after, "LogSoftmax{axis=1}"), 1u) << s.why();
  EXPECT_EQ(nodes(s.after, "Elemwise{log}"), 0u) << s.why();
  // a has log_softmax's shape by construction: no broadcast is added.
  EXPECT_EQ(nodes(s.after, "Elemwise{switch}"), nodes(s.before, "Elemwise{switch}")) << s.why();
  expect_same_results({x, t}, {cost, g}, {Array::randn({4, 5}, 4, DType::Float64), Array::randn({4, 5}, 5, DType::Float64)},
                      1e-12);
}

TEST(Stabilize, GradientOfHandWrittenSoftmaxIsSoftmaxGradient) {
  // The tutorial's softmax: the forward becomes log_softmax(x), the gradient a - sum(a) * sm
  // with sm = softmax(x): no exp, no division, no max but the max's own (zero) gradient mask.
  Var x = tensor::dmatrix("x"), t = tensor::dmatrix("t");
  for (bool block_max : {false, true}) {
    Var cost = -tensor::sum(t * tensor::log(handwritten_softmax(x, true, block_max)));
    Var g = grad(cost, x);
    Stab s = stabilize({x, t}, {cost, g});
    EXPECT_TRUE(s.changed) << s.why();
    EXPECT_EQ(nodes(s.after, "Elemwise{true_div}"), 0u) << s.why();
    EXPECT_EQ(nodes(s.after, "Elemwise{exp}"), 0u) << s.why();
    EXPECT_EQ(nodes(s.after, "LogSoftmax{axis=1}"), 1u) << s.why();
    EXPECT_EQ(nodes(s.after, "Softmax{axis=1}"), 1u) << s.why();
    expect_same_results({x, t}, {cost, g},
                        {Array::randn({4, 5}, 6, DType::Float64), Array::randn({4, 5}, 7, DType::Float64)}, 1e-12);
  }
}

TEST(Stabilize, HandWrittenSoftmaxOverAnyAxisOfAnyRank) {
  // The rules are not tied to matrices: a (2, 3, 4) tensor over its last and its first axis.
  Var x = tensor::tensor(DType::Float64, {-1, -1, -1}, "x"), t = tensor::tensor(DType::Float64, {-1, -1, -1}, "t");
  for (int axis : {2, 0}) {
    Var e = tensor::exp(x - tensor::max(x, axis, true));
    Var cost = -tensor::sum(t * tensor::log(e / tensor::sum(e, axis, true)));
    Var g = grad(cost, x);
    Stab s = stabilize({x, t}, {cost, g});
    const std::string sm = "Softmax{axis=" + std::to_string(axis) + "}";
    EXPECT_EQ(nodes(s.after, "Log" + sm), 1u) << s.why();
    EXPECT_EQ(nodes(s.after, sm), 1u) << s.why();
    EXPECT_EQ(nodes(s.after, "Elemwise{true_div}"), 0u) << s.why();
    EXPECT_EQ(nodes(s.after, "Elemwise{exp}"), 0u) << s.why();
    expect_same_results({x, t}, {cost, g},
                        {Array::randn({2, 3, 4}, 11, DType::Float64), Array::randn({2, 3, 4}, 12, DType::Float64)}, 1e-12);
  }
}

TEST(Stabilize, HandWrittenSoftmaxWithLabelsGetsTheFusedGradient) {
  // categorical_crossentropy(p, labels) of a hand-written softmax: stabilize makes softmax's
  // gradient of CrossentropyGrad, i.e. SoftmaxCrossentropyGrad; specialize then fuses the
  // forward as it does for the library's softmax.
  Var x = tensor::matrix("x"), y = tensor::ivector("y");
  Var cost = tensor::mean(tensor::categorical_crossentropy(handwritten_softmax(x, false), y));
  Var g = grad(cost, x);
  Stab s = stabilize({x, y}, {cost, g});
  EXPECT_TRUE(s.changed) << s.why();
  EXPECT_EQ(nodes(s.after, "SoftmaxCrossentropyGrad"), 1u) << s.why();
  EXPECT_EQ(nodes(s.after, "CrossentropyGrad"), 0u) << s.why();
  Function f = function({x, y}, {cost, g}, {.mode = "fast_run"});
  const std::string text = debugprint(f);
  EXPECT_EQ(nodes(text, "SoftmaxCrossentropy.0"), 1u) << text;
  EXPECT_EQ(nodes(text, "SoftmaxCrossentropyGrad"), 1u) << text;
  EXPECT_EQ(nodes(text, "CrossentropyGrad"), 0u) << text;
  Array labels = Array::from_vector<int32_t>({2, 0, 4, 1}, Shape{4});
  expect_same_results({x, y}, {cost, g}, {Array::randn({4, 5}, 8, DType::Float32), labels}, 1e-5);
}

TEST(Stabilize, CrossentropyOfSoftmaxWithLabelsIsFusedInFastCompileToo) {
  // The fused op's loss never takes the log of a probability: finite where it underflows.
  Var x = tensor::matrix("x"), y = tensor::ivector("y");
  Var nll = tensor::categorical_crossentropy(tensor::softmax(x), y);
  Stab s = stabilize({x, y}, {nll});
  EXPECT_TRUE(s.changed) << s.why();
  EXPECT_EQ(nodes(s.after, "SoftmaxCrossentropy.0"), 1u) << s.why();
  EXPECT_EQ(nodes(s.after, "CategoricalCrossentropy"), 0u) << s.why();
  Function f = function({x, y}, {nll}, {.mode = "fast_compile"});
  EXPECT_EQ(nodes(debugprint(f), "SoftmaxCrossentropy.0"), 1u) << debugprint(f);
  std::vector<float> out =
      f({Array::from_vector<float>({0, 200, -200}, Shape{1, 3}), Array::from_vector<int32_t>({2}, Shape{1})})[0]
          .to_vector<float>();
  EXPECT_NEAR(out[0], 400.0f, 1e-3);
}

TEST(Stabilize, SoftmaxGradientLookalikesAreKept) {
  Var x = tensor::dmatrix("x"), t = tensor::dmatrix("t"), w = tensor::dmatrix("w");
  // softmax's gradient of something else than log: nothing to cancel.
  Var sm = tensor::softmax(x);
  Stab plain = stabilize({x, w}, {grad(tensor::sum(sm * w), x)});
  EXPECT_FALSE(plain.changed) << plain.why();
  // Divided by another softmax (over the other axis) than the one differentiated.
  Var a = t / tensor::softmax(x, 0);
  Var other = (a - tensor::sum(a * sm, 1, true)) * sm;
  Stab st = stabilize({x, t}, {other});
  EXPECT_FALSE(st.changed) << st.why();
  // A hand-written softmax's gradient not through log: it becomes softmax's gradient (one
  // softmax, no exp left) and stays the general form, no division to cancel.
  Var e = tensor::exp(x);
  Var p = e / tensor::sum(e, 1, true);
  Var g = grad(tensor::sum(p * w), x);
  Stab hw = stabilize({x, w}, {g});
  EXPECT_EQ(nodes(hw.after, "Softmax{axis=1}"), 1u) << hw.why();
  EXPECT_EQ(nodes(hw.after, "Elemwise{exp}"), 0u) << hw.why();
  expect_same_results({x, w}, {g}, {Array::randn({3, 4}, 9, DType::Float64), Array::randn({3, 4}, 10, DType::Float64)},
                      1e-12);
  // Not a softmax (the denominator is not the sum alone): neither the forward nor the gradient.
  Var q = e / (tensor::sum(e, 1, true) + 1.0);
  Stab near = stabilize({x, t}, {grad(-tensor::sum(t * tensor::log(q)), x)});
  EXPECT_FALSE(near.changed) << near.why();
}

// ---- issue 29: a probability that underflows to 0 ----

// float64 reference: per row, softmax(x) - t (the gradient of -sum(t * log softmax(x)) with
// one-hot rows) and the cost -sum(t * log_softmax(x)).
struct Reference {
  std::vector<double> grad;
  double cost = 0;
};
Reference reference(const std::vector<float>& x, const std::vector<float>& t, int rows, int cols) {
  Reference r;
  for (int i = 0; i < rows; ++i) {
    double m = -INFINITY, s = 0;
    for (int j = 0; j < cols; ++j) m = std::max(m, double(x[i * cols + j]));
    for (int j = 0; j < cols; ++j) s += std::exp(double(x[i * cols + j]) - m);
    for (int j = 0; j < cols; ++j) {
      const double lsm = double(x[i * cols + j]) - m - std::log(s);
      r.grad.push_back(std::exp(lsm) - t[i * cols + j]);
      r.cost -= t[i * cols + j] * lsm;
    }
  }
  return r;
}

TEST(Stabilize, UnderflowingProbabilityGivesFiniteCostAndGradient) {
  // The x = [[0, 200, -200]], y = [[0, 0, 1]] (softmax's 3rd probability is e^-400:
  // 0 in float32 and float64), and an ordinary row.
  const int rows = 2, cols = 3;
  const std::vector<float> xs = {0, 200, -200, 1, 2, 3}, ts = {0, 0, 1, 0, 1, 0};
  const std::vector<int32_t> labels = {2, 1};
  const Reference ref = reference(xs, ts, rows, cols);
  ASSERT_NEAR(ref.cost, 400 + (3 + std::log(std::exp(-2.0) + std::exp(-1.0) + 1) - 2), 1e-9);
  Var x = tensor::fmatrix("x"), t = tensor::fmatrix("t"), y = tensor::ivector("y");
  const struct {
    const char* name;
    Var cost;
    bool labels;
  } forms[] = {
      {"categorical_crossentropy(softmax(x), one-hot matrix)",
       tensor::sum(tensor::categorical_crossentropy(tensor::softmax(x), t)), false},
      {"-sum(t * log(softmax(x)))", -tensor::sum(t * tensor::log(tensor::softmax(x))), false},
      {"hand-written max-shifted softmax", -tensor::sum(t * tensor::log(handwritten_softmax(x))), false},
      {"hand-written softmax, stop-gradient max", -tensor::sum(t * tensor::log(handwritten_softmax(x, true, true))), false},
      {"hand-written softmax without the shift (exp(200) overflows)",
       -tensor::sum(t * tensor::log(handwritten_softmax(x, false))), false},
      {"categorical_crossentropy(hand-written softmax, one-hot matrix)",
       tensor::sum(tensor::categorical_crossentropy(handwritten_softmax(x), t)), false},
      {"the tutorial's -sum(log(p)[arange(n), y])",
       -tensor::sum(tensor::log(handwritten_softmax(x))[{tensor::arange(x.shape()[0]), y}]), true},
      // Integer labels: the fused SoftmaxCrossentropy, made by stabilize in fast_compile too.
      {"categorical_crossentropy(softmax(x), labels)", tensor::sum(tensor::categorical_crossentropy(tensor::softmax(x), y)),
       true},
      {"categorical_crossentropy(hand-written softmax, labels)",
       tensor::sum(tensor::categorical_crossentropy(handwritten_softmax(x), y)), true},
  };
  const Array xv = Array::from_vector<float>(xs, Shape{rows, cols}), tv = Array::from_vector<float>(ts, Shape{rows, cols});
  const Array yv = Array::from_vector<int32_t>(labels, Shape{rows});
  for (const auto& form : forms) {
    Var g = grad(form.cost, x);
    const std::vector<Var> ins = form.labels ? std::vector<Var>{x, y} : std::vector<Var>{x, t};
    const std::vector<Array> args = {xv, form.labels ? yv : tv};
    for (const char* mode : {"fast_run", "fast_compile"}) {
      SCOPED_TRACE(std::string(form.name) + ", mode " + mode);
      Function f = function(ins, {form.cost, g}, {.mode = mode});
      std::vector<Array> out = f(args);
      EXPECT_NEAR(out[0].to_vector<float>()[0], ref.cost, 1e-3) << debugprint(f);
      std::vector<float> gv = out[1].to_vector<float>();
      for (size_t k = 0; k < gv.size(); ++k) EXPECT_NEAR(gv[k], ref.grad[k], 1e-6) << "element " << k << "\n" << debugprint(f);
    }
    // Unoptimized, the cost takes the log of the 0 probability or the gradient divides by it:
    // what the rewrites fix.
    std::vector<Array> raw = function(ins, {form.cost, g}, {.mode = "none"})(args);
    EXPECT_FALSE(std::isfinite(raw[0].to_vector<float>()[0]) && std::isfinite(raw[1].to_vector<float>()[2])) << form.name;
  }
}

TEST(Stabilize, RunsInFastRunAndFastCompileButNotNone) {
  Var x = tensor::matrix("x");
  Var y = tensor::log(tensor::softmax(x));
  EXPECT_EQ(nodes(debugprint(function({x}, {y}, {.mode = "fast_run"})), "LogSoftmax"), 1u);
  EXPECT_EQ(nodes(debugprint(function({x}, {y}, {.mode = "fast_compile"})), "LogSoftmax"), 1u);
  EXPECT_EQ(nodes(debugprint(function({x}, {y}, {.mode = "none"})), "LogSoftmax"), 0u);
  const std::string saved = config().optimizer_excluding;
  config().optimizer_excluding = "stabilize";
  const std::string excluded = debugprint(function({x}, {y}, {.mode = "fast_run"}));
  config().optimizer_excluding = saved;
  EXPECT_EQ(nodes(excluded, "LogSoftmax"), 0u) << excluded;
}

}  // namespace
}  // namespace theon
