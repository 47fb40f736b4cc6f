// Fused CPU kernels: generated code agrees with the interpreter; the disk cache is reused by
// a fresh process; without a compiler the interpreter runs. ctest sets cxx= for every test,
// so these tests turn the compiler on themselves and keep the number of modules small (every
// variant below is compiled once per cold cache; the cache lives in a per-run directory).
#include <theon/theon.hpp>

#include "backends/cpu/fused_cpu.hpp"
#include "graph/node.hpp"
#include "ops/composite.hpp"
#include "util/process.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>
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

// float32 tanh in generated code (with SLEEF on AVX2/AVX-512: computed in double, see
// fused_cpu.cpp's vec_tanh), as tanh(x + x), against the double tanh over every 997th float of both
// signs (all exponents, subnormals included), the saturation boundary, +-0 (sign kept), +-inf
// and NaN, with a length that leaves a tail shorter than a vector. Without the vector helpers
// the scalar functor (libm) runs, held to 2 ulp.
TEST(FusedCpu, FloatTanhWithinHalfAnUlpAndABitOverASweepOfFloats) {
  const std::string root = cache_root() + "-tanh";
  CompilerOn on(root);
  std::vector<float> xs;
  for (uint64_t b = 0; b < 0x7f800000u; b += 997)
    for (uint32_t sign : {0u, 0x80000000u}) {
      const uint32_t u = static_cast<uint32_t>(b) | sign;
      float f;
      std::memcpy(&f, &u, sizeof f);
      xs.push_back(f);
    }
  for (float f : {0.f, -0.f, 9.0f, 9.01f, 9.02f, -9.02f, 19.f, 1e30f, 0.34657359f, 0.3465736f, 1e-45f,
                  std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                  std::numeric_limits<float>::quiet_NaN()})
    xs.push_back(f);
  while (xs.size() % 16 != 7) xs.push_back(0.5f);
  Var x = tensor::vector("x", DType::Float32);
  Function f = function({x}, {tensor::tanh(x + x)});  // x + x (exact): a fused kernel, not the lone Elemwise
  ASSERT_NE(f.debugprint().find("Composite{"), std::string::npos) << f.debugprint();
  const auto before = fused_stats();
  Array got = f({Array::from_vector<float>(xs, Shape{static_cast<int64_t>(xs.size())})})[0];
  ASSERT_EQ(fused_stats().interpreted_calls, before.interpreted_calls) << "generated code ran";
  const float* g = got.data<float>();
  const bool vector = (fs::exists("/usr/include/x86_64-linux-gnu/sleef.h") || fs::exists("/usr/include/sleef.h")) &&
                      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  const double bound = vector ? 0.504 : 2.0;  // 0.5035 over every float
  double worst = 0;
  float worst_at = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const double want = std::tanh(2.0 * double(xs[i]));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(g[i])) << "tanh(NaN)";
      continue;
    }
    if (want == 0) {
      EXPECT_EQ(g[i], 0.f);
      EXPECT_EQ(std::signbit(g[i]), std::signbit(xs[i])) << "tanh(" << xs[i] << ") keeps the sign of zero";
      continue;
    }
    const float w = static_cast<float>(want);
    const double ulp = std::max(double(std::nextafter(std::fabs(w), INFINITY) - std::fabs(w)), 1.4e-45);
    const double e = std::fabs(double(g[i]) - want) / ulp;
    if (e > worst) worst = e, worst_at = xs[i];
  }
  EXPECT_LE(worst, bound) << "worst at tanh(2 * " << worst_at << ")";
  // A lone tanh (the library's loop, elemwise_vector.cpp) runs the same text: the same bits.
  if (vector) {
    std::vector<float> doubled(xs.size());
    for (size_t i = 0; i < xs.size(); ++i) doubled[i] = xs[i] + xs[i];
    Function lone = function({x}, {tensor::tanh(x)});
    ASSERT_EQ(lone.debugprint().find("Composite{"), std::string::npos) << lone.debugprint();
    Array l = lone({Array::from_vector<float>(doubled, Shape{static_cast<int64_t>(doubled.size())})})[0];
    int differ = 0;
    for (size_t i = 0; i < xs.size() && differ < 5; ++i)
      if (std::memcmp(&g[i], l.data<float>() + i, 4) != 0 && !(std::isnan(g[i]) && std::isnan(l.data<float>()[i]))) {
        ADD_FAILURE() << "tanh(" << doubled[i] << "): fused " << g[i] << ", lone " << l.data<float>()[i];
        ++differ;
      }
  }
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
  // The child is this test binary, run without a shell (the root may contain anything).
  setenv("THEON_FUSED_CHILD", "1", 1);
  setenv("THEON_FUSED_TEST_DIR", root.c_str(), 1);
  auto child = detail::run_program({"/proc/" + std::to_string(getpid()) + "/exe", "--gtest_filter=FusedCpuChild.*"},
                                   root + "/child.log");
  unsetenv("THEON_FUSED_CHILD");
  unsetenv("THEON_FUSED_TEST_DIR");
  EXPECT_TRUE(child.ok()) << "child failed (" << child.error << "); see " << root << "/child.log";
  std::ifstream log(root + "/child.log");
  std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("[  PASSED  ] 1 test"), std::string::npos) << text;
  std::error_code ec;
  if (!::testing::Test::HasFailure()) fs::remove_all(root, ec);
}

// Several Composites (split by reductions, one reading a transposed input) compile as one
// module when the function is lowered, and the first call compiles nothing more: the variants
// foreseen from the static types (DimShuffle views followed) are the ones that run.
TEST(FusedCpu, OneModulePerFunction) {
  const std::string root = cache_root() + "-batch";
  CompilerOn on(root);
  Var x = tensor::matrix("x"), z = tensor::matrix("z"), b = tensor::tensor(DType::Float32, {1, -1}, "b");
  Var h = tensor::tanh(x * 2.0 + b);
  Var e = tensor::exp(h - tensor::max(h, std::vector<int>{1}, true));
  // (+ 1.0: not a softmax, which the stabilize rewrites would make one op)
  Var y = tensor::log1p(e / (tensor::sum(e, std::vector<int>{1}, true) + 1.0)) * tensor::sigmoid(z.transpose()) - x;
  const auto before = fused_stats();
  Function f = function({x, z, b}, {y});
  const std::string dp = f.debugprint();
  size_t composites = 0;
  for (size_t at = dp.find("Composite{"); at != std::string::npos; at = dp.find("Composite{", at + 1)) ++composites;
  ASSERT_GE(composites, 3u) << dp;
  Array xv = Array::randn({37, 300}, 1), zv = Array::randn({300, 37}, 2), bv = Array::randn({1, 300}, 3);
  Array got = f({xv, zv, bv})[0];
  Array want = function({x, z, b}, {y}, {.mode = "none"})({xv, zv, bv})[0];
  EXPECT_TRUE(allclose(got, want, 1e-5, 1e-6));
  const auto after = fused_stats();
  EXPECT_EQ(after.interpreted_calls, before.interpreted_calls);
  EXPECT_EQ(after.compiled + after.loaded_from_disk - before.compiled - before.loaded_from_disk, 1)
      << "one module for the whole function";
  // Another function with the same regions (same kernels) compiles and loads nothing.
  Function g = function({x, z, b}, {y});
  EXPECT_TRUE(allclose(g({xv, zv, bv})[0], want, 1e-5, 1e-6));
  EXPECT_EQ(fused_stats().compiled, after.compiled);
  EXPECT_EQ(fused_stats().loaded_from_disk, after.loaded_from_disk);
  std::error_code ec;
  fs::remove_all(root, ec);
}

// float16 (docs/guide/float16.md): the fused loop loads theon::half, computes in float and
// stores half; the same bits as the interpreter (SLEEF's 1 ulp in float32 can move a float16
// result by one half ulp at most), on contiguous, broadcast and strided inputs, and a
// FusedReduce whose region loads half.
TEST(FusedCpu, Float16LoadsAndStoresHalfInGeneratedCode) {
  const std::string root = cache_root() + "-float16";
  CompilerOn on(root);
  Var x = tensor::matrix("x", DType::Float16), y = tensor::matrix("y", DType::Float16);
  Var z = tensor::tanh(x) * y + 0.5;
  Var s = tensor::sum(tensor::exp(x), std::vector<int>{1});
  const auto before = fused_stats();
  Function f = function({x, y}, {z, s});
  ASSERT_NE(f.debugprint().find("Composite{"), std::string::npos) << f.debugprint();
  ASSERT_NE(f.debugprint().find("FusedReduce{"), std::string::npos) << f.debugprint();
  Function ref = function({x, y}, {z, s}, {.mode = "none"});
  const Array xv = Array::randn({30, 500}, 1).astype(DType::Float16), yv = Array::randn({30, 500}, 2).astype(DType::Float16);
  const Array xs = Array::randn({30, 1000}, 3).astype(DType::Float16).slice(1, 0, 1000, 2);
  for (const auto& [a, b] : {std::pair{xv, yv}, std::pair{xv, yv.slice(0, 0, 1, 1)}, std::pair{xs, yv}}) {
    auto got = f({a, b}), want = ref({a, b});
    ASSERT_EQ(got[0].dtype(), DType::Float16);
    EXPECT_TRUE(allclose(got[0], want[0], 1e-3, 1e-3));
    EXPECT_TRUE(allclose(got[1], want[1], 1e-3, 1e-3));
  }
  const auto after = fused_stats();
  EXPECT_EQ(after.interpreted_calls, before.interpreted_calls) << "every call ran generated code";
  EXPECT_GE(after.compiled + after.loaded_from_disk - before.compiled - before.loaded_from_disk, 1);
  std::error_code ec;
  fs::remove_all(root, ec);
}

// A reduction that absorbed its elementwise region (FusedReduce) fills each chunk with the
// region's generated kernel, compiled with the function's other kernels at lowering: no
// interpreter call, one module, results as mode none (to SLEEF's 1-ulp against libm).
TEST(FusedCpu, FusedReduceRunsGeneratedCode) {
  const std::string root = cache_root() + "-reduce";
  CompilerOn on(root);
  Var x = tensor::matrix("x"), b = tensor::tensor(DType::Float32, {1, -1}, "b");
  Var m = tensor::max(x, std::vector<int>{1}, true);
  Var y = tensor::log(tensor::sum(tensor::exp(x * b - m), std::vector<int>{1}));
  const auto before = fused_stats();
  Function f = function({x, b}, {y});
  ASSERT_NE(f.debugprint().find("FusedReduce{sum{axes=(1,)}"), std::string::npos) << f.debugprint();
  Function ref = function({x, b}, {y}, {.mode = "none"});
  for (int64_t cols : {300, 70000}) {  // one chunk; one row per chunk
    Array xv = Array::randn({40, cols}, 1), bv = Array::randn({1, cols}, 2);
    EXPECT_TRUE(allclose(f({xv, bv})[0], ref({xv, bv})[0], 1e-5, 1e-6)) << cols;
  }
  Array xs = Array::randn({40, 600}, 3).slice(1, 0, 600, 2), bs = Array::randn({1, 300}, 4);  // strided
  EXPECT_TRUE(allclose(f({xs, bs})[0], ref({xs, bs})[0], 1e-5, 1e-6));
  const auto after = fused_stats();
  EXPECT_EQ(after.interpreted_calls, before.interpreted_calls) << "every chunk ran generated code";
  EXPECT_GE(after.compiled + after.loaded_from_disk - before.compiled - before.loaded_from_disk, 1);
  std::error_code ec;
  fs::remove_all(root, ec);
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

TEST(FusedCpu, BoolBlocksAreBytesSoMaskLoopsVectorize) {
  // relu's gradient, switch(x > 0, g, 0): the mask block is kept as unsigned char and read
  // through a cast (GCC has no vector type for bool loads: the select ran element by element).
  using ops::ScalarOpId;
  ops::Composite op({DType::Float32, DType::Float32, DType::Float32},
                    {{ScalarOpId::Gt, DType::Bool, {0, 1}}, {ScalarOpId::Switch, DType::Float32, {3, 2, 1}}}, {4});
  const std::string s = backends::cpu::fused_source(op, 1, {0, 0, 1, 0}, {true, true, true, true});
  EXPECT_NE(s.find("alignas(64) unsigned char s0[B];"), std::string::npos) << s;
  EXPECT_NE(s.find("static_cast<bool>(s0[i])"), std::string::npos) << s;
  EXPECT_EQ(s.find("bool s0"), std::string::npos) << s;
  // The values: NaN and -0 in the mask's operand, through the compiled kernel and mode none.
  const std::string root = cache_root() + "-mask";
  CompilerOn on(root);
  Var x = tensor::vector("x"), g = tensor::vector("g");
  Var y = tensor::switch_(x > 0.0, g * 1.5, as_var(0.0));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> xv(1000), gv(1000);
  for (size_t i = 0; i < xv.size(); ++i) {
    xv[i] = i % 7 == 0 ? nan : i % 5 == 0 ? -0.0f : static_cast<float>(static_cast<int>(i % 11) - 5);
    gv[i] = static_cast<float>(i) * 0.5f + 1.0f;
  }
  const std::vector<Array> vals = {Array::from_vector<float>(xv, Shape{1000}), Array::from_vector<float>(gv, Shape{1000})};
  Array got = function({x, g}, {y})(vals)[0], want = function({x, g}, {y}, {.mode = "none"})(vals)[0];
  EXPECT_TRUE(allclose(got, want, 0, 0)) << got << "\n" << want;
  std::error_code ec;
  fs::remove_all(root, ec);
}

// ---- the options come from the kernel's plan (frozen when a function is compiled) ------

// y = x * x + x over float32 vectors, as a Composite node.
graph::VarPtr composite_node() {
  using ops::ScalarOpId;
  auto op = std::make_shared<ops::Composite>(
      std::vector<DType>{DType::Float32},
      std::vector<ops::CompositeInstr>{{ScalarOpId::Mul, DType::Float32, {0, 0}},
                                       {ScalarOpId::Add, DType::Float32, {1, 0}}},
      std::vector<int>{2});
  graph::TensorType type;
  type.dtype = DType::Float32;
  type.dims = {-1};
  return graph::make_output(op, {tensor::vector("x").node()}, type);
}

backends::KernelPlan plan_with_cxx(const std::string& cxx) {
  backends::KernelOptions o = backends::KernelOptions::from_config();
  o.cxx = cxx;
  return backends::KernelPlan(o);
}

// Runs the node's CPU kernel with `plan` and checks y = x * x + x.
void run_with(const backends::KernelPlan* plan, const graph::Apply& node, const Array& x) {
  std::vector<Array> out{Array::empty(x.shape(), DType::Float32)};
  backends::cpu_backend().kernel(node).run(plan, node, {x}, out);
  const std::vector<float> xs = x.to_vector<float>(), ys = out[0].to_vector<float>();
  for (size_t i = 0; i < xs.size(); ++i) ASSERT_EQ(ys[i], xs[i] * xs[i] + xs[i]) << i;
}

TEST(FusedCpu, APlanWithoutACompilerInterpretsWhateverConfigSays) {
  CompilerOn on(cache_root() + "-plan-nocxx");  // config().cxx = "c++"
  graph::VarPtr y = composite_node();
  const backends::KernelPlan plan = plan_with_cxx("");
  Array x = Array::randn({100}, 5, DType::Float32);
  const auto before = fused_stats();
  run_with(&plan, *y->owner, x);
  EXPECT_EQ(fused_stats().interpreted_calls, before.interpreted_calls + 1);
  EXPECT_EQ(fused_stats().compiled, before.compiled);
}

TEST(FusedCpu, PrepareBatchCompilesWithThePlansCompilerSoRunCompilesNothing) {
  const std::string root = cache_root() + "-plan-cxx";
  CompilerOn on(root);
  config().cxx = "";  // the plan's compiler is used, not this
  graph::VarPtr y = composite_node();
  const backends::KernelPlan plan = plan_with_cxx("c++");
  const auto before = fused_stats();
  backends::cpu_backend().prepare_batch({y->owner}, plan_with_cxx("").options());
  EXPECT_EQ(fused_stats().compiled + fused_stats().loaded_from_disk, before.compiled + before.loaded_from_disk)
      << "no compiler: prepare_batch does nothing";
  backends::cpu_backend().prepare_batch({y->owner}, plan.options());
  const auto prepared = fused_stats();
  EXPECT_EQ(prepared.compiled + prepared.loaded_from_disk, before.compiled + before.loaded_from_disk + 1);
  Array x = Array::randn({100}, 6, DType::Float32);
  run_with(&plan, *y->owner, x);
  EXPECT_EQ(fused_stats().interpreted_calls, prepared.interpreted_calls) << "generated code ran";
  EXPECT_EQ(fused_stats().compiled, prepared.compiled) << "prepare_batch compiled the kernel run() needed";
  EXPECT_EQ(fused_stats().loaded_from_disk, prepared.loaded_from_disk);
  std::error_code ec;
  fs::remove_all(root, ec);
}

}  // namespace
}  // namespace theon
