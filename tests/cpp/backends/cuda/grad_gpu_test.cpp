// GradientBlock (zero_grad, disconnected_grad) on a GPU (label gpu; skipped without a device):
// the kernel passes a device array through as a view, and graphs holding either kind run with
// device=cuda and on_fallback=raise (they used to fall back to the CPU), forward and gradient.
#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/gpu_test_support.hpp"

#include <theon/theon.hpp>

#include <gtest/gtest.h>

#include <cmath>

namespace theon {
namespace {

class GradientBlockGpuTest : public testing::Cuda0Test {};

TEST_F(GradientBlockGpuTest, KernelPassesTheDeviceArrayThroughAsAView) {
  for (bool zero : {true, false}) {
    Var x = tensor::matrix("x", DType::Float32);
    Var y = zero ? zero_grad(x) : disconnected_grad(x);
    const graph::Apply& node = *y.node()->owner;
    ASSERT_TRUE(backends::cuda::backend().supports(node).ok);
    const backends::Kernel& k = backends::cuda::backend().kernel(node);
    EXPECT_EQ(k.name(), "cuda_view");
    const Array host = Array::randn({3, 4}, 7, DType::Float32);
    const Array dev = to_device(host, Device::cuda(0)).transpose();  // a non-contiguous view
    std::vector<Array> out(1);
    k.run(nullptr, node, {dev}, out);
    EXPECT_EQ(out[0].device(), Device::cuda(0));
    EXPECT_EQ(out[0].data(), dev.data());
    EXPECT_EQ(out[0].strides(), dev.strides());
    EXPECT_TRUE(allclose(out[0].to_host(), host.transpose(), 0, 0));
  }
}

TEST_F(GradientBlockGpuTest, ForwardRunsOnTheDeviceWithoutFallback) {
  Var x = tensor::matrix("x", DType::Float64);
  Function f = function({x}, {zero_grad(x) * 2.0 + disconnected_grad(tensor::exp(x))});
  const Array a = Array::randn({5, 3}, 1, DType::Float64);
  const std::vector<double> in = a.to_vector<double>(), got = f({a})[0].to_vector<double>();
  ASSERT_EQ(got.size(), in.size());
  for (size_t i = 0; i < in.size(); ++i) EXPECT_DOUBLE_EQ(got[i], in[i] * 2.0 + std::exp(in[i]));
  for (const NodeInfo& n : f.nodes())
    if (n.op.find("Grad") != std::string::npos) {
      EXPECT_EQ(n.device, "cuda0") << f.explain();
      EXPECT_EQ(n.kernel, "cuda_view") << f.explain();
    }
}

TEST_F(GradientBlockGpuTest, GradClipAndGradScaleRunOnTheDeviceAsViews) {
  Var x = tensor::vector("x", DType::Float32);
  Var cost = tensor::sum(tensor::sqr(grad_clip(x, -1.0, 1.0)) + grad_scale(x, 3.0) * x);
  Function f = function({x}, {cost, grad(cost, {x})[0]});
  const Array a = Array::from_vector<float>({1.5f, -2.f, 0.25f}, {3});
  const std::vector<Array> r = f({a});
  // d/dx: clip(2x, -1, 1) + (3 * x + x): the scaled path's gradient is 3x, the other factor's x.
  EXPECT_EQ(r[1].to_vector<float>(), (std::vector<float>{1.f + 6.f, -1.f - 8.f, 0.5f + 1.f}));
  for (const NodeInfo& n : f.nodes())
    if (n.op.find("GradClip") != std::string::npos || n.op.find("GradScale") != std::string::npos) {
      EXPECT_EQ(n.device, "cuda0") << f.explain();
      EXPECT_EQ(n.kernel, "cuda_view") << f.explain();
    }
}

TEST_F(GradientBlockGpuTest, GradientsThroughBothRunOnTheDevice) {
  // d/dx sum(zero_grad(x) * x + disconnected_grad(x) * x) = x + x: each block passes its
  // value forward and no gradient back.
  Var x = tensor::vector("x", DType::Float32);
  Var cost = tensor::sum(zero_grad(x) * x + disconnected_grad(x) * x);
  Function f = function({x}, {cost, grad(cost, {x})[0]});
  const Array a = Array::from_vector<float>({1.5f, -2.f, 0.25f}, {3});
  const std::vector<Array> r = f({a});
  EXPECT_FLOAT_EQ(r[0].to_vector<float>()[0], 2 * (1.5f * 1.5f + 4.f + 0.0625f));
  EXPECT_EQ(r[1].to_vector<float>(), (std::vector<float>{3.f, -4.f, 0.5f}));
}

}  // namespace
}  // namespace theon
