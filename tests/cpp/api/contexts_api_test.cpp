// Contexts through the C++ API: shared(target=), transfer(x, name), ContextScope,
// get_context/list_contexts, and the seed program on two cpu contexts.
#include <theon/theon.hpp>

#include "error_of.hpp"

#include <gtest/gtest.h>

#include <thread>

namespace theon {
namespace {

using testing_util::error_of;

class ContextsApi : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_ = config();
    config().print_active_device = false;
    config().contexts = "dev0->cpu;dev1->cpu";
  }
  void TearDown() override { config() = saved_; }
  Config saved_;
};

// A naive matrix product, the reference the contexts' results are checked against.
std::vector<float> matmul(const std::vector<float>& a, const std::vector<float>& b, int n) {
  std::vector<float> c(static_cast<size_t>(n) * n, 0.0f);
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n; ++k)
      for (int j = 0; j < n; ++j) c[i * n + j] += a[i * n + k] * b[k * n + j];
  return c;
}

void expect_near(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4f * (1 + std::abs(want[i]))) << i;
}

TEST_F(ContextsApi, SharedTargetPinsTheVariableAndKeepsItsValue) {
  const Array value = Array::from_vector<float>({1, 2, 3, 4}, Shape{2, 2});
  SharedVar w = shared(value, "w", {.target = "dev0"});
  EXPECT_EQ(w.context(), "dev0");
  EXPECT_EQ(w.get_value().to_vector<float>(), value.to_vector<float>());
  w.set_value(Array::from_vector<float>({5, 6, 7, 8}, Shape{2, 2}));
  EXPECT_EQ(w.get_value().to_vector<float>(), (std::vector<float>{5, 6, 7, 8}));
  EXPECT_EQ(shared(value, "h", {.target = "cpu"}).context(), "cpu");  // a device's own context
  EXPECT_EQ(shared(value, "u").context(), "");                         // unpinned
  // A function reads and updates it where it lives.
  Function step = function({}, {w * 2.0f}, {.updates = {{w, w + 1.0f}}});
  expect_near(step({})[0].to_vector<float>(), {10, 12, 14, 16});
  EXPECT_EQ(w.get_value().to_vector<float>(), (std::vector<float>{6, 7, 8, 9}));

  const std::string e = error_of<ValueError>([&] { shared(value, "w2", {.target = "dev9"}); });
  EXPECT_NE(e.find("context 'dev9' is not defined; the contexts are dev0 (cpu), dev1 (cpu), and each device by its "
                   "name: cpu, cuda0, cuda1"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("shared('w2', target='dev9')"), std::string::npos) << e;
}

TEST_F(ContextsApi, TransferTakesAContextName) {
  Var x = tensor::vector("x", DType::Float32);
  EXPECT_EQ(transfer(x, "dev1").context(), "dev1");
  EXPECT_EQ(transfer(x, "cpu").context(), "cpu");
  EXPECT_EQ(transfer(x, "cuda0").context(), "cuda0");  // a device's own name (whether it exists: on use)
  for (const char* unknown : {"dev2", "gpu", "cuda", ""}) {
    const std::string e = error_of<ValueError>([&] { transfer(x, unknown); });
    EXPECT_NE(e.find(std::string("context '") + unknown + "' is not defined"), std::string::npos) << e;
    EXPECT_NE(e.find(std::string("transfer(x, '") + unknown + "')"), std::string::npos) << e;
  }
  EXPECT_NE(error_of<ValueError>([] { transfer(Var(), "dev0"); }).find("undefined Var"), std::string::npos);
  // Values and gradients go through: d/dx sum(transfer(x, dev1)^2 on dev0) = 2x.
  Var moved = transfer(transfer(x, "dev1") * 3.0f, "dev0");
  Var cost = tensor::sum(moved * moved);
  Var g = grad(cost, x);
  Function f = function({x}, {moved, g});
  const auto out = f({Array::from_vector<float>({1, -2, 0.5f})});
  expect_near(out[0].to_vector<float>(), {3, -6, 1.5f});
  expect_near(out[1].to_vector<float>(), {18, -36, 9});
}

TEST_F(ContextsApi, AContextScopePinsTheNodesMadeInsideIt) {
  Var x = tensor::vector("x", DType::Float32);
  Var before = x * 2.0f;
  Var inside, nested, moved, input;
  {
    ContextScope scope("dev1");
    inside = x + 1.0f;
    input = tensor::vector("made_inside", DType::Float32);
    {
      ContextScope inner("dev0");
      nested = inside * inside;
    }
    moved = transfer(nested, "cpu");  // a transfer keeps its target
    Var after_inner = nested - 1.0f;
    EXPECT_EQ(after_inner.context(), "dev1");  // the outer scope again
    Function f = function({x}, {after_inner});  // compiled inside a scope: its own nodes are not pinned
    expect_near(f({Array::from_vector<float>({1, 2})})[0].to_vector<float>(), {3, 8});
    std::thread([&] { EXPECT_EQ((x * 3.0f).context(), ""); }).join();  // a scope is per thread
  }
  EXPECT_EQ(before.context(), "");
  EXPECT_EQ(inside.context(), "dev1");
  EXPECT_EQ(nested.context(), "dev0");
  EXPECT_EQ(moved.context(), "cpu");
  EXPECT_EQ(input.context(), "");  // an input is no node's output: unpinned
  EXPECT_EQ((x - 1.0f).context(), "");
  const std::string e = error_of<ValueError>([] { ContextScope scope("dev7"); });
  EXPECT_NE(e.find("context 'dev7' is not defined"), std::string::npos) << e;
  EXPECT_NE(e.find("ContextScope('dev7')"), std::string::npos) << e;
  EXPECT_EQ((x * 5.0f).context(), "");  // a refused scope pins nothing
}

TEST_F(ContextsApi, GetContextAndListContexts) {
  EXPECT_EQ(list_contexts(), (std::vector<std::string>{"dev0", "dev1"}));
  const ContextInfo c = get_context("dev1");
  EXPECT_EQ(c.name, "dev1");
  EXPECT_EQ(c.device, "cpu");
  EXPECT_EQ(c.description.rfind("cpu: ", 0), 0u) << c.description;
  EXPECT_EQ(get_context("cpu").device, "cpu");
  EXPECT_NE(error_of<ValueError>([] { get_context("dev3"); }).find("context 'dev3' is not defined"),
            std::string::npos);
  config().contexts = "";
  EXPECT_TRUE(list_contexts().empty());
}

// The seed's program (Theano's "A simple graph on two GPUs") on two cpu contexts.
TEST_F(ContextsApi, TheSeedProgramOnTwoCpuContexts) {
  const int n = 48;
  std::vector<Array> values;
  for (uint64_t seed = 1; seed <= 4; ++seed) values.push_back(Array::rand({n, n}, seed, DType::Float32));
  SharedVar v01 = shared(values[0], "v01", {.target = "dev0"});
  SharedVar v02 = shared(values[1], "v02", {.target = "dev0"});
  SharedVar v11 = shared(values[2], "v11", {.target = "dev1"});
  SharedVar v12 = shared(values[3], "v12", {.target = "dev1"});
  Function f = function({}, {tensor::dot(v01, v02), tensor::dot(v11, v12)});
  const auto out = f({});
  ASSERT_EQ(out.size(), 2u);
  expect_near(out[0].to_vector<float>(), matmul(values[0].to_vector<float>(), values[1].to_vector<float>(), n));
  expect_near(out[1].to_vector<float>(), matmul(values[2].to_vector<float>(), values[3].to_vector<float>(), n));
}

}  // namespace
}  // namespace theon
