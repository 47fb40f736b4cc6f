#include "backends/cpu/cpu_backend.hpp"
#include "backends/cpu/fused_cpu.hpp"

namespace theon::backends::cpu {
namespace {

class ReferenceKernel final : public Kernel {
 public:
  std::string name() const override { return "reference"; }
  void run(const KernelPlan*, const graph::Apply& node, const std::vector<Array>& inputs,
           std::vector<Array>& outputs) const override {
    node.op().perform(node, inputs, outputs);
  }
};

}  // namespace

CpuBackend::CpuBackend() : reference_(std::make_unique<ReferenceKernel>()) {
  register_blas_kernels(*this);
  register_matmul_kernels(*this);
  register_fused_kernels(*this);
  register_gemm_kernels(*this);
}

Support CpuBackend::supports(const graph::Apply&) const { return {true, ""}; }

const Kernel& CpuBackend::kernel(const graph::Apply& node) const {
  auto it = kernels_.find(node.op().kind());
  return it == kernels_.end() ? *reference_ : *it->second;
}

void CpuBackend::register_kernel(graph::OpKind kind, std::unique_ptr<Kernel> kernel) {
  kernels_[kind] = std::move(kernel);
}

}  // namespace theon::backends::cpu

namespace theon::backends {

Backend& cpu_backend() {
  static cpu::CpuBackend backend;
  return backend;
}

}  // namespace theon::backends
