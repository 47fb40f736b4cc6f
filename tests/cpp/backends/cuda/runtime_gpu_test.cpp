// The CUDA runtime and device execution, end to end (label gpu; skipped without a device):
// transfer round trips, the caching allocator, functions on the GPU with shared variables
// updated on the device, outputs kept on the device, and placement shown by explain().
#include <theon/theon.hpp>

#include <gtest/gtest.h>

namespace theon {
namespace {

class CudaRuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cuda_status().ok) GTEST_SKIP() << "no CUDA device: " << cuda_status().reason;
    saved_ = config();
    config().device = "cuda0";
    config().on_fallback = "raise";
  }
  void TearDown() override {
    if (cuda_status().ok) config() = saved_;
  }
  Config saved_;
};

TEST_F(CudaRuntimeTest, TransferRoundTripsKeepValuesAndLayouts) {
  Array a = Array::randn({7, 5}, 1, DType::Float64);
  for (Array v : {a, a.transpose(), a.slice(0, 1, 7, 2), Array::zeros({0, 3}, DType::Float32)}) {
    Array d = to_device(v, Device::cuda(0));
    EXPECT_EQ(d.device(), Device::cuda(0));
    EXPECT_TRUE(allclose(d.to_host(), v, 0, 0));
    EXPECT_EQ(d.to_vector<double>(), v.to_vector<double>());  // implicit copy back
  }
  EXPECT_TRUE(allclose(to_device(a, Device::cuda(0)).transpose().to_host(), a.transpose(), 0, 0));
}

TEST_F(CudaRuntimeTest, CachingAllocatorReusesFreedBlocks) {
  { Array d = to_device(Array::ones({1 << 20}, DType::Float32), Device::cuda(0)); }
  const DeviceMemoryStats before = memory_stats();
  EXPECT_GE(before.cached, size_t(4) << 20);
  { Array d = to_device(Array::ones({1 << 20}, DType::Float32), Device::cuda(0)); }
  const DeviceMemoryStats after = memory_stats();
  EXPECT_EQ(after.allocations, before.allocations);
  EXPECT_GT(after.reuses, before.reuses);
}

TEST_F(CudaRuntimeTest, TrainingStepUpdatesSharedVariablesOnTheDevice) {
  SharedVar w = shared(Array::randn({4, 3}, 2, DType::Float32), "w");
  Var x = tensor::matrix("x");
  Var cost = tensor::sum(tensor::sqr(tensor::dot(x, w)));
  Var g = grad(cost, {w})[0];
  Function step = function({x}, {cost}, {.updates = {{w, w - g * 0.01}}, .name = "step"});
  const std::string e = step.explain();
  EXPECT_NE(e.find("cuda0"), std::string::npos) << e;
  Array xv = Array::randn({8, 4}, 3, DType::Float32);
  // The same step on the CPU, for comparison.
  Config gpu = config();
  config().device = "cpu";
  SharedVar w_cpu = shared(w.get_value(), "w_cpu");
  Var cost_cpu = tensor::sum(tensor::sqr(tensor::dot(x, w_cpu)));
  Function step_cpu = function({x}, {cost_cpu}, {.updates = {{w_cpu, w_cpu - grad(cost_cpu, {w_cpu})[0] * 0.01}}});
  config() = gpu;
  for (int i = 0; i < 3; ++i) {
    Array c = step({xv})[0];
    Array c_cpu = step_cpu({xv})[0];
    EXPECT_TRUE(c.on_host());
    EXPECT_TRUE(allclose(c, c_cpu, 1e-5, 1e-5)) << c << " vs " << c_cpu;
  }
  EXPECT_TRUE(allclose(w.get_value(), w_cpu.get_value(), 1e-5, 1e-6));
  EXPECT_TRUE(w.get_value().on_host());
  const DeviceMemoryStats s1 = memory_stats();
  step({xv});
  EXPECT_EQ(memory_stats().allocations, s1.allocations) << "a steady-state call allocates nothing new";
}

TEST_F(CudaRuntimeTest, OutputsOnDeviceAndDeviceInputs) {
  Var x = tensor::vector("x");
  Function f = function({x}, {tensor::exp(x) * 2.0}, {.outputs_on_device = true});
  Array xv = Array::randn({1000}, 4, DType::Float32);
  Array y = f({xv})[0];
  EXPECT_EQ(y.device(), Device::cuda(0));
  Array y2 = f({to_device(xv, Device::cuda(0))})[0];
  EXPECT_TRUE(allclose(y.to_host(), y2.to_host(), 0, 0));
  config().device = "cpu";
  Function g = function({x}, {tensor::exp(x) * 2.0});
  EXPECT_TRUE(allclose(y.to_host(), g({xv})[0], 1e-6, 1e-6));
}

TEST_F(CudaRuntimeTest, FailedCallLeavesSharedVariablesUnchanged) {
  SharedVar s = shared(Array::from_vector<float>({1, 2, 3}), "s");
  Var i = tensor::tensor(DType::Int64, {-1}, "i");
  Function f = function({i}, {tensor::take(s, i)}, {.updates = {{s, s * 2.0}}});
  EXPECT_THROW(f({Array::from_vector<int64_t>({0, 7})}), IndexError);
  EXPECT_EQ(s.get_value().to_vector<float>(), (std::vector<float>{1, 2, 3}));
  f({Array::from_vector<int64_t>({2})});
  EXPECT_EQ(s.get_value().to_vector<float>(), (std::vector<float>{2, 4, 6}));
}

TEST_F(CudaRuntimeTest, ExplainShowsDevicesAndTransfers) {
  Var x = tensor::matrix("x");
  SharedVar w = shared(Array::randn({3, 2}, 5, DType::Float32), "w");
  Function f = function({x}, {tensor::relu(tensor::dot(x, w))}, {.name = "layer"});
  f({Array::randn({4, 3}, 6, DType::Float32)});
  const std::string e = f.explain();
  EXPECT_NE(e.find("Transfer{to=cuda0}"), std::string::npos) << e;
  EXPECT_NE(e.find("transfers:"), std::string::npos) << e;
  EXPECT_EQ(e.find("fallback"), std::string::npos) << e;
}

}  // namespace
}  // namespace theon
