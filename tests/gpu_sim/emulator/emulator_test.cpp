// The kernel emulator's tests: small CUDA kernel sources compiled at test time with the
// stand-in NVRTC's command (kernel_prelude.hpp force-included, the launch_abi.hpp
// trampolines appended), opened with dlopen and launched through K__sim_bind/_run/_free.
// Each source is compiled once per test suite; the failure cases run in forked children
// (death tests) and check the emulator's report on stderr.
#include "emulator_test_util.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using gpu_sim_test::KernelModule;

uint32_t bits_of(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

// ---------------------------------------------------------------------------------
// Kernels that work.
constexpr const char* kGoodKernels = R"CUDA(
#include <cstdint>
// Per-block sum: a grid-stride loop, warp shuffles, shared memory between warps.
extern "C" __global__ void __launch_bounds__(256) block_sum(const float* __restrict__ in, float* __restrict__ out, int n) {
  __shared__ float warp_sums[32];
  float v = 0.f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) v += in[i];
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < (int)(blockDim.x >> 5) ? warp_sums[lane] : 0.f;
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
    if (lane == 0) out[blockIdx.x] = v;
  }
}

// The race (a missing barrier): thread 0 reads what the others wrote to shared memory.
extern "C" __global__ void racy_sum(const float* in, float* out) {
  __shared__ float sm[256];
  sm[threadIdx.x] = in[threadIdx.x];
  if (threadIdx.x == 0) {
    float s = 0.f;
    for (unsigned i = 0; i < blockDim.x; ++i) s += sm[i];
    *out = s;
  }
}
// The same with the barrier.
extern "C" __global__ void fixed_sum(const float* in, float* out) {
  __shared__ float sm[256];
  sm[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0.f;
    for (unsigned i = 0; i < blockDim.x; ++i) s += sm[i];
    *out = s;
  }
}

extern "C" __global__ void count_atomics(unsigned long long* c, int* ci, float* cf, double* cd, unsigned* mx,
                                         long long* mn, unsigned* cas) {
  atomicAdd(c, 1ull);
  atomicAdd(ci, 1);
  atomicAdd(cf, 1.0f);
  atomicAdd(cd, 0.5);
  const unsigned id = blockIdx.x * blockDim.x + threadIdx.x;
  atomicMax(mx, id);
  atomicMin(mn, -(long long)id);
  unsigned old = *cas, assumed;
  do {
    assumed = old;
    old = atomicCAS(cas, assumed, assumed + 2u);
  } while (old != assumed);
}

// Dynamic shared memory, as the stand-in NVRTC rewrites `extern __shared__ float buf[];`;
// counts the threads that found garbage (0xcd) before writing.
extern "C" __global__ void dyn_shared(unsigned* garbage_seen, float* out) {
  float* buf = reinterpret_cast<float*>(::gpu_sim::dynamic_shared());
  unsigned raw;
  memcpy(&raw, &buf[threadIdx.x], 4);
  if (raw == 0xcdcdcdcdu) atomicAdd(garbage_seen, 1u);
  __syncthreads();
  buf[threadIdx.x] = threadIdx.x * 2.f;
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = buf[blockDim.x - 1 - threadIdx.x];
}
// Static shared memory starts as garbage in every block (not what the last block left).
extern "C" __global__ void static_shared(unsigned* garbage_seen) {
  __shared__ unsigned sm[128];
  if (sm[threadIdx.x] == 0xcdcdcdcdu) atomicAdd(garbage_seen, 1u);
  __syncthreads();
  sm[threadIdx.x] = 7;
}

extern "C" __global__ void coords(uint4* out) {
  const unsigned b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  const unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  out[b * blockDim.x * blockDim.y * blockDim.z + t] =
      make_uint4(blockIdx.x | blockIdx.y << 8 | blockIdx.z << 16, threadIdx.x | threadIdx.y << 8 | threadIdx.z << 16,
                 gridDim.x | gridDim.y << 8 | gridDim.z << 16, blockDim.x | blockDim.y << 8 | blockDim.z << 16);
}

// Votes, sub-warp shuffles and two half-warp groups with their own masks.
extern "C" __global__ void votes(int* out) {
  const int lane = threadIdx.x & 31;
  int* o = out + threadIdx.x * 6;
  o[0] = (int)__ballot_sync(0xffffffffu, lane % 3 == 0);
  o[1] = __all_sync(0xffffffffu, lane < 32);
  o[2] = __any_sync(0xffffffffu, lane == 7);
  o[3] = __shfl_up_sync(0xffffffffu, lane, 1, 8);
  const unsigned half = lane < 16 ? 0x0000ffffu : 0xffff0000u;
  o[4] = __shfl_sync(half, lane * 10, lane < 16 ? 3 : 20);
  __syncwarp(half);
  o[5] = __syncthreads_count(lane < 5);
}
)CUDA";

// Kernels the emulator must reject (each case dies in a child process).
constexpr const char* kBadKernels = R"CUDA(
extern "C" __global__ void divergent_barrier(int* out) {
  if (threadIdx.x >= 40) return;
  __syncthreads();
  out[threadIdx.x] = 1;
}
// A full-warp shuffle in a 48-thread block: warp 1 has lanes 0-15 only.
extern "C" __global__ void partial_warp_shuffle(float* out) {
  float v = threadIdx.x;
  v += __shfl_down_sync(0xffffffffu, v, 1);
  out[threadIdx.x] = v;
}
extern "C" __global__ void exited_lane(int* out) {
  if (threadIdx.x == 5) return;
  out[threadIdx.x] = __shfl_sync(0xffffffffu, (int)threadIdx.x, 0);
}
extern "C" __global__ void not_in_own_mask(int* out) {
  out[threadIdx.x] = __shfl_sync(0x0000ffffu, (int)threadIdx.x, 0);
}
extern "C" __global__ void different_masks(int* out) {
  const unsigned mask = threadIdx.x == 3 ? 0x0000000fu : 0xffffffffu;
  out[threadIdx.x] = __shfl_sync(mask, (int)threadIdx.x, 0);
}
// Half the warp at the block barrier, the other half at a __syncwarp naming the first.
extern "C" __global__ void deadlock(int* out) {
  if (threadIdx.x < 16) __syncthreads();
  else __syncwarp();
  out[threadIdx.x] = 1;
}
extern "C" __global__ void noop(int* out) { (void)out; }
)CUDA";

class EmulatorTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    try {
      good_ = new KernelModule(kGoodKernels, {"block_sum", "racy_sum", "fixed_sum", "count_atomics", "dyn_shared",
                                              "static_shared", "coords", "votes"});
      bad_ = new KernelModule(kBadKernels, {"divergent_barrier", "partial_warp_shuffle", "exited_lane",
                                            "not_in_own_mask", "different_masks", "deadlock", "noop"});
    } catch (const std::exception& e) {
      setup_error_ = e.what();
    }
  }
  static void TearDownTestSuite() {
    delete good_;
    delete bad_;
    good_ = bad_ = nullptr;
  }
  void SetUp() override {
    unsetenv("SIM_ORDER");
    ASSERT_TRUE(good_ && bad_) << setup_error_;
  }
  static KernelModule* good_;
  static KernelModule* bad_;
  static std::string setup_error_;
};
std::string EmulatorTest::setup_error_;
KernelModule* EmulatorTest::good_ = nullptr;
KernelModule* EmulatorTest::bad_ = nullptr;

// Per-block sums of `in` (grid of 4 blocks of 256 threads).
std::vector<float> block_sums(const KernelModule& m, const std::vector<float>& in) {
  std::vector<float> out(4, -1.f);
  m.launch("block_sum", {4, 1, 1}, {256, 1, 1}, 0, in.data(), out.data(), static_cast<int>(in.size()));
  return out;
}

std::vector<float> random_floats(size_t n) {
  std::vector<float> v(n);
  uint32_t s = 12345;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<float>(s >> 8) / 16777216.f - 0.5f;
  }
  return v;
}

TEST_F(EmulatorTest, BlockReductionIsExact) {
  std::vector<float> in(10000);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i % 7);
  const auto out = block_sums(*good_, in);
  double expect[4] = {0, 0, 0, 0};  // block b sums the elements i with (i / 256) % 4 == b
  for (size_t i = 0; i < in.size(); ++i) expect[(i / 256) % 4] += in[i];
  for (int b = 0; b < 4; ++b) EXPECT_EQ(out[b], static_cast<float>(expect[b])) << "block " << b;
}

TEST_F(EmulatorTest, RaceFreeReductionGivesIdenticalBitsInReverseOrder) {
  const auto in = random_floats(10000);
  const auto forward = block_sums(*good_, in);
  // SIM_ORDER is read at every launch; the reverse run happens in a child process.
  auto child = [&] {
    setenv("SIM_ORDER", "reverse", 1);
    const auto reverse = block_sums(*good_, in);
    bool same = true;
    for (int b = 0; b < 4; ++b) same = same && bits_of(reverse[b]) == bits_of(forward[b]);
    std::exit(same ? 0 : 1);
  };
  EXPECT_EXIT(child(), ::testing::ExitedWithCode(0), "");
}

// THE TEETH: a missing __syncthreads changes the result when the threads run in reverse.
TEST_F(EmulatorTest, MissingBarrierShowsUnderReverseOrder) {
  const std::vector<float> in(256, 1.f);
  float fwd = -1.f, fixed = -1.f;
  good_->launch("racy_sum", {1, 1, 1}, {256, 1, 1}, 0, in.data(), &fwd);
  good_->launch("fixed_sum", {1, 1, 1}, {256, 1, 1}, 0, in.data(), &fixed);
  EXPECT_EQ(fixed, 256.f);
  EXPECT_NE(fwd, 256.f) << "thread 0 runs first: the others' values are still garbage";
  auto child = [&] {
    setenv("SIM_ORDER", "reverse", 1);
    float rev = -1.f, rev_fixed = -1.f;
    good_->launch("racy_sum", {1, 1, 1}, {256, 1, 1}, 0, in.data(), &rev);
    good_->launch("fixed_sum", {1, 1, 1}, {256, 1, 1}, 0, in.data(), &rev_fixed);
    std::fprintf(stderr, "racy_sum: %g forward, %g reverse\n", fwd, rev);
    std::exit(rev == 256.f && bits_of(rev) != bits_of(fwd) && rev_fixed == 256.f ? 0 : 1);
  };
  EXPECT_EXIT(child(), ::testing::ExitedWithCode(0), "racy_sum: .* forward, 256 reverse");
}

TEST_F(EmulatorTest, AtomicsCountExactly) {
  unsigned long long c = 0;
  int ci = 0;
  float cf = 0.f;
  double cd = 0.0;
  unsigned mx = 0, cas = 0;
  long long mn = 0;
  good_->launch("count_atomics", {7, 1, 1}, {96, 1, 1}, 0, &c, &ci, &cf, &cd, &mx, &mn, &cas);
  EXPECT_EQ(c, 672u);
  EXPECT_EQ(ci, 672);
  EXPECT_EQ(cf, 672.f);
  EXPECT_EQ(cd, 336.0);
  EXPECT_EQ(mx, 671u);
  EXPECT_EQ(mn, -671);
  EXPECT_EQ(cas, 1344u);
}

TEST_F(EmulatorTest, AtomicsFromSeveralOsThreads) {
  // Several simulated streams run grids on their own OS threads at once.
  unsigned long long c = 0;
  int ci = 0;
  float cf = 0.f;
  double cd = 0.0;
  unsigned mx = 0, cas = 0;
  long long mn = 0;
  std::vector<float> in = random_floats(5000);
  const auto expect = block_sums(*good_, in);
  std::vector<std::vector<float>> sums(3);
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t)
    threads.emplace_back([&, t] {
      good_->launch("count_atomics", {5, 1, 1}, {64, 1, 1}, 0, &c, &ci, &cf, &cd, &mx, &mn, &cas);
      sums[t] = block_sums(*good_, in);
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(c, 960u);
  EXPECT_EQ(cas, 1920u);
  for (auto& s : sums)
    for (int b = 0; b < 4; ++b) EXPECT_EQ(bits_of(s[b]), bits_of(expect[b]));
}

TEST_F(EmulatorTest, DynamicSharedMemoryStartsAsGarbage) {
  unsigned garbage = 0;
  std::vector<float> out(3 * 64, -1.f);
  good_->launch("dyn_shared", {3, 1, 1}, {64, 1, 1}, 64 * sizeof(float), &garbage, out.data());
  EXPECT_EQ(garbage, 3u * 64u) << "every block starts with garbage";
  for (unsigned b = 0; b < 3; ++b)
    for (unsigned t = 0; t < 64; ++t) EXPECT_EQ(out[b * 64 + t], (63 - t) * 2.f);
}

TEST_F(EmulatorTest, StaticSharedMemoryStartsAsGarbageInEveryBlock) {
  unsigned garbage = 0;
  good_->launch("static_shared", {4, 1, 1}, {128, 1, 1}, 0, &garbage);
  EXPECT_EQ(garbage, 4u * 128u);
}

TEST_F(EmulatorTest, ThreeDimensionalGridAndBlock) {
  const unsigned gx = 3, gy = 2, gz = 4, bx = 4, by = 3, bz = 2;
  struct U4 {
    unsigned x, y, z, w;
  };
  std::vector<U4> out(gx * gy * gz * bx * by * bz, U4{~0u, ~0u, ~0u, ~0u});
  good_->launch("coords", {gx, gy, gz}, {bx, by, bz}, 0, out.data());
  size_t i = 0;
  for (unsigned z = 0; z < gz; ++z)
    for (unsigned y = 0; y < gy; ++y)
      for (unsigned x = 0; x < gx; ++x)
        for (unsigned tz = 0; tz < bz; ++tz)
          for (unsigned ty = 0; ty < by; ++ty)
            for (unsigned tx = 0; tx < bx; ++tx, ++i) {
              EXPECT_EQ(out[i].x, x | y << 8 | z << 16);
              EXPECT_EQ(out[i].y, tx | ty << 8 | tz << 16);
              EXPECT_EQ(out[i].z, gx | gy << 8 | gz << 16);
              EXPECT_EQ(out[i].w, bx | by << 8 | bz << 16);
            }
}

TEST_F(EmulatorTest, VotesAndSubWarpShuffles) {
  std::vector<int> out(64 * 6, -1);
  good_->launch("votes", {1, 1, 1}, {64, 1, 1}, 0, out.data());
  unsigned ballot = 0;
  for (unsigned l = 0; l < 32; l += 3) ballot |= 1u << l;
  for (int t = 0; t < 64; ++t) {
    const int lane = t & 31, *o = &out[t * 6];
    EXPECT_EQ(static_cast<unsigned>(o[0]), ballot);
    EXPECT_EQ(o[1], 1);
    EXPECT_EQ(o[2], 1);
    EXPECT_EQ(o[3], lane % 8 == 0 ? lane : lane - 1) << "thread " << t;
    EXPECT_EQ(o[4], lane < 16 ? 30 : 200);
    EXPECT_EQ(o[5], 10);  // lanes 0-4 of both warps
  }
}

// ---------------------------------------------------------------------------------
// What the emulator reports (in a forked child each).
using EmulatorDeathTest = EmulatorTest;

TEST_F(EmulatorDeathTest, DivergentBarrier) {
  std::vector<int> out(64);
  EXPECT_DEATH(bad_->launch("divergent_barrier", {1, 1, 1}, {64, 1, 1}, 0, out.data()),
               "gpu_sim: kernel divergent_barrier block \\(0,0,0\\) thread \\(0,0,0\\): divergent __syncthreads: 40 "
               "threads wait at the barrier while 24 have exited");
}

TEST_F(EmulatorDeathTest, ShuffleMaskNamesMissingLanes) {
  std::vector<float> out(48);
  EXPECT_DEATH(bad_->launch("partial_warp_shuffle", {1, 1, 1}, {48, 1, 1}, 0, out.data()),
               "gpu_sim: kernel partial_warp_shuffle block \\(0,0,0\\) thread \\(32,0,0\\): __shfl_down_sync with "
               "mask 0xffffffff names lanes 16-31 of warp 1, which do not exist");
}

TEST_F(EmulatorDeathTest, ShuffleMaskNamesExitedLane) {
  std::vector<int> out(32);
  EXPECT_DEATH(bad_->launch("exited_lane", {1, 1, 1}, {32, 1, 1}, 0, out.data()),
               "gpu_sim: kernel exited_lane block \\(0,0,0\\) thread \\([0-9]+,0,0\\): __shfl_sync with mask "
               "0xffffffff \\(warp 0\\): lane 5 of the mask has exited");
}

TEST_F(EmulatorDeathTest, CallerNotInItsOwnMask) {
  std::vector<int> out(32);
  EXPECT_DEATH(bad_->launch("not_in_own_mask", {1, 1, 1}, {32, 1, 1}, 0, out.data()),
               "thread \\(16,0,0\\): __shfl_sync with mask 0x0000ffff: the calling lane 16 is not in its own mask");
}

TEST_F(EmulatorDeathTest, LanesNameDifferentMasks) {
  std::vector<int> out(32);
  EXPECT_DEATH(bad_->launch("different_masks", {1, 1, 1}, {32, 1, 1}, 0, out.data()),
               "gpu_sim: kernel different_masks .*lanes of warp 0 name different masks");
}

TEST_F(EmulatorDeathTest, Deadlock) {
  std::vector<int> out(32);
  EXPECT_DEATH(bad_->launch("deadlock", {1, 1, 1}, {32, 1, 1}, 0, out.data()),
               "gpu_sim: kernel deadlock block \\(0,0,0\\) thread \\(16,0,0\\): deadlock: 16 threads at "
               "__syncthreads, 16 at warp collectives, 0 exited; __syncwarp with mask 0xffffffff in warp 0 waits "
               "for lanes 0-15, which are at __syncthreads");
}

TEST_F(EmulatorDeathTest, LaunchLimits) {
  int x = 0;
  const char* head = "gpu_sim: kernel noop launch grid \\([0-9,]+\\) block \\([0-9,]+\\) dynamic shared [0-9]+: "
                     "invalid configuration: ";
  EXPECT_DEATH(bad_->launch("noop", {1, 1, 1}, {1025, 1, 1}, 0, &x),
               std::string(head) + "1025 threads per block \\(at most 1024\\)");
  EXPECT_DEATH(bad_->launch("noop", {1, 1, 1}, {32, 32, 2}, 0, &x), std::string(head) + "2048 threads per block");
  EXPECT_DEATH(bad_->launch("noop", {1, 65536, 1}, {1, 1, 1}, 0, &x),
               std::string(head) + "gridDim.y/z above 65535");
  EXPECT_DEATH(bad_->launch("noop", {1, 1, 65536}, {1, 1, 1}, 0, &x),
               std::string(head) + "gridDim.y/z above 65535");
  EXPECT_DEATH(bad_->launch("noop", {1, 1, 1}, {1, 1, 65}, 0, &x), std::string(head) + "blockDim.z = 65");
  EXPECT_DEATH(bad_->launch("noop", {0, 1, 1}, {1, 1, 1}, 0, &x), std::string(head) + "a grid dimension is 0");
  EXPECT_DEATH(bad_->launch("noop", {1, 1, 1}, {0, 1, 1}, 0, &x), std::string(head) + "a block dimension is 0");
  EXPECT_DEATH(bad_->launch("noop", {1, 1, 1}, {1, 1, 1}, 48 * 1024 + 1, &x),
               std::string(head) + "49153 bytes of dynamic shared memory");
  // The limits themselves are fine.
  bad_->launch("noop", {1, 65535, 1}, {1, 1, 1}, 48 * 1024, &x);
  bad_->launch("noop", {1, 1, 2}, {1024, 1, 1}, 0, &x);
  bad_->launch("noop", {1, 1, 1}, {1, 16, 64}, 0, &x);
}

}  // namespace
