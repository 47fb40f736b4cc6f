#include "runtime/cuda_library.hpp"

#include "util/device_ops.hpp"

#include <theon/array.hpp>
#include <theon/device.hpp>
#include <theon/error.hpp>

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

namespace theon::runtime {
namespace {

std::string directory_of_this_library() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&cuda_library), &info) == 0 || !info.dli_fname) return "";
  std::string path = info.dli_fname;
  auto slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

CudaLibrary open_library() {
  CudaLibrary lib;
  std::string tried, error;
  auto attempt = [&](const std::string& name) {
    if (lib.handle) return;
    tried += (tried.empty() ? "" : ", ") + name;
    lib.handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib.handle) error = dlerror();
  };
  if (const char* explicit_path = std::getenv("THEON_CUDA_LIBRARY"); explicit_path && *explicit_path) {
    attempt(explicit_path);
  } else {
    const std::string dir = directory_of_this_library();
    if (!dir.empty()) attempt(dir + "libtheon_cuda.so");
    attempt("libtheon_cuda.so");
  }
  if (!lib.handle) {
    lib.reason = "Theon's CUDA backend (libtheon_cuda.so) could not be loaded (tried " + tried + "): " + error;
    return lib;
  }
  using Probe = int (*)(int*, char*, unsigned long);
  auto probe = reinterpret_cast<Probe>(dlsym(lib.handle, "theon_cuda_probe"));
  if (!probe) {
    lib.reason = "libtheon_cuda.so has no theon_cuda_probe (a mismatched build?)";
    return lib;
  }
  char reason[512] = {0};
  lib.ok = probe(&lib.device_count, reason, sizeof reason) != 0;
  if (!lib.ok) lib.reason = reason;
  return lib;
}

}  // namespace

const CudaLibrary& cuda_library() {
  static std::once_flag once;
  static CudaLibrary lib;
  std::call_once(once, [] { lib = open_library(); });
  return lib;
}

void* cuda_symbol(const char* name) {
  const CudaLibrary& lib = cuda_library();
  return lib.handle ? dlsym(lib.handle, name) : nullptr;
}

}  // namespace theon::runtime

namespace theon {

CudaStatus cuda_status() {
  const auto& lib = runtime::cuda_library();
  return {lib.ok, lib.reason, lib.device_count};
}

namespace {
void require_device(Device device, const char* what) {
  const auto& lib = runtime::cuda_library();
  if (!lib.ok) throw DeviceError(std::string(what) + ": no CUDA device available: " + lib.reason);
  if (device.index < 0 || device.index >= lib.device_count)
    throw DeviceError(std::string(what) + ": device " + device.str() + " does not exist (" +
                      std::to_string(lib.device_count) + " CUDA device(s) present)");
}
}  // namespace

DeviceMemoryStats memory_stats(Device device) {
  if (device.is_cpu()) return {};
  if (!runtime::cuda_library().ok) return {};
  return detail::require_device_ops("memory_stats").stats(device);
}

void empty_cache(Device device) {
  if (device.is_cpu() || !runtime::cuda_library().ok) return;
  detail::require_device_ops("empty_cache").empty_cache(device);
}

void synchronize(Device device) {
  if (!device.is_cuda()) return;
  if (detail::DeviceOps* ops = detail::device_ops()) ops->synchronize(device);
}

void external_stream_wait(Device device, int64_t stream) {
  if (!device.is_cuda()) return;
  if (detail::DeviceOps* ops = detail::device_ops()) ops->external_stream_wait(device, stream);
}

void wait_for_external_stream(Device device, int64_t stream) {
  if (!device.is_cuda()) return;
  if (detail::DeviceOps* ops = detail::device_ops()) ops->wait_for_external_stream(device, stream);
}

Array to_device(const Array& a, Device device) {
  if (!a.defined()) throw ValueError("to_device: undefined Array");
  if (a.device() == device) return a;
  if (device.is_cpu()) return a.to_host();
  require_device(device, "to_device");
  auto& ops = detail::require_device_ops("to_device");
  Array out(ops.allocate(device, a.nbytes()), a.dtype(), a.shape(), contiguous_strides(a.shape()));
  detail::copy_array(a, out);
  return out;
}

}  // namespace theon
