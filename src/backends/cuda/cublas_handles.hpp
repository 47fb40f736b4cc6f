// cuBLAS handles: one per device, created on first use (thread-safe), bound to the device's
// stream (stream_of) and given a fixed workspace from the caching allocator, so every
// cuBLAS call is ordered with Theon's kernels and copies, allocates nothing per call, and
// is bitwise reproducible (one stream, one workspace: cuBLAS's documented conditions).
//
// The handle keeps CUBLAS_DEFAULT_MATH and CUBLAS_ATOMICS_NOT_ALLOWED: callers pick the
// precision per call with cublasGemmEx's compute type (gemm_compute_type), so the shared
// handle is never reconfigured and each call follows its plan's allow_tf32.
#pragma once
#include <theon/dtype.hpp>

#include <cublasLt.h>
#include <cublas_v2.h>

namespace theon::backends::cuda {

/// The handle of `device` (makes the device current; the handle's stream is stream_of(device)).
cublasHandle_t cublas_handle(int device);

/// Bytes of the workspace given to each handle (cuBLAS recommends 32 MiB on Hopper).
constexpr size_t kCublasWorkspaceBytes = size_t(32) << 20;

/// The cuBLASLt handle of `device` (created on first use, like cublas_handle) and the
/// workspace its matmuls may use: the cuBLAS handle's own, since both run only on
/// stream_of(device), one call after another (never at the same time).
struct CublasLt {
  cublasLtHandle_t handle = nullptr;
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
};
CublasLt cublaslt_handle(int device);

/// The cuBLAS data type of float32/float64 (throws NotImplementedError for others).
cudaDataType_t cublas_data_type(DType dtype);

/// The compute type for a GEMM in `dtype`: CUBLAS_COMPUTE_64F for float64; for float32
/// CUBLAS_COMPUTE_32F (IEEE FP32 products and sums, no TF32) unless `allow_tf32` (the
/// plan's KernelOptions::allow_tf32), which gives CUBLAS_COMPUTE_32F_FAST_TF32 (tensor
/// cores, 10-bit mantissa inputs).
cublasComputeType_t gemm_compute_type(DType dtype, bool allow_tf32);

}  // namespace theon::backends::cuda
