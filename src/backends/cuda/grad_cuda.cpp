// CUDA kernel of GradientBlock (zero_grad, disconnected_grad: kinds ZeroGrad and
// DisconnectedGrad) and GradientTransform (grad_clip, grad_scale: kinds GradClip and
// GradScale). Forward, all are the identity: the output is a view of the input, as
// in the op's perform(), so the kernel sets it from metadata alone (no launch, no copy; like
// the views of shape_cuda.cpp). The kinds differ only in their gradients, which grad()
// builds as ordinary graphs that are placed like any other.
#include "backends/cuda/cuda_backend.hpp"

namespace theon::backends::cuda {

namespace {

class GradientBlockKernel final : public CudaKernel {
 public:
  std::string name() const override { return "cuda_view"; }
  void run(const KernelPlan*, const ExecContext&, const graph::Apply& node, const std::vector<Array>& inputs,
           std::vector<Array>& outputs) const override {
    node.op().perform(node, inputs, outputs);  // outputs[0] = inputs[0]: a device array stays one
  }
  std::vector<KernelSource> sources(const graph::Apply&, const std::vector<Array>&,
                                    const KernelOptions&) const override {
    return {};
  }
};

}  // namespace

void register_grad_kernels(CudaBackend& b) {
  b.register_kernel(graph::OpKind::ZeroGrad, std::make_unique<GradientBlockKernel>());
  b.register_kernel(graph::OpKind::DisconnectedGrad, std::make_unique<GradientBlockKernel>());
  b.register_kernel(graph::OpKind::GradClip, std::make_unique<GradientBlockKernel>());
  b.register_kernel(graph::OpKind::GradScale, std::make_unique<GradientBlockKernel>());
}

}  // namespace theon::backends::cuda
