// A kernel source as the CUDA backend generates it (reduce_codegen.cpp), built with the
// NVRTC program's named headers (nvrtc_preamble.cuh split at its "//@@ name" lines, less
// the std shims the host's headers serve, plus scalar_ops.hpp) and run by the emulator:
// the row sums of a matrix match the CPU's, with identical bits in reverse order.
// Built only with the CUDA backend (it links libtheon_cuda for reduce_source).
#include "emulator_test_util.hpp"

#include "backends/cuda/reduce_codegen.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <regex>
#include <sstream>

namespace theon::detail {
extern const char* const kScalarOpsHeader;
}
namespace theon::backends::cuda {
extern const char* const kNvrtcPreamble;
}

namespace {

namespace cuda = theon::backends::cuda;

std::vector<std::pair<std::string, std::string>> nvrtc_headers() {
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream in(cuda::kNvrtcPreamble);
  std::string line, name, body;
  auto flush = [&] {
    if (!name.empty() && name != "cstdint" && name != "type_traits" && name != "limits" && name != "cmath")
      out.emplace_back(name, body);
  };
  while (std::getline(in, line)) {
    if (line.rfind("//@@ ", 0) == 0) {
      flush();
      name = line.substr(5);
      body.clear();
    } else if (!name.empty()) {
      body += line + "\n";
    }
  }
  flush();
  out.emplace_back("scalar_ops.hpp", theon::detail::kScalarOpsHeader);
  return out;
}

// The stand-in NVRTC's edit for dynamic shared memory.
std::string rewrite_extern_shared(const std::string& code) {
  static const std::regex re(R"(extern\s+__shared__\s+(?:__align__\(\d+\)\s+)?([A-Za-z_][\w\s]*?)\s+(\w+)\s*\[\s*\]\s*;)");
  return std::regex_replace(code, re, "$1* $2 = reinterpret_cast<$1*>(::gpu_sim::dynamic_shared());");
}

struct TheonShapeArg {
  long long d[8];
};

TEST(EmulatorGeneratedKernel, ReduceSumRowsMatchesTheCpu) {
  cuda::ReduceSpec spec;
  spec.kind = cuda::RKind::Sum;
  spec.in = theon::DType::Float32;
  spec.out = theon::DType::Float32;
  spec.kept_rank = 1;
  spec.reduced_rank = 1;
  const auto src = cuda::reduce_source(spec);
  const gpu_sim_test::KernelModule m(rewrite_extern_shared(src.code), src.kernels, nvrtc_headers());

  const long long rows = 5, cols = 1000;
  std::vector<float> in(rows * cols);
  uint32_t s = 7;
  for (auto& x : in) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<float>(s >> 8) / 16777216.f - 0.5f;
  }
  TheonShapeArg ks{{rows}}, kst{{cols}}, rs{{cols}}, rst{{1}};
  auto run = [&](const char* kernel, unsigned block) {
    std::vector<float> out(rows, -1.f);
    m.launch(kernel, {3, 1, 1}, {block, 1, 1}, 0, in.data(), out.data(), static_cast<double*>(nullptr), rows, cols,
             cols, 1LL, ks, kst, rs, rst, 1.0);
    return out;
  };
  for (auto [kernel, block] : {std::pair{"reduce_inner_block", 256u}, std::pair{"reduce_inner_warp", 256u}}) {
    const auto out = run(kernel, block);
    for (long long r = 0; r < rows; ++r) {
      double sum = 0;
      for (long long c = 0; c < cols; ++c) sum += in[r * cols + c];
      EXPECT_NEAR(out[r], sum, 1e-5 * std::fabs(sum) + 1e-6) << kernel << " row " << r;
    }
    auto child = [&] {
      setenv("SIM_ORDER", "reverse", 1);
      const auto rev = run(kernel, block);
      std::exit(std::memcmp(rev.data(), out.data(), rows * sizeof(float)) == 0 ? 0 : 1);
    };
    EXPECT_EXIT(child(), ::testing::ExitedWithCode(0), "") << kernel;
  }
}

}  // namespace
