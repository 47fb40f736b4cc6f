// NVRTC: generated CUDA source -> cubin for one architecture, cached on disk under
// `compiledir`/cuda/ (key: source, architecture, NVRTC version, options, codegen version;
// files written by atomic rename, so parallel processes share the cache), then loaded
// per device with cudaLibraryLoadData (the runtime API: nothing links libcuda). Each key
// compiles once per process; different keys compile concurrently (no global lock).
//
// Every generated source may `#include "theon_device.cuh"` (shapes/strides helpers) and
// `#include "scalar_ops.hpp"` (the scalar functors the CPU uses), served from memory.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

namespace theon::backends::cuda {

/// One NVRTC program: its source and the names of the __global__ extern "C" kernels in it.
struct KernelSource {
  std::string name;  // for logs and errors ("elemwise_add_f32_r2")
  std::string code;
  std::vector<std::string> kernels;
  /// False for code with no a*b+c to contract (copies, fills): it compiles with --fmad=false
  /// whatever fmad is asked for, so one cubin serves every option set.
  bool fmad_applies = true;
};

struct NvrtcStats {
  int64_t compiled = 0;   // NVRTC runs
  int64_t disk_hits = 0;  // cubins read from the disk cache
  int64_t loaded = 0;     // modules loaded on a device
  int64_t max_in_flight = 0;  // the most NVRTC runs that were in progress at once
};

/// The default architecture when no device is present (the GPU machine is an H100).
constexpr int kDefaultArch = 90;

// `fmad` is KernelOptions::fmad of the kernel that compiles (its plan's). The overloads
// without it read config() now (options_of(nullptr)): for code outside any plan (tests).

/// Compiles (or reads from the disk cache) the cubin of `source` for sm_<arch>. Throws
/// DeviceError with NVRTC's log and the numbered source when it does not compile.
std::string compile_cubin(const KernelSource& source, int arch, bool fmad);
std::string compile_cubin(const KernelSource& source, int arch);

/// The kernel `kernel` of `source`, compiled and loaded on `device` (cached per device).
cudaKernel_t get_kernel(const KernelSource& source, const std::string& kernel, int device, bool fmad);
cudaKernel_t get_kernel(const KernelSource& source, const std::string& kernel, int device);

NvrtcStats nvrtc_stats();

/// NVRTC's options for sm_<arch> (part of the cache key): IEEE float32, and --fmad=false
/// unless `fmad`.
std::vector<std::string> nvrtc_options(int arch, bool fmad);
std::vector<std::string> nvrtc_options(int arch);
/// A short tag of the option set nvrtc_options() depends on (for in-process kernel caches
/// keyed by signature rather than by source hash).
std::string nvrtc_options_tag(bool fmad);
std::string nvrtc_options_tag();
/// The compute capability (major*10+minor) of a device.
int device_arch(int device);

}  // namespace theon::backends::cuda
