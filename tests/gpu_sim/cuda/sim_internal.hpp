// Shared between the stand-in libraries of tests/gpu_sim/cuda (not part of the
// launch contract, launch_abi.hpp): the simulated cubin format and the stand-in runtime's
// simulator-only exports that the stand-in cuBLAS uses.
#pragma once
#include <cuda_runtime_api.h>

#include "../sim_counters_abi.h"  // theon_gpu_sim_read_counters and the rest: also simulator-only exports

#include <stddef.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <utility>

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

namespace gpu_sim_internal {
// Runs f when stream `s` reaches it (the stand-in libraries' work on a stream); f is dropped
// unrun if the runtime refuses the stream.
inline void enqueue_on(cudaStream_t s, std::function<void()> f) {
  auto* heap = new std::function<void()>(std::move(f));
  const int rc = theon_gpu_sim_enqueue(s, [](void* p) {
    auto* fn = static_cast<std::function<void()>*>(p);
    (*fn)();
    delete fn;
  }, heap);
  if (rc != 0) delete heap;
}
}  // namespace gpu_sim_internal

namespace gpu_sim_internal {
// x rounded to TF32's 10-bit mantissa (nearest, ties away), as tensor cores read float32 when
// TF32 is allowed; infinities and NaN pass unchanged.
inline float tf32(float x) {
  uint32_t b;
  std::memcpy(&b, &x, 4);
  if ((b & 0x7f800000u) != 0x7f800000u) b = (b + 0x1000u) & ~0x1fffu;
  std::memcpy(&x, &b, 4);
  return x;
}
}  // namespace gpu_sim_internal
