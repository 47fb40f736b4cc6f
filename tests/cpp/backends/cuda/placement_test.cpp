// Placement and the no-GPU behaviour, checked on any machine: graphs are placed on cuda0
// in plan-only mode (kernels chosen, transfers inserted, nothing run), and a function
// compiled with device=cuda on a machine without a device follows on_fallback.
#include "backends/cuda/cuda_backend.hpp"
#include "compile/placement.hpp"
#include "compile/program.hpp"
#include "ops/conv.hpp"
#include "util/process.hpp"

#include <theon/theon.hpp>

#include <gtest/gtest.h>

#include <cstdlib>

namespace theon {
namespace {

std::shared_ptr<compile::Program> plan(const std::vector<Var>& inputs, const std::vector<Var>& outputs,
                                       const std::string& mode = "fast_run") {
  std::vector<graph::VarPtr> in, out;
  for (auto& v : inputs) in.push_back(v.node());
  for (auto& v : outputs) out.push_back(v.node());
  compile::LowerOptions lo;
  lo.mode = mode;
  lo.device = "cuda0";
  lo.plan_only = true;
  return compile::lower(std::make_shared<graph::FunctionGraph>(in, out), lo);
}

int count_transfers(const compile::Program& p) {
  int n = 0;
  for (auto& t : p.thunks) n += t.is_transfer;
  return n;
}

TEST(CudaPlacement, EveryNodeOfATrainingStyleGraphRunsOnTheGpu) {
  Var x = tensor::matrix("x"), w = tensor::matrix("w");
  Var b = tensor::vector("b");
  Var h = tensor::relu(tensor::dot(x, w) + b);
  Var y = tensor::sum(tensor::exp(h - tensor::max(h, std::vector<int>{1}, true)), std::vector<int>{1});
  for (const char* mode : {"none", "fast_run"}) {
    auto p = plan({x, w, b}, {y}, mode);
    for (auto& t : p->thunks) {
      if (t.is_transfer) continue;
      EXPECT_TRUE(t.dev.is_cuda()) << mode << ": " << t.node->describe() << " on " << t.device << ": " << t.reason;
    }
    EXPECT_EQ(p->num_fallbacks, 0) << mode;
    // x, w and b come from the host: one transfer each, however many nodes read them.
    EXPECT_EQ(count_transfers(*p), 3) << mode;
    EXPECT_EQ(p->slot_device[p->output_slots[0]], Device::cuda(0)) << mode;
  }
}

// x.shape is host metadata: taking it of a device value copies nothing to the host (it used
// to insert a Transfer of the whole tensor, run on every call).
TEST(CudaPlacement, ShapeOfADeviceInputNeedsNoTransfer) {
  Var x = tensor::matrix("x");
  for (const char* device : {"cuda0", "cpu"}) {
    for (bool with_work : {false, true}) {
      std::vector<graph::VarPtr> in = {x.node()}, out = {tensor::shape(x).node()};
      if (with_work) out.push_back(tensor::sum(x).node());
      compile::LowerOptions lo;
      lo.device = device;
      lo.plan_only = true;
      lo.input_devices = {Device::cuda(0)};
      auto p = compile::lower(std::make_shared<graph::FunctionGraph>(in, out), lo);
      EXPECT_EQ(count_transfers(*p), std::string(device) == "cpu" && with_work ? 1 : 0)
          << device << (with_work ? " with a sum" : "");
    }
  }
}

TEST(CudaPlacement, InputsAlreadyOnTheDeviceNeedNoTransfer) {
  Var x = tensor::vector("x");
  std::vector<graph::VarPtr> in = {x.node()}, out = {(x * 2.0 + 1.0).node()};
  compile::LowerOptions lo;
  lo.device = "cuda0";
  lo.plan_only = true;
  lo.input_devices = {Device::cuda(0)};
  auto p = compile::lower(std::make_shared<graph::FunctionGraph>(in, out), lo);
  EXPECT_EQ(count_transfers(*p), 0);
}

TEST(CudaPlacement, ShapeArithmeticStaysOnTheHost) {
  Var x = tensor::matrix("x");
  Var y = tensor::reshape(tensor::exp(x), tensor::shape(x));
  auto p = plan({x}, {y}, "none");
  bool saw_shape = false;
  for (auto& t : p->thunks) {
    if (t.node->op().name() == "Shape") {
      saw_shape = true;
      EXPECT_TRUE(t.dev.is_cpu());
      EXPECT_EQ(t.reason, "shape arithmetic stays on the host");
    }
    if (t.node->op().name() == "Reshape") {
      EXPECT_TRUE(t.dev.is_cuda()) << t.reason;
    }
  }
  EXPECT_TRUE(saw_shape);
  EXPECT_EQ(p->num_fallbacks, 0);
}

// cuDNN is optional (src/backends/cuda/cudnn_api.hpp): a convolution and its gradients run
// on the GPU when libcudnn.so.9 opens, else on the CPU with the reason "no cuDNN: ...".
// Prints "conv on cuda0" or "conv on cpu: <reason>" per node, for the test below.
void print_conv_placement() {
  Var x = tensor::tensor4("x"), w = tensor::tensor4("w");
  Var y = tensor::conv2d(x, w, {.border_mode = "half"});
  std::vector<Var> g = grad(tensor::sum(y), {x, w});
  auto p = plan({x, w}, {y, g[0], g[1]}, "none");
  for (auto& t : p->thunks)
    if (t.node && ops::Conv2d::of(t.node->op()))
      std::printf("%s on %s%s%s\n", t.node->op().name().c_str(), t.device.c_str(), t.device == "cpu" ? ": " : "",
                  t.device == "cpu" ? t.reason.c_str() : "");
}

// Runs itself again as a child process (THEON_CUDNN_LIBRARY naming no file, and a marker
// telling the child to print the placement instead).
TEST(CudaPlacement, ConvolutionWithoutCudnnStaysOnTheCpuSayingWhy) {
  if (std::getenv("THEON_TEST_CONV_PLACEMENT_CHILD")) return print_conv_placement();
  ::setenv("THEON_CUDNN_LIBRARY", "/nonexistent/libcudnn.so.9", 1);
  ::setenv("THEON_TEST_CONV_PLACEMENT_CHILD", "1", 1);
  const detail::ProcessResult r = detail::run_capture(
      {"/proc/self/exe", "--gtest_filter=CudaPlacement.ConvolutionWithoutCudnnStaysOnTheCpuSayingWhy"});
  ::unsetenv("THEON_CUDNN_LIBRARY");
  ::unsetenv("THEON_TEST_CONV_PLACEMENT_CHILD");
  ASSERT_TRUE(r.ok()) << r.error << r.output;
  for (const char* kind : {"Conv2d on cpu", "Conv2dGradInputs on cpu", "Conv2dGradWeights on cpu"})
    EXPECT_NE(r.output.find(kind), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("no cuDNN: /nonexistent/libcudnn.so.9 could not be opened"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("on cuda0"), std::string::npos) << r.output;
}

TEST(CudaWithoutDevice, StatusGivesTheReason) {
  CudaStatus st = cuda_status();
  if (st.ok) GTEST_SKIP() << "this machine has a CUDA device";
  EXPECT_FALSE(st.reason.empty());
  EXPECT_EQ(st.device_count, 0);
  std::string m;
  try {
    to_device(Array::ones({2}, DType::Float32), Device::cuda(0));
  } catch (const DeviceError& e) {
    m = e.what();
  }
  EXPECT_NE(m.find("no CUDA device available: " + st.reason), std::string::npos) << m;
  EXPECT_EQ(memory_stats().in_use, 0u);
}

TEST(CudaWithoutDevice, FunctionFollowsOnFallback) {
  if (cuda_status().ok) GTEST_SKIP() << "this machine has a CUDA device";
  Config saved = config();
  config().device = "cuda";
  Var x = tensor::vector("x");
  config().on_fallback = "raise";
  std::string m;
  try {
    function({x}, {x + 1.0}, {.name = "f"});
  } catch (const DeviceError& e) {
    m = e.what();
  }
  EXPECT_NE(m.find("no CUDA device available: " + cuda_status().reason), std::string::npos) << m;
  config().on_fallback = "warn";
  ::testing::internal::CaptureStderr();
  Function f = function({x}, {x + 1.0}, {.name = "f"});
  const std::string warned = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(warned.find("no CUDA device available"), std::string::npos) << warned;
  EXPECT_EQ(f({Array::ones({3}, DType::Float32)})[0].to_vector<float>(), (std::vector<float>{2, 2, 2}));
  EXPECT_NE(f.explain().find("fallback: no CUDA device available"), std::string::npos) << f.explain();
  config() = saved;
}

}  // namespace
}  // namespace theon
