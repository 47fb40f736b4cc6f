#include "backends/cpu/fused_cpu.hpp"

#include "ops/composite.hpp"
#include "util/strided.hpp"

#include <theon/config.hpp>
#include <theon/error.hpp>

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

namespace theon::detail {
extern const char* const kScalarOpsHeader;
}

namespace theon::backends::cpu {
namespace {

namespace fs = std::filesystem;
using ops::Composite;
using ops::ScalarKind;
using ops::ScalarOpId;

constexpr const char* kCodegenVersion = "theon-fused-cpu-2";
constexpr int kMaxRank = 4;
constexpr int kBlock = 128;  // elements per block: scratch blocks stay in L1 (measured: 64-128 beat 512 by ~10% on W5)

std::atomic<int64_t> g_compiled{0}, g_loaded{0}, g_interpreted{0};

void warn_once(const std::string& key, const std::string& message) {
  static std::mutex mutex;
  static std::set<std::string> warned;
  std::lock_guard<std::mutex> lock(mutex);
  if (warned.insert(key).second) std::cerr << "theon: warning: " << message << "\n";
}

std::string ctype(DType t) {
  switch (t) {
    case DType::Bool: return "bool";
    case DType::Int8: return "int8_t";
    case DType::Int16: return "int16_t";
    case DType::Int32: return "int32_t";
    case DType::Int64: return "int64_t";
    case DType::UInt8: return "uint8_t";
    case DType::Float32: return "float";
    case DType::Float64: return "double";
    default: break;
  }
  throw NotImplementedError("fused CPU kernels: dtype " + std::string(dtype_name(t)) + " is not supported");
}

std::string functor(ScalarOpId id) {
  switch (id) {
#define THEON_SCALAR_OP(f, name, arity, kind) \
  case ScalarOpId::f: return #f;
#include "ops/scalar/scalar_ops.def"
#undef THEON_SCALAR_OP
    case ScalarOpId::Count: break;
  }
  return "";
}

// The scalar functors, pasted into every generated module so fused and unfused kernels
// share one definition (and the cache key covers it).
const std::string& scalar_header() {
  static const std::string text = [] {
    std::string s = detail::kScalarOpsHeader;  // embedded at build time (CMakeLists.txt)
    if (auto pos = s.find("#pragma once"); pos != std::string::npos) s.erase(pos, 12);
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
  static inline void vec_##fn(const float* a, float* r, int64_t n) {                         \
    int64_t i = 0;                                                                           \
    for (; i + THEON_VF <= n; i += THEON_VF) STF(r + i, SLF(fn)(LDF(a + i)));                \
    if (i < n) { alignas(64) float t[THEON_VF] = {}; std::memcpy(t, a + i, (n - i) * 4);     \
      STF(t, SLF(fn)(LDF(t))); std::memcpy(r + i, t, (n - i) * 4); }                         \
  }                                                                                          \
  static inline void vec_##fn(const double* a, double* r, int64_t n) {                       \
    int64_t i = 0;                                                                           \
    for (; i + THEON_VD <= n; i += THEON_VD) STD(r + i, SLD(fn)(LDD(a + i)));                \
    if (i < n) { alignas(64) double t[THEON_VD] = {}; std::memcpy(t, a + i, (n - i) * 8);    \
      STD(t, SLD(fn)(LDD(t))); std::memcpy(r + i, t, (n - i) * 8); }                         \
  }
static inline void vec_pow(const float* a, const float* b, float* r, int64_t n) {
  int64_t i = 0;
  for (; i + THEON_VF <= n; i += THEON_VF) STF(r + i, SLF(pow)(LDF(a + i), LDF(b + i)));
  if (i < n) { alignas(64) float t[THEON_VF] = {}, u[THEON_VF] = {}; std::memcpy(t, a + i, (n - i) * 4);
    std::memcpy(u, b + i, (n - i) * 4); STF(t, SLF(pow)(LDF(t), LDF(u))); std::memcpy(r + i, t, (n - i) * 4); }
}
static inline void vec_pow(const double* a, const double* b, double* r, int64_t n) {
  int64_t i = 0;
  for (; i + THEON_VD <= n; i += THEON_VD) STD(r + i, SLD(pow)(LDD(a + i), LDD(b + i)));
  if (i < n) { alignas(64) double t[THEON_VD] = {}, u[THEON_VD] = {}; std::memcpy(t, a + i, (n - i) * 8);
    std::memcpy(u, b + i, (n - i) * 8); STD(t, SLD(pow)(LDD(t), LDD(u))); std::memcpy(r + i, t, (n - i) * 8); }
}
#define THEON_HAVE_VEC 1
#else
#define THEON_VEC1(fn, F)                                                                    \
  template <class T> static inline void vec_##fn(const T* a, T* r, int64_t n) {             \
    for (int64_t i = 0; i < n; ++i) r[i] = theon::scalar::F{}(a[i]);                          \
  }
template <class T> static inline void vec_pow(const T* a, const T* b, T* r, int64_t n) {
  for (int64_t i = 0; i < n; ++i) r[i] = theon::scalar::Pow{}(a[i], b[i]);
}
#endif
THEON_VEC1(exp, Exp)
THEON_VEC1(log, Log)
THEON_VEC1(log1p, Log1p)
THEON_VEC1(expm1, Expm1)
THEON_VEC1(tanh, Tanh)
THEON_VEC1(sin, Sin)
THEON_VEC1(cos, Cos)
// sigmoid and softplus, stable on both tails, from exp(-|a|) (the same formulas as the functors).
// Alias-safe (r may be a): a[i] is read before r[i] is written, the rest goes through t.
template <class T> static inline void vec_sigmoid(const T* a, T* r, int64_t n) {
  alignas(64) T t[THEON_B];
  for (int64_t i = 0; i < n; ++i) t[i] = -(a[i] < 0 ? -a[i] : a[i]);
  vec_exp(t, t, n);
  for (int64_t i = 0; i < n; ++i) { const T x = a[i]; r[i] = (x >= 0 ? T(1) : t[i]) / (T(1) + t[i]); }
}
template <class T> static inline void vec_softplus(const T* a, T* r, int64_t n) {
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

std::string hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

uint64_t fnv1a(const std::string& s, uint64_t h) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string run_capture(const std::string& cmd) {
  std::string out;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[512];
    while (fgets(buf, sizeof buf, p)) out += buf;
    pclose(p);
  }
  return out;
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
  if (it == versions.end()) it = versions.emplace(cxx, run_capture(cxx + " --version 2>/dev/null")).first;
  return it->second;
}

std::string compile_flags() {
  std::string f = "-std=c++20 -O3 -march=native -fPIC -shared -fopenmp -fno-math-errno -w";
  if (have_sleef()) f += " -DTHEON_SLEEF=1";
  return f;
}

using KernelFn = void (*)(const int64_t* shape, char* const* ptrs, const int64_t* strides);

// Loaded modules by their path in the cache (never unloaded: kernels may be in use by other threads).
struct ModuleCache {
  std::mutex mutex;
  std::map<std::string, KernelFn> by_hash;
  // Per (op instance, variant): the op is kept alive so its address is never reused.
  std::map<std::pair<const graph::Op*, std::string>, std::pair<std::shared_ptr<const graph::Op>, KernelFn>> by_variant;
};

ModuleCache& modules() {
  static ModuleCache cache;
  return cache;
}

KernelFn load(const std::string& path, std::string& error) {
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    error = dlerror();
    return nullptr;
  }
  auto fn = reinterpret_cast<KernelFn>(dlsym(h, "theon_fused_kernel"));
  if (!fn) error = "symbol theon_fused_kernel not found in " + path;
  return fn;
}

// Compiles (or finds on disk) the module for `source`; null with `error` set on failure.
KernelFn build(const std::string& source, std::string& error) {
  const std::string cxx = config().cxx;
  const std::string flags = compile_flags();
  const std::string key_text = source + "\n" + cxx + "\n" + compiler_version(cxx) + "\n" + flags + "\n" +
                               kCodegenVersion + "\n" + cpu_identity();
  const std::string key = hex(fnv1a(key_text, 14695981039346656037ull)) + hex(fnv1a(key_text, 0x9e3779b97f4a7c15ull));
  const fs::path dir = fused_cache_dir();
  const fs::path so = dir / (key + ".so");
  auto& mc = modules();
  {
    std::lock_guard<std::mutex> lock(mc.mutex);
    if (auto it = mc.by_hash.find(so.string()); it != mc.by_hash.end()) return it->second;
  }
  KernelFn fn = nullptr;
  if (fs::exists(so)) {
    fn = load(so.string(), error);
    if (fn) ++g_loaded;
  }
  if (!fn) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    const std::string tmp = (dir / (key + "." + std::to_string(getpid()) + "." + hex(reinterpret_cast<uintptr_t>(&source)))).string();
    {
      std::ofstream f(tmp + ".cpp");
      f << source;
      if (!f) {
        error = "cannot write " + tmp + ".cpp";
        return nullptr;
      }
    }
    std::string cmd = cxx + " " + flags + " " + tmp + ".cpp -o " + tmp + ".so" + (have_sleef() ? " -lsleef" : "") +
                      " > " + tmp + ".log 2>&1";
    int rc = std::system(cmd.c_str());
    if (rc != 0) {
      std::ifstream log(tmp + ".log");
      std::stringstream ss;
      ss << log.rdbuf();
      error = "'" + cmd + "' failed: " + ss.str().substr(0, 2000);
      fs::remove(tmp + ".cpp", ec);
      fs::remove(tmp + ".log", ec);
      fs::remove(tmp + ".so", ec);
      return nullptr;
    }
    ++g_compiled;
    fs::rename(tmp + ".so", so, ec);  // atomic: parallel processes share the cache
    if (ec) {
      error = "cannot move the module into the cache: " + ec.message();
      return nullptr;
    }
    fs::remove(tmp + ".cpp", ec);
    fs::remove(tmp + ".log", ec);
    fn = load(so.string(), error);
    if (!fn) return nullptr;
  }
  std::lock_guard<std::mutex> lock(mc.mutex);
  mc.by_hash.emplace(so.string(), fn);
  return fn;
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

class FusedKernel final : public Kernel {
 public:
  std::string name() const override { return "fused_cpu"; }
  void run(const KernelPlan*, const graph::Apply& node, const std::vector<Array>& inputs,
           std::vector<Array>& outputs) const override {
    const auto& op = static_cast<const Composite&>(node.op());
    if (KernelFn fn = config().cxx.empty() ? nullptr : prepare_call(node, op, inputs, outputs)) {
      fn(shape_.data(), ptrs_.data(), strides_.data());
      return;
    }
    if (config().cxx.empty())
      warn_once("cxx", "config cxx is empty (no C++ compiler): Composite nodes run in the interpreter");
    ++g_interpreted;
    ops::run_composite(op, node, inputs, outputs);
  }

 private:
  // Per-thread scratch of the current call (the kernel object is shared by every Function).
  static thread_local std::vector<int64_t> shape_, strides_;
  static thread_local std::vector<char*> ptrs_;

  KernelFn prepare_call(const graph::Apply& node, const Composite& op, const std::vector<Array>& inputs,
                        std::vector<Array>& outputs) const {
    const Shape& full = outputs[0].shape();
    for (auto& o : outputs)
      if (o.shape() != full) return nullptr;  // an output smaller than the region: interpreter
    for (auto& a : inputs)
      if (a.dtype() == DType::Float16 || a.dtype() == DType::BFloat16) return nullptr;
    std::vector<Strides> st;
    for (auto& o : outputs) st.push_back(o.strides());
    for (auto& a : inputs) st.push_back(detail::broadcast_strides(a, full));
    Shape cs = full;
    detail::collapse_dims(cs, st);
    const int rank = static_cast<int>(cs.size());
    if (rank > kMaxRank) return nullptr;
    if (shape_size(cs) == 0) return nullptr;  // nothing to do; the interpreter returns at once
    std::vector<uint32_t> masks;
    std::vector<bool> unit;
    std::string variant = std::to_string(rank);
    for (auto& s : st) {
      uint32_t m = 0;
      for (int d = 0; d < rank; ++d)
        if (s[d] == 0) m |= 1u << d;
      masks.push_back(m);
      unit.push_back(s[rank - 1] == 1);
      variant += ":" + std::to_string(m) + (unit.back() ? "u" : "s");
    }
    KernelFn fn = nullptr;
    auto& mc = modules();
    const std::pair<const graph::Op*, std::string> vkey{&op, variant};
    bool found = false;
    {
      std::lock_guard<std::mutex> lock(mc.mutex);
      if (auto it = mc.by_variant.find(vkey); it != mc.by_variant.end()) {
        fn = it->second.second;
        found = true;
      }
    }
    if (!found) {
      std::string error;
      try {
        fn = build(fused_source(op, rank, masks, unit), error);
      } catch (const Error& e) {
        error = e.what();
      }
      if (!fn)
        warn_once("fail:" + error.substr(0, 200), "compiling a fused kernel failed (" + node.op().display() +
                                                      "); the interpreter runs instead: " + error);
      std::lock_guard<std::mutex> lock(mc.mutex);
      mc.by_variant[vkey] = {node.op_ptr(), fn};
    }
    if (!fn) return nullptr;
    shape_.assign(cs.begin(), cs.end());
    strides_.assign(st.size() * kMaxRank, 0);
    for (size_t k = 0; k < st.size(); ++k)
      for (int d = 0; d < rank; ++d) strides_[k * kMaxRank + d] = st[k][d];
    ptrs_.clear();
    for (auto& o : outputs) {
      ptrs_.push_back(static_cast<char*>(o.data()));
      advise_huge_pages(o);
    }
    for (auto& a : inputs) ptrs_.push_back(static_cast<char*>(a.data()));
    return fn;
  }
};

thread_local std::vector<int64_t> FusedKernel::shape_, FusedKernel::strides_;
thread_local std::vector<char*> FusedKernel::ptrs_;

}  // namespace

std::string fused_source(const Composite& op, int rank, const std::vector<uint32_t>& masks,
                         const std::vector<bool>& unit) {
  if (scalar_header().empty()) throw NotImplementedError("fused CPU kernels: scalar_ops.hpp was not found");
  const int ni = op.num_inputs();
  const int no = static_cast<int>(op.outputs().size());
  const auto& prog = op.program();
  const int nv = ni + static_cast<int>(prog.size());
  const int inner = rank - 1;
  std::ostringstream s;
  s << "// generated by Theon (" << kCodegenVersion << "): " << op.display() << "\n"
    << "#define THEON_B " << kBlock << "\n"
    << scalar_header() << kPreamble;
  s << "using namespace theon::scalar;\n";
  s << "extern \"C\" void theon_fused_kernel(const int64_t* shape, char* const* ptrs, const int64_t* strides) {\n";
  s << "  constexpr int64_t B = THEON_B;\n";
  s << "  const int64_t n = shape[" << inner << "];\n";
  s << "  const int64_t cpr = (n + B - 1) / B;\n";
  s << "  int64_t rows = 1;\n";
  for (int d = 0; d < inner; ++d) s << "  rows *= shape[" << d << "];\n";
  s << "  const int64_t total = rows * cpr;\n";
  // Blocks are handed out dynamically in groups of about 16K elements: a thread that the OS
  // deschedules (a shared machine) then costs its share of one group, not half the call.
  s << "  const int64_t grain = n < B ? (16384 + n - 1) / n : 16384 / B;\n";
  s << "  (void)strides;\n";
  s << "#pragma omp parallel for schedule(dynamic, grain) if (rows * n >= (1 << 15) && total > 1)\n";
  s << "  for (int64_t c = 0; c < total; ++c) {\n";
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
    auto call = [&]() {
      std::string e;
      if (in.op == ScalarOpId::Cast) e = "Cast().convert<" + t + ">(";
      else e = functor(in.op) + "{}(";
      for (size_t a = 0; a < in.args.size(); ++a) e += (a ? ", " : "") + ref[in.args[a]];
      return e + ")";
    };
    if (all_uniform) {
      uniform[v] = true;
      direct_out[v] = -1;  // a scalar: the copy loop below fills its output
      const std::string name = "v" + std::to_string(v);
      body << "    const " << t << " " << name << " = " << call() << ";\n";
      ref[v] = name;
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
    ref[v] = name + "[i]";
  }
  for (size_t z = 0; z < slots.size(); ++z) s << "    alignas(64) " << slots[z].first << " s" << z << "[B];\n";
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

std::string fused_cache_dir() {
  std::string base = config().compiledir;
  if (base.empty()) {
    if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) base = std::string(x) + "/theon";
    else if (const char* h = std::getenv("HOME"); h && *h) base = std::string(h) + "/.cache/theon";
    else base = "/tmp/theon-cache";
  }
  return (fs::path(base) / "cpu").string();
}

FusedStats fused_stats() { return {g_compiled.load(), g_loaded.load(), g_interpreted.load()}; }

void register_fused_kernels(CpuBackend& backend) { backend.register_kernel("Composite", std::make_unique<FusedKernel>()); }

}  // namespace theon::backends::cpu
