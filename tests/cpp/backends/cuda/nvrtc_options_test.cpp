// NVRTC's options and the in-process compile cache, on any machine with the toolkit (real
// NVRTC, no device): --fmad=false unless config().fmad (the CPU never contracts a*b+c), the
// option is part of the cache key, and one source compiles once however many threads ask.
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

bool has(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

class NvrtcOptions : public nvrtc_testing::PrivateCompiledirTest {};

TEST_F(NvrtcOptions, NoFmaContractionUnlessConfigured) {
  EXPECT_FALSE(Config().fmad) << "fmad is off by default";
  config().fmad = false;
  auto off = nvrtc_options(kDefaultArch);
  EXPECT_TRUE(has(off, "--fmad=false"));
  EXPECT_FALSE(has(off, "--fmad=true"));
  EXPECT_TRUE(has(off, "--prec-div=true"));
  config().fmad = true;
  auto on = nvrtc_options(kDefaultArch);
  EXPECT_TRUE(has(on, "--fmad=true"));
  EXPECT_FALSE(has(on, "--fmad=false"));
  const std::string tag_on = nvrtc_options_tag();
  config().fmad = false;
  EXPECT_NE(nvrtc_options_tag(), tag_on) << "in-process kernel caches tell the option sets apart";
  Config c;
  c.apply_flags("fmad=True");
  EXPECT_TRUE(c.fmad);
}

TEST_F(NvrtcOptions, FmadIsPartOfTheCacheKey) {
  const KernelSource src = fresh_kernel("key");
  const int64_t before = nvrtc_stats().compiled;
  config().fmad = false;
  const std::string plain = compile_cubin(src, kDefaultArch);
  config().fmad = true;
  const std::string fused = compile_cubin(src, kDefaultArch);
  EXPECT_EQ(nvrtc_stats().compiled - before, 2) << "the same source with fmad compiles again";
  EXPECT_NE(plain, fused) << "a*b+c compiles to an FFMA only with --fmad=true";
  config().fmad = false;
  EXPECT_EQ(compile_cubin(src, kDefaultArch), plain);
  EXPECT_EQ(nvrtc_stats().compiled - before, 2);
}

TEST_F(NvrtcOptions, OneSourceCompilesOnceForManyThreads) {
  const KernelSource src = fresh_kernel("once");
  const int64_t before = nvrtc_stats().compiled;
  constexpr int kThreads = 6;
  std::atomic<int> ready{0};
  std::vector<std::string> got(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      ++ready;
      while (ready.load() < kThreads) std::this_thread::yield();
      got[static_cast<size_t>(i)] = compile_cubin(src, kDefaultArch);
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(nvrtc_stats().compiled - before, 1);
  for (auto& c : got) EXPECT_EQ(c, got[0]);
}

}  // namespace
}  // namespace theon::backends::cuda
