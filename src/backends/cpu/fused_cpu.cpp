#include "backends/cpu/fused_cpu.hpp"
#include "backends/cpu/cpu_kernels.hpp"
#include "backends/cpu/parallel.hpp"
#include "backends/scalar_program_render.hpp"
#include "util/kernel_cache.hpp"
#include "util/process.hpp"

#include "ops/composite.hpp"
#include "ops/dimshuffle.hpp"
#include "ops/fused_reduce.hpp"
#include "util/strided.hpp"

#include <theon/config.hpp>
#include <theon/error.hpp>

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace theon::detail {
extern const char* const kScalarOpsHeader;
extern const char* const kTanhF32Source;
}

namespace theon::backends::cpu {
namespace {

namespace fs = std::filesystem;
using ops::Composite;
using ops::ScalarKind;
using ops::ScalarOpId;

constexpr const char* kCodegenVersion = "theon-fused-cpu-5";  // 4: one module per lowered function, <cmath> shim, host-side parallel loop; 5: float tanh in double
constexpr int kMaxRank = 4;
constexpr int kBlock = 128;  // elements per block: scratch blocks stay in L1 (measured: 64-128 beat 512 by ~10% on W5)

std::atomic<int64_t> g_compiled{0}, g_loaded{0}, g_interpreted{0};

void warn_once(const std::string& key, const std::string& message) {
  static std::mutex mutex;
  static std::set<std::string> warned;
  std::lock_guard<std::mutex> lock(mutex);
  if (warned.insert(key).second) std::cerr << "theon: warning: " << message << "\n";
}

std::string ctype(DType t) { return scalar_type(t, Dialect::Cpu); }

// <cmath> is the most expensive thing a module parses: with -std=c++20 libstdc++'s <cmath>
// brings the special functions and their templates, measured at 0.15-0.6 s of a 0.2-0.9 s
// module compile on this machine (docs/BENCHMARKS.md, COMPILE 2026-11-22). The functors call
// only a few float/double functions, and libstdc++ defines exactly those overloads as the GCC
// builtins (std::exp(float) is __builtin_expf, std::exp(double) is ::exp = __builtin_exp), so
// declaring them this way gives the same calls and bit-identical results. The shim is used only
// when every std::name( call in the header is one it provides (else <cmath> stays).
const char* kMathShim = R"(// <cmath> replaced by the functions the scalar functors call (libstdc++'s own definitions)
namespace std {
#define THEON_M1(fn) inline float fn(float x) { return __builtin_##fn##f(x); } \
  inline double fn(double x) { return __builtin_##fn(x); }
#define THEON_M2(fn) inline float fn(float x, float y) { return __builtin_##fn##f(x, y); } \
  inline double fn(double x, double y) { return __builtin_##fn(x, y); }
THEON_M1(exp) THEON_M1(log) THEON_M1(log1p) THEON_M1(expm1) THEON_M1(sqrt) THEON_M1(tanh)
THEON_M1(sin) THEON_M1(cos) THEON_M1(fabs) THEON_M2(fmod) THEON_M2(pow)
#undef THEON_M1
#undef THEON_M2
}  // namespace std
)";
const std::set<std::string>& shim_functions() {
  static const std::set<std::string> names = {"exp", "log", "log1p", "expm1", "sqrt", "tanh",
                                              "sin", "cos", "fabs",  "fmod",  "pow"};
  return names;
}

// Whether every `std::identifier(` in `text` is a function the shim provides.
bool shim_covers(const std::string& text) {
  for (size_t at = text.find("std::"); at != std::string::npos; at = text.find("std::", at + 5)) {
    size_t e = at + 5;
    while (e < text.size() && (std::isalnum(static_cast<unsigned char>(text[e])) || text[e] == '_')) ++e;
    if (e < text.size() && text[e] == '(' && !shim_functions().count(text.substr(at + 5, e - at - 5))) return false;
  }
  return true;
}

// The scalar functors, pasted into every generated module so fused and unfused kernels
// share one definition (and the cache key covers it).
const std::string& scalar_header() {
  static const std::string text = [] {
    std::string s = detail::kScalarOpsHeader;  // embedded at build time (CMakeLists.txt)
    if (auto pos = s.find("#pragma once"); pos != std::string::npos) s.erase(pos, 12);
    if (auto pos = s.find("#include <cmath>"); pos != std::string::npos && shim_covers(s)) s.replace(pos, 16, kMathShim);
    return s;
  }();
  return text;
}

bool have_sleef() {
  static const bool yes = fs::exists("/usr/include/x86_64-linux-gnu/sleef.h") || fs::exists("/usr/include/sleef.h");
  return yes;
}

// Vector helpers over a block: SLEEF's 1-ulp functions on AVX-512 or AVX2, else the scalar
// functors. A tail shorter than a vector goes through a padded vector, so an element's result
// never depends on where a block starts.
const char* kPreamble = R"(
#include <cstdint>
#include <cstring>
// Helpers are compiled once per module and called per block (one call per 128 elements), not
// inlined into every kernel: that cut a module's compile time by about a quarter (CPU time,
// 6-kernel module of the COMPILE bench) at no measurable run-time cost.
#define THEON_HELPER static __attribute__((noinline))
#if THEON_SLEEF && (defined(__AVX512F__) || defined(__AVX2__))
// SLEEF's vector functions declared here with GCC vector types (the same ABI as __m512 /
// __m256) instead of including sleef.h and immintrin.h: those two headers took about half of
// the compile time of a module.
#if defined(__AVX512F__)
#define THEON_VF 16
#define THEON_VD 8
#define SLF(fn) Sleef_##fn##f16_u10
#define SLD(fn) Sleef_##fn##d8_u10
#else
#define THEON_VF 8
#define THEON_VD 4
#define SLF(fn) Sleef_##fn##f8_u10
#define SLD(fn) Sleef_##fn##d4_u10
#endif
typedef float VF_T __attribute__((vector_size(THEON_VF * 4)));
typedef double VD_T __attribute__((vector_size(THEON_VD * 8)));
static inline VF_T LDF(const float* p) { VF_T v; std::memcpy(&v, p, sizeof v); return v; }
static inline void STF(float* p, VF_T v) { std::memcpy(p, &v, sizeof v); }
static inline VD_T LDD(const double* p) { VD_T v; std::memcpy(&v, p, sizeof v); return v; }
static inline void STD(double* p, VD_T v) { std::memcpy(p, &v, sizeof v); }
#define THEON_DECL1(fn) extern "C" VF_T SLF(fn)(VF_T); extern "C" VD_T SLD(fn)(VD_T);
THEON_DECL1(exp) THEON_DECL1(log) THEON_DECL1(log1p) THEON_DECL1(expm1) THEON_DECL1(tanh)
THEON_DECL1(sin) THEON_DECL1(cos)
extern "C" VF_T SLF(pow)(VF_T, VF_T);
extern "C" VD_T SLD(pow)(VD_T, VD_T);
#define THEON_VEC1(fn, F)                                                                    \
  THEON_HELPER void vec_##fn(const float* a, float* r, int64_t n) {                         \
    int64_t i = 0;                                                                           \
    for (; i + THEON_VF <= n; i += THEON_VF) STF(r + i, SLF(fn)(LDF(a + i)));                \
    if (i < n) { alignas(64) float t[THEON_VF] = {}; std::memcpy(t, a + i, (n - i) * 4);     \
      STF(t, SLF(fn)(LDF(t))); std::memcpy(r + i, t, (n - i) * 4); }                         \
  }                                                                                          \
  THEON_HELPER void vec_##fn(const double* a, double* r, int64_t n) {                       \
    int64_t i = 0;                                                                           \
    for (; i + THEON_VD <= n; i += THEON_VD) STD(r + i, SLD(fn)(LDD(a + i)));                \
    if (i < n) { alignas(64) double t[THEON_VD] = {}; std::memcpy(t, a + i, (n - i) * 8);    \
      STD(t, SLD(fn)(LDD(t))); std::memcpy(r + i, t, (n - i) * 8); }                         \
  }
// float tanh in double (tanh_f32_vector.inc, the library's lone-tanh loop uses the same text).
#define THEON_TANH_LANES THEON_VD
#if defined(__AVX512F__)
#define THEON_TANH_AVX512 1
#else
#define THEON_TANH_AVX512 0
#endif
@THEON_TANH_F32@
THEON_HELPER void vec_tanh(const float* a, float* r, int64_t n) { theon_tanh_f32(a, r, n); }
THEON_HELPER void vec_tanh(const double* a, double* r, int64_t n) {
  int64_t i = 0;
  for (; i + THEON_VD <= n; i += THEON_VD) STD(r + i, SLD(tanh)(LDD(a + i)));
  if (i < n) { alignas(64) double t[THEON_VD] = {}; std::memcpy(t, a + i, (n - i) * 8);
    STD(t, SLD(tanh)(LDD(t))); std::memcpy(r + i, t, (n - i) * 8); }
}
THEON_HELPER void vec_pow(const float* a, const float* b, float* r, int64_t n) {
  int64_t i = 0;
  for (; i + THEON_VF <= n; i += THEON_VF) STF(r + i, SLF(pow)(LDF(a + i), LDF(b + i)));
  if (i < n) { alignas(64) float t[THEON_VF] = {}, u[THEON_VF] = {}; std::memcpy(t, a + i, (n - i) * 4);
    std::memcpy(u, b + i, (n - i) * 4); STF(t, SLF(pow)(LDF(t), LDF(u))); std::memcpy(r + i, t, (n - i) * 4); }
}
THEON_HELPER void vec_pow(const double* a, const double* b, double* r, int64_t n) {
  int64_t i = 0;
  for (; i + THEON_VD <= n; i += THEON_VD) STD(r + i, SLD(pow)(LDD(a + i), LDD(b + i)));
  if (i < n) { alignas(64) double t[THEON_VD] = {}, u[THEON_VD] = {}; std::memcpy(t, a + i, (n - i) * 8);
    std::memcpy(u, b + i, (n - i) * 8); STD(t, SLD(pow)(LDD(t), LDD(u))); std::memcpy(r + i, t, (n - i) * 8); }
}
#define THEON_HAVE_VEC 1
#else
#define THEON_TANH_SCALAR 1
#define THEON_VEC1(fn, F)                                                                    \
  template <class T> THEON_HELPER void vec_##fn(const T* a, T* r, int64_t n) {             \
    for (int64_t i = 0; i < n; ++i) r[i] = theon::scalar::F{}(a[i]);                          \
  }
template <class T> THEON_HELPER void vec_pow(const T* a, const T* b, T* r, int64_t n) {
  for (int64_t i = 0; i < n; ++i) r[i] = theon::scalar::Pow{}(a[i], b[i]);
}
#endif
THEON_VEC1(exp, Exp)
THEON_VEC1(log, Log)
THEON_VEC1(log1p, Log1p)
THEON_VEC1(expm1, Expm1)
#ifdef THEON_TANH_SCALAR
THEON_VEC1(tanh, Tanh)
#endif
THEON_VEC1(sin, Sin)
THEON_VEC1(cos, Cos)
// sigmoid and softplus, stable on both tails, from exp(-|a|) (the same formulas as the functors).
// Alias-safe (r may be a): a[i] is read before r[i] is written, the rest goes through t.
template <class T> THEON_HELPER void vec_sigmoid(const T* a, T* r, int64_t n) {
  alignas(64) T t[THEON_B];
  for (int64_t i = 0; i < n; ++i) t[i] = -(a[i] < 0 ? -a[i] : a[i]);
  vec_exp(t, t, n);
  for (int64_t i = 0; i < n; ++i) { const T x = a[i]; r[i] = (x >= 0 ? T(1) : t[i]) / (T(1) + t[i]); }
}
template <class T> THEON_HELPER void vec_softplus(const T* a, T* r, int64_t n) {
  alignas(64) T t[THEON_B];
  for (int64_t i = 0; i < n; ++i) t[i] = -(a[i] < 0 ? -a[i] : a[i]);
  vec_exp(t, t, n);
  vec_log1p(t, t, n);
  for (int64_t i = 0; i < n; ++i) { const T x = a[i]; r[i] = x > 0 ? x + t[i] : t[i]; }
}
)";

// Which ops go through a block-vector helper (float dtypes only).
const char* vector_helper(ScalarOpId id) {
  switch (id) {
    case ScalarOpId::Exp: return "vec_exp";
    case ScalarOpId::Log: return "vec_log";
    case ScalarOpId::Log1p: return "vec_log1p";
    case ScalarOpId::Expm1: return "vec_expm1";
    case ScalarOpId::Tanh: return "vec_tanh";
    case ScalarOpId::Sin: return "vec_sin";
    case ScalarOpId::Cos: return "vec_cos";
    case ScalarOpId::Sigmoid: return "vec_sigmoid";
    case ScalarOpId::Softplus: return "vec_softplus";
    case ScalarOpId::Pow: return "vec_pow";
    default: return nullptr;
  }
}

// What -march=native resolves to on this machine (part of the cache key).
const std::string& cpu_identity() {
  static const std::string id = [] {
    std::ifstream f("/proc/cpuinfo");
    std::string line, model, flags;
    while (std::getline(f, line)) {
      if (model.empty() && line.rfind("model name", 0) == 0) model = line;
      if (flags.empty() && line.rfind("flags", 0) == 0) flags = line;
      if (!model.empty() && !flags.empty()) break;
    }
    return model + "\n" + flags;
  }();
  return id;
}

std::string compiler_version(const std::string& cxx) {
  static std::mutex mutex;
  static std::map<std::string, std::string> versions;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = versions.find(cxx);
  if (it == versions.end()) {
    std::vector<std::string> argv = detail::split_words(cxx);
    argv.push_back("--version");
    it = versions.emplace(cxx, detail::run_capture(argv).output).first;
  }
  return it->second;
}

std::vector<std::string> compile_flags() {
  // No -fopenmp: the host runs the parallel loop (run_generated), which saves the compiler
  // outlining a parallel region per kernel (about a fifth of a module's compile time).
  std::vector<std::string> f = {"-std=c++20", "-O3", "-march=native", "-fPIC", "-shared", "-fno-math-errno", "-w"};
  if (have_sleef()) f.push_back("-DTHEON_SLEEF=1");
  return f;
}

// A kernel computes blocks [c0, c1) (see kernel_text); modules are built without OpenMP.
using KernelFn = void (*)(const int64_t* shape, char* const* ptrs, const int64_t* strides, int64_t c0, int64_t c1);

// The text every module starts with: block size, the scalar functors, the vector helpers.
const std::string& module_preamble() {
  static const std::string text = [] {
    std::string helpers = kPreamble;
    const std::string marker = "@THEON_TANH_F32@";
    helpers.replace(helpers.find(marker), marker.size(), detail::kTanhF32Source);
    return std::string("// generated by Theon (") + kCodegenVersion + ")\n#define THEON_B " + std::to_string(kBlock) +
           "\n" + scalar_header() + helpers + "using namespace theon::scalar;\n";
  }();
  return text;
}

std::string kernel_text(const Composite& op, int rank, const std::vector<uint32_t>& masks,
                        const std::vector<bool>& unit);

// What a kernel is specialised on (see the header): collapsed rank, per-operand broadcast mask
// and unit inner stride, and `key`, their spelling, which names the variant of one op.
struct Variant {
  int rank = 0;
  std::vector<uint32_t> masks;
  std::vector<bool> unit;
  std::string key;
};

// The variant of the collapsed iteration space `cs` with operand strides `st` (outputs first);
// false where generated code does not apply (collapsed rank above 4, or nothing to compute).
bool make_variant(const Shape& cs, const std::vector<Strides>& st, Variant& v) {
  v.rank = static_cast<int>(cs.size());
  if (v.rank > kMaxRank || shape_size(cs) == 0) return false;
  v.masks.clear();
  v.unit.clear();
  v.key = std::to_string(v.rank);
  for (auto& s : st) {
    uint32_t m = 0;
    for (int d = 0; d < v.rank; ++d)
      if (s[d] == 0) m |= 1u << d;
    v.masks.push_back(m);
    v.unit.push_back(s[v.rank - 1] == 1);
    v.key += ":" + std::to_string(m) + (v.unit.back() ? "u" : "s");
  }
  return true;
}

// One kernel to put in a module: its symbol is a hash of its text, so equal kernels (the same
// program and variant, from any function) are compiled and loaded once per process.
struct KernelSource {
  std::string symbol;
  std::string text;   // from the parameter list on (kernel_text)
  std::string label;  // the op, for a comment in the module and error messages
};

KernelSource kernel_source(const Composite& op, const Variant& v) {
  KernelSource k;
  k.text = kernel_text(op, v.rank, v.masks, v.unit);
  k.symbol = "theon_k" + detail::content_key(k.text);
  k.label = op.display() + " [" + v.key + "]";
  return k;
}

// Kernels and modules loaded in this process (never unloaded: kernels may be in use by other threads).
struct ModuleCache {
  using VariantKey = std::pair<const graph::Op*, std::string>;
  std::mutex mutex;
  std::map<std::string, KernelFn> by_symbol;  // by loaded_key(): one entry per distinct kernel
  // Modules built (or found on disk) and loaded, by cache folder and module name (build_module).
  detail::CompileOnceCache<bool> loaded;
  // Per (op instance, variant), for the run-time lookup. Every compilation of a function makes
  // new Composite instances, so an entry must not outlive its op: it holds the op weakly, a
  // hit counts only while the op lives (an expired entry's address may belong to a new op),
  // and entries of dead ops are swept as the table grows (amortised: at twice the size left
  // by the last sweep). A null kernel records a failed compile: that variant runs in the
  // interpreter from then on.
  std::map<VariantKey, std::pair<std::weak_ptr<const graph::Op>, KernelFn>> by_variant;
  size_t sweep_at = 16;

  // Under `mutex`: the kernel of a live entry, or false.
  bool find_variant(const VariantKey& key, KernelFn& fn) const {
    auto it = by_variant.find(key);
    if (it == by_variant.end() || it->second.first.expired()) return false;
    fn = it->second.second;
    return true;
  }
  // Under `mutex`: records (or replaces an expired) entry; `first_only` keeps a live one.
  void add_variant(VariantKey key, const std::shared_ptr<const graph::Op>& op, KernelFn fn, bool first_only) {
    if (by_variant.size() >= sweep_at) {
      std::erase_if(by_variant, [](const auto& e) { return e.second.first.expired(); });
      sweep_at = std::max<size_t>(16, 2 * by_variant.size());
    }
    auto [it, inserted] = by_variant.try_emplace(std::move(key), op, fn);
    if (!inserted && (!first_only || it->second.first.expired())) it->second = {op, fn};
  }
};

ModuleCache& modules() {
  static ModuleCache cache;
  return cache;
}

// Loaded kernels are looked up under the compiler (the plan's cxx) and cache folder in use as
// well as their symbol: with another compiler or compiledir, a kernel is built (or found) anew
// there, as the disk cache's key (which covers the compiler) would have it.
std::string loaded_key(const std::string& cxx, const std::string& symbol) {
  return cxx + "\n" + fused_cache_dir() + "\n" + symbol;
}

KernelFn find_kernel(const std::string& cxx, const std::string& symbol) {
  const std::string key = loaded_key(cxx, symbol);
  auto& mc = modules();
  std::lock_guard<std::mutex> lock(mc.mutex);
  auto it = mc.by_symbol.find(key);
  return it == mc.by_symbol.end() ? nullptr : it->second;
}

// Opens a verified module and registers its kernels; false with `error` set when it cannot
// be opened or lacks one of them.
bool load(const detail::VerifiedEntry& module, const std::vector<KernelSource>& kernels, const std::string& cxx,
          std::string& error) {
  void* h = dlopen(module.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    error = dlerror();
    return false;
  }
  std::vector<KernelFn> fns;
  for (auto& k : kernels) {
    auto fn = reinterpret_cast<KernelFn>(dlsym(h, k.symbol.c_str()));
    if (!fn) {
      error = "symbol " + k.symbol + " not found in " + module.path;
      return false;
    }
    fns.push_back(fn);
  }
  auto& mc = modules();
  std::lock_guard<std::mutex> lock(mc.mutex);
  for (size_t i = 0; i < kernels.size(); ++i) mc.by_symbol.emplace(loaded_key(cxx, kernels[i].symbol), fns[i]);
  return true;
}

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// build_module's work: the module `name` from the disk cache, else compiled from `source`,
// then loaded (its kernels registered); false with `error` set on failure.
//
// The module's bytes must be a function of its name (the key), or two processes compiling it
// at once would write different bytes: the compiler embeds the source's file name (a symbol,
// the build-id), so the source is always `module.cpp`, in a private folder of this compile,
// and -ffile-prefix-map hides that folder from what debug information a `cxx` with -g adds.
// Concurrent writers then converge in KernelCacheFolder::publish: the first verified entry
// wins, and the others load it.
bool compile_and_load(const std::string& source, const std::string& name, const std::string& cxx,
                      const std::vector<std::string>& flags, const std::vector<KernelSource>& kernels,
                      std::string& error) {
  const detail::KernelCacheFolder folder("cpu");
  if (detail::VerifiedEntry cached; folder.open(name, cached) && load(cached, kernels, cxx, error)) {
    ++g_loaded;
    return true;
  }
  const std::string work = folder.make_work_folder(name, error);
  if (work.empty()) return false;
  struct RemoveWhenDone {
    const std::string& path;
    ~RemoveWhenDone() {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  } remove_work{work};
  const std::string src = work + "/module.cpp", out = work + "/module.so", log = work + "/compile.log";
  {
    std::ofstream f(src);
    f << source;
    f.close();
    if (!f) {
      error = "cannot write " + src;
      return false;
    }
  }
  std::vector<std::string> argv = detail::split_words(cxx);
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {"-ffile-prefix-map=" + work + "=.", src, "-o", out});
  if (have_sleef()) argv.push_back("-lsleef");
  const detail::ProcessResult run = detail::run_program(argv, log);
  if (!run.ok()) {
    // The log outlives the work folder (each compile writes its own, so concurrent compiles
    // of one module do not mix theirs).
    const std::string kept = folder.log_path(name);
    std::error_code ec;
    fs::rename(log, kept, ec);
    error = "the compiler (" + cxx + ") failed" + (run.error.empty() ? " with exit code " + std::to_string(run.exit_code)
                                                                      : ": " + run.error) +
            "; its output is in " + kept + ":\n" + read_text(kept).substr(0, 2000);
    return false;
  }
  ++g_compiled;
  std::error_code ec;
  fs::remove(folder.log_path(name), ec);  // an earlier failure's log, now out of date
  detail::VerifiedEntry built;  // this module, or one another process put there first
  if (!folder.publish(out, name, built, error)) return false;
  return load(built, kernels, cxx, error);
}

// Compiles (or finds on disk) one module holding `kernels` and loads it; false with `error` set
// on failure. The cache key covers the whole source, so a module is reused only for exactly
// this set of kernels (a second process lowering the same function compiles nothing). In this
// process a module is built once per cache folder (ModuleCache::loaded: threads building it
// meanwhile wait for it; a failed build is retried by the next caller). The compiler runs
// without a shell; its output goes to a log that the error names.
bool build_module(std::vector<KernelSource> kernels, const std::string& cxx, std::string& error) {
  std::sort(kernels.begin(), kernels.end(), [](auto& a, auto& b) { return a.symbol < b.symbol; });
  std::string source = module_preamble();
  for (auto& k : kernels) source += "// " + k.label + "\nextern \"C\" void " + k.symbol + k.text;
  const std::vector<std::string> flags = compile_flags();
  std::string key_text = source + "\n" + cxx + "\n" + compiler_version(cxx) + "\n";
  for (auto& f : flags) key_text += f + " ";
  key_text += std::string("\n") + kCodegenVersion + "\n" + cpu_identity();
  const std::string name = detail::content_key(key_text) + ".so";
  try {
    modules().loaded.get(fused_cache_dir() + "\n" + name, [&] {
      std::string e;
      if (!compile_and_load(source, name, cxx, flags, kernels, e)) throw std::runtime_error(e);
      return true;
    });
    return true;
  } catch (const std::exception& e) {
    error = e.what();
    return false;
  }
}

// From this many kernels on, a batch is compiled as two modules by two compiler processes at
// once (the project's machines have 2 cores; see docs/BENCHMARKS.md COMPILE for the numbers).
constexpr size_t kSplitKernels = 8;

// Makes every kernel of `kernels` that this process has not loaded yet available, compiling
// what the disk cache lacks; a module that fails to build is retried kernel by kernel, so one
// bad kernel leaves the others compiled. `cxx` is the compiler (not empty). Returns the errors
// (empty: all loaded).
std::vector<std::string> build_kernels(const std::vector<KernelSource>& kernels, const std::string& cxx) {
  std::vector<KernelSource> todo;
  std::set<std::string> seen;
  for (auto& k : kernels)
    if (seen.insert(k.symbol).second && !find_kernel(cxx, k.symbol)) todo.push_back(k);
  std::vector<std::string> errors;
  if (todo.empty()) return errors;
  // (Exceptions, e.g. from the filesystem, become errors: this may run on a second thread.)
  auto attempt = [&cxx](const std::vector<KernelSource>& part, std::string& error) {
    try {
      return build_module(part, cxx, error);
    } catch (const std::exception& e) {
      error = e.what();
      return false;
    }
  };
  auto build_or_split = [&errors, &attempt](std::vector<KernelSource> part, std::mutex& m) {
    std::string error;
    if (attempt(part, error)) return;
    std::vector<std::string> errs;
    if (part.size() == 1) {
      errs.push_back(part[0].label + ": " + error);
    } else {
      for (auto& k : part)
        if (std::string e; !attempt({k}, e)) errs.push_back(k.label + ": " + e);
    }
    std::lock_guard<std::mutex> lock(m);
    errors.insert(errors.end(), errs.begin(), errs.end());
  };
  std::mutex m;
  if (todo.size() < kSplitKernels) {
    build_or_split(std::move(todo), m);
    return errors;
  }
  // Two halves of about equal source size, chosen from the kernels alone (sorted by symbol,
  // largest first into the smaller half) so that another process makes the same two modules.
  std::sort(todo.begin(), todo.end(), [](auto& a, auto& b) {
    return a.text.size() != b.text.size() ? a.text.size() > b.text.size() : a.symbol < b.symbol;
  });
  std::vector<KernelSource> half[2];
  size_t bytes[2] = {0, 0};
  for (auto& k : todo) {
    const int h = bytes[0] <= bytes[1] ? 0 : 1;
    bytes[h] += k.text.size();
    half[h].push_back(std::move(k));
  }
  std::thread other([&] { build_or_split(std::move(half[1]), m); });
  build_or_split(std::move(half[0]), m);
  other.join();
  return errors;
}

// The strides an operand is expected to have at run time, judged from the graph alone: a chain
// of DimShuffles over a contiguous array (transposes, added broadcast dims), else contiguous.
// `shape` is the operand's expected shape; dims of size 1 broadcast (stride 0).
Strides expected_strides(const graph::Variable* v, const Shape& shape) {
  Strides s(shape.size(), 0);
  if (v->owner && v->owner->inputs().size() == 1) {
    if (auto* ds = graph::op_if<ops::DimShuffle>(v->owner->op())) {
      const graph::Variable* src = v->owner->inputs()[0].get();
      const auto& pat = ds->pattern();
      if (pat.size() == shape.size() && src->type.ndim() == ds->input_ndim()) {
        Shape src_shape(ds->input_ndim(), 1);
        for (size_t i = 0; i < pat.size(); ++i)
          if (pat[i] >= 0) src_shape[pat[i]] = shape[i];
        const Strides ss = expected_strides(src, src_shape);
        for (size_t i = 0; i < pat.size(); ++i) s[i] = pat[i] < 0 || shape[i] == 1 ? 0 : ss[pat[i]];
        return s;
      }
    }
  }
  int64_t step = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    s[d] = shape[d] == 1 ? 0 : step;
    step *= shape[d];
  }
  return s;
}

// The variant a Composite node will most likely run with, from static types: unknown dims are
// taken as "not 1" (distinct sizes), outputs contiguous, inputs as expected_strides says. A
// run-time size-1 dim the type did not promise, or a view other than a DimShuffle, makes
// another variant, compiled when first seen.
// For a FusedReduce, the variant its region's kernel gets for a chunk (a contiguous scratch
// output over the inputs' broadcast; inputs are sliced only along a dim, keeping their strides).
bool expected_variant(const graph::Apply& node, Variant& v) {
  const bool reduce = graph::op_if<ops::FusedReduce>(node.op()) != nullptr;
  std::vector<int64_t> dims;
  if (reduce) {
    std::vector<const graph::TensorType*> types;
    for (auto& in : node.inputs()) types.push_back(&in->type);
    try {
      dims = graph::broadcast_static_dims(types, node.op().display());
    } catch (const Error&) {
      return false;
    }
  } else {
    dims = node.output_raw(0)->type.dims;
  }
  const int rank = static_cast<int>(dims.size());
  static constexpr int64_t kGeneric[] = {7, 11, 13, 17, 19, 23, 29, 31};
  Shape full(rank);
  for (int d = 0; d < rank; ++d) full[d] = dims[d] >= 0 ? dims[d] : kGeneric[d % 8];
  std::vector<Strides> st;
  if (reduce) {
    st.push_back(expected_strides(node.output_raw(0), full));  // not a DimShuffle: contiguous
  } else {
    for (int i = 0; i < node.num_outputs(); ++i) {
      if (node.output_raw(i)->type.dims != dims) return false;  // interpreter at run time
      st.push_back(expected_strides(node.output_raw(i), full));
    }
  }
  for (auto& in : node.inputs()) {
    if (in->type.ndim() != rank) return false;
    Shape shape(rank);
    for (int d = 0; d < rank; ++d) shape[d] = in->type.dims[d] == 1 ? 1 : full[d];
    Strides s = expected_strides(in.get(), shape);
    for (int d = 0; d < rank; ++d)
      if (shape[d] == 1) s[d] = 0;  // broadcast_strides
    st.push_back(std::move(s));
  }
  Shape cs = full;
  detail::collapse_dims(cs, st);
  return make_variant(cs, st, v);
}

void warn_compile_failed(const std::string& error) {
  warn_once("fail:" + error.substr(0, 200),
            "compiling a fused kernel failed; the interpreter runs instead: " + error);
}

// A large output is usually a fresh allocation (the executor hands the previous call's output
// to the caller, so nothing recycles it) that the kernel is about to touch for the first time:
// 4 KiB page faults then cost as much as the arithmetic (64 MiB: 16K faults). Asking for
// transparent huge pages on its 2 MiB-aligned interior (as numpy does for its arrays) makes that
// 32 faults where THP is "madvise"; where it is "always" or "never" this changes nothing.
void advise_huge_pages(const Array& a) {
  constexpr uintptr_t kHuge = uintptr_t{1} << 21;
  const size_t bytes = a.nbytes();
  if (bytes < 2 * kHuge || !a.is_contiguous()) return;
  const auto p = reinterpret_cast<uintptr_t>(a.data());
  const uintptr_t lo = (p + kHuge - 1) & ~(kHuge - 1), hi = (p + bytes) & ~(kHuge - 1);
#ifdef MADV_HUGEPAGE
  if (hi > lo) madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE);
#endif
}

// Runs `op`'s generated kernel for the variant these arrays make (compiling it with `cxx` if
// lowering did not foresee it); false when generated code does not apply or failed to build,
// and then the caller runs the interpreter. `keep` owns `op` (the variant cache holds it
// weakly; an op instance belongs to one compiled function, hence to one cxx).
bool run_generated(const Composite& op, const std::shared_ptr<const graph::Op>& keep, const std::string& cxx,
                   const std::vector<Array>& inputs, std::vector<Array>& outputs) {
  const Shape& full = outputs[0].shape();
  for (auto& o : outputs)
    if (o.shape() != full) return false;  // an output smaller than the region: interpreter
  for (auto& a : inputs)
    if (a.dtype() == DType::BFloat16) return false;
  std::vector<Strides> st;
  for (auto& o : outputs) st.push_back(o.strides());
  for (auto& a : inputs) st.push_back(detail::broadcast_strides(a, full));
  Shape cs = full;
  detail::collapse_dims(cs, st);
  Variant v;
  if (!make_variant(cs, st, v)) return false;  // rank > 4 or empty: the interpreter (returns at once when empty)
  KernelFn fn = nullptr;
  auto& mc = modules();
  const std::pair<const graph::Op*, std::string> vkey{&op, v.key};
  bool found = false;
  {
    std::lock_guard<std::mutex> lock(mc.mutex);
    found = mc.find_variant(vkey, fn);
  }
  if (!found) {  // a variant lowering did not foresee (prepare_fused_kernels): compiled alone
    try {
      const KernelSource k = kernel_source(op, v);
      for (auto& e : build_kernels({k}, cxx)) warn_compile_failed(e);
      fn = find_kernel(cxx, k.symbol);
    } catch (const Error& e) {
      warn_compile_failed(op.display() + ": " + e.what());
    }
    std::lock_guard<std::mutex> lock(mc.mutex);
    mc.add_variant(vkey, keep, fn, /*first_only=*/false);
  }
  if (!fn) return false;
  // Per-thread argument arrays (kernel objects are shared by every Function and thread).
  static thread_local std::vector<int64_t> shape, strides;
  static thread_local std::vector<char*> ptrs;
  shape.assign(cs.begin(), cs.end());
  strides.assign(st.size() * kMaxRank, 0);
  for (size_t k = 0; k < st.size(); ++k)
    for (int d = 0; d < v.rank; ++d) strides[k * kMaxRank + d] = st[k][d];
  ptrs.clear();
  for (auto& o : outputs) {
    ptrs.push_back(static_cast<char*>(o.data()));
    advise_huge_pages(o);
  }
  for (auto& a : inputs) ptrs.push_back(static_cast<char*>(a.data()));
  // Blocks of B elements along the inner dim, handed out dynamically in groups of about 16K
  // elements from parallel_threads' threshold up (parallel.hpp): a thread that the OS
  // deschedules (a shared machine) then costs its share of one group, not half the call. (The same schedule the kernels had as
  // `omp parallel for schedule(dynamic, grain)` when they were compiled with OpenMP.)
  const int64_t n = cs.back(), rows = shape_size(cs) / n;
  const int64_t total = rows * ((n + kBlock - 1) / kBlock);
  const int64_t grain = n < kBlock ? (16384 + n - 1) / n : 16384 / kBlock;
  const int64_t* sh = shape.data();
  char* const* pp = ptrs.data();
  const int64_t* sp = strides.data();
  const int threads = total > 1 ? parallel_threads(rows * n) : 1;
  if (threads > 1) {
    const int64_t groups = (total + grain - 1) / grain;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (int64_t g = 0; g < groups; ++g) fn(sh, pp, sp, g * grain, std::min(total, (g + 1) * grain));
  } else {
    fn(sh, pp, sp, 0, total);
  }
  return true;
}

// The Composite's interpreter, for a variant generated code does not cover or when `cxx` is empty.
void interpret(const Composite& op, const graph::Apply& node, const std::string& cxx, const std::vector<Array>& inputs,
               std::vector<Array>& outputs) {
  if (cxx.empty())
    warn_once("cxx", "config cxx is empty (no C++ compiler): Composite nodes run in the interpreter");
  ++g_interpreted;
  run_composite(op, node, inputs, outputs);
}

class FusedKernel final : public Kernel {
 public:
  std::string name() const override { return "fused_cpu"; }
  void run(const KernelPlan* plan, const ExecContext&, const graph::Apply& node, const std::vector<Array>& inputs,
           std::vector<Array>& outputs) const override {
    const auto& op = static_cast<const Composite&>(node.op());
    const std::string& cxx = options_of(plan).cxx;
    if (!cxx.empty() && run_generated(op, node.op_ptr(), cxx, inputs, outputs)) return;
    interpret(op, node, cxx, inputs, outputs);
  }
};

// A reduction with its elementwise region: the region's generated kernel fills each chunk
// (ops/fused_reduce.hpp), the shared driver (reduce_cpu.cpp) folds it into the accumulators.
class FusedReduceKernel final : public Kernel {
 public:
  std::string name() const override { return "fused_reduce_cpu"; }
  void run(const KernelPlan* plan, const ExecContext&, const graph::Apply& node, const std::vector<Array>& inputs,
           std::vector<Array>& outputs) const override {
    const auto& op = static_cast<const ops::FusedReduce&>(node.op());
    const std::string& cxx = options_of(plan).cxx;
    run_fused_reduce(op, node, inputs, outputs, [&](const std::vector<Array>& in, Array& out) {
      std::vector<Array> outs{out};
      if (!cxx.empty() && run_generated(op.region(), op.region_ptr(), cxx, in, outs)) return;
      interpret(op.region(), node, cxx, in, outs);
    });
  }
};

// The kernel function of one variant, from its parameter list on (the caller names it):
// "(const int64_t* shape, char* const* ptrs, const int64_t* strides) { ... }".
std::string kernel_text(const Composite& op, int rank, const std::vector<uint32_t>& masks,
                        const std::vector<bool>& unit) {
  const int ni = op.num_inputs();
  const int no = static_cast<int>(op.outputs().size());
  const auto& prog = op.program();
  const int nv = ni + static_cast<int>(prog.size());
  const int inner = rank - 1;
  std::ostringstream s;
  // The kernel runs blocks [c0, c1) of the iteration space (blocks of B elements along the
  // inner dim, rows in row-major order); the host hands out the ranges (run_generated).
  s << "(const int64_t* shape, char* const* ptrs, const int64_t* strides, int64_t c0, int64_t c1) {\n";
  s << "  constexpr int64_t B = THEON_B;\n";
  s << "  const int64_t n = shape[" << inner << "];\n";
  s << "  const int64_t cpr = (n + B - 1) / B;\n";
  s << "  (void)strides; (void)cpr;\n";
  s << "  for (int64_t c = c0; c < c1; ++c) {\n";
  if (rank == 1) {
    s << "    const int64_t start = c * B, len = n - start < B ? n - start : B;\n";
  } else {
    s << "    const int64_t start = (c % cpr) * B, len = n - start < B ? n - start : B;\n";
    s << "    int64_t rem = c / cpr;\n";
    for (int d = rank - 2; d >= 0; --d)
      s << "    const int64_t i" << d << " = rem % shape[" << d << "]; rem /= shape[" << d << "];\n";
    s << "    (void)rem;\n";
  }
  // Operand base pointers (outputs k < no, inputs no + j).
  auto dt_of_operand = [&](int k) { return k < no ? op.value_dtype(op.outputs()[k]) : op.input_dtypes()[k - no]; };
  for (int k = 0; k < no + ni; ++k) {
    const std::string t = ctype(dt_of_operand(k));
    s << "    " << (k < no ? "" : "const ") << t << "* p" << k << " = reinterpret_cast<" << (k < no ? "" : "const ") << t
      << "*>(ptrs[" << k << "])";
    for (int d = 0; d < inner; ++d)
      if (!(masks[k] & (1u << d))) s << " + i" << d << " * strides[" << k * kMaxRank + d << "]";
    if (!(masks[k] & (1u << inner))) {
      if (unit[k]) s << " + start";
      else s << " + start * strides[" << k * kMaxRank + inner << "]";
    }
    s << ";\n";
  }
  // Last instruction reading each value (-1: none); a value's scratch block is free after it.
  std::vector<int> last_use(nv, -1);
  for (size_t q = 0; q < prog.size(); ++q)
    for (int a : prog[q].args) last_use[a] = static_cast<int>(q);
  // Which instruction results are computed straight into an output (unit inner stride): the
  // first output naming a value gets it. With an inplace op, output 0 shares the destroyed
  // input's buffer, so it is written directly only when no later instruction reads that input.
  std::vector<int> direct_out(nv, -1);
  for (int k = 0; k < no; ++k) {
    const int v = op.outputs()[k];
    if (v < ni || direct_out[v] >= 0 || !unit[k] || (masks[k] & (1u << inner))) continue;
    if (op.inplace() >= 0 && k == 0 && last_use[op.inplace()] > v - ni) continue;
    direct_out[v] = k;
  }
  // An output copied out of its scratch block keeps that block to the end.
  for (int k = 0; k < no; ++k)
    if (op.outputs()[k] >= ni && direct_out[op.outputs()[k]] != k) last_use[op.outputs()[k]] = static_cast<int>(prog.size());
  // Inputs: a scalar when broadcast along the inner dim, the pointer itself when unit-stride,
  // else gathered into a block.
  std::vector<bool> uniform(nv, false);
  std::vector<std::string> ref(nv);  // element i of a value, or its scalar
  std::vector<std::string> base(nv);
  for (int j = 0; j < ni; ++j) {
    const int k = no + j;
    const std::string t = ctype(op.input_dtypes()[j]);
    if (masks[k] & (1u << inner)) {
      uniform[j] = true;
      s << "    const " << t << " x" << j << " = p" << k << "[0];\n";
      ref[j] = "x" + std::to_string(j);
    } else if (unit[k]) {
      base[j] = "p" + std::to_string(k);
      ref[j] = base[j] + "[i]";
    } else {
      s << "    alignas(64) " << t << " g" << j << "[B];\n";
      s << "    for (int64_t i = 0; i < len; ++i) g" << j << "[i] = p" << k << "[i * strides[" << k * kMaxRank + inner
        << "]];\n";
      base[j] = "g" + std::to_string(j);
      ref[j] = base[j] + "[i]";
    }
  }
  // Scratch blocks, reused once their value is dead (every helper is elementwise alias-safe,
  // so a result may take the block of an argument read for the last time).
  std::vector<std::pair<std::string, bool>> slots;  // (ctype, in use)
  std::vector<int> slot_of(nv, -1);
  std::ostringstream body;
  for (size_t q = 0; q < prog.size(); ++q) {
    const auto& in = prog[q];
    const int v = ni + static_cast<int>(q);
    const std::string t = ctype(in.dtype);
    bool all_uniform = true;
    for (int a : in.args) all_uniform = all_uniform && uniform[a];
    const ScalarKind kind = ops::scalar_op_info(in.op).kind;
    auto call = [&]() {  // the instruction over its arguments' references (element i, or scalars)
      std::vector<std::string> args;
      for (int a : in.args) args.push_back(ref[a]);
      return instruction_expr(in, args, Dialect::Cpu);
    };
    if (all_uniform) {
      uniform[v] = true;
      direct_out[v] = -1;  // a scalar: the copy loop below fills its output
      body << "    " << value_statement(v, in.dtype, call(), Dialect::Cpu) << "\n";
      ref[v] = value_name(v);
      continue;
    }
    for (int a : in.args)
      if (slot_of[a] >= 0 && last_use[a] == static_cast<int>(q)) slots[slot_of[a]].second = false;
    std::string name;
    if (direct_out[v] >= 0) {
      name = "p" + std::to_string(direct_out[v]);
    } else {
      int sl = -1;
      for (size_t z = 0; z < slots.size() && sl < 0; ++z)
        if (!slots[z].second && slots[z].first == t) sl = static_cast<int>(z);
      if (sl < 0) {
        sl = static_cast<int>(slots.size());
        slots.push_back({t, false});
      }
      slots[sl].second = true;
      slot_of[v] = sl;
      name = "s" + std::to_string(sl);
    }
    base[v] = name;
    // A bool block is stored as unsigned char (0 or 1) and read back through a cast: GCC has
    // no vector type for bool loads, so a loop reading a bool block (the mask of relu's
    // gradient, switch(x > 0, g, 0)) ran one element and one branch at a time.
    const bool byte_block = in.dtype == DType::Bool && direct_out[v] < 0;
    const char* helper = vector_helper(in.op);
    const bool float_t = in.dtype == DType::Float32 || in.dtype == DType::Float64;
    bool args_arrays = true;
    for (int a : in.args) args_arrays = args_arrays && !uniform[a];
    if (helper && float_t && (kind != ScalarKind::Arith || in.op == ScalarOpId::Pow) && args_arrays) {
      body << "    " << helper << "(";
      for (int a : in.args) body << base[a] << ", ";
      body << name << ", len);\n";
    } else {
      body << "    for (int64_t i = 0; i < len; ++i) " << name << "[i] = " << call() << ";\n";
    }
    ref[v] = byte_block ? "static_cast<bool>(" + name + "[i])" : name + "[i]";
  }
  for (size_t z = 0; z < slots.size(); ++z)
    s << "    alignas(64) " << (slots[z].first == "bool" ? std::string("unsigned char") : slots[z].first) << " s" << z
      << "[B];\n";
  s << body.str();
  for (int k = 0; k < no; ++k) {
    const int v = op.outputs()[k];
    if (direct_out[v] == k) continue;
    const std::string src = ref[v];
    if (unit[k]) s << "    for (int64_t i = 0; i < len; ++i) p" << k << "[i] = " << src << ";\n";
    else s << "    for (int64_t i = 0; i < len; ++i) p" << k << "[i * strides[" << k * kMaxRank + inner << "]] = " << src << ";\n";
  }
  s << "  }\n}\n";
  return s.str();
}

}  // namespace

std::string fused_source(const Composite& op, int rank, const std::vector<uint32_t>& masks,
                         const std::vector<bool>& unit) {
  // A standalone module (bench/w5_kernel_probe compiles it with -fopenmp): the block-range
  // kernel plus theon_fused_kernel(shape, ptrs, strides), which runs every block with the
  // schedule run_generated uses.
  return module_preamble() + "// " + op.display() + "\nstatic void theon_fused_range" +
         kernel_text(op, rank, masks, unit) +
         "extern \"C\" void theon_fused_kernel(const int64_t* shape, char* const* ptrs, const int64_t* strides) {\n"
         "  const int64_t n = shape[" + std::to_string(rank - 1) + "];\n"
         "  int64_t rows = 1;\n"
         "  for (int d = 0; d < " + std::to_string(rank - 1) + "; ++d) rows *= shape[d];\n"
         "  const int64_t total = rows * ((n + THEON_B - 1) / THEON_B);\n"
         "  const int64_t grain = n < THEON_B ? (16384 + n - 1) / n : 16384 / THEON_B;\n"
         "#pragma omp parallel for schedule(dynamic, grain) if (rows * n >= (1 << 15) && total > 1)\n"
         "  for (int64_t c = 0; c < total; ++c) theon_fused_range(shape, ptrs, strides, c, c + 1);\n"
         "}\n";
}

void prepare_fused_kernels(const std::vector<const graph::Apply*>& nodes, const KernelOptions& options) {
  const std::string& cxx = options.cxx;
  if (cxx.empty()) return;  // the interpreter runs; nothing to compile
  struct Pending {
    std::shared_ptr<const graph::Op> op;  // the Composite whose kernel this is
    std::string variant, symbol;
  };
  std::vector<Pending> pending;
  std::vector<KernelSource> kernels;
  auto& mc = modules();
  for (auto& node : nodes) {
    const Composite* op = graph::op_if<Composite>(node->op());
    std::shared_ptr<const graph::Op> keep = node->op_ptr();
    if (auto* fr = graph::op_if<ops::FusedReduce>(node->op())) {
      op = &fr->region();
      keep = fr->region_ptr();
    }
    Variant v;
    if (!op || !expected_variant(*node, v)) continue;
    {
      std::lock_guard<std::mutex> lock(mc.mutex);
      KernelFn known;
      if (mc.find_variant({op, v.key}, known)) continue;  // this op instance is already prepared
    }
    try {
      KernelSource k = kernel_source(*op, v);
      pending.push_back({keep, v.key, k.symbol});
      kernels.push_back(std::move(k));
    } catch (const Error&) {
      // A dtype generated code does not handle: run time finds the same and interprets.
    }
  }
  if (kernels.empty()) return;
  for (auto& e : build_kernels(kernels, cxx)) warn_compile_failed(e);
  for (auto& p : pending) {
    KernelFn fn = find_kernel(cxx, p.symbol);
    std::lock_guard<std::mutex> lock(mc.mutex);
    mc.add_variant({p.op.get(), p.variant}, p.op, fn, /*first_only=*/true);
  }
}

std::string fused_cache_dir() { return detail::kernel_cache_dir("cpu"); }

FusedStats fused_stats() { return {g_compiled.load(), g_loaded.load(), g_interpreted.load()}; }

void register_fused_kernels(CpuBackend& backend) {
  backend.register_kernel(graph::OpKind::Composite, std::make_unique<FusedKernel>());
  backend.register_kernel(graph::OpKind::FusedReduce, std::make_unique<FusedReduceKernel>());
}

}  // namespace theon::backends::cpu
