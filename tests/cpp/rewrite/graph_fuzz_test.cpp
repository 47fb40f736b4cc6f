// Graph fuzzer: random graphs over the core's ops (elementwise, reductions, dot/Gemm, softmax,
// conv2d, pooling, random draws with fixed seeds, sort/argsort, cumsum/cumprod, indexing),
// stored in float16, float32 or float64, on ordinary, extreme (+-max, denormals, inf, NaN) or
// empty and size-1 inputs. Each trial compiles its graph in fast_run and in none, and the same
// graph built in float64 from the same (upcast) inputs, and checks:
//  - fast_run agrees with none: NaN equals NaN, and where none is not finite fast_run may be
//    (stabilizing rewrites exist for that), but not the reverse;
//  - on ordinary inputs, fast_run agrees with the float64 reference, to a tolerance of a few
//    ulps of the storage dtype times the largest intermediate value;
//  - with device=cuda (the gpu-sim label), the device's fast_run agrees with the CPU's.
// The budget comes from the environment (graph_fuzz_settings.hpp); CI runs a fixed seed and
// scripts/fuzz.sh a longer run with a random one. A failure prints the line that reruns it.
#include "backends/cuda/gpu_test_support.hpp"
#include "rewrite/graph_fuzz_settings.hpp"

#include <theon/theon.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <random>
#include <sstream>

namespace theon {
namespace {

enum class InputKind { Ordinary, Extreme, EmptyOrSizeOne };

const char* kind_name(InputKind k) {
  return k == InputKind::Ordinary ? "ordinary" : k == InputKind::Extreme ? "extreme" : "empty/size-1";
}

double max_finite(DType d) {
  return d == DType::Float16 ? 65504.0 : d == DType::Float32 ? std::numeric_limits<float>::max()
                                                             : std::numeric_limits<double>::max();
}
double smallest_denormal(DType d) {
  return d == DType::Float16 ? 5.960464477539063e-08 : d == DType::Float32 ? std::numeric_limits<float>::denorm_min()
                                                                           : std::numeric_limits<double>::denorm_min();
}
double epsilon(DType d) {
  return d == DType::Float16 ? 9.765625e-04 : d == DType::Float32 ? std::numeric_limits<float>::epsilon()
                                                                  : std::numeric_limits<double>::epsilon();
}

// What a trial is, drawn from (seed, trial) alone so that one trial reruns by itself.
struct TrialPlan {
  DType storage = DType::Float32;
  InputKind kind = InputKind::Ordinary;
  int64_t rows = 1, cols = 1;
  uint64_t graph_seed = 0;        // the graph's structure and constants
  std::vector<Array> input_values;  // in the storage dtype
};

TrialPlan plan_trial(uint64_t seed, int64_t trial) {
  std::seed_seq seq{seed, static_cast<uint64_t>(trial)};
  std::mt19937_64 rng(seq);
  std::uniform_int_distribution<int> pick(0, 1 << 20);
  TrialPlan p;
  const int d = pick(rng) % 10;
  p.storage = d < 4 ? DType::Float32 : d < 7 ? DType::Float64 : DType::Float16;
  const int k = pick(rng) % 20;
  p.kind = k < 12 ? InputKind::Ordinary : k < 17 ? InputKind::Extreme : InputKind::EmptyOrSizeOne;
  if (p.kind == InputKind::EmptyOrSizeOne) {
    p.rows = pick(rng) % 3;  // 0, 1 or 2
    p.cols = p.rows == 0 ? pick(rng) % 4 : pick(rng) % 2;
  } else {
    p.rows = 1 + pick(rng) % 5;
    p.cols = 1 + pick(rng) % 5;
  }
  p.graph_seed = rng();
  const int n_inputs = 1 + pick(rng) % 3;
  const double big = max_finite(p.storage), tiny = smallest_denormal(p.storage);
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const double extremes[] = {big, -big, tiny, -tiny, 3 * tiny, inf, -inf, nan, 0.0, -0.0, big / 2};
  for (int i = 0; i < n_inputs; ++i) {
    const int variant = pick(rng) % 3;  // full, row (1, cols), column (rows, 1)
    Shape s = variant == 0 ? Shape{p.rows, p.cols} : variant == 1 ? Shape{1, p.cols} : Shape{p.rows, 1};
    Array v = Array::randn(s, rng(), DType::Float64);
    if (p.kind == InputKind::Extreme) {
      std::vector<double> e = v.to_vector<double>();
      for (double& x : e)
        if (pick(rng) % 10 < 4) x = extremes[pick(rng) % std::size(extremes)];
      v = Array::from_vector<double>(e, s);
    }
    p.input_values.push_back(v.astype(p.storage));
  }
  return p;
}

struct RandomGraph {
  std::vector<Var> inputs;
  Var output;
  std::vector<Var> intermediates;  // every value the output is made of (for the tolerance)
  std::vector<RandomStreams> streams;
};

// Builds the trial's graph in `dtype` (its storage dtype, or float64 for the reference) with
// the same structure and the same constants (drawn in the storage dtype) for both. Every
// intermediate is a matrix broadcastable to (rows, cols), so any op can follow any other.
RandomGraph build_graph(const TrialPlan& plan, DType dtype) {
  std::mt19937_64 rng(plan.graph_seed);
  std::uniform_int_distribution<int> pick(0, 1 << 20);
  const int64_t rows = plan.rows, cols = plan.cols;
  const DType storage = plan.storage;
  auto stored = [&](const Array& a) { return a.astype(storage).astype(dtype); };
  auto constant_randn = [&](const Shape& s) { return constant(stored(Array::randn(s, rng(), DType::Float64))); };
  auto index_vector = [&](int64_t length, int64_t bound) {  // with repeats
    std::vector<int64_t> idx(static_cast<size_t>(length));
    for (int64_t& i : idx) i = bound ? pick(rng) % bound : 0;
    return constant(Array::from_vector<int64_t>(idx, Shape{length}));
  };
  auto permutation = [&](int64_t n) {
    std::vector<int64_t> idx(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) idx[static_cast<size_t>(i)] = i;
    std::shuffle(idx.begin(), idx.end(), rng);
    return constant(Array::from_vector<int64_t>(idx, Shape{n}));
  };
  RandomGraph g;
  std::vector<Var> pool;
  for (size_t i = 0; i < plan.input_values.size(); ++i) {
    Var v = tensor::tensor(dtype, {-1, -1}, "in" + std::to_string(i));
    g.inputs.push_back(v);
    pool.push_back(v);
  }
  const size_t n_inputs = pool.size();
  auto any = [&]() { return pool[pick(rng) % pool.size()]; };
  auto full = [&](const Var& x) { return tensor::broadcast_to(x, {rows, cols}); };
  auto as4 = [&](const Var& x, const std::vector<int64_t>& shape4) { return tensor::reshape(full(x), shape4); };
  // A (cols, cols) weight for the matrix-product cases (dot + bias becomes a Gemm).
  Var w = constant_randn({cols, cols});
  const int steps = 2 + pick(rng) % 8;
  for (int s = 0, attempts = 0; s < steps && attempts < 100; ++attempts) {
    Var a = any(), b = any(), r;
    const int op = pick(rng) % 34;
    const int variant = pick(rng) % 4;
    // An op refusing the static shapes (a 3-wide filter over 0 columns) is skipped: the same
    // in every dtype, so both builds stay the same graph.
    try {
      switch (op) {
        case 0: r = a + b; break;
        case 1: r = a - b * 0.5; break;
        case 2: r = a * b; break;
        case 3: r = tensor::tanh(a); break;
        case 4: r = tensor::exp(tensor::minimum(a, b) * 0.1); break;
        case 5: r = tensor::log1p(tensor::abs(a)); break;
        case 6: r = tensor::sum(a, std::vector<int>{1}, true) + b; break;
        case 7:  // max over an empty axis has no identity: a sum then
          r = rows ? tensor::max(a, std::vector<int>{0}, true) * a : tensor::sum(a, std::vector<int>{0}, true) * a;
          break;
        case 8: r = tensor::switch_(a > b, a, b * 2.0); break;
        case 9: r = tensor::sigmoid(a) + tensor::sigmoid(a); break;  // a common subexpression
        case 10: r = tensor::mean(a, std::vector<int>{0, 1}, true) - a; break;
        case 11: r = tensor::clip(a, as_var(-1.0), as_var(1.0)) + tensor::relu(b); break;
        case 12: r = a * (constant(Array::full({1, 1}, 2.0, dtype)) + 1.0); break;  // foldable
        case 13: r = tensor::sqrt(tensor::sqr(a) + 1.0) / (tensor::abs(b) + 1.0); break;
        // Cases for canonicalize and specialize (Gemm): the rules must keep results.
        case 14: r = tensor::dot(full(a), w) + b; break;  // bias of any broadcast
        case 15:  // a (1, cols) product broadcast against b at run time, scaled
          r = tensor::dot(tensor::broadcast_to(tensor::sum(a, std::vector<int>{0}, true), {1, cols}), w) * 0.5 - b;
          break;
        case 16: r = tensor::log(tensor::softmax(a)) + b; break;
        case 17: r = -(-a) * 1.0 + b / 1.0 - 0.0; break;
        case 18: r = tensor::log(tensor::sigmoid(a)) + tensor::log(1.0 - tensor::sigmoid(b)); break;
        case 19: r = variant % 2 ? tensor::log_softmax(a) + b : tensor::softmax(a, 0) * b; break;
        case 20: {  // conv2d keeping (rows, cols): one image, or the rows as a batch
          tensor::Conv2dOptions o{.border_mode = "half", .filter_flip = variant % 2 == 0};
          if (variant < 2) {
            const int64_t kh = 1 + 2 * (pick(rng) % 2), kw = 1 + 2 * (pick(rng) % 2);
            r = tensor::reshape(tensor::conv2d(as4(a, {1, 1, rows, cols}), constant_randn({1, 1, kh, kw}), o),
                                {rows, cols}) + b;
          } else {
            Var y = tensor::conv2d(as4(a, {rows, 1, 1, cols}), constant_randn({2, 1, 1, 3}), o);  // (rows, 2, 1, cols)
            r = tensor::reshape(tensor::sum(y, std::vector<int>{1}), {rows, cols}) - b;
          }
          break;
        }
        case 21: {  // conv2d changing the shape (full border, stride, dilation), summed to (1, 1)
          tensor::Conv2dOptions o{.border_mode = variant % 2 ? tensor::BorderMode("full") : tensor::BorderMode(1),
                                  .subsample = {1 + variant / 2, 1},
                                  .filter_dilation = {1, 1 + variant % 2}};
          Var y = tensor::conv2d(as4(a, {1, 1, rows, cols}), constant_randn({1, 1, 2, 2}), o);
          r = tensor::reshape(tensor::sum(y), {1, 1}) * b;
          break;
        }
        case 22: {  // pooling keeping (rows, cols)
          const char* modes[] = {"max", "sum", "average_inc_pad", "average_exc_pad"};
          Var x4 = as4(a, {1, 1, rows, cols});
          Var y = pick(rng) % 5 == 0 ? tensor::max_pool_2d_same_size(x4, {2, 2})
                                     : tensor::pool_2d(x4, {3, 3}, true, {1, 1}, {1, 1}, modes[variant]);
          r = tensor::reshape(y, {rows, cols}) + b;
          break;
        }
        case 23: {  // pooling changing the shape (partial windows kept), summed to (1, 1)
          const char* modes[] = {"max", "sum", "average_inc_pad", "average_exc_pad"};
          Var y = tensor::pool_2d(as4(a, {1, 1, rows, cols}), {2, 2}, false, {}, {}, modes[variant]);
          r = tensor::reshape(tensor::sum(y), {1, 1}) + b;
          break;
        }
        case 24: {  // a random draw with a fixed seed: the same numbers in every compiled function
          g.streams.emplace_back(static_cast<int64_t>(pick(rng)));
          RandomStreams& rs = g.streams.back();
          Var draw = variant == 0   ? rs.uniform(tensor::shape(a), -1.0, 1.0, storage)
                     : variant == 1 ? rs.normal(tensor::shape(a), 0.0, 1.0, storage)
                     : variant == 2 ? rs.binomial(tensor::shape(a), 1, 0.5, storage)
                                    : rs.uniform({rows, 1}, 0.0, 2.0, storage);
          r = a * tensor::cast(draw, dtype) + b;
          break;
        }
        case 25: r = tensor::sort(a, variant % 2 ? -1 : 0) + b; break;
        case 26: {  // argsort of an input (identical values in every dtype, so identical positions)
          Var x = pool[pick(rng) % n_inputs];
          r = tensor::cast(tensor::argsort(x, variant % 2), dtype) * 0.5 - b;
          break;
        }
        case 27: r = tensor::cumsum(a, variant % 2) * 0.5 + b; break;
        case 28: r = tensor::cumprod(variant < 2 ? a : tensor::tanh(a), variant % 2) - b; break;
        case 29:  // reversed views
          r = (variant % 2 ? full(a)[{Slice{{}, {}, -1}}] : full(a)[{Slice{}, Slice{{}, {}, -1}}]) * b;
          break;
        case 30:  // advanced indexing (repeated indices) along rows or columns
          if (variant == 0) r = tensor::take(full(a), index_vector(rows, rows), 0) + b;
          else if (variant == 1) r = tensor::take(full(a), index_vector(cols, cols), 1) + b;
          else r = full(a)[Index(index_vector(rows, rows))] - b;
          break;
        case 31: {  // set_subtensor of a slice of rows
          const int64_t lo = rows ? pick(rng) % rows : 0, hi = lo + (rows - lo ? pick(rng) % (rows - lo + 1) : 0);
          r = tensor::set_subtensor(full(a)[{Slice{lo, hi}}], tensor::sum(b, std::vector<int>{0}, true) * 0.5);
          break;
        }
        case 32:  // inc_subtensor of one column (negative index too), or of every row once
          if (cols > 0 && variant < 2) {
            const int64_t j = variant ? -1 - pick(rng) % cols : pick(rng) % cols;
            r = tensor::inc_subtensor(full(a)[{Slice{}, j}], tensor::sum(full(b), std::vector<int>{1}));
          } else {
            r = tensor::set_subtensor(full(a)[Index(permutation(rows))], full(b) * 2.0);
          }
          break;
        case 33:  // inc_subtensor with repeated row indices: the increments add up
          r = tensor::inc_subtensor(full(a)[Index(index_vector(rows, rows))], full(b));
          break;
      }
    } catch (const Error&) {
      continue;
    }
    pool.push_back(r);
    ++s;
  }
  g.output = pool.back();
  for (size_t i = n_inputs; i + 1 < pool.size(); ++i)  // use every intermediate
    if (pick(rng) % 3 == 0) g.output = g.output + tensor::sum(pool[i]);
  g.intermediates.assign(pool.begin() + static_cast<std::ptrdiff_t>(n_inputs), pool.end());
  return g;
}

// The first element where `got` is not close to `want`, described; empty when all are.
// Where `want` is finite, `got` must be finite and within atol + rtol * |want| + slack[i]
// (slack: empty, or one entry an element). Where `want` is NaN or infinite, `got` must be the
// same (NaN equals NaN), unless `free_where_not_finite`: a stabilized result is finite where
// the plain one overflowed, and where a sum reaches the overflow boundary its order decides
// between inf, -inf and NaN (DBL_MAX * (-0.7 - 0.5 + 1.8) is -inf or NaN as it is grouped).
std::string mismatch(const Array& got, const Array& want, double rtol, double atol, bool free_where_not_finite,
                     const std::vector<double>& slack = {}) {
  auto shape_text = [](const Shape& s) {
    std::string t = "(";
    for (int64_t d : s) t += std::to_string(d) + ",";
    return t + ")";
  };
  if (got.shape() != want.shape())
    return "shapes differ: " + shape_text(got.shape()) + " vs " + shape_text(want.shape());
  const std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i) {
    bool ok;
    const double extra = slack.empty() ? 0.0 : slack[i];
    if (!std::isfinite(w[i])) ok = free_where_not_finite || (std::isnan(w[i]) ? std::isnan(g[i]) : g[i] == w[i]);
    else ok = std::isfinite(g[i]) && std::abs(g[i] - w[i]) <= atol + rtol * std::abs(w[i]) + extra;
    if (!ok) {
      std::ostringstream os;
      os.precision(17);
      os << "element " << i << ": " << g[i] << " vs " << w[i] << " (atol " << atol << ", rtol " << rtol;
      if (extra > 0) os << ", slack " << extra;
      os << ")";
      return os.str();
    }
  }
  return "";
}

// How inaccurate the unoptimized graph is, element by element: |plain - reference| (0 where
// either is not finite), scaled from `plain_eps` to the storage dtype's epsilon. Rewrites such
// as log(1 - sigmoid(x)) -> -softplus(x) make results more accurate than the plain graph's
// cancellation allows: the comparisons give them that much room, and no more.
std::vector<double> inaccuracy(const Array& plain, const Array& reference, double plain_eps, double eps) {
  std::vector<double> p = plain.to_vector<double>(), r = reference.to_vector<double>(), d(p.size(), 0.0);
  if (p.size() != r.size()) return {};
  for (size_t i = 0; i < p.size(); ++i)
    if (std::isfinite(p[i]) && std::isfinite(r[i])) d[i] = 2 * std::abs(p[i] - r[i]) * (eps / plain_eps);
  return d;
}

// The largest finite magnitude among the arrays (at least 1): what rounding errors scale with.
double magnitude(const std::vector<Array>& arrays) {
  double m = 1.0;
  for (const Array& a : arrays)
    for (double x : a.to_vector<double>())
      if (std::isfinite(x)) m = std::max(m, std::abs(x));
  return m;
}

struct Outcome {
  std::vector<Array> values;
  std::string error;  // what it raised, if it did
};

Outcome run(const Function& f, const std::vector<Array>& inputs) {
  Outcome o;
  try {
    o.values = f(inputs);
  } catch (const std::exception& e) {
    o.error = e.what();
  }
  return o;
}

Function compile(const RandomGraph& g, const std::vector<Var>& outputs, const std::string& mode) {
  // no_default_updates: the random states stay put, so every function draws the same numbers.
  return function(g.inputs, outputs, {.mode = mode, .on_unused_input = "ignore", .no_default_updates = true});
}

/// Compiles on the CPU with the interpreter (the reference is no code under test: generating
/// its kernels would only cost the codegen run time); restores the config on scope exit.
struct ReferenceScope {
  ReferenceScope() : saved(config()) {
    config().device = "cpu";
    config().cxx = "";
  }
  ~ReferenceScope() { config() = saved; }
  Config saved;
};

// Runs one trial; returns why it failed (empty when it passed).
std::string run_trial(const testing::FuzzSettings& settings, int64_t trial, bool on_gpu, int& errors_raised) {
  const TrialPlan plan = plan_trial(settings.seed, trial);
  const RandomGraph g = build_graph(plan, plan.storage);
  const RandomGraph g64 = build_graph(plan, DType::Float64);
  std::vector<Array> inputs64;
  for (const Array& v : plan.input_values) inputs64.push_back(v.astype(DType::Float64));

  std::ostringstream why;
  auto fail = [&](const std::string& what) {
    why << what << "\n";
  };
  Outcome opt, plain, reference, cpu, plain32;
  {
    // The float64 reference and (on a GPU) the CPU's fast_run run on the CPU.
    ReferenceScope cpu_scope;
    std::vector<Var> outs = {g64.output};
    outs.insert(outs.end(), g64.intermediates.begin(), g64.intermediates.end());
    reference = run(compile(g64, outs, "none"), inputs64);
    if (on_gpu) {
      // On a GPU only fast_run runs on the device (the simulator compiles every kernel: the
      // budget goes to more trials); none and fast_run on the CPU are what it is compared with.
      cpu = run(compile(g, {g.output}, "fast_run"), plan.input_values);
      plain = run(compile(g, {g.output}, "none"), plan.input_values);
    }
    if (plan.storage == DType::Float64) {
      // A float64 graph has no more accurate reference: its float32 twin's error tells how
      // ill-conditioned the plain graph is.
      const RandomGraph g32 = build_graph(plan, DType::Float32);
      std::vector<Array> inputs32;
      for (const Array& v : plan.input_values) inputs32.push_back(v.astype(DType::Float32));
      plain32 = run(compile(g32, {g32.output}, "none"), inputs32);
    }
  }
  opt = run(compile(g, {g.output}, "fast_run"), plan.input_values);
  if (!on_gpu) plain = run(compile(g, {g.output}, "none"), plan.input_values);

  const double eps = epsilon(plan.storage);
  if (!plain.error.empty() || !opt.error.empty()) {
    // An error is fine when every compiled form gives it (an op's check on these inputs).
    if (plain.error.empty() != opt.error.empty() || plain.error.empty() != reference.error.empty())
      fail("fast_run raised: " + (opt.error.empty() ? "nothing" : opt.error) +
           "\nnone raised: " + (plain.error.empty() ? "nothing" : plain.error) +
           "\nfloat64 reference raised: " + (reference.error.empty() ? "nothing" : reference.error));
    else
      ++errors_raised;
  } else if (!reference.error.empty()) {
    fail("the float64 reference raised: " + reference.error);
  } else {
    // Rounding errors scale with the largest value the graph computes (in float64), and with
    // how ill-conditioned the plain graph is.
    const Array& want = reference.values[0];
    const double scale = magnitude(reference.values);
    const double rtol = 64 * eps, atol = 64 * eps * scale;
    std::vector<double> slack;
    if (plan.storage != DType::Float64) slack = inaccuracy(plain.values[0], want, eps, eps);
    else if (plain32.error.empty()) {
      // One sample of float32 rounding says roughly, not exactly, how much float64's can cost:
      // the largest error over the elements, with room.
      const std::vector<double> d = inaccuracy(plain32.values[0], want, epsilon(DType::Float32), eps);
      slack.assign(d.size(), d.empty() ? 0.0 : 16 * *std::max_element(d.begin(), d.end()));
      // Where the float32 twin overflowed (1 - sigmoid(20) is 0 in float32), float32's accuracy.
      const std::vector<double> p32 = plain32.values[0].to_vector<double>(), r = want.to_vector<double>();
      for (size_t i = 0; i < slack.size() && p32.size() == slack.size(); ++i)
        if (!std::isfinite(p32[i]) && std::isfinite(r[i]))
          slack[i] = std::max(slack[i], 64 * epsilon(DType::Float32) * (scale + std::abs(r[i])));
    }
    if (std::string m = mismatch(opt.values[0], plain.values[0], rtol, atol, true, slack); !m.empty())
      fail("fast_run differs from none at " + m);
    if (plan.kind != InputKind::Extreme) {
      // Allowed: the storage dtype's overflow where the float64 value is beyond its range, or
      // where none overflowed too and the graph's values come near it (sqr(x) of an
      // intermediate x is the largest value an intermediate does not show).
      const std::vector<double> pv = plain.values[0].to_vector<double>();
      const bool near_overflow = 25 * scale * scale >= max_finite(plan.storage);
      auto check_against = [&](const Array& reference64) {
        std::vector<double> wv = reference64.to_vector<double>();
        for (size_t i = 0; i < wv.size() && i < pv.size(); ++i)
          if (std::abs(wv[i]) > max_finite(plan.storage) || (near_overflow && !std::isfinite(pv[i])))
            wv[i] = std::numeric_limits<double>::quiet_NaN();
        return mismatch(opt.values[0].astype(DType::Float64), Array::from_vector<double>(wv, reference64.shape()),
                        rtol, atol, true, slack);
      };
      if (std::string m = check_against(want); !m.empty()) {
        // The plain graph can be unstable in float64 too: 1 - sigmoid(35) keeps one digit. Then
        // the float64 graph with the stabilizing rewrites (fast_run) is the better reference.
        Outcome stabilized;
        {
          ReferenceScope cpu_scope;
          stabilized = run(compile(g64, {g64.output}, "fast_run"), inputs64);
        }
        if (!stabilized.error.empty() || !check_against(stabilized.values[0]).empty())
          fail("fast_run differs from the float64 reference at " + m);
      }
    }
    if (on_gpu) {
      if (!cpu.error.empty()) fail("the CPU's fast_run raised: " + cpu.error);
      else if (std::string m = mismatch(opt.values[0], cpu.values[0], rtol, atol, plan.kind == InputKind::Extreme);
               !m.empty())
        fail("the device's fast_run differs from the CPU's at " + m);
    }
  }
  if (why.str().empty()) return "";
  std::ostringstream msg;
  msg << "graph fuzzer: seed " << settings.seed << ", trial " << trial << " (" << dtype_name(plan.storage) << ", "
      << kind_name(plan.kind) << " inputs, rows " << plan.rows << ", cols " << plan.cols << ")\n"
      << why.str() << "rerun: " << settings.rerun_line(trial) << "\n"
      << debugprint(g.output) << "\n";
  msg.precision(17);  // the inputs exactly (the rerun line rebuilds them too)
  for (size_t i = 0; i < plan.input_values.size(); ++i) {
    msg << "in" << i << ":\n" << plan.input_values[i] << "\n  exactly:";
    for (double x : plan.input_values[i].to_vector<double>()) msg << " " << x;
    msg << "\n";
  }
  if (opt.error.empty()) msg << (on_gpu ? "fast_run on the device:\n" : "fast_run:\n") << opt.values[0] << "\n";
  if (plain.error.empty()) msg << "none:\n" << plain.values[0] << "\n";
  if (reference.error.empty()) msg << "float64 reference:\n" << reference.values[0] << "\n";
  if (on_gpu && cpu.error.empty()) msg << "CPU fast_run:\n" << cpu.values[0] << "\n";
  return msg.str();
}

TEST(GraphFuzz, FastRunAgreesWithNoneAndFloat64) {
  const testing::FuzzSettings settings = testing::FuzzSettings::from_environment();
  const Device device = Device::parse(config().device);
  const bool on_gpu = device.is_cuda();
  if (on_gpu) THEON_REQUIRE_CUDA_DEVICES(device.index + 1);
  const auto start = std::chrono::steady_clock::now();
  int failures = 0, errors_raised = 0;
  int64_t trial = settings.first_trial, ran = 0;
  for (; settings.more(ran, start); ++trial, ++ran) {
    const std::string failed = run_trial(settings, trial, on_gpu, errors_raised);
    if (failed.empty()) continue;
    ADD_FAILURE() << failed;
    if (++failures >= settings.max_failures) break;
  }
  std::cout << "graph fuzzer: seed " << settings.seed << ", trials " << settings.first_trial << ".." << trial - 1
            << ", " << failures << " failed, " << errors_raised << " raised the same error in every form\n";
  // Errors (an op refusing empty inputs) must stay the exception, or the fuzzer compares nothing.
  EXPECT_LE(errors_raised, ran / 10 + 1);
}

}  // namespace
}  // namespace theon
