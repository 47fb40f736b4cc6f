#include "backends/cuda/cudnn_api.hpp"

#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/cuda_kernel.hpp"

#include <theon/error.hpp>

#include <dlfcn.h>

#include <cstdlib>
#include <map>
#include <mutex>

namespace theon::backends::cuda {

#ifdef THEON_HAVE_CUDNN_H
namespace {

struct Loaded {
  CudnnApi api;
  bool ok = false;
  std::string missing;
};

const Loaded& loaded() {
  static const Loaded* l = [] {
    auto* r = new Loaded();  // never destroyed: kernels may run at exit
    const char* env = std::getenv("THEON_CUDNN_LIBRARY");
    const std::string file = env && *env ? env : "libcudnn.so.9";
    void* lib = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* e = dlerror();
      r->missing = "no cuDNN: " + file + " could not be opened (" + std::string(e ? e : "unknown error") +
                   "); install cuDNN 9 or set THEON_CUDNN_LIBRARY";
      return r;
    }
#define THEON_CUDNN_FN(name)                                                          \
    r->api.name = reinterpret_cast<decltype(&::name)>(dlsym(lib, #name));             \
    if (!r->api.name) {                                                               \
      r->missing = "no cuDNN: " + file + " lacks " #name " (cuDNN 9 is needed)";      \
      return r;                                                                       \
    }
#include "backends/cuda/cudnn_functions.def"
#undef THEON_CUDNN_FN
    r->api.version = r->api.cudnnGetVersion();
    if (r->api.version < 90000) {
      r->missing = "no cuDNN: " + file + " is version " + std::to_string(r->api.version) + ", cuDNN 9 is needed";
      return r;
    }
    r->ok = true;
    return r;
  }();
  return *l;
}

}  // namespace

const CudnnApi* cudnn_api() { return loaded().ok ? &loaded().api : nullptr; }

void cudnn_check(cudnnStatus_t s, const char* call) {
  if (s == CUDNN_STATUS_SUCCESS) return;
  const CudnnApi* api = cudnn_api();
  throw DeviceError(std::string(call) + " failed: " +
                    (api ? api->cudnnGetErrorString(s) : "status " + std::to_string(static_cast<int>(s))));
}

cudnnHandle_t cudnn_handle(int device, cudaStream_t stream) {
  static std::mutex mu;
  // One handle per (device, stream): cuDNN keeps per-handle scratch state, so two contexts'
  // streams never share one. Never destroyed: kernels may run at exit.
  static auto* handles = new std::map<std::pair<int, cudaStream_t>, cudnnHandle_t>();
  const CudnnApi* api = cudnn_api();
  if (!api) throw DeviceError(cudnn_missing());
  THEON_CUDA_CHECK(cudaSetDevice(device));  // a handle belongs to the device current at its creation
  std::lock_guard<std::mutex> lock(mu);
  cudnnHandle_t& h = (*handles)[{device, stream}];
  if (h) return h;
  cudnnHandle_t handle = nullptr;
  cudnn_check(api->cudnnCreate(&handle), "cudnnCreate");
  cudnn_check(api->cudnnSetStream(handle, stream), "cudnnSetStream");
  h = handle;
  return h;
}

const std::string& cudnn_missing() { return loaded().missing; }

#else

const std::string& cudnn_missing() {
  static const std::string why = "no cuDNN: libtheon_cuda was built without cudnn.h";
  return why;
}

#endif

}  // namespace theon::backends::cuda
