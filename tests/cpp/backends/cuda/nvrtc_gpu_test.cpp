// NVRTC compilation and module loading on a device (label gpu): different kernels compile
// concurrently, the same kernel once however many threads ask for it, and config().fmad
// reaches NVRTC's options and the caches. Skips without a device (fails under THEON_GPU_SIM=1).
#include "backends/cuda/gpu_test_support.hpp"
#include "backends/cuda/nvrtc_compiler.hpp"
#include "backends/cuda/nvrtc_test_support.hpp"

#include <theon/theon.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>


namespace theon::backends::cuda {
namespace {

using nvrtc_testing::fresh_kernel;

class NvrtcGpu : public nvrtc_testing::PrivateCompiledirTest {
 protected:
  void SetUp() override {
    THEON_REQUIRE_CUDA_DEVICES(1);
    use_private_compiledir();
  }
};

TEST_F(NvrtcGpu, DifferentKernelsCompileConcurrently) {
  const std::vector<KernelSource> sources = {fresh_kernel("a"), fresh_kernel("b"), fresh_kernel("c")};
  const NvrtcStats before = nvrtc_stats();
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  std::vector<cudaKernel_t> got(sources.size(), nullptr);
  for (size_t i = 0; i < sources.size(); ++i)
    threads.emplace_back([&, i] {
      ++ready;
      while (ready.load() < static_cast<int>(sources.size())) std::this_thread::yield();
      got[i] = get_kernel(sources[i], sources[i].kernels[0], 0);
    });
  for (auto& t : threads) t.join();
  const NvrtcStats after = nvrtc_stats();
  EXPECT_EQ(after.compiled - before.compiled, 3);
  EXPECT_EQ(after.loaded - before.loaded, 3);
  for (auto k : got) EXPECT_NE(k, nullptr);
  // One global lock held while compiling would keep this at 1.
  EXPECT_GE(after.max_in_flight, 2) << "get_kernel serialised the compiles of different kernels";
}

TEST_F(NvrtcGpu, TheSameKernelCompilesOnceForManyThreads) {
  const KernelSource src = fresh_kernel("same");
  const NvrtcStats before = nvrtc_stats();
  constexpr int kThreads = 8;
  std::atomic<int> ready{0};
  std::vector<cudaKernel_t> got(kThreads, nullptr);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      ++ready;
      while (ready.load() < kThreads) std::this_thread::yield();
      got[static_cast<size_t>(i)] = get_kernel(src, src.kernels[0], 0);
    });
  for (auto& t : threads) t.join();
  const NvrtcStats after = nvrtc_stats();
  EXPECT_EQ(after.compiled - before.compiled, 1);
  EXPECT_EQ(after.loaded - before.loaded, 1);
  for (auto k : got) EXPECT_EQ(k, got[0]);
}

TEST_F(NvrtcGpu, FmadIsAnOptionOfTheCompiledKernel) {
  const KernelSource src = fresh_kernel("fmad");
  config().fmad = false;
  const NvrtcStats s0 = nvrtc_stats();
  cudaKernel_t plain = get_kernel(src, src.kernels[0], 0);
  config().fmad = true;
  cudaKernel_t fused = get_kernel(src, src.kernels[0], 0);
  const NvrtcStats s1 = nvrtc_stats();
  EXPECT_EQ(s1.compiled - s0.compiled, 2) << "fmad is part of the cache key: the kernel compiles again";
  EXPECT_NE(plain, fused);
  config().fmad = false;
  EXPECT_EQ(get_kernel(src, src.kernels[0], 0), plain);
  EXPECT_EQ(nvrtc_stats().compiled, s1.compiled);
}

}  // namespace
}  // namespace theon::backends::cuda
