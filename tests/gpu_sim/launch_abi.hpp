// The one contract between the two halves of the simulated CUDA device (docs/guide/testing.md):
//   - the kernel emulator (tests/gpu_sim/emulator): runs a kernel's CUDA threads as fibers;
//   - the stand-in CUDA libraries (tests/gpu_sim/cuda): libcudart/libcublas/libnvrtc.
//
// A simulated "cubin" is a shared object built by the host compiler from the exact source
// NVRTC would get, with `emulator/kernel_prelude.hpp` force-included. For every
// `extern "C" __global__` kernel K in it, the stand-in NVRTC appends three C entry points
// (their text comes from gpu_sim_trampolines() below, so both halves agree):
//   void* K__sim_bind(void** args);                          // copy the arguments (at launch)
//   void  K__sim_run(void* bound, const gpu_sim_launch* cfg); // run the whole grid
//   void  K__sim_free(void* bound);                          // release the copy
// The stand-in cudaLaunchKernel binds at enqueue time (as CUDA copies parameters at launch)
// and runs when the simulated stream reaches the launch.
//
// Plain C layout: this header is included both by kernel code (no CUDA headers) and by the
// stand-in runtime (CUDA's own headers), so it defines no dim3.
#pragma once
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct gpu_sim_launch {
  unsigned grid[3];
  unsigned block[3];
  size_t dynamic_shared_bytes;
  const char* kernel_name;  // for the emulator's failure reports
};

#ifdef __cplusplus
}

#include <string>

// The entry points appended to a prepared kernel source for kernel `k`. They call the
// templates gpu_sim::bind / gpu_sim::run_bound / gpu_sim::free_bound of kernel_prelude.hpp.
inline std::string gpu_sim_trampolines(const std::string& k) {
  return "extern \"C\" void* " + k + "__sim_bind(void** a) { return ::gpu_sim::bind(&" + k + ", a); }\n" +
         "extern \"C\" void " + k + "__sim_run(void* b, const gpu_sim_launch* c) { ::gpu_sim::run_bound(&" + k +
         ", b, *c); }\n" + "extern \"C\" void " + k + "__sim_free(void* b) { ::gpu_sim::free_bound(&" + k +
         ", b); }\n";
}
#endif
