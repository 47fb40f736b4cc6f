#include "backends/cuda/nvrtc_compiler.hpp"

#include "backends/backend.hpp"
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

std::atomic<int64_t> g_compiled{0}, g_disk_hits{0}, g_loaded{0}, g_in_flight{0}, g_max_in_flight{0};

// Counts NVRTC runs in progress (NvrtcStats::max_in_flight: whether compiles overlap).
struct InFlight {
  InFlight() {
    const int64_t n = ++g_in_flight;
    int64_t m = g_max_in_flight.load();
    while (n > m && !g_max_in_flight.compare_exchange_weak(m, n)) {
    }
  }
  ~InFlight() { --g_in_flight; }
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;
};

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

}  // namespace

std::vector<std::string> nvrtc_options(int arch, bool fmad) {
  // IEEE float32 (DESIGN.md): no fast-math; denormals kept, exact division and sqrt, and no
  // contraction of a*b+c into an FMA (the CPU kernels are built with -ffp-contract=off)
  // unless the options allow it.
  return {"--gpu-architecture=sm_" + std::to_string(arch),
          "-std=c++17",
          "-default-device",
          "--ftz=false",
          "--prec-div=true",
          "--prec-sqrt=true",
          fmad ? "--fmad=true" : "--fmad=false"};
}
std::vector<std::string> nvrtc_options(int arch) { return nvrtc_options(arch, options_of(nullptr).fmad); }

std::string nvrtc_options_tag(bool fmad) { return fmad ? "fmad" : "nofmad"; }
std::string nvrtc_options_tag() { return nvrtc_options_tag(options_of(nullptr).fmad); }

namespace {

// The fmad a source compiles with: off for code it cannot change (fmad_applies = false).
bool fmad_for(const KernelSource& src, bool fmad) { return fmad && src.fmad_applies; }

std::string numbered(const std::string& code) {
  std::istringstream in(code);
  std::string line, out;
  for (int n = 1; std::getline(in, line); ++n) out += std::to_string(n) + "\t" + line + "\n";
  return out;
}

std::string nvrtc_compile(const KernelSource& src, int arch, bool fmad) {
  const InFlight in_flight;
  const Headers& h = headers();
  std::vector<const char*> names, bodies;
  for (size_t i = 0; i < h.names.size(); ++i) names.push_back(h.names[i].c_str()), bodies.push_back(h.bodies[i].c_str());
  nvrtcProgram prog;
  THEON_CUDA_CHECK(nvrtcCreateProgram(&prog, src.code.c_str(), (src.name + ".cu").c_str(), static_cast<int>(names.size()),
                                      bodies.data(), names.data()));
  const auto opts = nvrtc_options(arch, fmad);
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

std::string cache_key(const KernelSource& src, int arch, bool fmad) {
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  std::string text = src.code + "\n//arch " + std::to_string(arch) + " nvrtc " + std::to_string(major) + "." +
                     std::to_string(minor) + " codegen " + std::to_string(kCodegenVersion);
  for (auto& o : nvrtc_options(arch, fmad)) text += " " + o;
  for (auto& b : headers().bodies) text += b;
  return detail::content_key(text);
}

}  // namespace

namespace {

std::string compile_uncached(const KernelSource& src, int arch, bool fmad, const std::string& key) {
  // The disk cache verifies each cubin against the SHA-256 recorded when it was written; a
  // failed write (a full disk) leaves nothing behind and costs only the next process a compile.
  // When another process stored this cubin first, its verified entry is kept (store never
  // replaces one); this process uses its own compile of the same source.
  const detail::KernelCacheFolder folder("cuda");
  const std::string name = key + ".cubin";
  if (detail::VerifiedEntry cached; folder.open(name, cached) && !cached.bytes.empty()) {
    ++g_disk_hits;
    return std::move(cached.bytes);
  }
  std::string cubin = nvrtc_compile(src, arch, fmad);
  if (std::string error; !folder.store(name, cubin, error))
    std::cerr << "theon: warning: the compiled CUDA kernel '" << src.name << "' was not cached: " << error << "\n";
  return cubin;
}

// One compilation per key and process (detail::CompileOnceCache): the first caller compiles
// (no lock held), the others asking for the same key wait for its result; different keys
// compile concurrently; a failed compile throws and the next caller retries.
// `key` is cache_key(src, arch, fmad): the options are part of it.
const std::string& compile_cubin_keyed(const KernelSource& src, int arch, bool fmad, const std::string& key) {
  static detail::CompileOnceCache<std::string> cubins;  // key -> cubin, this process
  return cubins.get(key, [&] { return compile_uncached(src, arch, fmad, key); });
}

}  // namespace

std::string compile_cubin(const KernelSource& src, int arch, bool fmad) {
  fmad = fmad_for(src, fmad);
  return compile_cubin_keyed(src, arch, fmad, cache_key(src, arch, fmad));
}
std::string compile_cubin(const KernelSource& src, int arch) {
  return compile_cubin(src, arch, options_of(nullptr).fmad);
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

namespace {

// Makes `device` the calling thread's current device for a scope, then restores the one it
// had: prepare() loads kernels on whatever thread compiles the function (a user's thread may
// hold another current device, e.g. torch's).
class CurrentDevice {
 public:
  explicit CurrentDevice(int device) {
    THEON_CUDA_CHECK(cudaGetDevice(&previous_));
    THEON_CUDA_CHECK(cudaSetDevice(device));
  }
  ~CurrentDevice() { cudaSetDevice(previous_); }
  CurrentDevice(const CurrentDevice&) = delete;
  CurrentDevice& operator=(const CurrentDevice&) = delete;

 private:
  int previous_ = 0;
};

}  // namespace

cudaKernel_t get_kernel(const KernelSource& src, const std::string& kernel, int device, bool fmad) {
  // Per (source key, device) the module is loaded once, per (source key, device, kernel) the
  // kernel looked up once; loading compiles (or reads) the cubin once per source key.
  static detail::CompileOnceCache<cudaLibrary_t> libraries;
  static detail::CompileOnceCache<cudaKernel_t> kernels;
  const int arch = device_arch(device);
  fmad = fmad_for(src, fmad);
  const std::string key = cache_key(src, arch, fmad);
  const std::string library_key = key + "|" + std::to_string(device);
  return kernels.get(library_key + "|" + kernel, [&] {
    const cudaLibrary_t library = libraries.get(library_key, [&] {
      const std::string& cubin = compile_cubin_keyed(src, arch, fmad, key);
      const CurrentDevice loading_on(device);
      cudaLibrary_t l = nullptr;
      THEON_CUDA_CHECK(cudaLibraryLoadData(&l, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
      ++g_loaded;
      return l;
    });
    cudaKernel_t k = nullptr;
    THEON_CUDA_CHECK(cudaLibraryGetKernel(&k, library, kernel.c_str()));
    return k;
  });
}

cudaKernel_t get_kernel(const KernelSource& src, const std::string& kernel, int device) {
  return get_kernel(src, kernel, device, options_of(nullptr).fmad);
}

NvrtcStats nvrtc_stats() { return {g_compiled.load(), g_disk_hits.load(), g_loaded.load(), g_max_in_flight.load()}; }

}  // namespace theon::backends::cuda
