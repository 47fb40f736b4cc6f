// Inplace pass: before/after graphs (debugprint), the cases it must refuse (inputs, shared
// variables, constants, later readers, broadcasting, graph outputs, views of inputs), results
// equal to mode=none, repeated and concurrent calls, and caller-owned memory left untouched.
// The pass knows ops only through Op::inplace_variant: the Elemwise and Composite overrides,
// an op of this file's own taking part, and ops without a variant left alone.
#include <theon/theon.hpp>

#include "exec/function_impl.hpp"
#include "graph/function_graph.hpp"
#include "graph/print.hpp"
#include "ops/composite.hpp"
#include "ops/elemwise.hpp"
#include "rewrite/passes/passes.hpp"

#include "text_count.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <thread>

#include <unistd.h>

namespace theon {
namespace {

using theon::testing::count;

// Runs only the inplace pass on a graph; returns {before, after} debugprints.
std::pair<std::string, std::string> run_pass(const std::vector<Var>& inputs, const std::vector<Var>& outputs,
                                             bool expect_change) {
  std::vector<graph::VarPtr> in, out;
  for (auto& v : inputs) in.push_back(v.node());
  for (auto& v : outputs) out.push_back(v.node());
  graph::FunctionGraph fg(in, out);
  std::string before = graph::debugprint(fg.outputs());
  EXPECT_EQ(rewrite::inplace_pass(fg), expect_change) << before;
  fg.verify();
  std::string after = graph::debugprint(fg.outputs());
  EXPECT_FALSE(rewrite::inplace_pass(fg)) << "a fixed point\n" << after;
  return {before, after};
}

void expect_same(const Array& a, const Array& b, double tol = 1e-5) {
  ASSERT_EQ(a.shape(), b.shape());
  auto av = a.astype(DType::Float64).to_vector<double>(), bv = b.astype(DType::Float64).to_vector<double>();
  for (size_t i = 0; i < av.size(); ++i) ASSERT_NEAR(av[i], bv[i], tol * (1 + std::abs(bv[i]))) << "element " << i;
}

void expect_bitwise(const Array& a, const Array& b) {
  ASSERT_EQ(a.shape(), b.shape());
  ASSERT_EQ(a.dtype(), b.dtype());
  EXPECT_EQ(a.astype(DType::Float64).to_vector<double>(), b.astype(DType::Float64).to_vector<double>());
}

TEST(InplacePass, LastReaderOfAnIntermediateBecomesInplace) {
  Var x = tensor::vector("x");
  Var t = tensor::exp(x);
  Var y = tensor::tanh(t);
  auto [before, after] = run_pass({x}, {y}, true);
  EXPECT_EQ(count(before, "inplace"), 0u) << before;
  EXPECT_EQ(count(after, "Elemwise{tanh, inplace(0)}"), 1u) << after;
  EXPECT_EQ(count(after, "Elemwise{exp}"), 1u) << "x is a function input\n" << after;
}

TEST(InplacePass, EveryLinkOfAChainBecomesInplace) {
  Var x = tensor::vector("x");
  Var y = tensor::cos(tensor::sin(tensor::tanh(tensor::exp(x)) * 2.0));
  auto [before, after] = run_pass({x}, {y}, true);
  EXPECT_EQ(count(after, "inplace(0)"), 4u) << after;  // all but exp(x)
  EXPECT_EQ(count(after, "Elemwise{exp}"), 1u) << after;
}

TEST(InplacePass, CompositeBecomesInplace) {
  Var x = tensor::matrix("x");
  Var y = tensor::exp(tensor::softmax(x)) * 3.0 + 1.0;
  Function f = function({x}, {y});
  std::string dp = f.debugprint();
  EXPECT_EQ(count(dp, "Composite{"), 1u) << dp;
  EXPECT_EQ(count(dp, "inplace(0)}"), 1u) << dp;
  Array xv = Array::randn({4, 5}, 3);
  Array got = f({xv})[0];
  expect_same(got, function({x}, {y}, {.mode = "none"})({xv})[0]);
  auto m = f.impl()->memory_report();
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->inplace, 1) << f.explain();
}

TEST(InplacePass, NeverAFunctionInput) {
  Var x = tensor::vector("x");
  auto [before, after] = run_pass({x}, {tensor::exp(x)}, false);
  EXPECT_EQ(count(after, "inplace"), 0u) << after;
}

TEST(InplacePass, NeverASharedVariable) {
  SharedVar s = shared(Array::randn({5}, 1), "s");
  Var x = tensor::vector("x");
  auto [before, after] = run_pass({x}, {tensor::exp(s) + x}, true);
  EXPECT_EQ(count(after, "Elemwise{exp}"), 1u) << after;                 // reads s: not inplace
  EXPECT_EQ(count(after, "Elemwise{add, inplace(0)}"), 1u) << after;     // exp(s) is an intermediate
}

TEST(InplacePass, NeverAConstant) {
  Var c = constant(Array::randn({5}, 2), "c");
  Var x = tensor::vector("x");
  auto [before, after] = run_pass({x}, {tensor::tanh(c) * x}, true);
  EXPECT_EQ(count(after, "Elemwise{tanh}"), 1u) << after;
  EXPECT_EQ(count(after, "Elemwise{mul, inplace(0)}"), 1u) << after;
}

TEST(InplacePass, NeverAnInputReadByALaterNode) {
  Var x = tensor::vector("x");
  Var t = tensor::exp(x);
  Var y = tensor::tanh(t);
  Var z = y * t;  // t is read after tanh
  auto [before, after] = run_pass({x}, {z}, true);
  EXPECT_EQ(count(after, "Elemwise{tanh}"), 1u) << after;
  EXPECT_EQ(count(after, "Elemwise{mul, inplace("), 1u) << after;  // mul is t's last reader
}

TEST(InplacePass, NeverABroadcastInput) {
  Var a = tensor::matrix("a");
  Var r = tensor::tensor(DType::Float32, {1, -1}, "r");
  Var t = tensor::exp(r);  // static (1, ?)
  auto [before, after] = run_pass({a, r}, {t + a}, false);
  EXPECT_EQ(count(after, "inplace"), 0u) << after;
}

TEST(InplacePass, NeverAGraphOutput) {
  Var x = tensor::vector("x");
  Var t = tensor::exp(x);
  auto [before, after] = run_pass({x}, {t, tensor::tanh(t)}, false);
  EXPECT_EQ(count(after, "inplace"), 0u) << after;
}

TEST(InplacePass, NeverAViewOfAnInput) {
  Var x = tensor::matrix("x");
  auto [before, after] = run_pass({x}, {tensor::tanh(tensor::transpose(x))}, false);
  EXPECT_EQ(count(after, "inplace"), 0u) << after;
}

TEST(InplacePass, NeverAViewOfMemoryReadLater) {
  Var x = tensor::matrix("x");
  Var t = tensor::exp(x);
  Var v = tensor::tanh(tensor::transpose(t));  // must not overwrite t's memory: t is read below
  Var y = tensor::transpose(v) * t;
  auto [before, after] = run_pass({x}, {y}, true);  // mul, t's last reader
  EXPECT_EQ(count(after, "Elemwise{tanh}"), 1u) << after;
  EXPECT_EQ(count(after, "Elemwise{mul, inplace("), 1u) << after;
}

TEST(InplacePass, ResultsEqualModeNoneWithBroadcasting) {
  Var a = tensor::matrix("a"), r = tensor::tensor(DType::Float32, {1, -1}, "r"), c = tensor::matrix("c");
  Var t = tensor::exp(a * 0.1);
  Var u = tensor::softmax(t) + r;  // a fused region reading an intermediate
  Var v = tensor::tanh(tensor::dot(u, tensor::transpose(c))) * 2.0 - tensor::sum(r);
  Var w = tensor::switch_(v > 0.0, v, v * 0.5) + tensor::sum(u, std::vector<int>{1}, true);
  std::vector<Var> outs = {w, tensor::sum(t)};
  Function f = function({a, r, c}, outs);
  Function g = function({a, r, c}, outs, {.mode = "none"});
  for (int64_t rows : {1, 3, 17})
    for (int64_t cols : {1, 6}) {
      Array av = Array::randn({rows, cols}, 10 + rows), rv = Array::randn({1, cols}, 20 + cols),
            cv = Array::randn({rows, cols}, 30);
      auto got = f({av, rv, cv});
      auto ref = g({av, rv, cv});
      for (size_t i = 0; i < got.size(); ++i) expect_same(got[i], ref[i]);
      // A broadcasting (rows, 1) input where the type allows any size.
      Array a1 = Array::randn({rows, 1}, 40);
      Array c1 = Array::randn({rows, 1}, 41), r1 = Array::randn({1, 1}, 42);
      got = f({a1, r1, c1});
      ref = g({a1, r1, c1});
      for (size_t i = 0; i < got.size(); ++i) expect_same(got[i], ref[i]);
    }
  EXPECT_GE(count(f.debugprint(), "inplace("), 1u) << f.debugprint();
}

TEST(InplacePass, RepeatedAndConcurrentCallsAgree) {
  Var x = tensor::vector("x");
  Var y = tensor::exp(tensor::softmax(x)) * 2.0;
  Var z = tensor::tanh(tensor::softmax(y)) + tensor::sum(y);
  Function f = function({x}, {z});
  Array xv = Array::randn({1000}, 5);
  Array first = f({xv})[0];
  for (int i = 0; i < 5; ++i) expect_bitwise(f({xv})[0], first);
  std::vector<std::thread> threads;
  std::vector<int> bad(2, 0);
  for (int k = 0; k < 2; ++k)
    threads.emplace_back([&, k] {
      for (int i = 0; i < 50; ++i) {
        auto v = f({xv})[0].to_vector<float>();
        if (v != first.to_vector<float>()) ++bad[k];
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad[0] + bad[1], 0);
  ASSERT_TRUE(f.impl()->memory_report().has_value());
  EXPECT_GE(f.impl()->memory_report()->inplace, 1) << f.explain();
  expect_same(first, function({x}, {z}, {.mode = "none"})({xv})[0]);
}

TEST(InplacePass, CallerArraysAndSharedValuesAreNeverModified) {
  Array wv = Array::randn({64}, 7), xv = Array::randn({64}, 8);
  SharedVar w = shared(wv, "w");
  Var x = tensor::vector("x");
  Var h = tensor::tanh(x * w) + 1.0;
  Var y = tensor::exp(tensor::softmax(h)) + x;
  Function f = function({x}, {y, x * 1.0, w + 0.0}, {.updates = {{w, w - tensor::softmax(h) * 0.1}}});
  const Array x_before = xv.copy(), w_before = w.get_value().copy();
  Array w_handle = w.get_value(/*borrow=*/true);
  const Array w_handle_before = w_handle.copy();
  auto out = f({xv});
  ASSERT_TRUE(f.impl()->memory_report().has_value());
  EXPECT_GE(f.impl()->memory_report()->inplace, 1) << f.explain();
  expect_bitwise(xv, x_before);
  expect_bitwise(w_handle, w_handle_before);  // the old storage was replaced, never written
  expect_bitwise(out[1], x_before);
  expect_bitwise(out[2], w_before);
  Array w_after = w.get_value();
  auto out2 = f({xv});
  expect_bitwise(xv, x_before);
  expect_bitwise(out2[2], w_after);
}

TEST(InplacePass, ExcludedByName) {
  Var x = tensor::vector("x");
  Var y = tensor::tanh(tensor::softmax(x));
  std::string saved = config().optimizer_excluding;
  config().optimizer_excluding = "inplace";
  std::string dp = function({x}, {y}).debugprint();
  config().optimizer_excluding = saved;
  EXPECT_EQ(count(dp, "inplace"), 0u) << dp;
}

// The fused C++ kernel (not the interpreter) writing into its input's buffer.
TEST(InplacePass, FusedKernelWritesIntoItsInput) {
  const std::string cxx = config().cxx, dir = config().compiledir;
  auto tmp = std::filesystem::temp_directory_path() / ("theon_inplace_test_" + std::to_string(::getpid()));
  config().cxx = "c++";
  config().compiledir = tmp.string();
  Var x = tensor::matrix("x");
  Var y = tensor::exp(tensor::softmax(x)) * 3.0 - tensor::softmax(x);
  Function f = function({x}, {y});
  Array xv = Array::randn({500, 500}, 9);  // large enough for the OpenMP path (openmp_elemwise_minsize)
  Array got = f({xv})[0];
  auto m = f.impl()->memory_report();
  config().cxx = cxx;
  config().compiledir = dir;
  std::error_code ec;
  std::filesystem::remove_all(tmp, ec);
  expect_same(got, function({x}, {y}, {.mode = "none"})({xv})[0]);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->inplace, 1);
}

// ---- Op::inplace_variant: the only thing the pass asks an op ----

TEST(InplaceVariant, ElemwiseOffersOneForOutputZero) {
  ops::Elemwise add(ops::ScalarOpId::Add, DType::Float32);
  auto v = add.inplace_variant(0, 1);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->destroy_map(), (std::map<int, int>{{0, 1}}));
  EXPECT_EQ(v->display(), "Elemwise{add, inplace(1)}");
  EXPECT_FALSE(add.equals(*v));  // a different op for merging
  EXPECT_FALSE(add.inplace_variant(1, 0)) << "only output 0";
  EXPECT_FALSE(v->inplace_variant(0, 0)) << "already inplace";
}

TEST(InplaceVariant, CompositeOffersOneWhenTheDtypesAgree) {
  // i0 (float64) + cast<float64>(i1 (int32)): input 1 cannot hold the float64 result.
  ops::Composite c({DType::Float64, DType::Int32},
                   {{ops::ScalarOpId::Cast, DType::Float64, {1}}, {ops::ScalarOpId::Add, DType::Float64, {0, 2}}}, {3});
  auto v = c.inplace_variant(0, 0);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->destroy_map(), (std::map<int, int>{{0, 0}}));
  EXPECT_EQ(count(v->display(), "inplace(0)"), 1u) << v->display();
  EXPECT_FALSE(c.inplace_variant(0, 1)) << "int32 input";
  EXPECT_FALSE(c.inplace_variant(0, 2)) << "no such input";
  EXPECT_FALSE(c.inplace_variant(1, 0)) << "only output 0";
  EXPECT_FALSE(v->inplace_variant(0, 0)) << "already inplace";
}

// An op the pass has never heard of: twice(x), with an inplace variant. Its kind is borrowed
// (ops.def is closed to tests); the inplace pass reads no kind.
class Twice final : public graph::Op {
 public:
  explicit Twice(int inplace = -1) : inplace_(inplace) {}
  graph::OpKind kind() const override { return graph::OpKind::ZeroGrad; }
  graph::OpProps props() const override { return {{"inplace", std::to_string(inplace_)}}; }
  std::string display() const override { return inplace_ >= 0 ? "Twice{inplace(0)}" : "Twice"; }
  std::vector<Shape> infer_shape(const graph::Apply&, const std::vector<Array>& in) const override {
    return {in[0].shape()};
  }
  void perform(const graph::Apply&, const std::vector<Array>&, std::vector<Array>&) const override {
    throw NotImplementedError("Twice is only rewritten here, never run");
  }
  std::map<int, int> destroy_map() const override {
    return inplace_ >= 0 ? std::map<int, int>{{0, 0}} : std::map<int, int>{};
  }
  std::shared_ptr<const graph::Op> inplace_variant(int output, int input) const override {
    return output == 0 && input == 0 && inplace_ < 0 ? std::make_shared<Twice>(0) : nullptr;
  }

 private:
  int inplace_;
};

TEST(InplacePass, AnyOpWithAnInplaceVariantTakesPart) {
  Var x = tensor::vector("x");
  Var t = tensor::exp(x);
  graph::VarPtr y = graph::make_output(std::make_shared<Twice>(), {t.node()}, t.node()->type);
  graph::FunctionGraph fg({x.node()}, {y});
  EXPECT_TRUE(rewrite::inplace_pass(fg));
  fg.verify();
  std::string after = graph::debugprint(fg.outputs());
  EXPECT_EQ(count(after, "Twice{inplace(0)}"), 1u) << after;
  EXPECT_EQ(count(after, "inplace"), 1u) << "exp reads the function input\n" << after;
  EXPECT_FALSE(rewrite::inplace_pass(fg)) << after;
}

TEST(InplacePass, OpsWithoutAVariantAreLeftAlone) {
  // dot is the last reader of two intermediates, but Dot has no inplace variant.
  Var a = tensor::matrix("a"), b = tensor::matrix("b");
  Var y = tensor::dot(tensor::exp(a), tensor::exp(b));
  auto [before, after] = run_pass({a, b}, {y}, false);
  EXPECT_EQ(count(after, "inplace"), 0u) << after;
}

}  // namespace
}  // namespace theon
