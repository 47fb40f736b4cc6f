// The graph fuzzer's budget, from the environment (CI runs the defaults: a fixed seed and trial
// count; scripts/fuzz.sh --minutes N runs longer with a random seed):
//   THEON_FUZZ_SEED          the seed (default 20261122); trial t of seed s is the same graph
//                            and inputs on every machine
//   THEON_FUZZ_FIRST_TRIAL   the first trial (default 0)
//   THEON_FUZZ_TRIALS        how many trials (default 300; unlimited when only minutes are set)
//   THEON_FUZZ_MINUTES       stop after this long (fractions allowed)
//   THEON_FUZZ_MAX_FAILURES  stop after this many failed trials (default 10)
#pragma once
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>

namespace theon::testing {

struct FuzzSettings {
  uint64_t seed = 20261122;
  int64_t first_trial = 0;
  int64_t trials = 300;
  double minutes = 0;  // 0: no time limit
  int max_failures = 10;

  static FuzzSettings from_environment() {
    FuzzSettings s;
    auto read = [](const char* name) -> const char* {
      const char* v = std::getenv(name);
      return v && *v ? v : nullptr;
    };
    auto number = [](const char* name, const char* text) {
      char* end = nullptr;
      const double v = std::strtod(text, &end);
      if (*end || v < 0) throw std::invalid_argument(std::string(name) + "=" + text + " is not a number >= 0");
      return v;
    };
    if (const char* v = read("THEON_FUZZ_SEED")) s.seed = static_cast<uint64_t>(number("THEON_FUZZ_SEED", v));
    if (const char* v = read("THEON_FUZZ_FIRST_TRIAL"))
      s.first_trial = static_cast<int64_t>(number("THEON_FUZZ_FIRST_TRIAL", v));
    if (const char* v = read("THEON_FUZZ_MINUTES")) {
      s.minutes = number("THEON_FUZZ_MINUTES", v);
      s.trials = std::numeric_limits<int64_t>::max();
    }
    if (const char* v = read("THEON_FUZZ_TRIALS")) s.trials = static_cast<int64_t>(number("THEON_FUZZ_TRIALS", v));
    if (const char* v = read("THEON_FUZZ_MAX_FAILURES"))
      s.max_failures = static_cast<int>(number("THEON_FUZZ_MAX_FAILURES", v));
    return s;
  }

  /// Whether to run another trial after `ran` of them, started at `start`.
  bool more(int64_t ran, std::chrono::steady_clock::time_point start) const {
    if (ran >= trials) return false;
    if (minutes <= 0) return true;
    return std::chrono::steady_clock::now() - start < std::chrono::duration<double>(minutes * 60);
  }

  /// The environment that reruns trial `trial` alone (prefix to the test command).
  std::string rerun_line(int64_t trial) const {
    std::ostringstream os;
    os << "THEON_FUZZ_SEED=" << seed << " THEON_FUZZ_FIRST_TRIAL=" << trial
       << " THEON_FUZZ_TRIALS=1 build/tests/test_rewrite --gtest_filter='GraphFuzz.*'"
       << " (with the THEON_FLAGS of the failing run)";
    return os.str();
  }
};

}  // namespace theon::testing
