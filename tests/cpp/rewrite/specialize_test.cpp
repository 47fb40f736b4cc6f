// specialize: dot(a, b) + c and alpha * dot(a, b) + beta * c become one Gemm node; Gemm (an
// internal op) is checked against dot + add in several shapes, dtypes and layouts.
#include <theon/theon.hpp>

#include "backends/backend.hpp"
#include "backends/cpu/cpu_kernels.hpp"
#include "graph/function_graph.hpp"
#include "graph/print.hpp"
#include "ops/gemm.hpp"
#include "rewrite/passes/passes.hpp"
#include "rewrite/pipeline.hpp"

#include "pass_run.hpp"
#include "text_count.hpp"

#include <gtest/gtest.h>

#include <set>

namespace theon {
namespace {

using theon::testing::count;

using Spec = testing::PassRun;

Spec specialize(const std::vector<Var>& inputs, const std::vector<Var>& outputs) {
  return testing::run_pass(inputs, outputs, rewrite::specialize_pass, /*fixed_point=*/false);
}

// Compiles `y` in fast_run (Gemm) and none (dot + add) and compares on `values`.
void expect_gemm_matches(const std::vector<Var>& inputs, const Var& y, const std::vector<Array>& values) {
  Function opt = function(inputs, {y}, {.mode = "fast_run"});
  Function ref = function(inputs, {y}, {.mode = "none"});
  EXPECT_EQ(count(debugprint(opt), "Gemm"), 1u) << debugprint(opt);
  EXPECT_EQ(count(debugprint(ref), "Gemm"), 0u);
  Array a = opt(values)[0], b = ref(values)[0];
  const DType t = y.node()->type.dtype;
  const double tol = t == DType::Float32 ? 2e-5 : t == DType::Float64 ? 1e-12 : 0;
  EXPECT_TRUE(allclose(a, b, tol, tol)) << "fast_run:\n" << a << "\nnone:\n" << b;
}

TEST(Specialize, DotPlusMatrixBecomesGemm) {
  Var a = tensor::matrix("a"), b = tensor::matrix("b"), c = tensor::matrix("c");
  Spec s = specialize({a, b, c}, {tensor::dot(a, b) + c});
  EXPECT_TRUE(s.changed) << s.why();
  EXPECT_EQ(count(s.before, "Dot"), 1u) << s.why();
  EXPECT_EQ(count(s.after, "Gemm{alpha=1, beta=1}"), 1u) << s.why();
  EXPECT_EQ(count(s.after, "Dot"), 0u) << s.why();
  EXPECT_EQ(count(s.after, "Elemwise{add}"), 0u) << s.why();
  // c + dot(a, b) too.
  EXPECT_EQ(count(specialize({a, b, c}, {c + tensor::dot(a, b)}).after, "Gemm"), 1u);
}

TEST(Specialize, ScaledFormsSetAlphaAndBeta) {
  Var a = tensor::matrix("a"), b = tensor::matrix("b"), c = tensor::matrix("c");
  Spec s = specialize({a, b, c}, {tensor::dot(a, b) * 2.0 + 0.5 * c});
  EXPECT_EQ(count(s.after, "Gemm{alpha=2, beta=0.5}"), 1u) << s.why();
  EXPECT_EQ(count(s.after, "Elemwise{mul}"), 0u) << s.why();
  Spec d = specialize({a, b, c}, {tensor::dot(a, b) - c});
  EXPECT_EQ(count(d.after, "Gemm{alpha=1, beta=-1}"), 1u) << d.why();
  Spec e = specialize({a, b, c}, {c - 3.0 * tensor::dot(a, b)});
  EXPECT_EQ(count(e.after, "Gemm{alpha=-3, beta=1}"), 1u) << e.why();
}

TEST(Specialize, NegativeCasesAreKept) {
  Var a = tensor::matrix("a"), b = tensor::matrix("b"), c = tensor::matrix("c");
  Var p = tensor::dot(a, b);
  // The product is used elsewhere: a Gemm would compute it twice.
  EXPECT_FALSE(specialize({a, b, c}, {p + c, tensor::exp(p)}).changed);
  EXPECT_FALSE(specialize({a, b, c}, {p + c, p}).changed);
  // Matrix . vector: not a matrix product.
  Var v = tensor::vector("v"), w = tensor::vector("w");
  EXPECT_FALSE(specialize({a, v, w}, {tensor::dot(a, v) + w}).changed);
  // float32 product + float64 c: the add reads a cast of the product.
  Var cd = tensor::matrix("cd", DType::Float64);
  EXPECT_FALSE(specialize({a, b, cd}, {tensor::dot(a, b) + cd}).changed);
  // beta == 0 would drop NaN * 0; a non-constant scale is not alpha.
  EXPECT_FALSE(specialize({a, b, c}, {tensor::dot(a, b) + 0.0 * c}).changed);
  EXPECT_FALSE(specialize({a, b, c}, {tensor::dot(a, b) * c + c}).changed);
  // Not an add.
  EXPECT_FALSE(specialize({a, b, c}, {tensor::dot(a, b) * c}).changed);
}

TEST(Specialize, GemmMatchesDotPlusAddFloat32AndFloat64) {
  for (DType t : {DType::Float32, DType::Float64}) {
    Var a = tensor::matrix("a", t), b = tensor::matrix("b", t), c = tensor::matrix("c", t);
    Var y = tensor::dot(a, b) + c;
    // Small (the reference loop) and large enough for BLAS, with odd sizes.
    for (auto [m, k, n] : {std::tuple<int64_t, int64_t, int64_t>{2, 3, 4}, {37, 41, 29}, {64, 70, 50}, {1, 40, 600}})
      expect_gemm_matches({a, b, c}, y,
                          {Array::randn({m, k}, 1, t), Array::randn({k, n}, 2, t), Array::randn({m, n}, 3, t)});
    Var y2 = 1.5 * tensor::dot(a, b) - 0.25 * c;
    expect_gemm_matches({a, b, c}, y2,
                        {Array::randn({40, 50}, 4, t), Array::randn({50, 60}, 5, t), Array::randn({40, 60}, 6, t)});
  }
}

TEST(Specialize, BiasRowAndColumnBroadcast) {
  for (DType t : {DType::Float32, DType::Float64}) {
    Var a = tensor::matrix("a", t), b = tensor::matrix("b", t), bias = tensor::vector("bias", t);
    Var y = tensor::dot(a, b) + bias;  // (m, n) + (n,): a row broadcast
    expect_gemm_matches({a, b, bias}, y, {Array::randn({30, 40}, 1, t), Array::randn({40, 50}, 2, t),
                                          Array::randn({50}, 3, t)});
    expect_gemm_matches({a, b, bias}, y, {Array::randn({3, 4}, 1, t), Array::randn({4, 5}, 2, t),
                                          Array::randn({5}, 3, t)});
    Var col = tensor::tensor(t, {-1, 1}, "col");  // a column broadcast
    expect_gemm_matches({a, b, col}, tensor::dot(a, b) + col,
                        {Array::randn({30, 40}, 1, t), Array::randn({40, 50}, 2, t), Array::randn({30, 1}, 3, t)});
    // The product broadcast at run time against a larger c: (1, n) + (m, n).
    Var c = tensor::matrix("c", t);
    expect_gemm_matches({a, b, c}, tensor::dot(a, b) + c,
                        {Array::randn({1, 40}, 1, t), Array::randn({40, 50}, 2, t), Array::randn({30, 50}, 3, t)});
  }
}

TEST(Specialize, TransposedAndStridedOperands) {
  for (DType t : {DType::Float32, DType::Float64}) {
    Var a = tensor::matrix("a", t), b = tensor::matrix("b", t), c = tensor::matrix("c", t);
    Var y = tensor::dot(tensor::transpose(a), tensor::transpose(b)) + c;
    expect_gemm_matches({a, b, c}, y,
                        {Array::randn({40, 30}, 1, t), Array::randn({50, 40}, 2, t), Array::randn({30, 50}, 3, t)});
    // Every other row and column: neither stride is 1, so the kernel copies first.
    Var z = tensor::dot(a[{Slice{{}, {}, 2}, Slice{{}, {}, 2}}], b) + c;
    expect_gemm_matches({a, b, c}, z,
                        {Array::randn({60, 80}, 1, t), Array::randn({40, 50}, 2, t), Array::randn({30, 50}, 3, t)});
    // A transposed c.
    Var w = tensor::dot(a, b) + tensor::transpose(c);
    expect_gemm_matches({a, b, c}, w,
                        {Array::randn({30, 40}, 1, t), Array::randn({40, 50}, 2, t), Array::randn({50, 30}, 3, t)});
  }
}

TEST(Specialize, IntegerGemmIsExact) {
  Var a = tensor::matrix("a", DType::Int64), b = tensor::matrix("b", DType::Int64), c = tensor::matrix("c", DType::Int64);
  Var y = tensor::dot(a, b) * 3 - c;
  Array av = Array::arange(12, DType::Int64).reshape({3, 4}), bv = Array::arange(20, DType::Int64).reshape({4, 5});
  expect_gemm_matches({a, b, c}, y, {av, bv, Array::full({3, 5}, 7, DType::Int64)});
}

TEST(Specialize, CpuKernelMatchesReferenceOnStridedOperands) {
  // The BLAS kernel (c broadcast into the output, then beta) against the exact loop, directly.
  for (DType t : {DType::Float32, DType::Float64}) {
    Var a = tensor::matrix("a", t), b = tensor::matrix("b", t), c = tensor::matrix("c", t);
    graph::VarPtr y = ops::gemm(c.node(), a.node(), b.node(), 0.75, -2.0);
    const graph::Apply& node = *y->owner;
    const auto& kernel = backends::cpu_backend().kernel(node);
    EXPECT_NE(kernel.name(), "reference");
    Array at = Array::randn({50, 40}, 1, t).transpose(), bv = Array::randn({50, 60}, 2, t);  // a: column-major
    for (Array cv : {Array::randn({1, 60}, 3, t), Array::randn({40, 1}, 4, t), Array::randn({60, 40}, 5, t).transpose()}) {
      std::vector<Array> ins = {cv, at, bv}, got = {Array::empty({40, 60}, t)}, want = {Array::empty({40, 60}, t)};
      kernel.run(nullptr, node, ins, got);
      backends::cpu::gemm_loop(node, ins, want);
      const double tol = t == DType::Float32 ? 1e-4 : 1e-12;
      EXPECT_TRUE(allclose(got[0], want[0], tol, tol)) << dtype_name(t) << "\nkernel:\n" << got[0] << "\nreference:\n" << want[0];
    }
  }
}

TEST(Specialize, GemmGradientMatchesFiniteDifferences) {
  auto fn = [](const std::vector<Var>& v) {
    return Var(ops::gemm(v[2].node(), v[0].node(), v[1].node(), 1.5, -0.5));
  };
  verify_grad(fn, {Array::randn({3, 4}, 1, DType::Float64), Array::randn({4, 5}, 2, DType::Float64),
                   Array::randn({1, 5}, 3, DType::Float64)});
  verify_grad(fn, {Array::randn({1, 4}, 1, DType::Float64), Array::randn({4, 5}, 2, DType::Float64),
                   Array::randn({3, 5}, 3, DType::Float64)});
}

TEST(Specialize, GemmBuilderChecksOperands) {
  Var a = tensor::matrix("a"), b = tensor::matrix("b"), v = tensor::vector("v");
  Var d = tensor::matrix("d", DType::Float64);
  EXPECT_THROW(ops::gemm(v.node(), a.node(), b.node(), 1, 1), TypeError);
  EXPECT_THROW(ops::gemm(d.node(), a.node(), b.node(), 1, 1), TypeError);
  Var a3 = tensor::tensor(DType::Float32, {2, 3}), b4 = tensor::tensor(DType::Float32, {4, 5});
  EXPECT_THROW(ops::gemm(a.node(), a3.node(), b4.node(), 1, 1), ShapeError);
  Function f = function({a, b, d}, {Var(ops::gemm(tensor::cast(d, DType::Float32).node(), a.node(), b.node(), 1, 1))},
                        {.mode = "none"});
  EXPECT_THROW(f({Array::randn({2, 3}, 1, DType::Float32), Array::randn({3, 4}, 2, DType::Float32),
                  Array::randn({3, 4}, 3, DType::Float64)}),
               ShapeError);
}

TEST(Specialize, RunsInFastRunOnly) {
  Var a = tensor::matrix("a"), b = tensor::matrix("b"), c = tensor::matrix("c");
  Var y = tensor::dot(a, b) + c;
  EXPECT_EQ(count(debugprint(function({a, b, c}, {y}, {.mode = "fast_run"})), "Gemm"), 1u);
  EXPECT_EQ(count(debugprint(function({a, b, c}, {y}, {.mode = "fast_compile"})), "Gemm"), 0u);
}


// ---- softmax + categorical crossentropy ----

// How many distinct nodes debugprint shows whose text starts with `op` (a node printed again
// is referred to by its id).
size_t nodes_named(const std::string& text, const std::string& op) {
  std::set<std::string> ids;
  for (size_t p = text.find(op); p != std::string::npos; p = text.find(op, p + 1)) {
    const size_t id = text.find("[id ", p), end = text.find(']', id);
    if (id != std::string::npos && end != std::string::npos) ids.insert(text.substr(id, end - id));
  }
  return ids.size();
}

// Row i's label: spread over the classes, deterministic.
Array labels_for(int64_t rows, int64_t classes, DType dtype = DType::Int32) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < rows; ++i) v.push_back((i * 7 + 3) % classes);
  return Array::from_vector<int64_t>(v, Shape{rows}).astype(dtype);
}

TEST(Specialize, SoftmaxCrossentropyBecomesOneFusedOp) {
  Var x = tensor::matrix("x"), y = tensor::ivector("y");
  Var p = tensor::softmax(x).set_name("probs");
  Var nll = tensor::categorical_crossentropy(p, y).set_name("nll");
  Spec s = specialize({x, y}, {nll, tensor::argmax(p, 1)});
  EXPECT_TRUE(s.changed) << s.why();
  EXPECT_EQ(count(s.before, "Softmax{axis=1}"), 2u) << s.why();
  EXPECT_EQ(count(s.before, "CategoricalCrossentropy"), 1u) << s.why();
  // The loss and the softmax (which argmax reads) both come from the one fused node.
  EXPECT_EQ(count(s.after, "SoftmaxCrossentropy.0 [id A] 'nll'"), 1u) << s.why();
  EXPECT_EQ(count(s.after, "SoftmaxCrossentropy.1 [id A] 'probs'"), 1u) << s.why();
  EXPECT_EQ(count(s.after, "Softmax{"), 0u) << s.why();
  EXPECT_EQ(count(s.after, "CategoricalCrossentropy"), 0u) << s.why();
}

TEST(Specialize, SoftmaxCrossentropyNegativeCasesAreKept) {
  Var x = tensor::matrix("x"), y = tensor::ivector("y"), t = tensor::matrix("t");
  // A softmax over the columns, transposed: not one row pass.
  EXPECT_FALSE(specialize({x, y}, {tensor::categorical_crossentropy(tensor::transpose(tensor::softmax(x, 0)), y)})
                   .changed);
  // Probabilities that are not a softmax.
  EXPECT_FALSE(specialize({x, y}, {tensor::categorical_crossentropy(tensor::sigmoid(x), y)}).changed);
  // Dense targets keep the (stable) log_softmax form.
  EXPECT_FALSE(specialize({x, t}, {tensor::categorical_crossentropy(tensor::softmax(x), t)}).changed);
}

TEST(Specialize, SoftmaxCrossentropyTrainingGraphIsFusedBothWays) {
  // The demo's graph (examples/train_digits.cpp): forward and backward each become one op.
  Var x = tensor::fmatrix("x"), y = tensor::ivector("y");
  SharedVar w = shared(Array::randn({6, 4}, 1, DType::Float32), "w");
  SharedVar b = shared(Array::zeros({4}, DType::Float32), "b");
  Var p = tensor::softmax(tensor::dot(x, w) + b);
  Var loss = tensor::mean(tensor::categorical_crossentropy(p, y));
  std::vector<Var> g = grad(loss, std::vector<Var>{w, b});
  Function fast = function({x, y}, {loss, g[0], g[1], tensor::argmax(p, 1)}, {.mode = "fast_run"});
  Function none = function({x, y}, {loss, g[0], g[1], tensor::argmax(p, 1)}, {.mode = "none"});
  const std::string text = debugprint(fast);
  EXPECT_EQ(nodes_named(text, "SoftmaxCrossentropy."), 1u) << text;
  EXPECT_EQ(nodes_named(text, "SoftmaxCrossentropyGrad"), 1u) << text;
  EXPECT_EQ(count(text, "Softmax{"), 0u) << text;
  EXPECT_EQ(count(text, "CategoricalCrossentropy"), 0u) << text;
  EXPECT_EQ(count(text, "LabelScatter"), 0u) << text;
  EXPECT_EQ(nodes_named(debugprint(none), "Softmax{axis=1}"), 1u) << debugprint(none);
  const std::vector<Array> values = {Array::randn({9, 6}, 2, DType::Float32), labels_for(9, 4)};
  std::vector<Array> a = fast(values), r = none(values);
  for (size_t k = 0; k < a.size(); ++k) EXPECT_TRUE(allclose(a[k], r[k], 1e-5, 1e-6)) << k << a[k] << r[k];
}

TEST(Specialize, SoftmaxCrossentropyMatchesNoneOnRandomShapes) {
  // Rows 0 and 1, odd sizes, and one large enough for the threaded row loop; x contiguous and
  // transposed (the fused kernel then reads a strided matrix); a weighted sum so each row's
  // gradient differs.
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{0, 5}, {1, 5}, {1, 1}, {3, 7}, {37, 10}, {300, 150}};
  for (DType t : {DType::Float32, DType::Float64}) {
    const double tol = t == DType::Float32 ? 2e-5 : 1e-12;
    for (bool transposed : {false, true}) {
      Var in = tensor::matrix("x", t), r = tensor::vector("r", t), y = tensor::lvector("y");
      Var logits = transposed ? tensor::transpose(in) : in;
      Var p = tensor::softmax(logits);
      Var loss = tensor::categorical_crossentropy(p, y);
      Var gx = grad(tensor::sum(loss * r), in);
      Function fast = function({in, r, y}, {loss, p, gx}, {.mode = "fast_run"});
      Function none = function({in, r, y}, {loss, p, gx}, {.mode = "none"});
      ASSERT_EQ(nodes_named(debugprint(fast), "SoftmaxCrossentropy."), 1u) << debugprint(fast);
      ASSERT_EQ(nodes_named(debugprint(fast), "SoftmaxCrossentropyGrad"), 1u) << debugprint(fast);
      uint64_t seed = 10;
      for (auto [rows, classes] : shapes) {
        Array xv = transposed ? Array::randn({classes, rows}, ++seed, t) : Array::randn({rows, classes}, ++seed, t);
        const std::vector<Array> values = {xv, Array::randn({rows}, ++seed, t), labels_for(rows, classes, DType::Int64)};
        std::vector<Array> a = fast(values), b = none(values);
        for (size_t k = 0; k < a.size(); ++k) {
          EXPECT_EQ(a[k].dtype(), t);
          EXPECT_EQ(a[k].shape(), b[k].shape());
          EXPECT_TRUE(allclose(a[k], b[k], tol, tol))
              << dtype_name(t) << " " << rows << "x" << classes << (transposed ? " transposed" : "") << " output " << k
              << "\nfast_run:\n" << a[k] << "\nnone:\n" << b[k];
        }
      }
    }
  }
}

TEST(Specialize, SoftmaxCrossentropyLabelOutOfRangeNamesEverything) {
  Var x = tensor::dmatrix("scores"), y = tensor::ivector("y");
  Function f = function({x, y}, {tensor::categorical_crossentropy(tensor::softmax(x), y)}, {.mode = "fast_run"});
  ASSERT_EQ(nodes_named(debugprint(f), "SoftmaxCrossentropy."), 1u);
  for (int32_t bad : {3, -1}) {
    try {
      f({Array::zeros({2, 3}, DType::Float64), Array::from_vector<int32_t>({0, bad})});
      ADD_FAILURE() << "no IndexError for label " << bad;
    } catch (const IndexError& e) {
      const std::string msg = e.what();
      for (const std::string& part : {std::string("SoftmaxCrossentropy"), std::string("categorical_crossentropy"),
                                     std::string("scores"), std::string("y"), "class index " + std::to_string(bad),
                                     std::string("row 1"), std::string("3 classes"), std::string("(2, 3)")})
        EXPECT_NE(msg.find(part), std::string::npos) << "'" << part << "' missing in: " << msg;
    }
  }
  // Rows and labels of different lengths: a ShapeError naming both shapes.
  try {
    f({Array::zeros({2, 3}, DType::Float64), Array::from_vector<int32_t>({0})});
    ADD_FAILURE() << "no ShapeError";
  } catch (const ShapeError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("(2, 3)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(1,)"), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace theon
