// What every GPU test does when it needs a device (tests/cpp/backends/cuda/*_gpu_test.cpp and
// the op harness with device=cuda):
//
//   THEON_REQUIRE_CUDA_DEVICES(n)   in a test body or SetUp()
//
// Without a usable CUDA device (or with fewer than n) the test is skipped, except under the
// simulated GPU (THEON_GPU_SIM=1, tests/gpu_sim/): there a missing device is a FAILURE, so a
// broken simulator cannot pass by skipping everything, and the CUDA runtime loaded in the
// process must be the simulator's (its libcudart exports `theon_gpu_sim_marker`), so a run
// meant for the simulator never silently runs on something else. CI runs the simulator with
// SIM_DEVICES=2, so tests needing two devices run there too.
#pragma once
#include <theon/theon.hpp>

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace theon::testing {

/// THEON_GPU_SIM=1: the GPU tests run on the simulator and must not skip.
inline bool under_gpu_sim() {
  const char* v = std::getenv("THEON_GPU_SIM");
  return v && std::strcmp(v, "1") == 0;
}

/// Empty when the libcudart.so.13 loaded in this process is the simulator's; else why not.
/// (Call after cuda_status(), which loads libtheon_cuda and with it the CUDA runtime.)
inline std::string gpu_sim_runtime_problem() {
  void* h = dlopen("libcudart.so.13", RTLD_NOLOAD | RTLD_LAZY);
  if (!h) return "THEON_GPU_SIM=1 but no libcudart.so.13 is loaded in this process";
  void* marker = dlsym(h, "theon_gpu_sim_marker");
  dlclose(h);
  if (!marker)
    return "THEON_GPU_SIM=1 but the loaded libcudart.so.13 is not the simulator's (no theon_gpu_sim_marker; "
           "is tests/gpu_sim's library folder first on LD_LIBRARY_PATH?)";
  return "";
}

/// Why a test needing `devices` CUDA devices cannot run here; empty when it can.
inline std::string missing_cuda_devices(int devices) {
  const CudaStatus st = cuda_status();
  if (under_gpu_sim())
    if (std::string why = gpu_sim_runtime_problem(); !why.empty()) return why;
  if (!st.ok) return "no CUDA device: " + st.reason;
  if (st.device_count < devices)
    return "needs " + std::to_string(devices) + " CUDA devices, " + std::to_string(st.device_count) + " present";
  return "";
}

}  // namespace theon::testing

/// Skips the current test without `n` usable CUDA devices; fails instead under THEON_GPU_SIM=1.
#define THEON_REQUIRE_CUDA_DEVICES(n)                                                                  \
  do {                                                                                                 \
    if (const std::string theon_why_ = ::theon::testing::missing_cuda_devices(n); !theon_why_.empty()) { \
      if (::theon::testing::under_gpu_sim()) FAIL() << theon_why_ << " (THEON_GPU_SIM=1: not a skip)";   \
      GTEST_SKIP() << theon_why_;                                                                      \
    }                                                                                                  \
  } while (0)

namespace theon::testing {

/// A test fixture running on cuda0 with on_fallback=raise (a node without a CUDA kernel fails
/// instead of running on the CPU); the config is restored afterwards.
class Cuda0Test : public ::testing::Test {
 protected:
  void SetUp() override {
    THEON_REQUIRE_CUDA_DEVICES(1);
    saved_ = config();
    config().device = "cuda0";
    config().on_fallback = "raise";
  }
  void TearDown() override {
    if (cuda_status().ok) config() = saved_;
  }
  Config saved_;
};

}  // namespace theon::testing
