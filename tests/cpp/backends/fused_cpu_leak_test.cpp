// Compiling a function whose graph has a fused kernel keeps nothing per compilation once the
// kernel is loaded: the loaded-kernel tables are keyed by content or by live ops only
// (issue 11: ~620 bytes stayed behind per compiled function, linear in the compilations).
// Measured with the allocator's own counter of bytes in use (mallinfo2), not with RSS.
#include <theon/theon.hpp>

#include "backends/cpu/fused_cpu.hpp"

#include <gtest/gtest.h>

#include <malloc.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace theon {
namespace {

namespace fs = std::filesystem;

TEST(FusedCpuLeak, RecompilingAFusedGraphKeepsNoMemory) {
  const fs::path dir = fs::temp_directory_path() / ("theon-fused-leak-" + std::to_string(getpid()));
  const std::string cxx = config().cxx, compiledir = config().compiledir;
  config().cxx = "c++";
  config().compiledir = dir.string();
  {
    Var a = tensor::vector("a"), b = tensor::vector("b");
    Var y = tensor::tanh(a * b) + tensor::exp(-a) * 2.0;
    const Array av = Array::randn({10}, 1), bv = Array::randn({10}, 2);  // small: no OpenMP threads
    auto compile_and_call = [&] {
      Function f = function({a, b}, {y});
      Array out = f({av, bv})[0];
      ASSERT_EQ(out.size(), 10);
    };
    for (int i = 0; i < 5; ++i) compile_and_call();  // the module is built and loaded; tables warm
    const auto loaded = backends::cpu::fused_stats();
    const size_t before = mallinfo2().uordblks;
    constexpr int kCompiles = 500;
    for (int i = 0; i < kCompiles; ++i) compile_and_call();
    const size_t after = mallinfo2().uordblks;
    // Every compilation found its kernel in the process (no compile, no load, no interpreter).
    EXPECT_EQ(backends::cpu::fused_stats().compiled, loaded.compiled);
    EXPECT_EQ(backends::cpu::fused_stats().loaded_from_disk, loaded.loaded_from_disk);
    EXPECT_EQ(backends::cpu::fused_stats().interpreted_calls, loaded.interpreted_calls);
    // 620 bytes per compilation would be 310 KB here; allow 20 KB of noise (40 bytes each).
    const double growth = static_cast<double>(after) - static_cast<double>(before);
    EXPECT_LT(growth, 20.0 * 1024) << "bytes in use grew by " << growth << " over " << kCompiles
                                   << " compilations (" << growth / kCompiles << " per compilation)";
  }
  config().cxx = cxx;
  config().compiledir = compiledir;
  std::error_code ec;
  fs::remove_all(dir, ec);
}

}  // namespace
}  // namespace theon
