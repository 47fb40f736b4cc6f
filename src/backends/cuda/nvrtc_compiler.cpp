#include "backends/cuda/nvrtc_compiler.hpp"

#include "backends/cuda/cuda_check.hpp"
#include "util/kernel_cache.hpp"


#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>
#include <unistd.h>

namespace theon::detail {
extern const char* const kScalarOpsHeader;
}

namespace theon::backends::cuda {

extern const char* const kNvrtcPreamble;


namespace {

// Bump when generated code changes meaning without its text changing (e.g. the preamble).
constexpr int kCodegenVersion = 1;

std::atomic<int64_t> g_compiled{0}, g_disk_hits{0}, g_loaded{0};

struct Headers {
  std::vector<std::string> names, bodies;
};

// The preamble split at its "//@@ name" lines, plus scalar_ops.hpp.
const Headers& headers() {
  static const Headers h = [] {
    Headers out;
    std::istringstream in(kNvrtcPreamble);
    std::string line, body, name;
    while (std::getline(in, line)) {
      if (line.rfind("//@@ ", 0) == 0) {
        if (!name.empty()) out.names.push_back(name), out.bodies.push_back(body);
        name = line.substr(5);
        body.clear();
      } else if (!name.empty()) {
        body += line + "\n";
      }
    }
    if (!name.empty()) out.names.push_back(name), out.bodies.push_back(body);
    out.names.push_back("scalar_ops.hpp");
    out.bodies.push_back(detail::kScalarOpsHeader);
    return out;
  }();
  return h;
}

std::vector<std::string> options(int arch) {
  // IEEE float32 (DESIGN.md): no fast-math; denormals kept, exact division and sqrt.
  return {"--gpu-architecture=sm_" + std::to_string(arch), "-std=c++17", "-default-device", "--ftz=false",
          "--prec-div=true", "--prec-sqrt=true"};
}

std::string numbered(const std::string& code) {
  std::istringstream in(code);
  std::string line, out;
  for (int n = 1; std::getline(in, line); ++n) out += std::to_string(n) + "\t" + line + "\n";
  return out;
}

std::string nvrtc_compile(const KernelSource& src, int arch) {
  const Headers& h = headers();
  std::vector<const char*> names, bodies;
  for (size_t i = 0; i < h.names.size(); ++i) names.push_back(h.names[i].c_str()), bodies.push_back(h.bodies[i].c_str());
  nvrtcProgram prog;
  THEON_CUDA_CHECK(nvrtcCreateProgram(&prog, src.code.c_str(), (src.name + ".cu").c_str(), static_cast<int>(names.size()),
                                      bodies.data(), names.data()));
  auto opts = options(arch);
  std::vector<const char*> copts;
  for (auto& o : opts) copts.push_back(o.c_str());
  const nvrtcResult r = nvrtcCompileProgram(prog, static_cast<int>(copts.size()), copts.data());
  if (r != NVRTC_SUCCESS) {
    size_t log_size = 0;
    nvrtcGetProgramLogSize(prog, &log_size);
    std::string log(log_size, '\0');
    nvrtcGetProgramLog(prog, log.data());
    nvrtcDestroyProgram(&prog);
    throw DeviceError("NVRTC could not compile the generated kernel '" + src.name + "' for sm_" + std::to_string(arch) +
                      " (" + nvrtcGetErrorString(r) + "):\n" + log + "\nsource:\n" + numbered(src.code));
  }
  size_t size = 0;
  THEON_CUDA_CHECK(nvrtcGetCUBINSize(prog, &size));
  std::string cubin(size, '\0');
  THEON_CUDA_CHECK(nvrtcGetCUBIN(prog, cubin.data()));
  nvrtcDestroyProgram(&prog);
  ++g_compiled;
  return cubin;
}

std::string cache_key(const KernelSource& src, int arch) {
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  std::string text = src.code + "\n//arch " + std::to_string(arch) + " nvrtc " + std::to_string(major) + "." +
                     std::to_string(minor) + " codegen " + std::to_string(kCodegenVersion);
  for (auto& o : options(arch)) text += " " + o;
  for (auto& b : headers().bodies) text += b;
  return detail::content_key(text);
}

}  // namespace

std::string compile_cubin(const KernelSource& src, int arch) {
  const std::string key = cache_key(src, arch);
  static std::mutex mu;
  static std::map<std::string, std::string> memory;  // key -> cubin, this process
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = memory.find(key); it != memory.end()) return it->second;
  }
  // The disk cache verifies each cubin against the SHA-256 recorded when it was written; a
  // failed write (a full disk) leaves nothing behind and costs only the next process a compile.
  const detail::KernelCacheFolder folder("cuda");
  const std::string name = key + ".cubin";
  std::string cubin;
  if (detail::VerifiedEntry cached; folder.open(name, cached) && !cached.bytes.empty()) {
    cubin = std::move(cached.bytes);
    ++g_disk_hits;
  } else {
    cubin = nvrtc_compile(src, arch);
    if (std::string error; !folder.store(name, cubin, error))
      std::cerr << "theon: warning: the compiled CUDA kernel '" << src.name << "' was not cached: " << error << "\n";
  }
  std::lock_guard<std::mutex> lock(mu);
  return memory.emplace(key, std::move(cubin)).first->second;
}

int device_arch(int device) {
  static std::mutex mu;
  static std::map<int, int> archs;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = archs.find(device); it != archs.end()) return it->second;
  cudaDeviceProp prop{};
  THEON_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  return archs[device] = prop.major * 10 + prop.minor;
}

cudaKernel_t get_kernel(const KernelSource& src, const std::string& kernel, int device) {
  struct Loaded {
    cudaLibrary_t library = nullptr;
    std::map<std::string, cudaKernel_t> kernels;
  };
  static std::mutex mu;
  static std::map<std::pair<std::string, int>, Loaded> loaded;  // (source key, device)
  const int arch = device_arch(device);
  const std::string key = cache_key(src, arch);
  std::lock_guard<std::mutex> lock(mu);
  Loaded& l = loaded[{key, device}];
  if (!l.library) {
    const std::string& cubin = compile_cubin(src, arch);
    THEON_CUDA_CHECK(cudaSetDevice(device));
    THEON_CUDA_CHECK(cudaLibraryLoadData(&l.library, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    ++g_loaded;
  }
  auto it = l.kernels.find(kernel);
  if (it != l.kernels.end()) return it->second;
  cudaKernel_t k = nullptr;
  THEON_CUDA_CHECK(cudaLibraryGetKernel(&k, l.library, kernel.c_str()));
  l.kernels.emplace(kernel, k);
  return k;
}

NvrtcStats nvrtc_stats() { return {g_compiled.load(), g_disk_hits.load(), g_loaded.load()}; }

}  // namespace theon::backends::cuda
