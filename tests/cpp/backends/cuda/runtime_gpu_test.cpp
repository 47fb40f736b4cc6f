// The CUDA runtime and device execution, end to end (label gpu; skipped without a device):
// transfer round trips, the caching allocator, functions on the GPU with shared variables
// updated on the device, outputs kept on the device, and placement shown by explain().
#include "backends/cuda/gpu_test_support.hpp"

#include <theon/theon.hpp>

#include <gtest/gtest.h>

namespace theon {
namespace {

class CudaRuntimeTest : public testing::Cuda0Test {};

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

// gpu_memory_cache=False (for compute-sanitizer): exact-size blocks, back to the driver at
// once, so an overrun past a tensor is outside its allocation instead of inside a cached one.
TEST_F(CudaRuntimeTest, WithoutTheMemoryCacheBlocksAreExactAndFreedAtOnce) {
  config().gpu_memory_cache = false;
  const DeviceMemoryStats before = memory_stats();
  {
    Array d = to_device(Array::ones({1001}, DType::Float32), Device::cuda(0));  // 4004 bytes
    const DeviceMemoryStats during = memory_stats();
    EXPECT_EQ(during.in_use - before.in_use, 4004u);  // the cache would round it to 4096
    EXPECT_EQ(during.allocations, before.allocations + 1);
    EXPECT_EQ(d.to_vector<float>()[1000], 1.0f);
  }
  const DeviceMemoryStats freed = memory_stats();
  EXPECT_EQ(freed.in_use, before.in_use);
  EXPECT_EQ(freed.cached, before.cached);  // nothing kept
  { Array d = to_device(Array::ones({1001}, DType::Float32), Device::cuda(0)); }
  EXPECT_EQ(memory_stats().allocations, before.allocations + 2);  // no reuse
  EXPECT_EQ(memory_stats().reuses, before.reuses);
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

// A value passed through (an output that is an input, or a shared value, with no GPU node):
// the call still waits for its copy to the host (the simulator's deferred streams showed 0).
TEST_F(CudaRuntimeTest, PassThroughOutputsOfDeviceValuesAreWaitedFor) {
  Var x = tensor::vector("x");
  Function f = function({x}, {x});
  Array d = to_device(Array::full({4096}, 7.0, DType::Float32), Device::cuda(0));
  Array y = f({d})[0];
  ASSERT_TRUE(y.on_host());
  EXPECT_EQ(y.to_vector<float>(), std::vector<float>(4096, 7.0f));
  // A shared variable on the device, returned as it is (and next to a host value).
  SharedVar s = shared(to_device(Array::full({333}, 5.0, DType::Float64), Device::cuda(0)), "s");
  Var h = tensor::scalar("h");
  Function g = function({h}, {s, h * 2.0});
  auto out = g({Array::full({}, 1.5, DType::Float32)});
  ASSERT_TRUE(out[0].on_host());
  EXPECT_EQ(out[0].to_vector<double>(), std::vector<double>(333, 5.0));
  // outputs_on_device with check_device_errors=false: a device copy, ordered on the stream.
  config().check_device_errors = false;
  Function k = function({x}, {x}, {.outputs_on_device = true});
  Array z = k({d})[0];
  EXPECT_EQ(z.device(), Device::cuda(0));
  EXPECT_NE(z.data(), d.data());
  EXPECT_EQ(z.to_vector<float>(), std::vector<float>(4096, 7.0f));
}

// x.shape reads metadata: a device input is not copied to the host for it.
TEST_F(CudaRuntimeTest, ShapeOfADeviceInputCopiesNothing) {
  Var x = tensor::matrix("x");
  Function f = function({x}, {tensor::shape(x)}, {.name = "shape"});
  Array d = to_device(Array::randn({300, 70}, 1, DType::Float32), Device::cuda(0));
  EXPECT_EQ(f({d})[0].to_vector<int64_t>(), (std::vector<int64_t>{300, 70}));
  auto copies = [] { return memory_stats(Device::cuda(0)).to_host_copies; };
  const int64_t before = copies();
  EXPECT_EQ(f({d})[0].to_vector<int64_t>(), (std::vector<int64_t>{300, 70}));
  EXPECT_EQ(copies(), before) << "x.shape copied the array to the host";
  // Also next to device work on the same input (only the sum comes back), and from a CPU function.
  Function g = function({x}, {tensor::shape(x), tensor::sum(x)});
  g({d});
  const int64_t before_g = copies();
  EXPECT_EQ(g({d})[0].to_vector<int64_t>(), (std::vector<int64_t>{300, 70}));
  EXPECT_EQ(copies(), before_g + 1) << "one copy: the sum";
  config().device = "cpu";
  Function c = function({x}, {tensor::shape(x)});
  const int64_t before_c = copies();
  EXPECT_EQ(c({d})[0].to_vector<int64_t>(), (std::vector<int64_t>{300, 70}));
  EXPECT_EQ(copies(), before_c);
}

// check_device_errors: with outputs_on_device and no updates, a call waits for the device
// (once) only when the option is true; with updates it always waits before committing; a call
// returning host outputs always waits once.
TEST_F(CudaRuntimeTest, CheckDeviceErrorsDecidesWhetherACallWaitsForTheDevice) {
  Var x = tensor::matrix("x");
  Array xv = Array::randn({64, 32}, 3, DType::Float32);
  auto waits = [] { return memory_stats(Device::cuda(0)).host_waits; };
  config().device = "cpu";
  const Array exp_times_3 = function({x}, {tensor::exp(x) * 3.0})({xv})[0];
  config().device = "cuda0";
  for (bool check : {true, false}) {
    config().check_device_errors = check;
    Function f = function({x}, {tensor::exp(x) * 3.0}, {.outputs_on_device = true});
    Array d = to_device(xv, Device::cuda(0));
    f({d});  // compiles and warms up
    synchronize(Device::cuda(0));
    const int64_t before = waits();
    Array y = f({d})[0];
    EXPECT_EQ(waits() - before, check ? 1 : 0) << "check_device_errors=" << check;
    EXPECT_TRUE(allclose(y.to_host(), exp_times_3, 1e-6, 1e-6));

    SharedVar s = shared(Array::zeros({64, 32}, DType::Float32), "s");
    Function g = function({x}, {tensor::exp(x)}, {.updates = {{s, s + x}}, .outputs_on_device = true});
    g({d});
    synchronize(Device::cuda(0));
    const int64_t before_g = waits();
    g({d});
    EXPECT_GE(waits() - before_g, 1) << "updates wait before they commit (check_device_errors=" << check << ")";

    Function h = function({x}, {tensor::exp(x)});  // host outputs
    h({d});
    const int64_t before_h = waits();
    h({d});
    EXPECT_EQ(waits() - before_h, 1) << "host outputs: one wait (check_device_errors=" << check << ")";
  }
}

// The probe's peer scenario: a result on cuda0 copied to cuda1, its block freed and reused by
// the next call on cuda0 while the copy may still read it. Runs the path the devices offer
// (peer access, or staging through pinned host memory: the simulator's SIM_P2P=1 / 0).
TEST_F(CudaRuntimeTest, CopiesBetweenDevicesAreOrderedOnBothStreams) {
  THEON_REQUIRE_CUDA_DEVICES(2);
  Var x = tensor::matrix("x");
  Array xv = Array::randn({256, 64}, 1, DType::Float32), xw = Array::randn({256, 64}, 2, DType::Float32);
  config().device = "cpu";
  Function ref = function({x}, {tensor::exp(x) * 3.0});
  const Array want = ref({xv})[0], want_w = ref({xw})[0];
  const Array twice = function({x}, {x * 2.0})({xv})[0];
  for (bool check : {true, false}) {
    config().device = "cuda0";
    config().check_device_errors = check;  // false: calls return without waiting for the device
    Function f = function({x}, {tensor::exp(x) * 3.0}, {.outputs_on_device = true});
    for (int round = 0; round < 3; ++round) {
      Array y0 = f({xv})[0];
      Array y1 = to_device(y0, Device::cuda(1));
      y0 = Array();                     // back to cuda0's cache...
      Array other = f({xw})[0];         // ...and reused by the next call on cuda0
      Array back = to_device(y1, Device::cuda(0));  // and the other way
      EXPECT_EQ(y1.device(), Device::cuda(1));
      EXPECT_TRUE(allclose(y1.to_host(), want, 1e-6, 1e-6)) << "check_device_errors=" << check << " round " << round;
      EXPECT_TRUE(allclose(other.to_host(), want_w, 1e-6, 1e-6));
      EXPECT_TRUE(allclose(back.to_host(), want, 1e-6, 1e-6));
    }
  }
  // A function on cuda1 reading an input that lives on cuda0 (a Transfer between devices).
  config().device = "cuda1";
  config().check_device_errors = true;
  Function g = function({x}, {x * 2.0});
  Array on0 = to_device(xv, Device::cuda(0));
  EXPECT_TRUE(allclose(g({on0})[0], twice, 0, 0));
}

}  // namespace
}  // namespace theon
