// cuDNN, optional at build and at run time. libtheon_cuda never links it: when it was built
// with cudnn.h (THEON_HAVE_CUDNN_H), cudnn_api() opens libcudnn.so.9 with dlopen on first use
// (THEON_CUDNN_LIBRARY names another file) and resolves the functions of
// cudnn_functions.def; without the header or the library it answers nullptr and
// cudnn_missing() says why ("no cuDNN: ..."), which the convolution kernels give as their
// supports() reason, so placement reports it and the nodes run on the CPU.
#pragma once
#include <string>

#ifdef THEON_HAVE_CUDNN_H
#include <cuda_runtime.h>
#include <cudnn.h>
#endif

namespace theon::backends::cuda {

#ifdef THEON_HAVE_CUDNN_H
struct CudnnApi {
#define THEON_CUDNN_FN(name) decltype(&::name) name = nullptr;
#include "backends/cuda/cudnn_functions.def"
#undef THEON_CUDNN_FN
  size_t version = 0;  // cudnnGetVersion()
};

/// The loaded library's functions, or nullptr (cudnn_missing() says why).
const CudnnApi* cudnn_api();

/// The handle of (`device`, `stream`) (created on first use, bound to `stream`, a stream of
/// `device`; kept for the process). Makes `device` current. One call at a time per handle,
/// as on its stream.
cudnnHandle_t cudnn_handle(int device, cudaStream_t stream);

/// Throws DeviceError naming `call` and cuDNN's message unless `s` is CUDNN_STATUS_SUCCESS.
void cudnn_check(cudnnStatus_t s, const char* call);
#endif

/// Empty when cuDNN is usable; else the reason, starting "no cuDNN".
const std::string& cudnn_missing();

}  // namespace theon::backends::cuda
