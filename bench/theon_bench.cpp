// theon_bench: the CPU variants of W1 (seed_small), W2 (seed_large), W3 (seed_chain), W5
// (fused_chain), W6 (mlp_train_step), W7 (softmax_rows), W8 (gemm) and W10 (rnn_step, per-step)
// of ../shared/bench/WORKLOADS.md (sections 1, 2, 4 and 5), timed for Theon
// and (W1-W3) for a hand-written C++ loop computing the same function, in one run; and two
// measurements of Theon itself: COMPILE (compile time of a 100-op graph, cold and warm disk
// cache) and OVERHEAD (per-call cost of a 3-node function on 4 elements).
//
//   theon_bench [--quick] [--csv PATH] [--inputs DIR]
//               [--only W1,W2,W3,W5,W6,W7,W8,W10,COMPILE,OVERHEAD]
//               [--w5-log2 N] [--diag] [--peer NAME] [--no-hand]
//
// Inputs: --inputs DIR reads the .npy files that bench/make_inputs.py writes (drawn with
// numpy.random.default_rng(1) exactly as the peers draw them). Without it the driver draws
// its own N(0,1) data (std::mt19937_64) and says so in every row's note: the timings hold,
// but the data are not the contract's.
//
// Semantics (CPU, section 5): W and b resident (Theon shared variables; plain arrays for the
// hand loop), x host in (an Array / a float pointer to a C-contiguous float32 array, taken
// from a pool, call i uses x[i mod S]), y host out (each call returns a new float32 array).
// Correctness: before timing, one call on x[0] is compared with a float64 reference
// computed here from the float32 inputs: rel_err = ||out - ref||_2 / ||ref||_2 <= 5e-5, the
// output float32, of the right shape, all finite.
// Timing: W warm-up calls, then R samples of K back-to-back calls; per-call time = sample
// time / K; the figure is the median over R, spread = (p90 - p10) / median. Counts as in
// section 5 (W1: 100 warm-up, W2/W3: 50; R = 20, K = 50; --quick: R = 5), with the peers'
// budget rule (R lowered when R samples would take more than 8 s, 3 s with --quick).
// Output: CSV with section 4's columns (a header, then one row per workload, peer and
// variant, plus ENV rows), so that it merges with cpu_peers.py's CSV.
#include <theon/theon.hpp>

#include "backends/cpu/fused_cpu.hpp"  // fused_stats(): did W5 run generated code?

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>
#include <unistd.h>
#include <vector>

using namespace theon;

namespace {

constexpr double kStrict = 5e-5;
constexpr int64_t kIn = 10;   // x columns, W rows
constexpr int64_t kOut = 5;   // W columns, b size

// ---------------------------------------------------------------- options
struct Options {
  bool quick = false;
  std::string csv;
  std::string inputs;
  std::string only = "W1,W2,W3";
  bool diag = false;
  bool hand = true;
  std::string peer = "theon-cpu";
  int w5_log2 = 24;          // WORKLOADS.md section 5: n = 2^24 on the CPU
  std::string compile_child;  // internal: the warm-process half of COMPILE
  std::string self;           // argv[0], to start that child
};

bool selected(const Options& o, const std::string& wl) {
  std::stringstream ss(o.only);
  std::string item;
  while (std::getline(ss, item, ','))
    if (item == wl) return true;
  return false;
}

// ---------------------------------------------------------------- .npy reading
// Reads a little-endian, C-order .npy file (format 1.0-3.0) written by numpy.save, of element
// type T ('<f4' float, '<f8' double, '<i8' int64_t).
template <class T>
std::vector<T> read_npy(const std::string& path, std::vector<int64_t>& shape) {
  const char* descr = std::is_same_v<T, double> ? "'descr': '<f8'" : sizeof(T) == 4 ? "'descr': '<f4'" : "'descr': '<i8'";
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open " + path);
  char magic[8];
  f.read(magic, 8);
  if (!f || std::memcmp(magic, "\x93NUMPY", 6) != 0) throw std::runtime_error(path + ": not a .npy file");
  uint32_t hlen = 0;
  if (magic[6] == 1) {
    unsigned char l[2];
    f.read(reinterpret_cast<char*>(l), 2);
    hlen = l[0] | (l[1] << 8);
  } else {
    unsigned char l[4];
    f.read(reinterpret_cast<char*>(l), 4);
    hlen = l[0] | (l[1] << 8) | (l[2] << 16) | (static_cast<uint32_t>(l[3]) << 24);
  }
  std::string header(hlen, '\0');
  f.read(header.data(), hlen);
  if (header.find(descr) == std::string::npos)
    throw std::runtime_error(path + ": not " + descr + ": " + header);
  if (header.find("'fortran_order': False") == std::string::npos)
    throw std::runtime_error(path + ": Fortran order is not supported");
  size_t p = header.find("'shape': (");
  if (p == std::string::npos) throw std::runtime_error(path + ": no shape in header");
  p += 10;
  size_t q = header.find(')', p);
  shape.clear();
  std::stringstream dims(header.substr(p, q - p));
  std::string d;
  int64_t n = 1;
  while (std::getline(dims, d, ',')) {
    if (d.find_first_not_of(' ') == std::string::npos) continue;
    shape.push_back(std::stoll(d));
    n *= shape.back();
  }
  std::vector<T> v(static_cast<size_t>(n));
  f.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(n * sizeof(T)));
  if (!f) throw std::runtime_error(path + ": truncated");
  return v;
}

std::vector<float> read_npy_f32(const std::string& path, std::vector<int64_t>& shape) {
  return read_npy<float>(path, shape);
}

// ---------------------------------------------------------------- data
struct SeedData {
  std::vector<float> W, b;             // (10,5), (5,)
  std::vector<std::vector<float>> xs;  // pool of (rows, 10)
  int64_t rows = 0;
};

SeedData load_seed(const Options& o, int64_t rows, int pool, std::string& source) {
  SeedData d;
  d.rows = rows;
  if (!o.inputs.empty()) {
    std::vector<int64_t> s;
    d.W = read_npy_f32(o.inputs + "/W.npy", s);
    if (s != std::vector<int64_t>{kIn, kOut}) throw std::runtime_error("W.npy: wrong shape");
    d.b = read_npy_f32(o.inputs + "/b.npy", s);
    if (s != std::vector<int64_t>{kOut}) throw std::runtime_error("b.npy: wrong shape");
    std::string xf = o.inputs + (rows == 10 ? "/x_small.npy" : "/x_large.npy");
    std::vector<float> all = read_npy_f32(xf, s);
    if (s != std::vector<int64_t>{pool, rows, kIn}) throw std::runtime_error(xf + ": wrong shape");
    for (int i = 0; i < pool; ++i)
      d.xs.emplace_back(all.begin() + i * rows * kIn, all.begin() + (i + 1) * rows * kIn);
    source = "inputs=numpy default_rng(1)";
  } else {
    std::mt19937_64 rng(1);
    std::normal_distribution<double> n01;
    auto draw = [&](int64_t n) {
      std::vector<float> v(static_cast<size_t>(n));
      for (auto& e : v) e = static_cast<float>(n01(rng));
      return v;
    };
    d.W = draw(kIn * kOut);
    d.b = draw(kOut);
    for (int i = 0; i < pool; ++i) d.xs.push_back(draw(rows * kIn));
    source = "inputs=mt19937_64 N(0;1) (NOT numpy default_rng: pass --inputs)";
  }
  return d;
}

// float64 reference from the float32 inputs upcast: x @ W + b, then log(exp(relu(.))).
std::vector<double> reference(const SeedData& d, const std::vector<float>& x, bool chain) {
  std::vector<double> ref(static_cast<size_t>(d.rows * kOut));
  for (int64_t i = 0; i < d.rows; ++i)
    for (int64_t j = 0; j < kOut; ++j) {
      double acc = 0.0;
      for (int64_t k = 0; k < kIn; ++k)
        acc += static_cast<double>(x[i * kIn + k]) * static_cast<double>(d.W[k * kOut + j]);
      double z = acc + static_cast<double>(d.b[j]);
      if (chain) z = std::log(std::exp(std::max(z, 0.0)));
      ref[i * kOut + j] = z;
    }
  return ref;
}

// rel_err of a float32 output, or +inf / NaN with the reason in `why`.
double rel_err(const float* out, size_t n, const std::vector<double>& ref, std::string& why) {
  if (n != ref.size()) {
    why = "wrong size ";
    return INFINITY;
  }
  double num = 0.0, den = 0.0;
  for (size_t i = 0; i < n; ++i) {
    double o = out[i];
    if (!std::isfinite(o)) {
      why = "non-finite output ";
      return NAN;
    }
    num += (o - ref[i]) * (o - ref[i]);
    den += ref[i] * ref[i];
  }
  return std::sqrt(num) / std::sqrt(den);
}

double rel_err(const Array& out, int64_t rows, const std::vector<double>& ref, std::string& why) {
  if (out.dtype() != DType::Float32) {
    why = "dtype " + std::string(dtype_name(out.dtype())) + " ";
    return INFINITY;
  }
  if (out.shape() != Shape{rows, kOut}) {
    why = "shape " + shape_str(out.shape()) + " ";
    return INFINITY;
  }
  Array c = out.contiguous();
  return rel_err(c.data<float>(), static_cast<size_t>(c.size()), ref, why);
}

// ---------------------------------------------------------------- timing
struct Timing {
  int warm, reps, inner;
};

struct Measured {
  double median = 0, spread_pct = 0;
  std::string note;
};

double median_of(std::vector<double> s) {
  std::sort(s.begin(), s.end());
  size_t n = s.size();
  return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

// As cpu_peers.py time_calls/measure: warm-up (stops after half the budget), R samples of
// K calls, R lowered (not below min_reps) when the first sample shows R would not fit.
Measured measure(const std::function<void(int64_t)>& call, Timing t, bool quick) {
  using clock = std::chrono::steady_clock;
  const double budget = quick ? 3.0 : 8.0;
  const int min_reps = quick ? 3 : 5;
  int reps = quick ? std::min(t.reps, 5) : t.reps;
  auto t0 = clock::now();
  int done = 0;
  for (int i = 0; i < t.warm; ++i) {
    call(i);
    ++done;
    if (std::chrono::duration<double>(clock::now() - t0).count() > 0.5 * budget) break;
  }
  int64_t k = done;
  std::vector<double> samples;
  int r = reps;
  while (static_cast<int>(samples.size()) < r) {
    auto s0 = clock::now();
    for (int j = 0; j < t.inner; ++j) call(k++);
    double dt = std::chrono::duration<double>(clock::now() - s0).count();
    samples.push_back(dt / t.inner);
    if (samples.size() == 1 && dt * reps > budget)
      r = std::min(reps, std::max(min_reps, static_cast<int>(budget / dt)));
  }
  Measured m;
  std::vector<double> s = samples;
  std::sort(s.begin(), s.end());
  m.median = median_of(s);
  double p10 = s[static_cast<size_t>(std::lround(0.1 * (s.size() - 1)))];
  double p90 = s[static_cast<size_t>(std::lround(0.9 * (s.size() - 1)))];
  m.spread_pct = m.median > 0 ? (p90 - p10) / m.median * 100.0 : NAN;
  m.note = "R=" + std::to_string(samples.size()) + "xK=" + std::to_string(t.inner) + " ";
  if (done < t.warm) m.note += "warm=" + std::to_string(done) + "/" + std::to_string(t.warm) + " ";
  return m;
}

// ---------------------------------------------------------------- CSV
class Rows {
 public:
  explicit Rows(const std::string& path) {
    if (!path.empty()) {
      f_.open(path, std::ios::trunc);
      if (!f_) throw std::runtime_error("cannot write " + path);
      f_ << "workload,peer,variant,value,unit,us_per_call,spread_pct,rel_err,bound,check,note\n";
    }
  }

  static std::string fmt(double v, const char* spec) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    char buf[64];
    std::snprintf(buf, sizeof buf, spec, v);
    return buf;
  }

  void add(const std::string& wl, const std::string& peer, const std::string& variant, const std::string& value,
           const std::string& unit, const std::string& us, const std::string& spread, const std::string& err,
           const std::string& bound, const std::string& check, std::string note) {
    std::replace(note.begin(), note.end(), ',', ';');  // no commas: naive readers split on them
    while (!note.empty() && note.back() == ' ') note.pop_back();
    std::string row = wl + "," + peer + "," + variant + "," + value + "," + unit + "," + us + "," + spread + "," +
                      err + "," + bound + "," + check + "," + note;
    if (f_) f_ << row << "\n" << std::flush;
    std::cout << "ROW " << row << std::endl;
  }

  void timed(const std::string& wl, const std::string& peer, const std::string& variant, const Measured& m,
             double err, const std::string& note) {
    double us = m.median * 1e6;
    bool ok = err == err && err <= kStrict;
    add(wl, peer, variant, fmt(us, "%.4g"), "us/call", fmt(us, "%.4g"), fmt(m.spread_pct, "%.1f"),
        fmt(err, "%.2e"), fmt(kStrict, "%.0e"), ok ? "ok" : "FAIL", m.note + note);
  }

  void status(const std::string& wl, const std::string& peer, const std::string& variant, const std::string& check,
              const std::string& note) {
    add(wl, peer, variant, "", "", "", "", "", "", check, note);
  }

  void env(const std::string& key, const std::string& value) { add("ENV", "env", key, "", "", "", "", "", "", "", value); }

 private:
  std::ofstream f_;
};

// ---------------------------------------------------------------- the hand baseline
// y = x @ W + b (and relu for W3), one pass over x, float32 accumulation like sgemm,
// into a newly allocated output (host out). Single-threaded. The flags are template
// parameters so that no per-element test remains.
template <bool Relu, bool LiteralLogExp>
std::unique_ptr<float[]> hand_affine_t(const float* x, int64_t rows, const float* W, const float* b) {
  std::unique_ptr<float[]> y(new float[static_cast<size_t>(rows * kOut)]);
  for (int64_t i = 0; i < rows; ++i) {
    const float* xr = x + i * kIn;
    float acc[kOut];
    for (int64_t j = 0; j < kOut; ++j) acc[j] = b[j];
    for (int64_t k = 0; k < kIn; ++k) {
      const float xv = xr[k];
      for (int64_t j = 0; j < kOut; ++j) acc[j] += xv * W[k * kOut + j];
    }
    float* yr = y.get() + i * kOut;
    for (int64_t j = 0; j < kOut; ++j) yr[j] = acc[j];
  }
  // The epilogue as a second, contiguous pass: it vectorizes, where a max inside the row
  // loop above made GCC 12 pick a slower code shape (about 2x on W3).
  const int64_t n = rows * kOut;
  float* yp = y.get();
  if constexpr (Relu)
    for (int64_t i = 0; i < n; ++i) yp[i] = std::max(yp[i], 0.0f);
  if constexpr (LiteralLogExp)
    for (int64_t i = 0; i < n; ++i) yp[i] = std::log(std::exp(yp[i]));
  return y;
}

std::unique_ptr<float[]> hand_affine(const float* x, int64_t rows, const float* W, const float* b, bool relu,
                                     bool literal_log_exp) {
  if (!relu) return hand_affine_t<false, false>(x, rows, W, b);
  if (!literal_log_exp) return hand_affine_t<true, false>(x, rows, W, b);
  return hand_affine_t<true, true>(x, rows, W, b);
}

std::string env_or(const char* name, const std::string& dflt) {
  const char* v = std::getenv(name);
  return v && *v ? v : dflt;
}

// ---------------------------------------------------------------- one workload
struct Workload {
  std::string name, variant;
  int64_t rows;
  int pool;
  bool chain;
  Timing timing;
};

void run_workload(const Options& o, const Workload& w, Rows& rows, const std::string& thread_note) {
  std::string source;
  SeedData d;
  try {
    d = load_seed(o, w.rows, w.pool, source);
  } catch (const std::exception& e) {
    rows.status(w.name, o.peer, w.variant, "ERROR", std::string("inputs: ") + e.what());
    if (o.hand) rows.status(w.name, "hand-cpu", w.variant, "ERROR", std::string("inputs: ") + e.what());
    return;
  }
  const std::vector<double> ref = reference(d, d.xs[0], w.chain);
  const std::string common = thread_note + source + " ";

  // ---- Theon: W, b shared (resident); x an Array per pool entry (host in); y returned.
  try {
    Var x = tensor::fmatrix("x");
    SharedVar W = shared(Array::from_vector<float>(d.W, Shape{kIn, kOut}), "W");
    SharedVar b = shared(Array::from_vector<float>(d.b, Shape{kOut}), "b");
    Var y = tensor::dot(x, W) + b;
    if (w.chain) y = tensor::log(tensor::exp(tensor::relu(y)));
    y.set_name("y");
    Function f = function({x}, {y}, {.name = w.name});
    std::vector<Array> xs;
    for (const auto& v : d.xs) xs.push_back(Array::from_vector<float>(v, Shape{w.rows, kIn}));

    std::string why;
    double err = rel_err(f({xs[0]})[0], w.rows, ref, why);
    std::cout << "# " << w.name << " theon program:\n" << f.explain() << std::flush;
    std::vector<Array> last;
    const size_t pool = xs.size();
    Measured m = measure([&](int64_t i) { last = f({xs[static_cast<size_t>(i) % pool]}); }, w.timing, o.quick);
    rows.timed(w.name, o.peer, w.variant, m, err,
               common + "mode=" + config().mode + " " + why);
  } catch (const std::exception& e) {
    rows.status(w.name, o.peer, w.variant, "ERROR", e.what());
  }

  // ---- hand: the same function as a C++ loop (log(exp(r)) written as r, as Theon may).
  auto hand = [&](const std::string& variant, bool literal) {
    try {
      std::string why;
      auto y0 = hand_affine(d.xs[0].data(), w.rows, d.W.data(), d.b.data(), w.chain, literal);
      double err = rel_err(y0.get(), static_cast<size_t>(w.rows * kOut), ref, why);
      std::unique_ptr<float[]> last;
      const size_t pool = d.xs.size();
      Measured m = measure(
          [&](int64_t i) {
            last = hand_affine(d.xs[static_cast<size_t>(i) % pool].data(), w.rows, d.W.data(), d.b.data(), w.chain,
                               literal);
          },
          w.timing, o.quick);
      std::string what = !w.chain ? "plain loop; "
                         : literal ? "literal log(expf(relu)) per element; "
                                   : "relu only (log(exp(r)) = r rewritten by hand); ";
      rows.timed(w.name, "hand-cpu", variant, m, err, "threads=1 " + source + " " + what + why);
    } catch (const std::exception& e) {
      rows.status(w.name, "hand-cpu", variant, "ERROR", e.what());
    }
  };
  if (!o.hand) return;
  hand(w.variant, false);
  if (w.chain) hand(w.variant + ":literal", true);
}

// ---------------------------------------------------------------- W5 fused_chain
// out = tanh(a*b + c) * exp(-a*a) + sigmoid(c), n = 2^24 float32 (section 5), a, b, c held in
// Theon Arrays (resident), a new output Array each call. Inputs: --inputs DIR/w5_<n>.npy
// ((3, n), numpy default_rng(5), from make_inputs.py) and w5_idx_<n>.npy (the 2^20 check
// positions, default_rng(55)); else drawn here (noted). Figure: GB/s at 16 B/element.
void run_w5(const Options& o, Rows& rows, const std::string& thread_note) {
  const int64_t n = int64_t{1} << o.w5_log2;
  const std::string variant = "fused:n=2^" + std::to_string(o.w5_log2);
  try {
    std::vector<float> abc;
    std::vector<int64_t> idx;
    std::string source;
    const std::string file = o.inputs + "/w5_" + std::to_string(n) + ".npy";
    if (!o.inputs.empty() && std::filesystem::exists(file)) {
      std::vector<int64_t> s;
      abc = read_npy<float>(file, s);
      if (s != std::vector<int64_t>{3, n}) throw std::runtime_error(file + ": wrong shape");
      idx = read_npy<int64_t>(o.inputs + "/w5_idx_" + std::to_string(n) + ".npy", s);
      source = "inputs=numpy default_rng(5)";
    } else {
      std::mt19937_64 rng(5);
      std::normal_distribution<float> n01;
      abc.resize(static_cast<size_t>(3 * n));
      for (auto& e : abc) e = n01(rng);
      std::uniform_int_distribution<int64_t> pos(0, n - 1);
      idx.resize(std::min<int64_t>(n, 1 << 20));
      for (auto& i : idx) i = pos(rng);
      source = "inputs=mt19937_64 N(0;1) (NOT numpy default_rng: pass --inputs)";
    }
    auto slice = [&](int k) {
      return Array::from_vector<float>(std::vector<float>(abc.begin() + k * n, abc.begin() + (k + 1) * n), Shape{n});
    };
    Array A = slice(0), Bv = slice(1), C = slice(2);
    // float64 reference on the check positions, from the float32 inputs (as the peers).
    std::vector<double> ref(idx.size());
    for (size_t k = 0; k < idx.size(); ++k) {
      const double a = abc[idx[k]], b = abc[n + idx[k]], c = abc[2 * n + idx[k]];
      ref[k] = std::tanh(a * b + c) * std::exp(-a * a) + 1.0 / (1.0 + std::exp(-c));
    }
    std::vector<float>().swap(abc);

    Var a = tensor::vector("a", DType::Float32), b = tensor::vector("b", DType::Float32),
        c = tensor::vector("c", DType::Float32);
    Var y = tensor::tanh(a * b + c) * tensor::exp(-a * a) + tensor::sigmoid(c);
    Function f = function({a, b, c}, {y}, {.name = "W5"});
    std::cout << "# W5 theon program:\n" << f.explain() << std::flush;
    const auto before = backends::cpu::fused_stats();
    Array out = f({A, Bv, C})[0];
    std::string why;
    double err = NAN;
    if (out.dtype() != DType::Float32 || out.shape() != Shape{n}) {
      why = "dtype/shape " + shape_str(out.shape()) + " ";
      err = INFINITY;
    } else {
      Array oc = out.contiguous();
      const float* p = oc.data<float>();
      std::vector<float> picked(idx.size());
      for (size_t k = 0; k < idx.size(); ++k) picked[k] = p[idx[k]];
      err = rel_err(picked.data(), picked.size(), ref, why);
      for (int64_t i = 0; i < n && why.empty(); ++i)
        if (!std::isfinite(p[i])) {
          why = "non-finite output ";
          err = NAN;
        }
    }
    out = Array();
    Array last;
    Measured m = measure([&](int64_t) { last = f({A, Bv, C})[0]; }, Timing{2, 10, 1}, o.quick);
    const auto after = backends::cpu::fused_stats();
    const std::string kernel = after.interpreted_calls > before.interpreted_calls
                                   ? "kernel=INTERPRETER (no generated code) "
                                   : "kernel=generated C++ (fused_cpu) ";
    const double s_call = m.median;
    const bool ok = err == err && err <= kStrict;
    rows.add("W5", o.peer, variant, Rows::fmt(16.0 * n / s_call / 1e9, "%.3f"), "GB/s", Rows::fmt(s_call * 1e6, "%.5g"),
             Rows::fmt(m.spread_pct, "%.1f"), Rows::fmt(err, "%.2e"), Rows::fmt(kStrict, "%.0e"), ok ? "ok" : "FAIL",
             m.note + thread_note + source + " " + kernel + "new output Array per call " + why);
  } catch (const std::exception& e) {
    rows.status("W5", o.peer, variant, "ERROR", e.what());
  }
}

// ---------------------------------------------------------------- W7 softmax_rows
// Row softmax of x (2048, 2048) float32 (the CPU size of cpu_peers.py), resident, a new output
// each call. Inputs: --inputs DIR/w7_x.npy and w7_rows.npy (numpy default_rng(7) and (77), from
// make_inputs.py --w7); else drawn here (noted). Check: 256 rows against float64. Figure: GB/s
// at 8 B/element.
void run_w7(const Options& o, Rows& rows, const std::string& thread_note) {
  constexpr int64_t n = 2048;
  const std::string variant = "softmax:2048x2048";
  try {
    std::vector<float> x;
    std::vector<int64_t> check;
    std::string source;
    if (!o.inputs.empty() && std::filesystem::exists(o.inputs + "/w7_x.npy")) {
      std::vector<int64_t> s;
      x = read_npy<float>(o.inputs + "/w7_x.npy", s);
      if (s != std::vector<int64_t>{n, n}) throw std::runtime_error("w7_x.npy: wrong shape");
      check = read_npy<int64_t>(o.inputs + "/w7_rows.npy", s);
      source = "inputs=numpy default_rng(7) ";
    } else {
      std::mt19937_64 rng(7);
      std::normal_distribution<float> n01;
      x.resize(static_cast<size_t>(n * n));
      for (auto& e : x) e = n01(rng);
      std::uniform_int_distribution<int64_t> pick(0, n - 1);
      check.resize(256);
      for (auto& r : check) r = pick(rng);
      source = "inputs=mt19937_64 N(0;1) (NOT numpy default_rng: pass --inputs) ";
    }
    std::vector<double> ref;
    for (int64_t r : check) {
      const float* row = x.data() + r * n;
      double m = -INFINITY, sum = 0;
      for (int64_t j = 0; j < n; ++j) m = std::max(m, double(row[j]));
      for (int64_t j = 0; j < n; ++j) sum += std::exp(double(row[j]) - m);
      for (int64_t j = 0; j < n; ++j) ref.push_back(std::exp(double(row[j]) - m) / sum);
    }
    const Array X = Array::from_vector<float>(x, Shape{n, n});
    std::vector<float>().swap(x);
    Var xv = tensor::matrix("x", DType::Float32);
    Function f = function({xv}, {tensor::softmax(xv)}, {.name = "W7"});
    std::cout << "# W7 theon program:\n" << f.explain() << std::flush;
    Array out = f({X})[0];
    std::string why;
    double err = INFINITY;
    if (out.dtype() == DType::Float32 && out.shape() == Shape{n, n}) {
      const Array oc = out.contiguous();
      std::vector<float> picked;
      for (int64_t r : check) picked.insert(picked.end(), oc.data<float>() + r * n, oc.data<float>() + (r + 1) * n);
      err = rel_err(picked.data(), picked.size(), ref, why);
    } else {
      why = "dtype/shape " + shape_str(out.shape()) + " ";
    }
    out = Array();
    Array last;
    Measured m = measure([&](int64_t) { last = f({X})[0]; }, Timing{3, 20, 2}, o.quick);
    const double s_call = m.median;
    const bool ok = err == err && err <= kStrict;
    rows.add("W7", o.peer, variant, Rows::fmt(8.0 * n * n / s_call / 1e9, "%.3f"), "GB/s",
             Rows::fmt(s_call * 1e6, "%.5g"), Rows::fmt(m.spread_pct, "%.1f"), Rows::fmt(err, "%.2e"),
             Rows::fmt(kStrict, "%.0e"), ok ? "ok" : "FAIL",
             m.note + thread_note + source + "new output Array per call " + why);
  } catch (const std::exception& e) {
    rows.status("W7", o.peer, variant, "ERROR", e.what());
  }
}

// ---------------------------------------------------------------- W8 gemm
// C = A @ B, 1024^3 float32 strict (section 5), A and B resident (Arrays passed each call, no
// copy), a new output each call. Inputs: --inputs DIR/w8_{A,B,rows}.npy (make_inputs.py --w8:
// default_rng(8), check rows default_rng(88)); else drawn here (noted). Check: 64 rows against
// float64. Figure: GFLOP/s at 2.147e9 flop a call.
void run_w8(const Options& o, Rows& rows, const std::string& thread_note) {
  constexpr int64_t n = 1024;
  const std::string variant = "strict:1024^3";
  try {
    std::vector<float> a, b;
    std::vector<int64_t> check;
    std::string source;
    if (!o.inputs.empty() && std::filesystem::exists(o.inputs + "/w8_A.npy")) {
      std::vector<int64_t> s;
      a = read_npy<float>(o.inputs + "/w8_A.npy", s);
      if (s != std::vector<int64_t>{n, n}) throw std::runtime_error("w8_A.npy: wrong shape");
      b = read_npy<float>(o.inputs + "/w8_B.npy", s);
      if (s != std::vector<int64_t>{n, n}) throw std::runtime_error("w8_B.npy: wrong shape");
      check = read_npy<int64_t>(o.inputs + "/w8_rows.npy", s);
      source = "inputs=numpy default_rng(8) ";
    } else {
      std::mt19937_64 rng(8);
      std::normal_distribution<float> n01;
      a.resize(static_cast<size_t>(n * n));
      b.resize(static_cast<size_t>(n * n));
      for (auto& e : a) e = n01(rng);
      for (auto& e : b) e = n01(rng);
      std::uniform_int_distribution<int64_t> pick(0, n - 1);
      check.resize(64);
      for (auto& r : check) r = pick(rng);
      source = "inputs=mt19937_64 N(0;1) (NOT numpy default_rng: pass --inputs) ";
    }
    std::vector<double> ref(check.size() * n, 0.0);
    for (size_t i = 0; i < check.size(); ++i)
      for (int64_t p = 0; p < n; ++p) {
        const double av = a[static_cast<size_t>(check[i] * n + p)];
        const float* brow = b.data() + p * n;
        double* r = ref.data() + i * n;
        for (int64_t j = 0; j < n; ++j) r[j] += av * brow[j];
      }
    const Array A = Array::from_vector<float>(a, Shape{n, n}), B = Array::from_vector<float>(b, Shape{n, n});
    std::vector<float>().swap(a);
    std::vector<float>().swap(b);
    Var av = tensor::matrix("A", DType::Float32), bv = tensor::matrix("B", DType::Float32);
    Function f = function({av, bv}, {tensor::dot(av, bv)}, {.name = "W8"});
    std::cout << "# W8 theon program:\n" << f.explain() << std::flush;
    Array out = f({A, B})[0];
    std::string why;
    double err = INFINITY;
    if (out.dtype() == DType::Float32 && out.shape() == Shape{n, n}) {
      const Array oc = out.contiguous();
      std::vector<float> picked;
      for (int64_t r : check) picked.insert(picked.end(), oc.data<float>() + r * n, oc.data<float>() + (r + 1) * n);
      err = rel_err(picked.data(), picked.size(), ref, why);
    } else {
      why = "dtype/shape " + shape_str(out.shape()) + " ";
    }
    out = Array();
    Array last;
    Measured m = measure([&](int64_t) { last = f({A, B})[0]; }, Timing{2, 10, 1}, o.quick);
    const double s_call = m.median;
    const bool ok = err == err && err <= kStrict;
    rows.add("W8", o.peer, variant, Rows::fmt(2.0 * n * n * n / s_call / 1e9, "%.2f"), "GFLOP/s",
             Rows::fmt(s_call * 1e6, "%.5g"), Rows::fmt(m.spread_pct, "%.1f"), Rows::fmt(err, "%.2e"),
             Rows::fmt(kStrict, "%.0e"), ok ? "ok" : "FAIL",
             m.note + thread_note + source + "A @ B; new output Array per call " + why);
  } catch (const std::exception& e) {
    rows.status("W8", o.peer, variant, "ERROR", e.what());
  }
}

// ---------------------------------------------------------------- W10 rnn_step
// h_new = tanh(h @ U + x @ Wx + b), per-step: h a shared variable advanced by the function's
// update (as a Theano user writes it and as the PyTensor peer runs it), U, x, Wx, b shared;
// the function takes and returns nothing. Inputs: --inputs DIR/w10_{h0,U,x,Wx,b}.npy
// (make_inputs.py --w10, default_rng(10)); else drawn here (noted). Check: 100 steps from h0
// against float64. Figure: us/step (100 warm-up steps, R = 20 samples of K = 500 steps).
// The whole-loop variant needs scan, which Theon does not have yet.
void run_w10(const Options& o, Rows& rows, const std::string& thread_note) {
  const std::string variant = "per-step";
  try {
    std::vector<float> h0, U, x, Wx, b;
    std::string source;
    auto load = [&](const char* name, std::vector<int64_t> want) {
      std::vector<int64_t> s;
      std::vector<float> v = read_npy<float>(o.inputs + "/w10_" + name + ".npy", s);
      if (s != want) throw std::runtime_error(std::string("w10_") + name + ".npy: wrong shape");
      return v;
    };
    if (!o.inputs.empty() && std::filesystem::exists(o.inputs + "/w10_h0.npy")) {
      h0 = load("h0", {64, 64});
      U = load("U", {64, 64});
      x = load("x", {64, 32});
      Wx = load("Wx", {32, 64});
      b = load("b", {64});
      source = "inputs=numpy default_rng(10) ";
    } else {
      std::mt19937_64 rng(10);
      std::normal_distribution<double> n01;
      auto draw = [&](size_t count, double scale) {
        std::vector<float> v(count);
        for (auto& e : v) e = static_cast<float>(n01(rng) * scale);
        return v;
      };
      U = draw(64 * 64, 0.0625);
      x = draw(64 * 32, 1.0);
      Wx = draw(32 * 64, 1.0 / std::sqrt(32.0));
      b = draw(64, 0.1);
      h0 = draw(64 * 64, 0.5);
      source = "inputs=mt19937_64 N(0;1) (NOT numpy default_rng: pass --inputs) ";
    }
    // float64 reference: 100 steps from h0.
    std::vector<double> h(h0.begin(), h0.end()), xw(64 * 64, 0.0), next(64 * 64);
    for (int i = 0; i < 64; ++i)
      for (int p = 0; p < 32; ++p)
        for (int j = 0; j < 64; ++j) xw[i * 64 + j] += double(x[i * 32 + p]) * double(Wx[p * 64 + j]);
    for (int step = 0; step < 100; ++step) {
      for (int i = 0; i < 64; ++i)
        for (int j = 0; j < 64; ++j) {
          double acc = xw[i * 64 + j] + double(b[j]);
          for (int p = 0; p < 64; ++p) acc += h[i * 64 + p] * double(U[p * 64 + j]);
          next[i * 64 + j] = std::tanh(acc);
        }
      h.swap(next);
    }
    const Array H0 = Array::from_vector<float>(h0, Shape{64, 64});
    SharedVar hs = shared(H0.copy(), "h");
    SharedVar Us = shared(Array::from_vector<float>(U, Shape{64, 64}), "U");
    SharedVar xs = shared(Array::from_vector<float>(x, Shape{64, 32}), "x");
    SharedVar Wxs = shared(Array::from_vector<float>(Wx, Shape{32, 64}), "Wx");
    SharedVar bs = shared(Array::from_vector<float>(b, Shape{64}), "b");
    FunctionOptions opts;
    opts.name = "W10";
    opts.updates = {{hs, tensor::tanh(tensor::dot(hs, Us) + tensor::dot(xs, Wxs) + bs)}};
    Function f = function({}, {}, opts);
    std::cout << "# W10 theon program:\n" << f.explain() << std::flush;
    for (int i = 0; i < 100; ++i) f({});
    std::string why;
    double err = INFINITY;
    const Array got = hs.get_value();
    if (got.dtype() == DType::Float32 && got.shape() == Shape{64, 64}) {
      const Array gc = got.contiguous();
      err = rel_err(gc.data<float>(), 64 * 64, h, why);
    } else {
      why = "dtype/shape " + shape_str(got.shape()) + " ";
    }
    hs.set_value(H0.copy());
    Measured m = measure([&](int64_t) { f({}); }, Timing{100, 20, 500}, o.quick);
    const double us = m.median * 1e6;
    const bool ok = err == err && err <= kStrict;
    rows.add("W10", o.peer, variant, Rows::fmt(us, "%.4g"), "us/step", Rows::fmt(us, "%.4g"),
             Rows::fmt(m.spread_pct, "%.1f"), Rows::fmt(err, "%.2e"), Rows::fmt(kStrict, "%.0e"), ok ? "ok" : "FAIL",
             m.note + thread_note + source +
                 "h shared; updates=[(h; tanh(h@U + x@Wx + b))]; no scan yet (no whole-loop row) " + why);
  } catch (const std::exception& e) {
    rows.status("W10", o.peer, variant, "ERROR", e.what());
  }
}

// ---------------------------------------------------------------- W6 mlp_train_step
// MLP 784-1024-1024-10 (ReLU, mean softmax cross-entropy with int64 labels, SGD p -= 0.01 g in
// place through updates), B = 256 (section 5), written as the PyTensor peer writes it: the
// parameters and the 4 batches in shared variables, the step a function of the batch index i
// with givens X <- X_all[i*B:(i+1)*B], y <- y_all[i*B:(i+1)*B], returning the loss. Inputs
// (required): --inputs DIR/w6_*.npy from make_inputs.py --w6 (default_rng(6), and the float64
// loss and gradients of the first step that the check compares with). Check (first step on
// batch 0): the loss (rel. error <= 1e-4) and every parameter's update p_after - p_before
// against -0.01 g64 (||upd + 0.01 g|| / ||0.01 g|| <= 5e-3). Figure: steps/s (5 warm-up steps,
// R = 20 samples of K = 3 steps; step i uses batch i mod 4).
void run_w6(const Options& o, Rows& rows, const std::string& thread_note) {
  constexpr int64_t B = 256;
  const std::string variant = "sgd:B=256";
  try {
    if (o.inputs.empty() || !std::filesystem::exists(o.inputs + "/w6_p0.npy")) {
      rows.status("W6", o.peer, variant, "SKIP", "needs --inputs DIR from bench/make_inputs.py DIR --w6");
      return;
    }
    const std::vector<Shape> pshape = {{784, 1024}, {1024}, {1024, 1024}, {1024}, {1024, 10}, {10}};
    const char* pname[] = {"W1", "b1", "W2", "b2", "W3", "b3"};
    std::vector<Array> p0;
    std::vector<std::vector<double>> g64;
    std::vector<int64_t> s;
    for (size_t k = 0; k < 6; ++k) {
      std::vector<float> v = read_npy<float>(o.inputs + "/w6_p" + std::to_string(k) + ".npy", s);
      if (Shape(s.begin(), s.end()) != pshape[k]) throw std::runtime_error("w6_p" + std::to_string(k) + ".npy: wrong shape");
      p0.push_back(Array::from_vector<float>(v, pshape[k]));
      g64.push_back(read_npy<double>(o.inputs + "/w6_ref_g" + std::to_string(k) + ".npy", s));
    }
    const double loss64 = read_npy<double>(o.inputs + "/w6_ref_loss.npy", s).at(0);
    std::vector<float> xall;
    std::vector<int64_t> yall;
    for (int i = 0; i < 4; ++i) {
      std::vector<float> xv = read_npy<float>(o.inputs + "/w6_X" + std::to_string(i) + ".npy", s);
      if (s != std::vector<int64_t>{B, 784}) throw std::runtime_error("w6_X.npy: wrong shape");
      xall.insert(xall.end(), xv.begin(), xv.end());
      std::vector<int64_t> yv = read_npy<int64_t>(o.inputs + "/w6_y" + std::to_string(i) + ".npy", s);
      yall.insert(yall.end(), yv.begin(), yv.end());
    }
    SharedVar Xs = shared(Array::from_vector<float>(xall, Shape{4 * B, 784}), "X_all");
    SharedVar Ys = shared(Array::from_vector<int64_t>(yall, Shape{4 * B}), "y_all");
    std::vector<SharedVar> params;
    for (size_t k = 0; k < 6; ++k) params.push_back(shared(p0[k].copy(), pname[k]));
    Var X = tensor::fmatrix("X");
    Var y = tensor::lvector("y");
    Var h1 = tensor::relu(tensor::dot(X, params[0]) + params[1]);
    Var h2 = tensor::relu(tensor::dot(h1, params[2]) + params[3]);
    Var z3 = tensor::dot(h2, params[4]) + params[5];
    Var loss = tensor::mean(tensor::categorical_crossentropy(tensor::softmax(z3), y));
    std::vector<Var> wrt(params.begin(), params.end());
    std::vector<Var> grads = grad(loss, wrt);
    FunctionOptions opts;
    opts.name = "W6";
    for (size_t k = 0; k < 6; ++k) opts.updates.push_back({params[k], params[k] - 0.01 * grads[k]});
    Var i = tensor::lscalar("i");
    opts.givens = {{X, Xs[{Slice{i * B, (i + 1) * B}}]}, {y, Ys[{Slice{i * B, (i + 1) * B}}]}};
    Function step = function({i}, {loss}, opts);
    std::cout << "# W6 theon program:\n" << step.explain() << std::flush;
    std::vector<Array> idx;
    for (int k = 0; k < 4; ++k) idx.push_back(Array::scalar(static_cast<double>(k), DType::Int64));
    // The check: the first step on batch 0 from the initial parameters.
    const Array l = step({idx[0]})[0];
    double err = INFINITY, worst = 0;
    std::string why;
    bool ok = false;
    if (l.dtype() == DType::Float32 && l.size() == 1) {
      const double got = l.item();
      err = std::fabs(got - loss64) / std::fabs(loss64);
      ok = err == err && err <= 1e-4;
      for (size_t k = 0; k < 6; ++k) {
        const Array after = params[k].get_value().contiguous();
        const Array before = p0[k].contiguous();
        if (after.dtype() != DType::Float32 || after.shape() != pshape[k]) {
          ok = false;
          why += std::string(pname[k]) + " dtype/shape " + shape_str(after.shape()) + " ";
          continue;
        }
        double num = 0, den = 0;
        for (int64_t e = 0; e < after.size(); ++e) {
          const double upd = double(after.data<float>()[e]) - double(before.data<float>()[e]);
          const double want = -0.01 * g64[k][static_cast<size_t>(e)];
          num += (upd - want) * (upd - want);
          den += want * want;
        }
        const double e = std::sqrt(num) / std::sqrt(den);
        if (!(e <= 5e-3)) ok = false;
        worst = std::max(worst, e == e ? e : INFINITY);
      }
    } else {
      why = "loss dtype/shape " + shape_str(l.shape()) + " ";
    }
    Measured m = measure([&](int64_t k) { step({idx[static_cast<size_t>(k) % 4]}); }, Timing{5, 20, 3}, o.quick);
    rows.add("W6", o.peer, variant, Rows::fmt(1.0 / m.median, "%.2f"), "steps/s", Rows::fmt(m.median * 1e6, "%.5g"),
             Rows::fmt(m.spread_pct, "%.1f"), Rows::fmt(err, "%.2e"), "1e-04", ok ? "ok" : "FAIL",
             m.note + thread_note + "inputs=numpy default_rng(6) loss_err=" + Rows::fmt(err, "%.2e") +
                 " max_update_err=" + Rows::fmt(worst, "%.2e") +
                 " shared params and batches; givens by batch index; updates p - 0.01*g " + why);
  } catch (const std::exception& e) {
    rows.status("W6", o.peer, variant, "ERROR", e.what());
  }
}

// ---------------------------------------------------------------- COMPILE
// A DAG of exactly 100 user-level ops (elementwise, with edges back to earlier values, and
// row reductions broadcast back) over x (64, 256) float32. Built, compiled (function()) and run
// once; the first call is where the fused kernels are compiled with the system compiler.
Var graph100(const Var& x, int& ops) {
  ops = 0;
  std::vector<Var> vals{x};
  Var h = x;
  auto take = [&](Var v) {
    ++ops;
    h = v;
    vals.push_back(v);
  };
  for (int i = 0; ops < 100; ++i) {
    const float k = 1.0f + 0.01f * static_cast<float>(i);
    switch (100 - ops >= 3 ? i % 8 : i % 2) {  // the last ops single ones: exactly 100
      case 0: take(h * k); break;
      case 1: take(tensor::tanh(h)); break;
      case 2: take(h + vals[vals.size() / 2]); break;
      case 3: take(tensor::sigmoid(h)); break;
      case 4: {
        Var m = tensor::mean(h, std::vector<int>{1}, true);
        ++ops;
        take(h - m);
        break;
      }
      case 5:  // mul, neg, exp
        ops += 2;
        take(tensor::exp(-(h * h)));
        break;
      case 6: take(h * vals[vals.size() - 3]); break;
      case 7: {
        Var s = tensor::max(h, std::vector<int>{1}, true);
        ++ops;
        take(h - s);
        break;
      }
    }
  }
  return h;
}

struct CompileTimes {
  double build = 0, first = 0;  // function() seconds, first call seconds
  int64_t compiled = 0, loaded = 0;
  int ops = 0;
  size_t program_lines = 0;
};

CompileTimes compile_once(const Array& xv) {
  using clock = std::chrono::steady_clock;
  const auto before = backends::cpu::fused_stats();
  CompileTimes t;
  auto t0 = clock::now();
  Var x = tensor::fmatrix("x");
  Var y = graph100(x, t.ops);
  Function f = function({x}, {y});
  auto t1 = clock::now();
  Array out = f({xv})[0];
  auto t2 = clock::now();
  t.build = std::chrono::duration<double>(t1 - t0).count();
  t.first = std::chrono::duration<double>(t2 - t1).count();
  const auto after = backends::cpu::fused_stats();
  t.compiled = after.compiled - before.compiled;
  t.loaded = after.loaded_from_disk - before.loaded_from_disk;
  const std::string ex = f.debugprint();
  t.program_lines = static_cast<size_t>(std::count(ex.begin(), ex.end(), '\n'));
  return t;
}

std::string compile_line(const CompileTimes& t) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%.6f %.6f %lld %lld %d %zu", t.build, t.first, static_cast<long long>(t.compiled),
                static_cast<long long>(t.loaded), t.ops, t.program_lines);
  return buf;
}

void run_compile(const Options& o, Rows& rows) {
  try {
    char tmpl[] = "/tmp/theon-bench-compiledir-XXXXXX";
    if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
    const std::string dir = tmpl;
    config().compiledir = dir;
    Array xv = Array::randn({64, 256}, 3);
    // The compiler's wall time depends on what else runs on the machine (a shared 2-core VM
    // here): every row says the load average it was taken under.
    auto loadavg = [] {
      std::ifstream f("/proc/loadavg");
      std::string one;
      f >> one;
      return one.empty() ? std::string("?") : one;
    };
    auto note = [&](const CompileTimes& t, const std::string& what) {
      return what + " loadavg1=" + loadavg() + " ops=" + std::to_string(t.ops) + " debugprint_lines=" + std::to_string(t.program_lines) +
             " function()_s=" + Rows::fmt(t.build, "%.4f") + " first_call_s=" + Rows::fmt(t.first, "%.4f") +
             " modules_compiled=" + std::to_string(t.compiled) + " loaded_from_disk=" + std::to_string(t.loaded) +
             " cxx=" + config().cxx + " compiledir=" + dir;
    };
    auto row = [&](const std::string& variant, const CompileTimes& t, const std::string& what) {
      const double s = t.build + t.first;
      rows.add("COMPILE", o.peer, variant, Rows::fmt(s, "%.4f"), "s", Rows::fmt(s * 1e6, "%.6g"), "", "", "", "ok",
               note(t, what));
    };
    CompileTimes cold = compile_once(xv);
    row("cold:graph100", cold, "empty compiledir (fresh temp dir); this process");
    CompileTimes same = compile_once(xv);
    row("warm-same-process:graph100", same, "second function() of a new identical graph in the same process");
    // A fresh process on the cache the cold run left.
    std::string cmd = o.self + " --compile-child " + dir;
    std::string out;
    auto t0 = std::chrono::steady_clock::now();
    if (FILE* p = popen(cmd.c_str(), "r")) {
      char buf[512];
      while (fgets(buf, sizeof buf, p)) out += buf;
      pclose(p);
    }
    const double proc = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    CompileTimes warm;
    const auto at = out.find("COMPILE_CHILD ");
    if (at == std::string::npos ||
        std::sscanf(out.c_str() + at + 14, "%lf %lf %lld %lld %d %zu", &warm.build, &warm.first,
                    reinterpret_cast<long long*>(&warm.compiled), reinterpret_cast<long long*>(&warm.loaded), &warm.ops,
                    &warm.program_lines) != 6)
      rows.status("COMPILE", o.peer, "warm-process:graph100", "ERROR", "child said: " + out.substr(0, 300));
    else
      row("warm-process:graph100", warm,
          "second process on the compiledir the cold run filled; process_wall_s=" + Rows::fmt(proc, "%.3f"));
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  } catch (const std::exception& e) {
    rows.status("COMPILE", o.peer, "graph100", "ERROR", e.what());
  }
}

// ---------------------------------------------------------------- OVERHEAD
// Per-call cost of y = (x + y0) * x - y0 (3 elementwise nodes; one Composite after fusion) on
// 4 float32 elements, inputs passed each call, a new output each call. R = 20 samples of
// K = 1000 calls after 1000 warm-up calls.
void run_overhead(const Options& o, Rows& rows) {
  Array xv = Array::from_vector<float>({0.5f, -1.0f, 2.0f, 0.25f}, Shape{4});
  Array yv = Array::from_vector<float>({1.5f, 1.0f, -2.0f, 3.0f}, Shape{4});
  auto one = [&](const std::string& variant, const std::string& mode, const std::string& cxx, const std::string& what) {
    try {
      const std::string saved = config().cxx;
      config().cxx = cxx;
      Var x = tensor::vector("x", DType::Float32), y0 = tensor::vector("y0", DType::Float32);
      Function f = function({x, y0}, {(x + y0) * x - y0}, {.mode = mode});
      std::vector<Array> last = f({xv, yv});
      const auto before = backends::cpu::fused_stats();
      Measured m = measure([&](int64_t) { last = f({xv, yv}); }, Timing{1000, 20, 1000}, o.quick);
      const auto after = backends::cpu::fused_stats();
      config().cxx = saved;
      const double us = m.median * 1e6;
      std::string dp = f.debugprint();
      const size_t nodes = static_cast<size_t>(std::count(dp.begin(), dp.end(), '\n'));
      rows.add("OVERHEAD", o.peer, variant, Rows::fmt(us, "%.4g"), "us/call", Rows::fmt(us, "%.4g"),
               Rows::fmt(m.spread_pct, "%.1f"), "", "", "ok",
               m.note + what + " mode=" + mode + " debugprint_lines=" + std::to_string(nodes) +
                   " interpreted_calls=" + std::to_string(after.interpreted_calls - before.interpreted_calls));
    } catch (const std::exception& e) {
      rows.status("OVERHEAD", o.peer, variant, "ERROR", e.what());
    }
  };
  one("3node:fused", "fast_run", config().cxx.empty() ? "c++" : config().cxx,
      "one Composite running generated code (fused_cpu)");
  one("3node:interpreter", "fast_run", "", "one Composite; cxx empty so the Composite interpreter runs");
  one("3node:unfused", "none", config().cxx, "mode none: three Elemwise nodes; no fusion");
}

// --diag: where Theon's time goes, by timing sub-graphs of W2/W3 on the same inputs (printed
// as DIAG lines, not CSV rows: they are no workload of the contract).
void run_diag(const Options& o) {
  std::string source;
  for (int64_t rows : {int64_t{10}, int64_t{10000}}) {
    SeedData d = load_seed(o, rows, rows == 10 ? 16 : 4, source);
    Var x = tensor::fmatrix("x");
    SharedVar W = shared(Array::from_vector<float>(d.W, Shape{kIn, kOut}), "W");
    SharedVar b = shared(Array::from_vector<float>(d.b, Shape{kOut}), "b");
    std::vector<Array> xs;
    for (const auto& v : d.xs) xs.push_back(Array::from_vector<float>(v, Shape{rows, kIn}));
    Var z = tensor::dot(x, W) + b;
    const std::vector<std::pair<std::string, Var>> graphs = {
        {"x*1 (one elementwise op on x)", x * 1.0f},
        {"exp(x) (one transcendental on x)", tensor::exp(x)},
        {"dot(x, W)", tensor::dot(x, W)},
        {"dot(x, W) + b", z},
        {"relu(dot(x, W) + b)", tensor::relu(z)},
        {"exp(relu(dot(x, W) + b))", tensor::exp(tensor::relu(z))},
        {"log(exp(relu(dot(x, W) + b)))", tensor::log(tensor::exp(tensor::relu(z)))},
    };
    for (const auto& [what, y] : graphs) {
      Function f = function({x}, {y});
      std::vector<Array> last;
      const size_t pool = xs.size();
      Measured m = measure([&](int64_t i) { last = f({xs[static_cast<size_t>(i) % pool]}); },
                           Timing{rows == 10 ? 100 : 50, 20, 50}, o.quick);
      std::printf("DIAG x(%lld,10)  %-34s %10.2f us/call  spread %5.1f%%\n", static_cast<long long>(rows),
                  what.c_str(), m.median * 1e6, m.spread_pct);
      std::fflush(stdout);
    }
  }
}

void usage() {
  std::cout << "usage: theon_bench [--quick] [--csv PATH] [--inputs DIR] [--only W1,W2,W3]\n"
               "  --quick        R = 5 samples (a smoke run; its figures are not anchors)\n"
               "  --csv PATH     write the CSV (WORKLOADS.md section 4 columns) to PATH\n"
               "  --inputs DIR   .npy inputs from bench/make_inputs.py (numpy default_rng(1));\n"
               "                 without it the data come from std::mt19937_64 (noted per row)\n"
               "  --only LIST    comma list of W1, W2, W3, W5, W6, W7, W8, W10, COMPILE, OVERHEAD\n"
               "                 (default: W1,W2,W3; W6 needs --inputs from make_inputs.py --w6)\n"
               "  --w5-log2 N    W5 size n = 2^N (default 24, section 5's CPU size)\n"
               "  --diag         also time sub-graphs (dot, + b, relu, exp, log) and print DIAG lines\n"
               "  --peer NAME    the peer column of Theon's rows (default theon-cpu; run_cpu.sh uses\n"
               "                 theon-1t-cpu for its one-thread pass)\n"
               "  --no-hand      skip the hand-written loop\n";
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << a << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--quick") o.quick = true;
    else if (a == "--csv") o.csv = value();
    else if (a == "--inputs") o.inputs = value();
    else if (a == "--only") o.only = value();
    else if (a == "--diag") o.diag = true;
    else if (a == "--no-hand") o.hand = false;
    else if (a == "--peer") o.peer = value();
    else if (a == "--w5-log2") o.w5_log2 = std::stoi(value());
    else if (a == "--compile-child") o.compile_child = value();
    else if (a == "-h" || a == "--help") {
      usage();
      return 0;
    } else {
      std::cerr << "unknown option " << a << "\n";
      usage();
      return 2;
    }
  }

  o.self = argv[0];
  if (!o.compile_child.empty()) {  // COMPILE's warm process: same graph, the given compiledir
    config().compiledir = o.compile_child;
    std::cout << "COMPILE_CHILD " << compile_line(compile_once(Array::randn({64, 256}, 3))) << std::endl;
    return 0;
  }
  try {
    Rows rows(o.csv);
    unsigned hw = std::thread::hardware_concurrency();
    std::string threads = env_or("OMP_NUM_THREADS", "default(" + std::to_string(hw) + " logical cores)");
    std::string thread_note = "threads=OMP " + threads + " OPENBLAS_NUM_THREADS=" +
                              env_or("OPENBLAS_NUM_THREADS", "default") + " ";
    const std::string pfx = o.peer + ".";
    rows.env(pfx + "cxx", std::string("g++ ") + __VERSION__);
#ifdef THEON_BENCH_BUILD_TYPE
    rows.env(pfx + "build_type", THEON_BENCH_BUILD_TYPE);
#endif
    rows.env(pfx + "mode", config().mode);
    rows.env(pfx + "threads", "OMP_NUM_THREADS=" + threads);
    rows.env(pfx + "OPENBLAS_CORETYPE", env_or("OPENBLAS_CORETYPE", "unset"));
    rows.env(pfx + "quick", o.quick ? "yes (R=5)" : "no");

    const std::vector<Workload> wls = {
        {"W1", "cpu", 10, 16, false, {100, 20, 50}},
        {"W2", "cpu", 10000, 4, false, {50, 20, 50}},
        {"W3", "host", 10000, 4, true, {50, 20, 50}},
    };
    for (const auto& w : wls)
      if (selected(o, w.name)) run_workload(o, w, rows, thread_note);
    if (selected(o, "W5")) run_w5(o, rows, thread_note);
    if (selected(o, "W6")) run_w6(o, rows, thread_note);
    if (selected(o, "W7")) run_w7(o, rows, thread_note);
    if (selected(o, "W8")) run_w8(o, rows, thread_note);
    if (selected(o, "W10")) run_w10(o, rows, thread_note);
    if (selected(o, "COMPILE")) run_compile(o, rows);
    if (selected(o, "OVERHEAD")) run_overhead(o, rows);
    if (o.diag) run_diag(o);
  } catch (const std::exception& e) {
    std::cerr << "theon_bench: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
