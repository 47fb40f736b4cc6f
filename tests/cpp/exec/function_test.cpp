// function(): binding, checks, updates (all or nothing), shape reuse, aliasing, threads.
#include <theon/theon.hpp>

#include "exec/function_impl.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <thread>

namespace theon {
namespace {

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(Function, SeedExampleMatchesAHandComputation) {
  Var x = tensor::matrix("x");
  Array w_val = Array::randn({10, 5}, 1), b_val = Array::randn({5}, 2), x_val = Array::randn({100, 10}, 3);
  SharedVar w = shared(w_val, "w"), b = shared(b_val, "b");
  Function f = function({x}, {tensor::dot(x, w) + b});
  Array y = f({x_val})[0];
  ASSERT_EQ(y.shape(), (Shape{100, 5}));
  auto xv = x_val.to_vector<float>(), wv = w_val.to_vector<float>(), bv = b_val.to_vector<float>();
  auto yv = y.to_vector<float>();
  for (int i = 0; i < 100; ++i)
    for (int j = 0; j < 5; ++j) {
      double s = bv[j];
      for (int k = 0; k < 10; ++k) s += double(xv[i * 10 + k]) * wv[k * 5 + j];
      ASSERT_NEAR(yv[i * 5 + j], s, 1e-4);
    }
}

TEST(Function, OneFunctionServesEveryShape) {
  Var x = tensor::matrix("x");
  Function f = function({x}, {tensor::sum(x * 2.0, std::vector<int>{1})});
  for (int64_t rows : {1, 7, 0, 33, 1})
    for (int64_t cols : {1, 4, 0}) {
      Array a = Array::ones({rows, cols}, DType::Float32);
      Array out = f({a})[0];
      ASSERT_EQ(out.shape(), (Shape{rows}));
      for (float v : out.to_vector<float>()) ASSERT_EQ(v, 2.0f * cols);
    }
  // Programs are cached by broadcast pattern (which dims are 1), not by size.
  EXPECT_LE(f.impl()->num_programs(), 4u);
}

TEST(Function, UpdatesCommitAfterOutputsAndSeeOldValues) {
  SharedVar count = shared(Array::scalar(0, DType::Int64), "count");
  Var x = tensor::lscalar("x");
  Function f = function({x}, {count + x}, {.updates = {{count, count + x}}});
  EXPECT_EQ(f({Array::scalar(5, DType::Int64)})[0].item(), 5);
  EXPECT_EQ(f({Array::scalar(2, DType::Int64)})[0].item(), 7);
  EXPECT_EQ(count.get_value().item(), 7);
}

TEST(Function, AFailedCallLeavesEverySharedVariableUnchanged) {
  SharedVar a = shared(Array::from_vector<float>({1, 2, 3}), "a");
  SharedVar b = shared(Array::from_vector<float>({10, 20, 30}), "b");
  Var x = tensor::vector("x");
  // The update of b fails at run time when x has the wrong length; a's update is fine.
  Function f = function({x}, {tensor::sum(a)}, {.updates = {{a, a + 1.0}, {b, b + x}}});
  f({Array::from_vector<float>({1, 1, 1})});
  EXPECT_EQ(a.get_value().to_vector<float>(), (std::vector<float>{2, 3, 4}));
  std::string msg = message_of([&] { f({Array::from_vector<float>({1, 1})}); });
  EXPECT_NE(msg.find("cannot be broadcast"), std::string::npos) << msg;
  EXPECT_NE(msg.find("b (3,)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("x (2,)"), std::string::npos) << msg;
  EXPECT_EQ(a.get_value().to_vector<float>(), (std::vector<float>{2, 3, 4}));
  EXPECT_EQ(b.get_value().to_vector<float>(), (std::vector<float>{11, 21, 31}));
}

TEST(Function, InputChecksNameTheInput) {
  Var x = tensor::fmatrix("x"), v = tensor::ivector("v");
  Function f = function({x, v}, {tensor::sum(x) + tensor::sum(v)}, {.name = "f"});
  std::string m = message_of([&] { f({Array::zeros({2, 2}, DType::Float32)}); });
  EXPECT_NE(m.find("function 'f': expected 2 input(s) (x, v), got 1"), std::string::npos) << m;
  m = message_of([&] { f({Array::zeros({2}, DType::Float32), Array::zeros({2}, DType::Int32)}); });
  EXPECT_NE(m.find("input 0 ('x', float32 (?, ?)): expected rank 2, got an array of shape (2,)"), std::string::npos) << m;
  m = message_of([&] { f({Array::zeros({2, 2}, DType::Float64), Array::zeros({2}, DType::Int32)}); });
  EXPECT_NE(m.find("got a float64 array; converting it to float32 could lose information"), std::string::npos) << m;
  m = message_of([&] { f({Array::zeros({2, 2}, DType::Float32), Array::zeros({2}, DType::Int64)}); });
  EXPECT_NE(m.find("'v'"), std::string::npos) << m;
  EXPECT_THROW(f({Array::zeros({2, 2}, DType::Float64), Array::zeros({2}, DType::Int32)}), TypeError);
  // Lossless casts are accepted.
  Array out = f({Array::ones({2, 2}, DType::Int8), Array::ones({2}, DType::Int16)})[0];
  EXPECT_EQ(out.item(), 6);
  // allow_input_downcast accepts lossy casts.
  Function g = function({x}, {x * 2.0}, {.allow_input_downcast = true});
  EXPECT_EQ(g({Array::full({1, 1}, 1.5, DType::Float64)})[0].item(), 3.0);
}

TEST(Function, StaticShapesAreCheckedAtBuildAndCallTime) {
  Var row = tensor::tensor(DType::Float32, {1, 3}, "row");
  Var col = tensor::tensor(DType::Float32, {4, 1}, "col");
  Var other = tensor::tensor(DType::Float32, {2, 3}, "other");
  EXPECT_EQ((row + col).static_shape(), (std::vector<int64_t>{4, 3}));
  std::string m = message_of([&] { (void)(col + other); });
  EXPECT_NE(m.find("static shapes disagree in dimension 0 (4 vs 2)"), std::string::npos) << m;
  EXPECT_NE(m.find("col: float32 (4, 1), other: float32 (2, 3)"), std::string::npos) << m;
  Function f = function({row}, {row * 2.0});
  EXPECT_THROW(f({Array::zeros({1, 4}, DType::Float32)}), ShapeError);
}

TEST(Function, UnusedInputsRaiseUnlessAllowed) {
  Var x = tensor::vector("x"), y = tensor::vector("y");
  std::string m = message_of([&] { function({x, y}, {x * 2.0}); });
  EXPECT_NE(m.find("input 1 ('y') is not used"), std::string::npos) << m;
  Function f = function({x, y}, {x * 2.0}, {.on_unused_input = "ignore"});
  EXPECT_EQ(f({Array::ones({1}, DType::Float32), Array::ones({1}, DType::Float32)})[0].item(), 2.0);
}

TEST(Function, UpdateTypeMustMatch) {
  SharedVar s = shared(Array::zeros({2}, DType::Float32), "s");
  std::string m = message_of([&] { function({}, {}, {.updates = {{s, tensor::cast(s, DType::Float64)}}}); });
  EXPECT_NE(m.find("the update of 's' (float32 (?,)) has type float64 (?,)"), std::string::npos) << m;
  m = message_of([&] { function({}, {}, {.updates = {{s, s + 1.0}, {s, s * 2.0}}}); });
  EXPECT_NE(m.find("'s' is updated twice"), std::string::npos) << m;
}

TEST(Function, OutputsNeverAliasInputsSharedValuesOrEachOther) {
  Var x = tensor::vector("x");
  SharedVar s = shared(Array::from_vector<float>({1, 2}), "s");
  Var y = x * 3.0;
  Function f = function({x}, {x, s, y, y, x.T()});
  Array in = Array::from_vector<float>({5, 6});
  auto out = f({in});
  EXPECT_NE(out[0].buffer(), in.buffer());
  EXPECT_NE(out[1].buffer(), s.get_value(/*borrow=*/true).buffer());
  EXPECT_NE(out[2].buffer(), out[3].buffer());
  EXPECT_NE(out[4].buffer(), in.buffer());
  out[2].data<float>()[0] = 100;
  EXPECT_EQ(out[3].to_vector<float>()[0], 15.0f);
}

TEST(Function, ConcurrentCallsFromSeveralThreads) {
  Var x = tensor::matrix("x");
  SharedVar w = shared(Array::randn({16, 8}, 5), "w");
  Function f = function({x}, {tensor::tanh(tensor::dot(x, w)) * 2.0});
  std::vector<Array> inputs, expected;
  for (int t = 0; t < 4; ++t) {
    inputs.push_back(Array::randn({20 + t, 16}, 100 + t));
    expected.push_back(f({inputs.back()})[0]);
  }
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 100; ++i)
        if (!allclose(f({inputs[t]})[0], expected[t], 0, 0)) ++mismatches;
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0);
}

TEST(Function, ConcurrentUpdatesAreNotLost) {
  SharedVar n = shared(Array::scalar(0, DType::Int64), "n");
  Function inc = function({}, {}, {.updates = {{n, n + 1}}});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 250; ++i) inc();
    });
  for (auto& th : threads) th.join();
  // Calls updating one variable serialise (read, compute, commit under its update lock):
  // every increment counts (tests/cpp/exec/update_serialization_test.cpp has more).
  EXPECT_EQ(n.get_value().item(), 1000);
}

TEST(Function, GivensSubstituteAnExpression) {
  Var x = tensor::vector("x"), z = tensor::vector("z");
  Var y = x * 2.0;
  Function f = function({z}, {y}, {.givens = {{x, z + 1.0}}});
  EXPECT_EQ(f({Array::from_vector<float>({1, 2})})[0].to_vector<float>(), (std::vector<float>{4, 6}));
  std::string m = message_of([&] { function({z}, {y}, {.givens = {{x, tensor::dvector("d")}}}); });
  EXPECT_NE(m.find("dtype and rank must match"), std::string::npos) << m;
}

TEST(Function, DeviceCudaFollowsOnFallback) {
  if (cuda_status().ok) GTEST_SKIP() << "a CUDA device is present (tests/cpp/backends/cuda covers it)";
  Config saved = config();
  config().device = "cuda";
  config().on_fallback = "raise";
  Var x = tensor::vector("x");
  std::string m = message_of([&] { function({x}, {x + 1.0}, {.name = "g"}); });  // at compile time
  EXPECT_NE(m.find("no CUDA device available"), std::string::npos) << m;
  config().on_fallback = "ignore";
  Function f = function({x}, {x + 1.0});
  EXPECT_EQ(f({Array::ones({2}, DType::Float32)})[0].to_vector<float>(), (std::vector<float>{2, 2}));
  EXPECT_NE(f.explain().find("fallback: no CUDA device available"), std::string::npos);
  config() = saved;
}

TEST(Function, ErrorsInsideNodesNameTheNodeAndFunction) {
  Var a = tensor::matrix("a"), b = tensor::matrix("b");
  Function f = function({a, b}, {tensor::dot(a, b)}, {.name = "prod"});
  std::string m = message_of([&] { f({Array::zeros({2, 3}, DType::Float32), Array::zeros({4, 5}, DType::Float32)}); });
  EXPECT_NE(m.find("inner dimensions differ"), std::string::npos) << m;
  EXPECT_NE(m.find("a has shape (2, 3)"), std::string::npos) << m;
  EXPECT_NE(m.find("b has shape (4, 5)"), std::string::npos) << m;
  EXPECT_NE(m.find("function 'prod'"), std::string::npos) << m;
}

TEST(Function, SharedSetValueChecks) {
  SharedVar s = shared(Array::zeros({2, 2}, DType::Float32), "s");
  EXPECT_THROW(s.set_value(Array::zeros({2}, DType::Float32)), TypeError);
  EXPECT_THROW(s.set_value(Array::zeros({2, 2}, DType::Float64)), TypeError);
  s.set_value(Array::ones({3, 3}, DType::Float32));  // shapes may change
  Array v = s.get_value();
  v.data<float>()[0] = 7;  // a copy: the shared value is untouched
  EXPECT_EQ(s.get_value().item(), 1.0);
}

}  // namespace
}  // namespace theon

namespace theon {
namespace {

TEST(Function, NodesDescribeTheCompiledProgram) {
  Var x = tensor::matrix("x");
  SharedVar w = shared(Array::zeros({10, 5}, DType::Float32), "w");
  Function f = function({x}, {tensor::dot(x, w)}, {.name = "nodes"});
  std::vector<NodeInfo> nodes = f.nodes();
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].op, "Dot");
  EXPECT_EQ(nodes[0].inputs, (std::vector<std::string>{"x", "w"}));
  EXPECT_EQ(nodes[0].device, "cpu");
  EXPECT_EQ(nodes[0].output_type, "float32 (?, ?)");
  EXPECT_FALSE(nodes[0].kernel.empty());
}

}  // namespace
}  // namespace theon
