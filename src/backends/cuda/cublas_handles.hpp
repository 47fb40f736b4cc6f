// cuBLAS handles: one per (device, stream), created on first use (thread-safe), bound to that
// stream (a kernel's ExecContext stream) and given a fixed workspace from the caching
// allocator (its home stream the same), so every cuBLAS call is ordered with Theon's kernels
// and copies on that stream, allocates nothing per call, and is bitwise reproducible (one
// stream, one workspace: cuBLAS's documented conditions). Two contexts on one device have two
// streams, hence two handles and two workspaces: their GEMMs never share scratch memory.
// Handles live as long as the process; each is used by one call at a time, as its stream is.
//
// The handle keeps CUBLAS_DEFAULT_MATH and CUBLAS_ATOMICS_NOT_ALLOWED: callers pick the
// precision per call with cublasGemmEx's compute type (gemm_compute_type), so the shared
// handle is never reconfigured and each call follows its plan's allow_tf32.
#pragma once
#include <theon/dtype.hpp>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

namespace theon::backends::cuda {

/// The handle of (`device`, `stream`) (makes the device current; bound to `stream`, a stream
/// of `device`).
cublasHandle_t cublas_handle(int device, cudaStream_t stream);

/// Bytes of the workspace given to each handle (cuBLAS recommends 32 MiB on Hopper).
constexpr size_t kCublasWorkspaceBytes = size_t(32) << 20;

/// The cuBLASLt handle of (`device`, `stream`) (created on first use, like cublas_handle) and
/// the workspace its matmuls may use: the cuBLAS handle's own, since both run only on
/// `stream`, one call after another (never at the same time).
struct CublasLt {
  cublasLtHandle_t handle = nullptr;
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
};
CublasLt cublaslt_handle(int device, cudaStream_t stream);

/// How many (device, stream) handles exist (tests: one per stream used).
size_t cublas_handle_count();

/// The cuBLAS data type of float32/float64 (throws NotImplementedError for others).
cudaDataType_t cublas_data_type(DType dtype);

/// The compute type for a GEMM in `dtype`: CUBLAS_COMPUTE_64F for float64; for float32
/// CUBLAS_COMPUTE_32F (IEEE FP32 products and sums, no TF32) unless `allow_tf32` (the
/// plan's KernelOptions::allow_tf32), which gives CUBLAS_COMPUTE_32F_FAST_TF32 (tensor
/// cores, 10-bit mantissa inputs).
cublasComputeType_t gemm_compute_type(DType dtype, bool allow_tf32);

}  // namespace theon::backends::cuda
