// gemm_epilogue: a broadcast bias vector and a following relu fold into the Gemm that
// specialize made; in a training graph relu's gradient mask is rewritten to read relu's output
// so the fold still fires. Optimized results equal mode=none's.
#include <theon/theon.hpp>

#include "graph/function_graph.hpp"
#include "graph/print.hpp"
#include "ops/gemm.hpp"
#include "ops/sum_to.hpp"
#include "rewrite/passes/passes.hpp"

#include "text_count.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <tuple>

namespace theon {
namespace {

using theon::testing::count;

// Compiles `outs` in fast_run and none, compares every output on `values`, and returns the
// fast_run program's debugprint.
std::string expect_same(const std::vector<Var>& inputs, const std::vector<Var>& outs, const std::vector<Array>& values) {
  Function opt = function(inputs, outs, {.mode = "fast_run"});
  Function ref = function(inputs, outs, {.mode = "none"});
  std::vector<Array> a = opt(values), b = ref(values);
  for (size_t i = 0; i < a.size(); ++i) {
    const DType t = a[i].dtype();
    const double tol = t == DType::Float32 ? 2e-5 : 1e-12;
    EXPECT_TRUE(allclose(a[i], b[i], tol, tol)) << "output " << i << " fast_run:\n" << a[i] << "\nnone:\n" << b[i];
  }
  return debugprint(opt);
}

TEST(GemmEpilogue, BiasAndReluFoldIntoOneGemm) {
  for (DType t : {DType::Float32, DType::Float64}) {
    Var x = tensor::matrix("x", t), w = tensor::matrix("w", t), b = tensor::vector("b", t);
    const std::vector<Array> vals = {Array::randn({300, 10}, 1, t), Array::randn({10, 5}, 2, t), Array::randn({5}, 3, t)};
    std::string p = expect_same({x, w, b}, {tensor::dot(x, w) + b}, vals);
    EXPECT_EQ(count(p, "Gemm{alpha=1, beta=1, bias=row}"), 1u) << p;
    EXPECT_EQ(count(p, "DimShuffle"), 0u) << p;
    p = expect_same({x, w, b}, {tensor::relu(tensor::dot(x, w) + b)}, vals);
    EXPECT_EQ(count(p, "Gemm{alpha=1, beta=1, bias=row, act=relu}"), 1u) << p;
    EXPECT_EQ(count(p, "relu"), 1u) << p;  // only inside the Gemm's props
    // maximum(y, 0) is relu after canonicalize; log(exp(r)) is r.
    p = expect_same({x, w, b}, {tensor::log(tensor::exp(tensor::maximum(tensor::dot(x, w) + b, literal(0.0, false))))},
                    vals);
    EXPECT_EQ(count(p, "act=relu"), 1u) << p;
    EXPECT_EQ(count(p, "Elemwise"), 0u) << p;
    // A column bias.
    Var c = tensor::vector("c", t);
    p = expect_same({x, w, c}, {tensor::relu(tensor::dot(x, w) + c.dimshuffle({0, -1}))},
                    {vals[0], vals[1], Array::randn({300}, 4, t)});
    EXPECT_EQ(count(p, "bias=col, act=relu"), 1u) << p;
  }
}

TEST(GemmEpilogue, DoesNotFoldWhenThePreActivationHasAnotherClient) {
  Var x = tensor::matrix("x"), w = tensor::matrix("w"), b = tensor::vector("b");
  Var z = tensor::dot(x, w) + b;
  const std::vector<Array> vals = {Array::randn({64, 30}, 1), Array::randn({30, 20}, 2), Array::randn({20}, 3)};
  // z is an output too: the relu stays a separate node (the bias still folds).
  std::string p = expect_same({x, w, b}, {tensor::relu(z), z}, vals);
  EXPECT_EQ(count(p, "act=relu"), 0u) << p;
  EXPECT_GE(count(p, "bias=row"), 1u) << p;  // (printed once per output that reads it)
  // z feeds an exp too.
  p = expect_same({x, w, b}, {tensor::relu(z) + tensor::exp(z)}, vals);
  EXPECT_EQ(count(p, "act=relu"), 0u) << p;
  // A plain product feeding relu and another client stays a Dot.
  Var d = tensor::dot(x, w);
  p = expect_same({x, w}, {tensor::relu(d), d}, {vals[0], vals[1]});
  EXPECT_EQ(count(p, "Gemm"), 0u) << p;
}

// Random values of dtype t: N(0, 1) for floats, integers in [-4, 4] otherwise.
Array random(const Shape& shape, uint64_t seed, DType t) {
  if (is_float(t)) return Array::randn(shape, seed, t);
  std::vector<int32_t> v;
  for (double x : Array::randn(shape, seed, DType::Float64).to_vector<double>())
    v.push_back(static_cast<int32_t>(std::lround(std::clamp(2 * x, -4.0, 4.0))));
  return Array::from_vector(v, shape).astype(t);
}

TEST(GemmEpilogue, ReluOfAPlainProductIsAGemmWithoutAddend) {
  for (DType t : {DType::Float32, DType::Float64, DType::Int32}) {
    Var x = tensor::matrix("x", t), w = tensor::matrix("w", t);
    // Sizes through the skinny kernel (n <= 16), the reference loop and the BLAS path.
    for (auto [m, k, n] : {std::tuple<int64_t, int64_t, int64_t>{300, 10, 5}, {3, 4, 2}, {64, 40, 50}, {1, 1, 1}}) {
      const std::vector<Array> vals = {random({m, k}, 1, t), random({k, n}, 2, t)};
      std::string p = expect_same({x, w}, {tensor::relu(tensor::dot(x, w))}, vals);
      EXPECT_EQ(count(p, "Gemm{alpha=1, beta=0, bias=none, act=relu}"), 1u) << p;
      EXPECT_EQ(count(p, "Dot"), 0u) << p;
      EXPECT_EQ(count(p, "Elemwise"), 0u) << p;
      // maximum(dot, 0) is relu after canonicalize (a float 0 would upcast an integer product).
      if (!is_float(t)) continue;
      p = expect_same({x, w}, {tensor::maximum(tensor::dot(x, w), literal(0.0, false))}, vals);
      EXPECT_EQ(count(p, "bias=none, act=relu"), 1u) << p;
    }
  }
}

TEST(GemmEpilogue, ReluAfterANoAddendGemmWithoutActStaysApart) {
  // Only make_op / the builder make bias=none with act=none; the relu rules rebuild Gemms
  // with c, so they leave this one alone (no fold, no crash) and the result is unchanged.
  Var x = tensor::matrix("x"), w = tensor::matrix("w");
  Var g(ops::gemm(x.node(), w.node(), 2.0, ops::GemmAct::None));
  const std::string p = expect_same({x, w}, {tensor::relu(g)}, {Array::randn({30, 10}, 1), Array::randn({10, 5}, 2)});
  EXPECT_EQ(count(p, "bias=none}"), 1u) << p;
  EXPECT_EQ(count(p, "relu"), 1u) << p;
}

TEST(GemmEpilogue, NoAddendReluKeepsNaN) {
  for (DType t : {DType::Float32, DType::Float64}) {
    for (auto [m, k, n] : {std::tuple<int64_t, int64_t, int64_t>{300, 10, 5}, {64, 40, 50}, {3, 2, 2}}) {
      Var x = tensor::matrix("x", t), w = tensor::matrix("w", t);
      std::vector<double> xs = Array::randn({m, k}, 1, DType::Float64).to_vector<double>();
      xs[k] = std::nan("");  // x[1, 0]: row 1 of the product is NaN, and relu keeps it
      const Array xv = Array::from_vector(xs, Shape{m, k}).astype(t), wv = Array::randn({k, n}, 2, t);
      Function f = function({x, w}, {tensor::relu(tensor::dot(x, w))}, {.mode = "fast_run"});
      EXPECT_EQ(count(debugprint(f), "bias=none, act=relu"), 1u) << debugprint(f);
      const Array out = f({xv, wv})[0];
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          const double v = out.item(i * n + j);
          if (i == 1) EXPECT_TRUE(std::isnan(v)) << i << "," << j;
          else EXPECT_TRUE(v >= 0) << i << "," << j << ": " << v;
        }
    }
  }
}

TEST(GemmEpilogue, NoAddendFoldsInATrainingGraph) {
  // relu's gradient reads dot(x, w) > 0: the mask rule makes it read relu's output, so the
  // product has the relu as its only client and folds into the Gemm.
  const DType t = DType::Float64;
  Var x = tensor::tensor(t, {200, 10}, "x"), y = tensor::tensor(t, {200, 5}, "y");
  Var w = tensor::tensor(t, {10, 5}, "w");
  Var h = tensor::relu(tensor::dot(x, w));
  Var loss = tensor::sum(tensor::sqr(h - y));
  std::vector<Var> g = grad(loss, {w});
  const std::vector<Array> vals = {Array::randn({200, 10}, 3, t), Array::randn({200, 5}, 4, t),
                                   Array::randn({10, 5}, 1, t)};
  std::string p = expect_same({x, y, w}, {loss, g[0]}, vals);
  EXPECT_GE(count(p, "bias=none, act=relu"), 1u) << p;
  EXPECT_EQ(count(p, "Elemwise{relu}"), 0u) << p;
}

TEST(GemmEpilogue, FiresInATrainingGraph) {
  // Static shapes: the add's gradient sum_to(gz, dot(x, w)) is then a no-op, so the product
  // feeds only the add and specialize forms the Gemm (with unknown dims sum_to keeps reading
  // the product's shape and no Gemm is formed, epilogue or not).
  const DType t = DType::Float64;
  Var x = tensor::tensor(t, {200, 10}, "x"), y = tensor::tensor(t, {200, 5}, "y");
  Var w = tensor::tensor(t, {10, 5}, "w"), b = tensor::tensor(t, {5}, "b");
  Var h = tensor::relu(tensor::dot(x, w) + b);
  Var loss = tensor::sum(tensor::sqr(h - y));
  std::vector<Var> g = grad(loss, {w, b});
  const std::vector<Array> vals = {Array::randn({200, 10}, 3, t), Array::randn({200, 5}, 4, t),
                                   Array::randn({10, 5}, 1, t), Array::randn({5}, 2, t)};
  std::string p = expect_same({x, y, w, b}, {loss, g[0], g[1]}, vals);
  EXPECT_GE(count(p, "Gemm{alpha=1, beta=1, bias=row, act=relu}"), 1u) << p;
  EXPECT_EQ(count(p, "Elemwise{relu}"), 0u) << p;
  // Without the mask rewrite the pre-activation keeps a second client and relu stays apart.
  const std::string saved = config().optimizer_excluding;
  config().optimizer_excluding = "gemm_epilogue";
  p = debugprint(function({x, y, w, b}, {loss, g[0], g[1]}, {.mode = "fast_run"}));
  config().optimizer_excluding = saved;
  EXPECT_EQ(count(p, "act=relu"), 0u) << p;
}

// A W6-like training step (dense relu layer, SGD update of w and b) with the batch size
// unknown: the add's gradient sum_to(gz, like=dot(x, w)) reads the product's shape, so the
// Dot used to stay apart (a Dot and a two-output Composite). Where the static types prove
// that the bias cannot broadcast the product (here the layer's width is known: 5), that shape
// client is rebuilt on the Gemm's output and dot + bias + relu fold into one Gemm.
TEST(GemmEpilogue, FoldsInATrainingGraphWithUnknownBatch) {
  for (DType t : {DType::Float32, DType::Float64}) {
    Var x = tensor::tensor(t, {-1, 10}, "x"), y = tensor::tensor(t, {-1, 5}, "y");
    Var w = tensor::tensor(t, {10, 5}, "w"), b = tensor::tensor(t, {-1}, "b");
    Var h = tensor::relu(tensor::dot(x, w) + b);
    Var loss = tensor::sum(tensor::sqr(h - y));
    std::vector<Var> g = grad(loss, {w, b});
    std::vector<Var> outs = {loss, w - 0.01 * g[0], b - 0.01 * g[1]};
    for (int64_t batch : {64, 1}) {  // a batch of 1 too: sum_to must not sum it away
      const std::vector<Array> vals = {Array::randn({batch, 10}, 3, t), Array::randn({batch, 5}, 4, t),
                                       Array::randn({10, 5}, 1, t), Array::randn({5}, 2, t)};
      std::string p = expect_same({x, y, w, b}, outs, vals);
      EXPECT_GE(count(p, "bias=row, act=relu}"), 1u) << p;
      EXPECT_EQ(count(p, "Elemwise{relu}"), 0u) << p;
      EXPECT_EQ(count(p, "relu(add"), 0u) << p;  // no Composite computing the add and relu
    }
  }
}

// The same layer where the product's width may be 1 while the bias's may not: the add may
// broadcast the product (width 1 against a bias of 3), so its shape is not the sum's and the
// product's shape client keeps the Dot. Results stay those of mode none, broadcast included.
TEST(GemmEpilogue, KeepsTheDotWhenTheBiasMayBroadcastTheProduct) {
  const DType t = DType::Float64;
  for (const std::vector<int64_t>& wdims : {std::vector<int64_t>{-1, -1}, std::vector<int64_t>{10, 1}}) {
    Var x = tensor::tensor(t, {-1, 10}, "x"), w = tensor::tensor(t, wdims, "w"), b = tensor::tensor(t, {-1}, "b");
    Var h = tensor::relu(tensor::dot(x, w) + b);
    Var loss = tensor::sum(tensor::sqr(h));
    std::vector<Var> g = grad(loss, {w, b});
    // w of width 1 and a bias of 3: the product (8, 1) broadcasts to (8, 3).
    const std::vector<Array> vals = {Array::randn({8, 10}, 3, t), Array::randn({10, 1}, 1, t), Array::randn({3}, 2, t)};
    std::string p = expect_same({x, w, b}, {loss, g[0], g[1]}, vals);
    EXPECT_EQ(count(p, "act=relu"), 0u) << p;
    EXPECT_GE(count(p, "Dot [id"), 1u) << p;
    // The gradient of w has w's shape: the broadcast columns are summed.
    Function f = function({x, w, b}, {g[0]});
    Array gw = f(vals)[0];
    EXPECT_EQ(gw.shape(), (Shape{10, 1}));
  }
  // A shape client that the addend itself depends on (c = sum_to(q, like=dot)): rebuilding
  // it on the Gemm would make a cycle, so nothing folds; results unchanged.
  Var x = tensor::tensor(t, {-1, 10}, "x"), w = tensor::tensor(t, {10, 5}, "w"), q = tensor::tensor(t, {-1, 5}, "q");
  Var d = tensor::dot(x, w);
  Var c = Var(ops::sum_to(q.node(), d.node()));
  ASSERT_EQ(c.node()->owner->op().kind(), graph::OpKind::SumTo);
  std::string p = expect_same({x, w, q}, {d + c}, {Array::randn({6, 10}, 1, t), Array::randn({10, 5}, 2, t),
                                                   Array::randn({6, 5}, 3, t)});
  EXPECT_EQ(count(p, "Gemm"), 0u) << p;
}

TEST(GemmEpilogue, GradientOfTheFusedGemmMatchesFiniteDifferences) {
  using ops::GemmAct;
  using ops::GemmAddend;
  for (GemmAddend addend : {GemmAddend::Row, GemmAddend::Col, GemmAddend::Matrix}) {
    auto fn = [addend](const std::vector<Var>& v) {
      return Var(ops::gemm(v[2].node(), v[0].node(), v[1].node(), 1.5, -0.5, {addend, GemmAct::Relu}));
    };
    const Shape cs = addend == GemmAddend::Row ? Shape{5} : addend == GemmAddend::Col ? Shape{3} : Shape{3, 5};
    verify_grad(fn, {Array::randn({3, 4}, 1, DType::Float64), Array::randn({4, 5}, 2, DType::Float64),
                     Array::randn(cs, 3, DType::Float64)});
  }
  // No addend: act(alpha * a.b), inputs (a, b).
  for (GemmAct act : {GemmAct::Relu, GemmAct::None}) {
    auto fn = [act](const std::vector<Var>& v) { return Var(ops::gemm(v[0].node(), v[1].node(), 1.5, act)); };
    verify_grad(fn, {Array::randn({3, 4}, 1, DType::Float64), Array::randn({4, 5}, 2, DType::Float64)});
  }
  auto relu_dot = [](const std::vector<Var>& v) { return tensor::relu(tensor::dot(v[0], v[1])); };
  verify_grad(relu_dot, {Array::randn({6, 4}, 7, DType::Float64), Array::randn({4, 3}, 8, DType::Float64)});
  // dot + bias + relu through the user API, on float64.
  auto dense = [](const std::vector<Var>& v) { return tensor::relu(tensor::dot(v[0], v[1]) + v[2]); };
  verify_grad(dense, {Array::randn({6, 4}, 4, DType::Float64), Array::randn({4, 3}, 5, DType::Float64),
                      Array::randn({3}, 6, DType::Float64)});
}

TEST(GemmEpilogue, BuilderAndPropsCheckTheEpilogue) {
  using ops::GemmAct;
  using ops::GemmAddend;
  Var a = tensor::matrix("a"), b = tensor::matrix("b"), v = tensor::vector("v"), c = tensor::matrix("c");
  // A row bias must be a vector, a matrix addend a matrix.
  EXPECT_THROW(ops::gemm(c.node(), a.node(), b.node(), 1, 1, {GemmAddend::Row, GemmAct::None}), TypeError);
  EXPECT_THROW(ops::gemm(v.node(), a.node(), b.node(), 1, 1, {GemmAddend::Matrix, GemmAct::Relu}), TypeError);
  // Static length mismatch: b has 5 columns, the bias 4 entries.
  Var b5 = tensor::tensor(DType::Float32, {-1, 5}, "b5"), v4 = tensor::tensor(DType::Float32, {4}, "v4");
  EXPECT_THROW(ops::gemm(v4.node(), a.node(), b5.node(), 1, 1, {GemmAddend::Row, GemmAct::None}), ShapeError);
  // Run time: a bias of the wrong length names the node and the shapes.
  Function f = function({a, b, v}, {Var(ops::gemm(v.node(), a.node(), b.node(), 1, 1, {GemmAddend::Row, GemmAct::Relu}))},
                        {.mode = "none"});
  try {
    f({Array::randn({2, 3}, 1, DType::Float32), Array::randn({3, 4}, 2, DType::Float32), Array::randn({3}, 3, DType::Float32)});
    ADD_FAILURE() << "no error";
  } catch (const ShapeError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("row addend"), std::string::npos) << msg;
    EXPECT_NE(msg.find("v of shape (3,)"), std::string::npos) << msg;
  }
  // Props: equality, hashing and the printed form distinguish the epilogues.
  const ops::Gemm plain(1, 1), row(1, 1, {GemmAddend::Row, GemmAct::None}), relu(1, 1, {GemmAddend::Row, GemmAct::Relu});
  EXPECT_FALSE(plain.equals(row));
  EXPECT_FALSE(row.equals(relu));
  EXPECT_TRUE(relu.equals(ops::Gemm(1, 1, {GemmAddend::Row, GemmAct::Relu})));
  const graph::OpProps p = relu.props();
  ASSERT_EQ(p.size(), 4u);
  EXPECT_EQ(p[2], (std::pair<std::string, std::string>{"bias", "row"}));
  EXPECT_EQ(p[3], (std::pair<std::string, std::string>{"act", "relu"}));
  EXPECT_EQ(plain.props().size(), 2u);
  // No addend: its own prop value, not equal to any addend's; built without c, beta 0.
  const ops::Gemm none(1, 0, {GemmAddend::None, GemmAct::Relu});
  EXPECT_FALSE(none.equals(ops::Gemm(1, 0, {GemmAddend::Row, GemmAct::Relu})));
  EXPECT_TRUE(none.equals(ops::Gemm(1, 0, {GemmAddend::None, GemmAct::Relu})));
  EXPECT_NE(none.hash(), ops::Gemm(1, 0, {GemmAddend::Matrix, GemmAct::Relu}).hash());
  EXPECT_EQ(none.props()[2], (std::pair<std::string, std::string>{"bias", "none"}));
  EXPECT_THROW(ops::gemm(c.node(), a.node(), b.node(), 1, 0, {GemmAddend::None, GemmAct::Relu}), TypeError);
  EXPECT_THROW(ops::gemm(v.node(), b.node(), 1, GemmAct::Relu), TypeError);  // a must be a matrix
  EXPECT_THROW(ops::gemm(a.node(), tensor::matrix("i", DType::Int32).node(), 1, GemmAct::Relu), TypeError);
  Var a3 = tensor::tensor(DType::Float32, {-1, 3}, "a3"), b45 = tensor::tensor(DType::Float32, {4, 5}, "b45");
  EXPECT_THROW(ops::gemm(a3.node(), b45.node(), 1, GemmAct::Relu), ShapeError);  // inner 3 vs 4
  // Run time: the inner dimensions name both operands.
  Function g = function({a, b}, {Var(ops::gemm(a.node(), b.node(), 1, GemmAct::Relu))}, {.mode = "none"});
  try {
    g({Array::randn({2, 3}, 1, DType::Float32), Array::randn({4, 4}, 2, DType::Float32)});
    ADD_FAILURE() << "no error";
  } catch (const ShapeError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("a has shape (2, 3)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("b has shape (4, 4)"), std::string::npos) << msg;
  }
}

TEST(GemmEpilogue, IsANamedPassThatCanBeExcluded) {
  Var x = tensor::matrix("x"), w = tensor::matrix("w"), b = tensor::vector("b");
  Var y = tensor::relu(tensor::dot(x, w) + b);
  std::string p = debugprint(function({x, w, b}, {y}, {.mode = "fast_run"}));
  EXPECT_EQ(count(p, "act=relu"), 1u) << p;
  const std::string saved = config().optimizer_excluding;
  config().optimizer_excluding = "gemm_epilogue";
  p = debugprint(function({x, w, b}, {y}, {.mode = "fast_run"}));
  config().optimizer_excluding = saved;
  EXPECT_EQ(count(p, "act=relu"), 0u) << p;
  EXPECT_EQ(count(p, "Gemm{alpha=1, beta=1}"), 1u) << p;
}

}  // namespace
}  // namespace theon
