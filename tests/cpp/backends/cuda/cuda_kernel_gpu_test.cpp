// CudaKernel::prepare on a device: it compiles and loads, through the caches run() looks in,
// the kernels run() will use for the predicted inputs, so the first run compiles and loads
// nothing; and run() follows its plan's options (deterministic, fmad), not config().
// Each test has its own empty compiledir and uses fmad=true, which no other test compiles
// with, so every kernel it needs is new to the process: a kernel prepare() missed would
// show as a compile in run(). Skips without a device (fails under THEON_GPU_SIM=1).
#include "backends/backend.hpp"
#include "backends/cuda/copy_codegen.hpp"
#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/cuda_runtime.hpp"
#include "backends/cuda/gpu_test_support.hpp"
#include "backends/cuda/nvrtc_test_support.hpp"
#include "graph/node.hpp"
#include "ops/composite.hpp"

#include <theon/theon.hpp>

#include <gtest/gtest.h>

#include <memory>
#include <thread>
#include <vector>

namespace theon::backends::cuda {
namespace {

// The device's own context's compute stream (where the 4-argument Kernel::run runs).
cudaStream_t own_stream(int device) { return CudaRuntime::instance().stream(device); }

using S = ops::ScalarOpId;

const Device kGpu = Device::cuda(0);

class CudaKernelPrepare : public nvrtc_testing::PrivateCompiledirTest {
 protected:
  void SetUp() override {
    THEON_REQUIRE_CUDA_DEVICES(1);
    use_private_compiledir();
    config().fmad = false;
    config().deterministic = false;
  }
};

KernelOptions fmad_options(bool deterministic = false) {
  KernelOptions o = KernelOptions::from_config();
  o.fmad = true;
  o.deterministic = deterministic;
  return o;
}

Array placeholder(DType dtype, const Shape& shape) { return Array(nullptr, dtype, shape, contiguous_strides(shape)); }

PrepareInfo info_for(const KernelOptions& options, const std::vector<Array>& inputs) {
  PrepareInfo info;
  info.options = options;
  info.device = kGpu;
  for (const Array& a : inputs) info.inputs.push_back(placeholder(a.dtype(), a.shape()));
  info.layout_known.assign(inputs.size(), true);
  return info;
}

int64_t compiles(const NvrtcStats& s) { return s.compiled + s.disk_hits; }

// A float64 Composite over three matrices, one program per `variant` (a kernel of its own).
graph::VarPtr composite_node(int variant) {
  std::vector<ops::CompositeInstr> program = {{S::Sub, DType::Float64, {0, 1}}, {S::Mul, DType::Float64, {3, 2}}};
  for (int k = 0; k <= variant; ++k) program.push_back({S::Tanh, DType::Float64, {4 + k}});
  auto op = std::make_shared<ops::Composite>(std::vector<DType>{DType::Float64, DType::Float64, DType::Float64},
                                             program, std::vector<int>{4 + variant + 1});
  graph::TensorType type;
  type.dtype = DType::Float64;
  type.dims = {-1, -1};
  std::vector<graph::VarPtr> ins;
  for (const char* name : {"a", "b", "c"}) ins.push_back(tensor::dmatrix(name).node());
  return graph::make_output(op, ins, type);
}

// The node's output on the GPU (run with `plan`) and on the CPU, both on the host.
std::pair<Array, Array> run_both(const graph::Apply& node, const KernelPlan* plan, const std::vector<Array>& host) {
  const Shape shape = node.op().infer_shape(node, host)[0];
  const DType dtype = node.output_raw(0)->type.dtype;
  std::vector<Array> dev, cpu_out = {Array::empty(shape, dtype)}, gpu_out = {device_empty(shape, dtype, 0, own_stream(0))};
  for (size_t i = 0; i < host.size(); ++i)
    dev.push_back(backend().host_input(node, static_cast<int>(i)) ? host[i] : to_device(host[i], kGpu));
  cpu_backend().kernel(node).run(nullptr, node, host, cpu_out);
  backend().kernel(node).run(plan, node, dev, gpu_out);
  return {cpu_out[0], gpu_out[0].to_host()};
}

TEST_F(CudaKernelPrepare, PreparedElementwiseKernelsRunWithoutCompiling) {
  // Several nodes prepared at once, as a function's prepare() calls run on worker threads.
  constexpr int kNodes = 4;
  std::vector<graph::VarPtr> nodes;
  for (int v = 0; v < kNodes; ++v) nodes.push_back(composite_node(v));
  const std::vector<Array> host = {Array::randn({5, 7}, 1, DType::Float64), Array::randn({5, 7}, 2, DType::Float64),
                                   Array::randn({5, 7}, 3, DType::Float64)};
  const PrepareInfo info = info_for(fmad_options(), host);
  const NvrtcStats before = nvrtc_stats();
  std::vector<std::shared_ptr<KernelPlan>> plans(kNodes);
  std::vector<std::thread> threads;
  for (int v = 0; v < kNodes; ++v)
    threads.emplace_back([&, v] { plans[v] = backend().kernel(*nodes[v]->owner).prepare(*nodes[v]->owner, info); });
  for (auto& t : threads) t.join();
  const NvrtcStats prepared = nvrtc_stats();
  EXPECT_EQ(compiles(prepared) - compiles(before), kNodes) << "prepare compiles each node's kernel";
  EXPECT_EQ(prepared.loaded - before.loaded, kNodes) << "and loads it";
  for (int v = 0; v < kNodes; ++v) {
    ASSERT_NE(plans[v], nullptr);
    EXPECT_TRUE(plans[v]->options() == info.options);
    auto [cpu, gpu] = run_both(*nodes[v]->owner, plans[v].get(), host);
    EXPECT_TRUE(allclose(cpu, gpu, 1e-12, 1e-12)) << v;
  }
  const NvrtcStats ran = nvrtc_stats();
  EXPECT_EQ(ran.compiled, prepared.compiled) << "run() compiled a kernel prepare() should have";
  EXPECT_EQ(ran.disk_hits, prepared.disk_hits);
  EXPECT_EQ(ran.loaded, prepared.loaded) << "run() loaded a kernel prepare() should have";
}

TEST_F(CudaKernelPrepare, UnknownLayoutsOrNoDeviceCompileNothing) {
  graph::VarPtr y = composite_node(9);
  const graph::Apply& node = *y->owner;
  const std::vector<Array> host = {placeholder(DType::Float64, {5, 7}), placeholder(DType::Float64, {5, 7}),
                                   placeholder(DType::Float64, {5, 7})};
  PrepareInfo unknown = info_for(fmad_options(), host);
  unknown.layout_known[1] = false;  // a view's output: strides known only when it runs
  PrepareInfo missing = info_for(fmad_options(), host);
  missing.device = Device::cuda(64);
  const NvrtcStats before = nvrtc_stats();
  for (const PrepareInfo* info : {&unknown, &missing}) {
    std::shared_ptr<KernelPlan> plan;
    EXPECT_NO_THROW(plan = backend().kernel(node).prepare(node, *info));
    ASSERT_NE(plan, nullptr);
    EXPECT_TRUE(plan->options() == info->options);
  }
  EXPECT_EQ(compiles(nvrtc_stats()), compiles(before));
  EXPECT_EQ(nvrtc_stats().loaded, before.loaded);
}

TEST_F(CudaKernelPrepare, TheIndexAddIsDeterministicWhenItsPlanSaysSo) {
  // inc_subtensor(x[i], y) with repeated indices, float32: atomics unless deterministic.
  Var x = tensor::fmatrix("x"), y = tensor::fmatrix("y");
  Var i = tensor::lvector("i");
  Var out = tensor::inc_subtensor(tensor::take(x, i), y);
  const graph::Apply& node = *out.node()->owner;
  const std::vector<Array> host = {Array::randn({5, 9}, 4, DType::Float32), Array::randn({6, 9}, 5, DType::Float32),
                                   Array::from_vector<int64_t>({1, -1, 1, 0, 1, 4})};
  ASSERT_FALSE(config().deterministic);
  const NvrtcStats before = nvrtc_stats();
  const std::shared_ptr<KernelPlan> plan =
      backend().kernel(node).prepare(node, info_for(fmad_options(/*deterministic=*/true), host));
  const NvrtcStats prepared = nvrtc_stats();
  EXPECT_GT(compiles(prepared), compiles(before)) << "prepare compiles the deterministic scatter";
  auto [cpu, gpu] = run_both(node, plan.get(), host);
  // The atomic kernel (what config() asks for) was not prepared: using it would compile.
  EXPECT_EQ(compiles(nvrtc_stats()), compiles(prepared)) << "run() did not use the plan's deterministic kernel";
  EXPECT_EQ(nvrtc_stats().loaded, prepared.loaded);
  // The deterministic kernel adds in the CPU's order: the same bits.
  const std::vector<float> c = cpu.to_vector<float>(), g = gpu.to_vector<float>();
  ASSERT_EQ(c.size(), g.size());
  for (size_t k = 0; k < c.size(); ++k) ASSERT_EQ(c[k], g[k]) << "element " << k;
}

// The same through function(): lowering prepares every thunk, so a function compiled for the
// GPU has its kernels compiled and loaded before its first call, which compiles nothing.
TEST_F(CudaKernelPrepare, AFunctionCompilesItsKernelsWhenItIsCompiled) {
  config().fmad = true;  // kernels no other test compiled
  Var a = tensor::dmatrix("a"), b = tensor::dmatrix("b");
  Var y = tensor::sum(tensor::tanh(a * b - a), std::vector<int>{1}) + tensor::max(b * 3.0, std::vector<int>{1});
  const NvrtcStats before = nvrtc_stats();
  const std::string device = config().device, on_fallback = config().on_fallback;
  config().device = "cuda0";
  config().on_fallback = "raise";
  Function f = function({a, b}, {y});
  config().device = device;
  config().on_fallback = on_fallback;
  config().fmad = false;  // frozen in f: its kernels keep fmad
  const NvrtcStats compiled = nvrtc_stats();
  EXPECT_GT(compiles(compiled), compiles(before)) << "function() compiled the kernels";
  const Array av = Array::randn({5, 7}, 1, DType::Float64), bv = Array::randn({5, 7}, 2, DType::Float64);
  const Array got = f({av, bv})[0];
  const NvrtcStats called = nvrtc_stats();
  EXPECT_EQ(compiles(called), compiles(compiled)) << "the first call compiled a kernel";
  EXPECT_EQ(called.loaded, compiled.loaded) << "the first call loaded a kernel";
  Var a64 = tensor::dmatrix("a"), b64 = tensor::dmatrix("b");
  const Array want = function({a64, b64}, {tensor::sum(tensor::tanh(a64 * b64 - a64), std::vector<int>{1}) +
                                              tensor::max(b64 * 3.0, std::vector<int>{1})},
                              {.mode = "none"})({av, bv})[0];
  EXPECT_TRUE(allclose(got, want, 1e-12, 1e-12));
}

}  // namespace
}  // namespace theon::backends::cuda
