// The CPU backend: a kernel per op kind, registered explicitly (static registrars vanish
// from static libraries). Every kind has a loop written for the host (cpu_kernels.hpp: the
// *_cpu.cpp files, by op family), correct first and reasonably fast; BLAS and generated fused
// kernels replace some and fall back to them. A kind without a kernel is not supported, and
// supports() says so.
#pragma once
#include "backends/backend.hpp"

#include <map>
#include <memory>

namespace theon::backends::cpu {

class CpuBackend final : public Backend {
 public:
  CpuBackend();
  std::string name() const override { return "cpu"; }
  Support available() const override { return {true, ""}; }
  Support supports(const graph::Apply& node) const override;
  const Kernel& kernel(const graph::Apply& node) const override;
  /// The generated kernels of the Composite and FusedReduce nodes, as one module
  /// (prepare_fused_kernels); nothing when options.cxx is empty.
  void prepare_batch(const std::vector<const graph::Apply*>& nodes, const KernelOptions& options) const override;

  /// Registers `kernel` for every node whose op is of `kind`.
  void register_kernel(graph::OpKind kind, std::unique_ptr<Kernel> kernel);

 private:
  std::map<graph::OpKind, std::unique_ptr<Kernel>> kernels_;
};

/// Kernels for matrix products (oneDNN for float32, CBLAS for float64, loops for integers).
void register_blas_kernels(CpuBackend& backend);
/// Kernels for batched matrix products (numpy.matmul), one GEMM per matrix of the batch.
void register_matmul_kernels(CpuBackend& backend);
/// The Gemm kernel (alpha * a.b + beta * c, formed by the specialize pass): oneDNN / CBLAS with beta.
void register_gemm_kernels(CpuBackend& backend);
/// Convolution and its gradients (conv_cpu.cpp: oneDNN for float32, im2col + GEMM otherwise).
void register_conv_kernels(CpuBackend& backend);

}  // namespace theon::backends::cpu
