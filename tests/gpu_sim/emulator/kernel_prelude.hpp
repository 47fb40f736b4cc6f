// kernel_prelude.hpp: lets the host C++ compiler build a CUDA kernel source, as NVRTC
// would get it, into a simulated "cubin" (a shared object) that the kernel emulator runs
// on the CPU. Force-included before the source; the stand-in NVRTC builds with exactly:
//
//   g++ -std=c++17 -O1 -fPIC -shared -w -include <THEON_GPU_SIM_PRELUDE> -I<headers dir> \
//       kernel.cpp -o kernel.so -L<libdir> -ltheon_gpu_sim_emulator -Wl,-rpath,<libdir>
//
// (<THEON_GPU_SIM_PRELUDE>: this file's absolute path; <libdir>: the folder of
// THEON_GPU_SIM_EMULATOR_LIB; <headers dir>: the NVRTC program's named headers written to
// disk, except the std shims cstdint/type_traits/limits/cmath, which the host's own headers
// serve.) Before compiling, the stand-in NVRTC makes two mechanical edits to the source:
//   - `extern __shared__ T name[];` becomes
//     `T* name = reinterpret_cast<T*>(::gpu_sim::dynamic_shared());`
//   - the entry points of launch_abi.hpp, gpu_sim_trampolines(K) for each kernel K, are
//     appended.
//
// The model (scheduler.cpp has the details):
//   - every CUDA thread of a block is a fiber; a block runs on one OS thread, blocks of a
//     grid one after another; a scheduler resolves __syncthreads and the warp collectives
//     and aborts with a "gpu_sim: kernel ..." line on stderr on divergent barriers, bad
//     warp masks, deadlocks and invalid launches;
//   - `__shared__` is `static thread_local`: one instance per OS thread, which is one per
//     running block since a block never leaves its OS thread and blocks of one grid run one
//     after another. The emulator fills the kernel module's zero-initialised TLS (where
//     these variables live) with 0xcd at the start of every block: shared memory read
//     before it is written shows as garbage, as on a GPU;
//   - device memory is host memory, atomics are host atomics (several simulated streams
//     may run grids on several OS threads at once);
//   - SIM_ORDER=reverse runs the threads of a block, and the blocks of a grid, in reverse.
#pragma once

#include <math.h>  // the C++ wrapper: float overloads of the math functions in the global namespace, as CUDA has
#include <stdint.h>
#include <string.h>

#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <tuple>
#include <type_traits>
#include <utility>

#include "emulator_api.hpp"

#define __GPU_SIM__ 1  // kernel code may test for the emulator (not __CUDACC__: host code paths)

// ---- CUDA keywords ---------------------------------------------------------
#define __global__
#define __device__
#define __host__
#define __constant__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __shared__ static thread_local  // one instance per running block (see above)
// __restrict__ is a GNU C++ keyword already.

// ---- vector types (vector_types.h) ------------------------------------------
// uint3 and dim3 come from emulator_api.hpp.
#define GPU_SIM_VECTOR_TYPES(T, N, A2, A4)                                                  \
  struct __attribute__((aligned(A2))) N##2 { T x, y; };                                     \
  struct N##3 { T x, y, z; };                                                               \
  struct __attribute__((aligned(A4))) N##4 { T x, y, z, w; };                               \
  inline N##2 make_##N##2(T x, T y) { return N##2{x, y}; }                                  \
  inline N##4 make_##N##4(T x, T y, T z, T w) { return N##4{x, y, z, w}; }
#define GPU_SIM_VECTOR_TYPES_NO3(T, N, A2, A4)                                              \
  struct __attribute__((aligned(A2))) N##2 { T x, y; };                                     \
  struct __attribute__((aligned(A4))) N##4 { T x, y, z, w; };                               \
  inline N##2 make_##N##2(T x, T y) { return N##2{x, y}; }                                  \
  inline N##4 make_##N##4(T x, T y, T z, T w) { return N##4{x, y, z, w}; }
GPU_SIM_VECTOR_TYPES(signed char, char, 2, 4)
GPU_SIM_VECTOR_TYPES(unsigned char, uchar, 2, 4)
GPU_SIM_VECTOR_TYPES(short, short, 4, 8)
GPU_SIM_VECTOR_TYPES(unsigned short, ushort, 4, 8)
GPU_SIM_VECTOR_TYPES(int, int, 8, 16)
GPU_SIM_VECTOR_TYPES_NO3(unsigned int, uint, 8, 16)
GPU_SIM_VECTOR_TYPES(float, float, 8, 16)
GPU_SIM_VECTOR_TYPES(long long, longlong, 16, 16)
GPU_SIM_VECTOR_TYPES(unsigned long long, ulonglong, 16, 16)
GPU_SIM_VECTOR_TYPES(double, double, 16, 16)
#undef GPU_SIM_VECTOR_TYPES
#undef GPU_SIM_VECTOR_TYPES_NO3
inline uint3 make_uint3(unsigned x, unsigned y, unsigned z) { return uint3{x, y, z}; }
inline int3 make_int3(int x, int y, int z) { return int3{x, y, z}; }
inline float3 make_float3(float x, float y, float z) { return float3{x, y, z}; }

// ---- built-in variables -------------------------------------------------------
// Read-only references to the running CUDA thread's coordinates.
#define threadIdx (::gpu_sim::detail::thread_index())
#define blockIdx (::gpu_sim::detail::block_index())
#define blockDim (::gpu_sim::detail::block_dim())
#define gridDim (::gpu_sim::detail::grid_dim())
constexpr int warpSize = 32;

// ---- block barrier ------------------------------------------------------------
inline void __syncthreads() { ::gpu_sim::detail::syncthreads(1); }
inline int __syncthreads_count(int p) { return static_cast<int>(::gpu_sim::detail::syncthreads(p != 0)); }
inline int __syncthreads_and(int p) {
  return ::gpu_sim::detail::syncthreads(p != 0) == blockDim.x * blockDim.y * blockDim.z;
}
inline int __syncthreads_or(int p) { return ::gpu_sim::detail::syncthreads(p != 0) != 0; }
inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_system() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

// ---- warp collectives ---------------------------------------------------------
inline void __syncwarp(unsigned mask = 0xffffffffu) {
  ::gpu_sim::detail::warp_collective(::gpu_sim::detail::Collective::SyncWarp, mask, 0, -1, "__syncwarp");
}
inline unsigned __ballot_sync(unsigned mask, int p) {
  return static_cast<unsigned>(
      ::gpu_sim::detail::warp_collective(::gpu_sim::detail::Collective::Ballot, mask, p != 0, -1, "__ballot_sync"));
}
inline int __all_sync(unsigned mask, int p) {
  return static_cast<int>(
      ::gpu_sim::detail::warp_collective(::gpu_sim::detail::Collective::All, mask, p != 0, -1, "__all_sync"));
}
inline int __any_sync(unsigned mask, int p) {
  return static_cast<int>(
      ::gpu_sim::detail::warp_collective(::gpu_sim::detail::Collective::Any, mask, p != 0, -1, "__any_sync"));
}
inline unsigned __activemask() { return ::gpu_sim::detail::live_lanes(); }

namespace gpu_sim::detail {
inline int check_width(int width, const char* what) {
  if (width < 1 || width > 32 || (width & (width - 1)) != 0) {
    char msg[96];
    snprintf(msg, sizeof msg, "%s: width %d is not a power of 2 in [1, 32]", what, width);
    fail(msg);
  }
  return width;
}
// Lane `src` of the warp posts v's bits; every lane gets the bits its source posted.
template <class T>
T shuffle(unsigned mask, T v, int src, const char* what) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 8, "shuffle of a type wider than 8 bytes");
  uint64_t bits = 0;
  memcpy(&bits, &v, sizeof(T));
  bits = warp_collective(Collective::Shuffle, mask, bits, src, what);
  T r;
  memcpy(&r, &bits, sizeof(T));
  return r;
}
}  // namespace gpu_sim::detail

template <class T>
T __shfl_sync(unsigned mask, T v, int src_lane, int width = warpSize) {
  const int w = ::gpu_sim::detail::check_width(width, "__shfl_sync");
  const int lane = static_cast<int>(::gpu_sim::detail::lane_id());
  return ::gpu_sim::detail::shuffle(mask, v, (lane & ~(w - 1)) + (src_lane & (w - 1)), "__shfl_sync");
}
template <class T>
T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = warpSize) {
  const int w = ::gpu_sim::detail::check_width(width, "__shfl_up_sync");
  const int lane = static_cast<int>(::gpu_sim::detail::lane_id());
  const int src = lane - static_cast<int>(delta);
  return ::gpu_sim::detail::shuffle(mask, v, src >= (lane & ~(w - 1)) ? src : lane, "__shfl_up_sync");
}
template <class T>
T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = warpSize) {
  const int w = ::gpu_sim::detail::check_width(width, "__shfl_down_sync");
  const int lane = static_cast<int>(::gpu_sim::detail::lane_id());
  const int src = lane + static_cast<int>(delta);
  return ::gpu_sim::detail::shuffle(mask, v, src < (lane & ~(w - 1)) + w ? src : lane, "__shfl_down_sync");
}
template <class T>
T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = warpSize) {
  const int w = ::gpu_sim::detail::check_width(width, "__shfl_xor_sync");
  const int lane = static_cast<int>(::gpu_sim::detail::lane_id());
  const int src = lane ^ lane_mask;
  // As on the GPU: a source beyond the lane's segment gives the lane's own value.
  return ::gpu_sim::detail::shuffle(mask, v, src < (lane & ~(w - 1)) + w ? src : lane, "__shfl_xor_sync");
}

// ---- atomics: host atomics on host memory -----------------------------------------
namespace gpu_sim::detail {
template <class T, class F>
T atomic_update(T* p, F f) {  // CAS loop: old -> f(old); returns old
  T old;
  __atomic_load(p, &old, __ATOMIC_RELAXED);
  T desired;
  do {
    desired = f(old);
  } while (!__atomic_compare_exchange(p, &old, &desired, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
  return old;
}
}  // namespace gpu_sim::detail

#define GPU_SIM_ATOMIC_INT(T)                                                                              \
  inline T atomicAdd(T* p, T v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }                   \
  inline T atomicSub(T* p, T v) { return __atomic_fetch_sub(p, v, __ATOMIC_SEQ_CST); }                   \
  inline T atomicExch(T* p, T v) { return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST); }                 \
  inline T atomicAnd(T* p, T v) { return __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST); }                   \
  inline T atomicOr(T* p, T v) { return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST); }                     \
  inline T atomicXor(T* p, T v) { return __atomic_fetch_xor(p, v, __ATOMIC_SEQ_CST); }                   \
  inline T atomicMin(T* p, T v) {                                                                          \
    return ::gpu_sim::detail::atomic_update(p, [v](T o) { return v < o ? v : o; });                        \
  }                                                                                                        \
  inline T atomicMax(T* p, T v) {                                                                          \
    return ::gpu_sim::detail::atomic_update(p, [v](T o) { return v > o ? v : o; });                        \
  }                                                                                                        \
  inline T atomicCAS(T* p, T compare, T v) {                                                               \
    __atomic_compare_exchange_n(p, &compare, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);                \
    return compare;                                                                                        \
  }
GPU_SIM_ATOMIC_INT(int)
GPU_SIM_ATOMIC_INT(unsigned int)
GPU_SIM_ATOMIC_INT(unsigned long long)
#undef GPU_SIM_ATOMIC_INT
// CUDA has these for long long only as min/max (and CAS on unsigned short).
inline long long atomicMin(long long* p, long long v) {
  return ::gpu_sim::detail::atomic_update(p, [v](long long o) { return v < o ? v : o; });
}
inline long long atomicMax(long long* p, long long v) {
  return ::gpu_sim::detail::atomic_update(p, [v](long long o) { return v > o ? v : o; });
}
inline unsigned short atomicCAS(unsigned short* p, unsigned short compare, unsigned short v) {
  __atomic_compare_exchange_n(p, &compare, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return compare;
}
inline float atomicAdd(float* p, float v) {
  return ::gpu_sim::detail::atomic_update(p, [v](float o) { return o + v; });
}
inline double atomicAdd(double* p, double v) {
  return ::gpu_sim::detail::atomic_update(p, [v](double o) { return o + v; });
}
inline float atomicExch(float* p, float v) {
  float old;
  __atomic_exchange(p, &v, &old, __ATOMIC_SEQ_CST);
  return old;
}
inline unsigned atomicInc(unsigned* p, unsigned limit) {
  return ::gpu_sim::detail::atomic_update(p, [limit](unsigned o) { return o >= limit ? 0u : o + 1u; });
}
inline unsigned atomicDec(unsigned* p, unsigned limit) {
  return ::gpu_sim::detail::atomic_update(p, [limit](unsigned o) { return (o == 0 || o > limit) ? limit : o - 1u; });
}

// ---- bit casts and integer intrinsics ---------------------------------------------
namespace gpu_sim::detail {
template <class To, class From>
To bits_as(From v) {
  static_assert(sizeof(To) == sizeof(From));
  To r;
  memcpy(&r, &v, sizeof r);
  return r;
}
}  // namespace gpu_sim::detail
inline float __int_as_float(int v) { return ::gpu_sim::detail::bits_as<float>(v); }
inline float __uint_as_float(unsigned v) { return ::gpu_sim::detail::bits_as<float>(v); }
inline int __float_as_int(float v) { return ::gpu_sim::detail::bits_as<int>(v); }
inline unsigned __float_as_uint(float v) { return ::gpu_sim::detail::bits_as<unsigned>(v); }
inline double __longlong_as_double(long long v) { return ::gpu_sim::detail::bits_as<double>(v); }
inline long long __double_as_longlong(double v) { return ::gpu_sim::detail::bits_as<long long>(v); }
inline int __popc(unsigned v) { return __builtin_popcount(v); }
inline int __popcll(unsigned long long v) { return __builtin_popcountll(v); }
inline int __clz(int v) { return v == 0 ? 32 : __builtin_clz(static_cast<unsigned>(v)); }
inline int __clzll(long long v) { return v == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(v)); }
inline int __ffs(int v) { return __builtin_ffs(v); }
inline int __ffsll(long long v) { return __builtin_ffsll(v); }
inline unsigned __brev(unsigned v) {
  v = ((v >> 1) & 0x55555555u) | ((v & 0x55555555u) << 1);
  v = ((v >> 2) & 0x33333333u) | ((v & 0x33333333u) << 2);
  v = ((v >> 4) & 0x0f0f0f0fu) | ((v & 0x0f0f0f0fu) << 4);
  v = ((v >> 8) & 0x00ff00ffu) | ((v & 0x00ff00ffu) << 8);
  return (v >> 16) | (v << 16);
}
template <class T>
T __ldg(const T* p) {
  return *p;
}

// ---- math the host lacks (CUDA's device math API) -------------------------------------
// CUDA's global min/max overloads.
inline int min(int a, int b) { return a < b ? a : b; }
inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline unsigned long long min(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
inline float min(float a, float b) { return fminf(a, b); }
inline double min(double a, double b) { return fmin(a, b); }
inline int max(int a, int b) { return a > b ? a : b; }
inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
inline long long max(long long a, long long b) { return a > b ? a : b; }
inline unsigned long long max(unsigned long long a, unsigned long long b) { return a > b ? a : b; }
inline float max(float a, float b) { return fmaxf(a, b); }
inline double max(double a, double b) { return fmax(a, b); }
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
inline float __saturatef(float x) { return x != x ? 0.0f : x < 0.0f ? 0.0f : x > 1.0f ? 1.0f : x; }
inline float saturate(float x) { return __saturatef(x); }
// The fast intrinsics: exact host functions (the GPU's are less precise).
inline float __fdividef(float a, float b) { return a / b; }
inline float __expf(float x) { return expf(x); }
inline float __logf(float x) { return logf(x); }
inline float __sinf(float x) { return sinf(x); }
inline float __cosf(float x) { return cosf(x); }
inline float __powf(float a, float b) { return powf(a, b); }
inline float __fsqrt_rn(float x) { return sqrtf(x); }
inline double __dsqrt_rn(double x) { return sqrt(x); }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }
inline float sinpif(float x) { return sinf(static_cast<float>(M_PI) * x); }
inline double sinpi(double x) { return sin(M_PI * x); }
inline float cospif(float x) { return cosf(static_cast<float>(M_PI) * x); }
inline double cospi(double x) { return cos(M_PI * x); }
inline float normcdff(float x) { return 0.5f * erfcf(-x * static_cast<float>(M_SQRT1_2)); }
inline double normcdf(double x) { return 0.5 * erfc(-x * M_SQRT1_2); }

// ---- launch entry points (called by the trampolines of launch_abi.hpp) --------------------
namespace gpu_sim {
namespace detail {
// Locates this module's TLS block (where `__shared__` variables live): internal linkage,
// so every kernel module has its own; initialised, so it lives in .tdata, not in the
// garbage-filled .tbss.
namespace {
thread_local unsigned char module_tls_anchor = 1;
}
// The parameters as cudaLaunchKernel copies them (the kernel's parameter space).
template <class... P>
struct Bound {
  void (*kernel)(P...);
  std::tuple<std::decay_t<P>...> params;
};
template <class... P, size_t... I>
void* bind_impl(void (*k)(P...), void** args, std::index_sequence<I...>) {
  return new Bound<P...>{k, std::tuple<std::decay_t<P>...>{*static_cast<const std::decay_t<P>*>(args[I])...}};
}
}  // namespace detail

// Copies each parameter from args[i] (as cudaLaunchKernel's kernelParams) into a heap
// object; release it with free_bound.
template <class... P>
void* bind(void (*k)(P...), void** args) {
  return detail::bind_impl(k, args, std::index_sequence_for<P...>{});
}
// Runs the whole grid of the bound kernel on the calling OS thread; returns when done.
template <class... P>
void run_bound(void (*)(P...), void* bound, const gpu_sim_launch& cfg) {
  detail::run_grid(
      cfg,
      [](void* b) {
        auto* bb = static_cast<detail::Bound<P...>*>(b);
        std::apply(bb->kernel, bb->params);  // by value: each CUDA thread gets its own copy
      },
      bound, &detail::module_tls_anchor);
}
template <class... P>
void free_bound(void (*)(P...), void* bound) {
  delete static_cast<detail::Bound<P...>*>(bound);
}
}  // namespace gpu_sim
