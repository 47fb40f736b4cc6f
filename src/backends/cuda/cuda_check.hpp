// Error checks for CUDA runtime, cuBLAS and NVRTC calls: each failure becomes a
// DeviceError naming the call and the library's own message.
#pragma once
#include <theon/error.hpp>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nvrtc.h>

#include <string>

namespace theon::backends::cuda {

inline void check(cudaError_t e, const char* call) {
  if (e != cudaSuccess) throw DeviceError(std::string(call) + " failed: " + cudaGetErrorString(e));
}
inline void check(nvrtcResult e, const char* call) {
  if (e != NVRTC_SUCCESS) throw DeviceError(std::string(call) + " failed: " + nvrtcGetErrorString(e));
}
inline void check(cublasStatus_t e, const char* call) {
  if (e != CUBLAS_STATUS_SUCCESS) throw DeviceError(std::string(call) + " failed: " + cublasGetStatusString(e));
}

}  // namespace theon::backends::cuda

#define THEON_CUDA_CHECK(call) ::theon::backends::cuda::check((call), #call)
