// Shared between the three stand-in libraries of tests/gpu_sim/cuda (not part of the
// launch contract, launch_abi.hpp): the simulated cubin format and the stand-in runtime's
// simulator-only exports that the stand-in cuBLAS uses.
#pragma once
#include <cuda_runtime_api.h>

#include <stddef.h>

namespace gpu_sim_internal {
// A simulated cubin: these 8 bytes, a little-endian uint64 length, then a shared object.
inline constexpr char kImageMagic[9] = "THEONSIM";
}  // namespace gpu_sim_internal

extern "C" {
// A version/mode string; only the simulator defines it (tests prove which libcudart loaded).
const char* theon_gpu_sim_marker(void);
// Runs fn(ctx) when `stream` reaches it (a cudaError_t).
int theon_gpu_sim_enqueue(cudaStream_t stream, void (*fn)(void*), void* ctx);
// The device owning [p, p+bytes) as one device allocation, or -1.
int theon_gpu_sim_device_range(const void* p, size_t bytes);
// The calling thread's current device.
int theon_gpu_sim_current_device(void);
}
