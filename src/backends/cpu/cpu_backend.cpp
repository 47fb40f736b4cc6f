#include "backends/cpu/cpu_backend.hpp"
#include "backends/cpu/cpu_kernels.hpp"
#include "backends/cpu/fused_cpu.hpp"
#include "ops/float16.hpp"

namespace theon::backends::cpu {

void register_loop(CpuBackend& backend, graph::OpKind kind, LoopFn fn) {
  backend.register_kernel(kind, std::make_unique<LoopKernel>("reference", fn));
}

CpuBackend::CpuBackend() {
  // The loops of every family first; faster kernels registered after them replace them.
  register_elemwise_loops(*this);
  register_reduce_loops(*this);
  register_shape_loops(*this);
  register_nnet_loops(*this);
  register_random_loops(*this);
  register_pool_loops(*this);
  register_blas_kernels(*this);
  register_matmul_kernels(*this);
  register_fused_kernels(*this);
  register_gemm_kernels(*this);
  register_conv_kernels(*this);
}

Support CpuBackend::supports(const graph::Apply& node) const {
  if (ops::touches_float16(node) && !ops::handles_float16(node))
    return {false, node.op().name() + " has no float16 kernel: float16 is a storage dtype, computed in float32 between "
                                      "casts by the float16 pass (docs/guide/float16.md)"};
  if (kernels_.count(node.op().kind())) return {true, ""};
  return {false, "no CPU kernel for " + node.op().name() + " (none registered in backends/cpu)"};
}

const Kernel& CpuBackend::kernel(const graph::Apply& node) const {
  auto it = kernels_.find(node.op().kind());
  if (it == kernels_.end()) throw InternalError(node.describe() + ": " + supports(node).reason);
  return *it->second;
}

void CpuBackend::prepare_batch(const std::vector<const graph::Apply*>& nodes, const KernelOptions& options) const {
  prepare_fused_kernels(nodes, options);
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
