#include "backends/cuda/cuda_backend.hpp"

#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/cuda_runtime.hpp"
#include "backends/scalar_program_render.hpp"
#include "util/kernel_cache.hpp"

#include <cstring>
#include <mutex>
#include <unordered_map>

namespace theon::backends::cuda {

CudaBackend::CudaBackend() {
  register_elemwise_kernels(*this);
  register_reduce_kernels(*this);
  register_nnet_kernels(*this);
  register_shape_kernels(*this);
  register_blas_kernels(*this);
  register_grad_kernels(*this);
  register_random_kernels(*this);
  register_pool_kernels(*this);
  register_conv_kernels(*this);
}

Support CudaBackend::available() const {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return {false, cudaGetErrorString(e)};
  }
  if (n == 0) return {false, "no CUDA-capable device is detected"};
  return {true, std::to_string(n) + " device(s)"};
}

const CudaKernel* CudaBackend::find(const graph::Apply& node) const {
  auto it = kernels_.find(node.op().kind());
  return it == kernels_.end() ? nullptr : it->second.get();
}

Support CudaBackend::supports(const graph::Apply& node) const {
  const CudaKernel* k = find(node);
  if (!k) return {false, "no CUDA kernel for " + node.op().name()};
  return k->supports(node);
}

const Kernel& CudaBackend::kernel(const graph::Apply& node) const {
  const CudaKernel* k = find(node);
  if (!k) throw InternalError(node.describe() + ": no CUDA kernel (placement should have kept it on the CPU)");
  return *k;
}

bool CudaBackend::host_input(const graph::Apply& node, int input) const {
  const CudaKernel* k = find(node);
  return k && k->host_input(node, input);
}

void CudaBackend::register_kernel(graph::OpKind kind, std::unique_ptr<CudaKernel> kernel) {
  kernels_[kind] = std::move(kernel);
}

CudaBackend& backend() {
  static CudaBackend* b = new CudaBackend();  // never destroyed (kernels may run at exit)
  return *b;
}

int device_of(const std::vector<Array>& inputs, const std::vector<Array>& outputs) {
  for (auto& a : outputs)
    if (a.defined() && a.device().is_cuda()) return a.device().index;
  for (auto& a : inputs)
    if (a.defined() && a.device().is_cuda()) return a.device().index;
  return 0;
}

cudaStream_t stream_for(const ExecContext& where, int device) {
  if (!where.stream.handle || where.stream.device != Device::cuda(device)) [[unlikely]]
    throw InternalError("a CUDA kernel for arrays on cuda" + std::to_string(device) + " was given " +
                        (where.stream.handle ? "a stream of " + where.stream.device.str() : std::string("no stream")) +
                        " (context '" + where.context.name + "')");
  // The device becomes current (as the stream lookup by device used to make it): launches,
  // cuBLAS/cuDNN calls and allocations of the kernel then work on the stream's device also on
  // a worker thread whose current device is another (a multi-context call's lanes).
  int current = -1;
  if (cudaGetDevice(&current) != cudaSuccess || current != device) THEON_CUDA_CHECK(cudaSetDevice(device));
  return static_cast<cudaStream_t>(where.stream.handle);
}

cudaKernel_t cached_kernel(const std::string& signature, int device, bool fmad,
                           const std::function<KernelSource()>& make, const std::string& kernel_name) {
  static detail::CompileOnceCache<cudaKernel_t> cache;
  // The compile options choose the code too: another fmad loads anew.
  const std::string key = std::to_string(device) + "|" + nvrtc_options_tag(fmad) + "|" + signature + "|" + kernel_name;
  return cache.get(key, [&] { return get_kernel(make(), kernel_name, device, fmad); });
}

void launch(cudaKernel_t kernel, dim3 grid, dim3 block, void** args, size_t shared_bytes, cudaStream_t stream,
            const std::string& what) {
  if (grid.x == 0 || grid.y == 0 || grid.z == 0) return;  // nothing to do (size-0 arrays)
  cudaError_t e = cudaLaunchKernel(reinterpret_cast<const void*>(kernel), grid, block, args, shared_bytes, stream);
  if (e != cudaSuccess) {
    cudaGetLastError();
    throw DeviceError(what + ": kernel launch failed: " + cudaGetErrorString(e));
  }
}

void launch(cudaKernel_t kernel, dim3 grid, dim3 block, void** args, size_t shared_bytes, cudaStream_t stream,
            const graph::Apply& node) {
  if (grid.x == 0 || grid.y == 0 || grid.z == 0) return;
  cudaError_t e = cudaLaunchKernel(reinterpret_cast<const void*>(kernel), grid, block, args, shared_bytes, stream);
  if (e != cudaSuccess) {
    cudaGetLastError();
    throw DeviceError(node.describe() + ": kernel launch failed: " + cudaGetErrorString(e));
  }
}

unsigned grid_for(int64_t n, unsigned block, int device) {
  static std::mutex mu;
  static std::unordered_map<int, int> sms;
  int count;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = sms.find(device);
    if (it == sms.end()) {
      int v = 0;
      THEON_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, device));
      it = sms.emplace(device, v).first;
    }
    count = it->second;
  }
  const int64_t needed = (n + block - 1) / block;
  const int64_t cap = static_cast<int64_t>(count) * 32;  // enough waves to hide latency
  return static_cast<unsigned>(std::max<int64_t>(0, std::min(needed, cap)));
}

const char* cuda_type(DType dtype) { return scalar_type(dtype, Dialect::Cuda); }

const char* dtype_tag(DType dtype) {
  switch (dtype) {
    case DType::Bool: return "b1";
    case DType::Int8: return "i8";
    case DType::Int16: return "i16";
    case DType::Int32: return "i32";
    case DType::Int64: return "i64";
    case DType::UInt8: return "u8";
    case DType::Float16: return "f16";  // storage: only elementwise casts and copies see it
    case DType::Float32: return "f32";
    case DType::Float64: return "f64";
    default: break;
  }
  throw NotImplementedError(std::string("the CUDA backend has no type for ") + std::string(dtype_name(dtype)));
}

}  // namespace theon::backends::cuda

// ---- entry points for libtheon's loader (src/runtime/cuda_library.cpp) ----------------

extern "C" {

/// Registers the device ops and says whether a device can be used (and why not).
__attribute__((visibility("default"))) int theon_cuda_probe(int* device_count, char* reason, unsigned long reason_size) {
  using namespace theon::backends::cuda;
  *device_count = 0;
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    const char* why = e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA-capable device is detected";
    cudaGetLastError();
    std::strncpy(reason, why, reason_size - 1);
    reason[reason_size - 1] = '\0';
    return 0;
  }
  *device_count = n;
  theon::detail::set_device_ops(&CudaRuntime::instance());
  theon::runtime::set_device_streams(&CudaRuntime::instance());
  return 1;
}

/// The backend object (placement and lowering use it through backends::Backend).
__attribute__((visibility("default"))) void* theon_cuda_backend() {
  return static_cast<theon::backends::Backend*>(&theon::backends::cuda::backend());
}

}  // extern "C"
