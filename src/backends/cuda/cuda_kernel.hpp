// CudaKernel: a backend kernel that runs on a CUDA device. Beside run() it exposes the
// NVRTC programs run() would compile for given inputs (sources()), so CI, which has the
// toolkit and no GPU, compiles every kernel the op tests use (tests/cpp/backends/cuda).
//
// Writing one (see elemwise_cuda.cpp):
//   - supports(node): dtypes/props it handles, else a reason (placement shows it);
//   - sources(node, inputs, options): generated code per dtype, rank and layout class, never
//     per size (prepare() compiles these when the function is compiled);
//   - run(plan, where, ...): inputs and outputs are device arrays on one device (outputs
//     contiguous, as infer_shape says; view outputs are set by the kernel); every launch, copy,
//     memset and library call goes on stream_for(where, device), the thunk's context's compute
//     stream (never a stream looked up by device: two contexts on one device have two), and
//     temporaries come from allocate_on(device, bytes, that stream);
//     kernels come from cached_kernel() with options_of(plan).fmad, and every other option
//     from options_of(plan), never from config().
#pragma once
#include "backends/backend.hpp"
#include "backends/cuda/nvrtc_compiler.hpp"

#include <cuda_runtime.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace theon::backends::cuda {

class CudaKernel : public Kernel {
 public:
  virtual Support supports(const graph::Apply&) const { return {true, ""}; }
  /// Inputs run() reads on the host (shape vectors, index scalars that decide output
  /// shapes): placement hands them over as host arrays instead of copying them to the GPU.
  virtual bool host_input(const graph::Apply&, int /*input*/) const { return false; }
  /// The NVRTC programs run() compiles for inputs like these (placeholder arrays with
  /// dtypes, shapes and strides are enough; no data is read) under `options` (deterministic
  /// picks other kernels). Library-only kernels (cuBLAS) return none.
  virtual std::vector<KernelSource> sources(const graph::Apply& node, const std::vector<Array>& inputs,
                                            const KernelOptions& options) const = 0;
  /// The same under the options config() holds now (the NVRTC sweep, codegen tests).
  std::vector<KernelSource> sources(const graph::Apply& node, const std::vector<Array>& inputs) const;
  /// Compiles and loads on info.device the kernels run() will use for info.inputs, through
  /// the caches run() looks in, so its first call compiles nothing. Only when every input's
  /// layout is known and the device is usable (without one, as in the NVRTC sweep's
  /// plan-only lowering, nothing is compiled: the sweep batches its own compiles).
  std::shared_ptr<KernelPlan> prepare(const graph::Apply& node, const PrepareInfo& info) const override;
};

/// The device a node's arrays live on (its first device array; cuda0 if none).
int device_of(const std::vector<Array>& inputs, const std::vector<Array>& outputs);
/// The stream a kernel issues its work on: `where.stream`, which must be a CUDA stream of
/// `device` (InternalError otherwise: the executor bound the thunk to another device's
/// context, or bound none). Makes `device` the calling thread's current device.
cudaStream_t stream_for(const ExecContext& where, int device);

/// Looks up a loaded kernel by `signature` (the family's own key: op, dtypes, rank, layout)
/// and `fmad` (the plan's KernelOptions::fmad: it changes the code), making and compiling the
/// source only on the first use per device. That first use finds a kernel prepare() loaded
/// (get_kernel's cache, by source) without compiling or loading it again.
cudaKernel_t cached_kernel(const std::string& signature, int device, bool fmad,
                           const std::function<KernelSource()>& make, const std::string& kernel_name);

/// cudaLaunchKernel with error checking; `what` names the node for errors.
void launch(cudaKernel_t kernel, dim3 grid, dim3 block, void** args, size_t shared_bytes, cudaStream_t stream,
            const std::string& what);
/// The same, describing `node` only if the launch fails (no string work per launch).
void launch(cudaKernel_t kernel, dim3 grid, dim3 block, void** args, size_t shared_bytes, cudaStream_t stream,
            const graph::Apply& node);

/// Blocks for a grid-stride loop over n elements (at most a few waves of the device).
unsigned grid_for(int64_t n, unsigned block, int device);

/// CUDA C type name of a dtype ("float", "long long", "bool", ...).
const char* cuda_type(DType dtype);
/// Short dtype tag for kernel names ("f32", "i64", "b1").
const char* dtype_tag(DType dtype);

/// Theon's strided-operand descriptor as passed to kernels (see theon_device.cuh):
/// rank <= 8, shape and strides in elements.
struct DeviceShape {
  long long d[8] = {0};
};
struct DeviceStrides {
  long long s[8] = {0};
};
constexpr int kMaxRank = 8;

}  // namespace theon::backends::cuda
