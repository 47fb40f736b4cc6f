// What the NVRTC tests share: a kernel no cache has seen, and a fixture that gives each test
// its own empty compiledir (restoring the configuration afterwards).
#pragma once
#include "backends/cuda/nvrtc_compiler.hpp"

#include <theon/theon.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <system_error>

#include <unistd.h>

namespace theon::backends::cuda::nvrtc_testing {

// A kernel no cache (memory or disk) has seen: its source names this process, a clock tick and `tag`.
inline KernelSource fresh_kernel(const std::string& tag) {
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

class PrivateCompiledirTest : public ::testing::Test {
 protected:
  void SetUp() override { use_private_compiledir(); }
  // A new folder per test: the cache remembers folders it verified (by path) per process.
  void use_private_compiledir() {
    static int serial = 0;
    saved_ = config();
    dir_ = std::filesystem::temp_directory_path() /
           ("theon-nvrtc-test-" + std::to_string(getpid()) + "-" + std::to_string(++serial));
    std::filesystem::remove_all(dir_);
    config().compiledir = dir_.string();  // nothing on disk either
  }
  void TearDown() override {
    if (dir_.empty()) return;  // skipped before set-up
    config() = saved_;
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  Config saved_;
  std::filesystem::path dir_;
};

}  // namespace theon::backends::cuda::nvrtc_testing
