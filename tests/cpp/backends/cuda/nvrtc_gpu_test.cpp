// NVRTC compilation and module loading on a device (label gpu): different kernels compile
// concurrently, the same kernel once however many threads ask for it, and config().fmad
// reaches NVRTC's options and the caches. Skips without a device (fails under THEON_GPU_SIM=1).
#include "backends/cuda/gpu_test_support.hpp"
#include "backends/cuda/nvrtc_compiler.hpp"

#include <theon/theon.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

namespace theon::backends::cuda {
namespace {

namespace fs = std::filesystem;

// A kernel no cache (memory or disk) has seen: its source names this process, a clock tick and `tag`.
KernelSource fresh_kernel(const std::string& tag) {
  static std::atomic<int> serial{0};
  const std::string unique = std::to_string(getpid()) + "_" +
                             std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()) + "_" +
                             std::to_string(++serial);
  const std::string name = "theon_test_" + tag;
  std::string code = "// " + unique + "\nextern \"C\" __global__ void " + name +
                     "(float* y, const float* a, const float* b, const float* c, int n) {\n"
                     "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                     "  if (i < n) y[i] = a[i] * b[i] + c[i];\n"
                     "}\n";
  return {name, code, {name}};
}

class NvrtcGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    THEON_REQUIRE_CUDA_DEVICES(1);
    saved_ = config();
    // A new folder per test: the cache remembers folders it verified (by path) per process.
    static int serial = 0;
    dir_ = fs::temp_directory_path() /
           ("theon-nvrtc-gpu-test-" + std::to_string(getpid()) + "-" + std::to_string(++serial));
    fs::remove_all(dir_);
    config().compiledir = dir_.string();  // nothing on disk either
  }
  void TearDown() override {
    config() = saved_;
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  Config saved_;
  fs::path dir_;
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
