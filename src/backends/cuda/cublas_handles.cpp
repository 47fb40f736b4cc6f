#include "backends/cuda/cublas_handles.hpp"

#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/cuda_kernel.hpp"
#include "backends/cuda/cuda_runtime.hpp"

#include <theon/error.hpp>

#include <map>
#include <memory>
#include <mutex>

namespace theon::backends::cuda {

namespace {

struct HandleState {
  cublasHandle_t handle = nullptr;
  std::shared_ptr<Buffer> workspace;  // held for the handle's (the process's) lifetime
  cublasLtHandle_t lt = nullptr;      // made on first use by cublaslt_handle
};

std::mutex g_mu;
// Per (device, stream): each handle has its own workspace, so two contexts' GEMMs on one
// device (two streams) never share scratch memory.
std::map<std::pair<int, cudaStream_t>, HandleState>& handles() {
  static auto* h = new std::map<std::pair<int, cudaStream_t>, HandleState>();  // never destroyed: kernels may run at exit
  return *h;
}

// The state of (`device`, `stream`) with its cuBLAS handle made; g_mu held.
HandleState& state_locked(int device, cudaStream_t stream);

}  // namespace

cublasHandle_t cublas_handle(int device, cudaStream_t stream) {
  THEON_CUDA_CHECK(cudaSetDevice(device));  // cuBLAS works on the current device
  std::lock_guard<std::mutex> lock(g_mu);
  return state_locked(device, stream).handle;
}

CublasLt cublaslt_handle(int device, cudaStream_t stream) {
  THEON_CUDA_CHECK(cudaSetDevice(device));
  std::lock_guard<std::mutex> lock(g_mu);
  HandleState& h = state_locked(device, stream);
  if (!h.lt) THEON_CUDA_CHECK(cublasLtCreate(&h.lt));
  return {h.lt, h.workspace->data(), kCublasWorkspaceBytes};
}

size_t cublas_handle_count() {
  std::lock_guard<std::mutex> lock(g_mu);
  return handles().size();
}

namespace {

HandleState& state_locked(int device, cudaStream_t stream) {
  HandleState& h = handles()[{device, stream}];
  if (h.handle) return h;
  cublasHandle_t handle = nullptr;
  THEON_CUDA_CHECK(cublasCreate(&handle));
  try {
    THEON_CUDA_CHECK(cublasSetStream(handle, stream));
    THEON_CUDA_CHECK(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));
    THEON_CUDA_CHECK(cublasSetAtomicsMode(handle, CUBLAS_ATOMICS_NOT_ALLOWED));
    THEON_CUDA_CHECK(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST));
    // A user workspace whose home is the handle's stream (the caching allocator orders its
    // uses there): cuBLAS then never allocates during a call.
    h.workspace = CudaRuntime::instance().allocate_on(Device::cuda(device), kCublasWorkspaceBytes, stream);
    THEON_CUDA_CHECK(cublasSetWorkspace(handle, h.workspace->data(), kCublasWorkspaceBytes));
  } catch (...) {
    cublasDestroy(handle);
    h.workspace.reset();
    throw;
  }
  h.handle = handle;
  return h;
}

}  // namespace

cudaDataType_t cublas_data_type(DType dtype) {
  switch (dtype) {
    case DType::Float32: return CUDA_R_32F;
    case DType::Float64: return CUDA_R_64F;
    default: break;
  }
  throw NotImplementedError("cuBLAS has no GEMM for dtype " + std::string(dtype_name(dtype)));
}

cublasComputeType_t gemm_compute_type(DType dtype, bool allow_tf32) {
  if (dtype == DType::Float64) return CUBLAS_COMPUTE_64F;
  return allow_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

}  // namespace theon::backends::cuda
