// Fused CPU kernels: generated code agrees with the interpreter; the disk cache is reused by
// a fresh process; without a compiler the interpreter runs. ctest sets cxx= for every test,
// so these tests turn the compiler on themselves and keep the number of modules small (every
// variant below is compiled once per cold cache; the cache lives in a per-run directory).
#include <theon/theon.hpp>

#include "backends/cpu/fused_cpu.hpp"
#include "ops/composite.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace theon {
namespace {

namespace fs = std::filesystem;
using backends::cpu::fused_stats;

// Sets cxx (and a private compiledir) for the test's duration.
struct CompilerOn {
  std::string cxx, dir;
  explicit CompilerOn(const std::string& compiledir) : cxx(config().cxx), dir(config().compiledir) {
    config().cxx = "c++";
    config().compiledir = compiledir;
  }
  ~CompilerOn() {
    config().cxx = cxx;
    config().compiledir = dir;
  }
};

std::string cache_root() {
  if (const char* d = std::getenv("THEON_FUSED_TEST_DIR")) return d;
  return (fs::temp_directory_path() / ("theon-fused-test-" + std::to_string(getpid()))).string();
}

struct W5 {
  Var a = tensor::matrix("a"), b = tensor::matrix("b"), c = tensor::matrix("c");
  Var y = tensor::tanh(a * b + c) * tensor::exp(-a * a) + tensor::sigmoid(c);
};

// Every variant this file compiles: W5 over contiguous, broadcast and strided inputs, and a
// mixed-dtype program, all in one process so the counters tell the story.
TEST(FusedCpu, CodegenAgreesWithTheInterpreter) {
  const std::string root = cache_root() + "-codegen";
  CompilerOn on(root);
  W5 w;
  Function fused = function({w.a, w.b, w.c}, {w.y});
  ASSERT_NE(fused.debugprint().find("Composite{"), std::string::npos) << fused.debugprint();
  Function ref = function({w.a, w.b, w.c}, {w.y}, {.mode = "none"});

  const auto before = fused_stats();
  Array big = Array::randn({64, 3000}, 9);
  struct Case {
    Array a, b, c;
  } cases[] = {
      {Array::randn({64, 3000}, 1), Array::randn({64, 3000}, 2), Array::randn({64, 3000}, 3)},  // contiguous
      {Array::randn({64, 3000}, 4), Array::randn({64, 3000}, 5), Array::randn({64, 3000}, 6)},  // same variant
      {Array::randn({1, 3000}, 7), Array::randn({64, 1}, 8), big},                             // broadcasting
      {big.slice(1, 0, 3000, 2), Array::randn({64, 1500}, 10), Array::randn({1, 1}, 11)},      // strided
  };
  for (auto& k : cases) {
    Array got = fused({k.a, k.b, k.c})[0], want = ref({k.a, k.b, k.c})[0];
    EXPECT_TRUE(allclose(got, want, 1e-5, 1e-6));
  }
  const auto after = fused_stats();
  EXPECT_EQ(after.interpreted_calls, before.interpreted_calls) << "every call ran generated code";
  EXPECT_LE(after.compiled - before.compiled, 3);  // three variants; none if the cache was warm

  // Integers, comparisons, casts and switch in one program (float64: 1-ulp SLEEF vs libm).
  Var x = tensor::dmatrix("x"), n = tensor::tensor(DType::Int32, {-1, -1}, "n");
  Var z = tensor::switch_(x > 0.0, tensor::log1p(x) * n, tensor::softplus(x) - (n % 3)) + tensor::cos(x);
  Array xv = Array::randn({5, 700}, 12, DType::Float64), nv = Array::arange(3500, DType::Int32).reshape({5, 700});
  Array gz = function({x, n}, {z})({xv, nv})[0];
  Array rz = function({x, n}, {z}, {.mode = "none"})({xv, nv})[0];
  EXPECT_TRUE(allclose(gz, rz, 1e-13, 1e-13));
  EXPECT_EQ(fused_stats().interpreted_calls, before.interpreted_calls);
  std::error_code ec;
  fs::remove_all(root, ec);
}

// Runs in a child process (see the next test): everything must come from the disk cache.
TEST(FusedCpuChild, LoadsFromDisk) {
  if (!std::getenv("THEON_FUSED_CHILD")) GTEST_SKIP() << "run by FusedCpu.SecondProcessCompilesNothing";
  CompilerOn on(cache_root());
  W5 w;
  Array av = Array::randn({64, 3000}, 1), bv = Array::randn({64, 3000}, 2), cv = Array::randn({64, 3000}, 3);
  Array got = function({w.a, w.b, w.c}, {w.y})({av, bv, cv})[0];
  Array want = function({w.a, w.b, w.c}, {w.y}, {.mode = "none"})({av, bv, cv})[0];
  EXPECT_TRUE(allclose(got, want, 1e-5, 1e-6));
  EXPECT_EQ(fused_stats().compiled, 0);
  EXPECT_EQ(fused_stats().loaded_from_disk, 1);
  EXPECT_EQ(fused_stats().interpreted_calls, 0);
}

TEST(FusedCpu, SecondProcessCompilesNothing) {
  const std::string root = cache_root();
  {
    CompilerOn on(root);  // make sure the module is on disk (compiled by the test above or now)
    W5 w;
    Array av = Array::randn({64, 3000}, 1);
    function({w.a, w.b, w.c}, {w.y})({av, av, av});
    ASSERT_TRUE(fs::exists(backends::cpu::fused_cache_dir()));
  }
  std::string cmd = "THEON_FUSED_CHILD=1 THEON_FUSED_TEST_DIR='" + root +
                    "' /proc/" + std::to_string(getpid()) + "/exe --gtest_filter=FusedCpuChild.* > '" + root +
                    "/child.log' 2>&1";
  int rc = std::system(cmd.c_str());
  EXPECT_EQ(rc, 0) << "child failed; see " << root << "/child.log";
  std::ifstream log(root + "/child.log");
  std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("[  PASSED  ] 1 test"), std::string::npos) << text;
  std::error_code ec;
  if (!::testing::Test::HasFailure()) fs::remove_all(root, ec);
}

TEST(FusedCpu, NoCompilerRunsTheInterpreter) {
  std::string saved = config().cxx;
  config().cxx = "";
  W5 w;
  Array av = Array::randn({3, 5}, 1), bv = Array::randn({3, 5}, 2), cv = Array::randn({1, 5}, 3);
  const auto before = fused_stats();
  Array got = function({w.a, w.b, w.c}, {w.y})({av, bv, cv})[0];
  Array want = function({w.a, w.b, w.c}, {w.y}, {.mode = "none"})({av, bv, cv})[0];
  config().cxx = saved;
  EXPECT_TRUE(allclose(got, want, 1e-6, 1e-6));
  EXPECT_EQ(fused_stats().interpreted_calls, before.interpreted_calls + 1);
  EXPECT_EQ(fused_stats().compiled, before.compiled);
}

TEST(FusedCpu, BrokenCompilerFallsBackWithAWarning) {
  const std::string root = cache_root() + "-broken";
  CompilerOn on(root);
  config().cxx = "false";  // a "compiler" that always fails
  Var a = tensor::vector("a");
  Var y = tensor::exp(a) * 3.0 + a;
  Array av = Array::randn({10}, 4);
  testing::internal::CaptureStderr();
  Array got = function({a}, {y})({av})[0];
  std::string err = testing::internal::GetCapturedStderr();
  Array want = function({a}, {y}, {.mode = "none"})({av})[0];
  EXPECT_TRUE(allclose(got, want, 1e-6, 1e-6));
  EXPECT_NE(err.find("interpreter"), std::string::npos) << err;
  std::error_code ec;
  fs::remove_all(root, ec);
}

TEST(FusedCpu, SourceIsSpecialisedOnPatternNotSize) {
  using ops::ScalarOpId;
  ops::Composite op({DType::Float32, DType::Float32},
                    {{ScalarOpId::Mul, DType::Float32, {0, 1}}, {ScalarOpId::Tanh, DType::Float32, {2}}}, {3});
  std::string s1 = backends::cpu::fused_source(op, 2, {0, 0, 2}, {true, true, false});
  std::string s2 = backends::cpu::fused_source(op, 2, {0, 0, 0}, {true, true, true});
  EXPECT_NE(s1, s2);
  EXPECT_NE(s1.find("const float x1 = p2[0];"), std::string::npos) << s1;  // inner-broadcast input: a scalar
  // mul into a scratch block, tanh straight into the unit-stride output (no copy loop).
  EXPECT_NE(s2.find("vec_tanh(s0, p0, len);"), std::string::npos) << s2;
  EXPECT_EQ(s2.find("p0[i] ="), std::string::npos) << s2;
  EXPECT_EQ(s2.find("3000"), std::string::npos);
}

}  // namespace
}  // namespace theon
