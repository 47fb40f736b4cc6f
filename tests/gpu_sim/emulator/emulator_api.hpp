// The interface between kernel code (kernel_prelude.hpp, compiled into each simulated
// "cubin") and the block scheduler (scheduler.cpp, libtheon_gpu_sim_emulator.so).
// Internal to tests/gpu_sim/emulator: the stand-in CUDA libraries use launch_abi.hpp only.
// No macros here: scheduler.cpp includes this header without the prelude's CUDA keywords.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "../launch_abi.hpp"

// CUDA's index types (vector_types.h). Global, as in CUDA; the scheduler uses them too.
struct uint3 {
  unsigned int x, y, z;
};
struct dim3 {
  unsigned int x, y, z;
  constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  constexpr operator uint3() const { return uint3{x, y, z}; }
};

namespace gpu_sim {

// The block's dynamic shared memory (`extern __shared__ T name[]`, rewritten by the
// stand-in NVRTC into `T* name = reinterpret_cast<T*>(::gpu_sim::dynamic_shared());`):
// gpu_sim_launch::dynamic_shared_bytes of garbage (0xcd) at the start of every block,
// 16-byte aligned, ending at a PROT_NONE page.
unsigned char* dynamic_shared();

namespace detail {

// Runs one CUDA thread: the kernel with the bound parameters in `closure`.
using ThreadBody = void (*)(void* closure);

// Runs the whole grid on the calling OS thread, one block after another, every CUDA
// thread of a block as a fiber. `tls_anchor` is the address of a thread_local of the
// kernel's module: its zero-initialised TLS (.tbss), where `__shared__` variables live, is
// filled with garbage at the start of every block. Aborts (with a gpu_sim: line on stderr)
// on an invalid launch and on the errors the scheduler detects.
void run_grid(const gpu_sim_launch& cfg, ThreadBody body, void* closure, const void* tls_anchor);

// The running CUDA thread's coordinates.
const uint3& thread_index();
const uint3& block_index();
const dim3& block_dim();
const dim3& grid_dim();
unsigned lane_id();  // linear thread index % 32

// Block barrier; `pred` is counted for __syncthreads_count/_and/_or. Returns the number
// of threads that passed a non-zero `pred`.
unsigned syncthreads(int pred);

enum class Collective : int { SyncWarp = 0, Shuffle = 1, Ballot = 2, All = 3, Any = 4 };
// A warp collective over the lanes of `mask`: every lane of the mask must reach a
// collective of the same kind with the same mask. Shuffle returns the `value` that lane
// `src_lane` (of this warp, 0..31) posted; the votes return the ballot of the lanes'
// (value != 0); SyncWarp returns 0. `what` names the intrinsic in reports.
uint64_t warp_collective(Collective kind, unsigned mask, uint64_t value, int src_lane, const char* what);

// Lanes of the caller's warp that exist and have not exited (__activemask's stand-in).
unsigned live_lanes();

// Reports an error of the running CUDA thread and aborts.
[[noreturn]] void fail(const char* message);

}  // namespace detail
}  // namespace gpu_sim
