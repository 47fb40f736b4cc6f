// The CUDA backend: kernels registered by op family, as on the CPU, each able to say
// why it cannot run a node (placement reports that reason; there is no silent fallback).
#pragma once
#include "backends/backend.hpp"
#include "backends/cuda/cuda_kernel.hpp"

#include <map>
#include <memory>
#include <string>

namespace theon::backends::cuda {

class CudaBackend final : public Backend {
 public:
  CudaBackend();
  std::string name() const override { return "cuda"; }
  Support available() const override;
  Support supports(const graph::Apply& node) const override;
  const Kernel& kernel(const graph::Apply& node) const override;
  bool host_input(const graph::Apply& node, int input) const override;
  /// The kernel for a node, or nullptr when no kernel is registered for its kind.
  const CudaKernel* find(const graph::Apply& node) const;
  /// Registers `kernel` for every node whose op is of `kind`.
  void register_kernel(graph::OpKind kind, std::unique_ptr<CudaKernel> kernel);

 private:
  std::map<graph::OpKind, std::unique_ptr<CudaKernel>> kernels_;
};

CudaBackend& backend();

// One registration function per kernel family (explicit: static registrars vanish).
void register_elemwise_kernels(CudaBackend&);   // Elemwise, Composite (casts are elementwise)
void register_reduce_kernels(CudaBackend&);     // Reduce, SumTo, ArgMax
void register_nnet_kernels(CudaBackend&);       // Softmax, LogSoftmax, crossentropy family, OneHot
void register_shape_kernels(CudaBackend&);      // views, copies, Join, Subtensor family, Alloc
void register_blas_kernels(CudaBackend&);       // Dot, Gemm, BatchedMatmul (cuBLAS; integer: own kernel)
void register_grad_kernels(CudaBackend&);       // ZeroGrad, DisconnectedGrad, GradClip, GradScale (views)
void register_random_kernels(CudaBackend&);     // RandomDraw (Philox), Assert, Print
void register_pool_kernels(CudaBackend&);       // Pool, MaxPoolGrad, AveragePoolGrad, DownsampleFactorMaxGradGrad
void register_conv_kernels(CudaBackend&);       // Conv2d and its gradients (cuDNN, opened at run time)

}  // namespace theon::backends::cuda
