// RandomStreams: each random variable is a RandomDraw (ops/random.hpp: the standard uniform
// or normal draw, and the next state) of its own state, with the distribution's parameters
// applied by ordinary tensor:: ops, so they broadcast, fuse and carry gradients. Every
// transform below is exact IEEE arithmetic on the draw, so it gives the same bits on every
// device too.
#include <theon/random.hpp>

#include <theon/config.hpp>
#include <theon/error.hpp>
#include <theon/tensor.hpp>

#include "graph/user_names.hpp"
#include "ops/assert.hpp"
#include "ops/random.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

namespace theon {

using namespace tensor;

namespace {

constexpr int64_t kMaxSeed = int64_t{1} << 32;

void check_seed(int64_t seed, const std::string& what) {
  if (seed < 0 || seed >= kMaxSeed)
    throw ValueError(what + ": the seed must be in [0, 2^32), got " + std::to_string(seed));
}

// A number as a message shows it: 1.5, 0.3, 1e-07.
std::string number(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

// How messages show a value the user passed: its name, or its value when a small constant.
std::string text(const Var& v) { return v.defined() ? graph::user_label(*v.node()) : "None"; }

std::string size_text(const RandomSize& size) {
  std::string s = "(";
  for (size_t i = 0; i < size.dims().size(); ++i) s += (i ? ", " : "") + text(size.dims()[i]);
  return s + (size.dims().size() == 1 ? ",)" : ")");
}

// The value of a constant Var, if it is one.
std::optional<Array> constant_value(const Var& v) {
  if (v.defined() && v.node()->kind == graph::VarKind::Constant) return v.node()->constant;
  return std::nullopt;
}

// The float dtype of a uniform/normal: the one asked for, else floatX promoted with the
// parameters' (NEP 50: literals are weak).
DType float_dtype(std::optional<DType> dtype, const Var& a, const Var& b) {
  if (dtype) return *dtype;
  DType t = config().floatX;
  for (const Var& v : {a, b})
    if (!v.node()->weak && is_float(v.dtype())) t = promote_types(t, v.dtype());
  return t;
}

Var as_dtype(const Var& x, DType dtype) { return x.dtype() == dtype ? x : cast(x, dtype); }

// How far a probability row's sum may be from 1.
constexpr double kSumTolerance = 1e-5;

// x, checked when the function runs: every condition must hold, else ValueError(message).
Var checked(const Var& x, const std::vector<Var>& conditions, const std::string& message) {
  std::vector<graph::VarPtr> c;
  for (const Var& v : conditions) c.push_back(v.node());
  return Var(ops::assert_op(x.node(), c, message));
}

// min(x, 0): x's smallest element when one is negative (what a message shows), and no error for
// an empty x (a shown value is computed on every call, so it must not fail where the check
// passes).
Var smallest(const Var& x) {
  const Var zero = cast(as_var(0), x.dtype());
  return min(concatenate({x.flatten(1), stack({zero})}, 0));
}

// The values of two constants broadcast together, as float64 (for checks of pairs of
// parameters); nullopt when either is not a constant or the shapes do not broadcast.
std::optional<std::pair<Array, Array>> constant_pair(const Var& a, const Var& b) {
  const auto ca = constant_value(a), cb = constant_value(b);
  if (!ca || !cb) return std::nullopt;
  const Shape &sa = ca->shape(), &sb = cb->shape();
  const size_t nd = std::max(sa.size(), sb.size());
  Shape out(nd);
  for (size_t d = 0; d < nd; ++d) {
    const int64_t x = d + sa.size() >= nd ? sa[d + sa.size() - nd] : 1;
    const int64_t y = d + sb.size() >= nd ? sb[d + sb.size() - nd] : 1;
    if (x != y && x != 1 && y != 1) return std::nullopt;  // the graph reports it
    out[d] = x == 1 ? y : x;
  }
  return std::make_pair(ca->broadcast_to(out).astype(DType::Float64), cb->broadcast_to(out).astype(DType::Float64));
}

// std >= 0 (NumPy's normal refuses a negative scale; NaN passes, as there): a constant now, a
// symbolic std when the function runs, naming the call and the value.
Var checked_std(const Var& std_dev, const std::string& what) {
  const std::string message = what + ": std must be >= 0";
  if (auto c = constant_value(std_dev)) {
    const Array v = c->astype(DType::Float64);
    for (int64_t i = 0; i < v.size(); ++i)
      if (v.item(i) < 0) throw ValueError(message + ", got " + number(v.item(i)));
    return std_dev;
  }
  const std::string shown = std_dev.ndim() == 0 ? text(std_dev) : "min(" + text(std_dev) + ")";
  return Var(ops::assert_op(std_dev.node(), {(~any(lt(std_dev, as_var(0)))).node()}, message,
                            {{shown, (std_dev.ndim() == 0 ? std_dev : smallest(std_dev)).node()}}));
}

Var all_in_unit_interval(const Var& p) { return all(and_(ge(p, as_var(0.0)), le(p, as_var(1.0)))); }

// Probabilities (float64): checked now when constant, else when the function runs. Rows along
// the last axis must sum to 1 when `rows_sum_to_one`.
Var checked_probabilities(const Var& p, bool rows_sum_to_one, const std::string& what, const std::string& name) {
  const Var pf = as_dtype(p, DType::Float64);
  if (auto c = constant_value(p)) {
    const Array v = c->astype(DType::Float64);
    const int64_t k = v.ndim() == 0 ? 1 : v.shape()[v.ndim() - 1];
    for (int64_t r = 0; k > 0 && r < v.size() / k; ++r) {
      double total = 0;
      for (int64_t j = 0; j < k; ++j) {
        const double pj = v.item(r * k + j);
        if (!(pj >= 0.0 && pj <= 1.0))
          throw ValueError(what + ": " + name + " must be in [0, 1], got " + number(pj));
        total += pj;
      }
      if (rows_sum_to_one && !(std::fabs(total - 1.0) <= kSumTolerance))
        throw ValueError(what + ": " + name + (v.ndim() > 1 ? " row " + std::to_string(r) : std::string()) +
                         " sums to " + number(total) + ", not 1 (within 1e-5)");
    }
    return pf;
  }
  std::vector<Var> conditions = {all_in_unit_interval(pf)};
  if (rows_sum_to_one) conditions.push_back(all(le(abs(sum(pf, -1) - as_var(1.0)), as_var(kSumTolerance))));
  return checked(pf, conditions,
                 what + ": " + name + " must be in [0, 1]" + (rows_sum_to_one ? " with rows summing to 1 (within 1e-5)" : ""));
}

}  // namespace

RandomSize::RandomSize(std::initializer_list<int64_t> dims) : RandomSize(std::vector<int64_t>(dims)) {}
RandomSize::RandomSize(const std::vector<int64_t>& dims) {
  for (int64_t n : dims) dims_.push_back(as_var(n));
}
RandomSize::RandomSize(std::initializer_list<Var> dims) : dims_(dims) {}
RandomSize::RandomSize(std::vector<Var> dims) : dims_(std::move(dims)) {}
RandomSize::RandomSize(const Var& shape_vector) {
  if (!shape_vector.defined() || shape_vector.ndim() != 1 || shape_vector.static_shape()[0] < 0 ||
      !is_integer(shape_vector.dtype()))
    throw TypeError("random size: " + (shape_vector.defined() ? shape_vector.type_str() : std::string("undefined")) +
                    " must be an int vector of static length (x.shape()) or a list of sizes");
  for (int64_t i = 0; i < shape_vector.static_shape()[0]; ++i) dims_.push_back(shape_vector[Index(i)]);
}

RandomStreams::RandomStreams(int64_t seed) : seed_(seed) { check_seed(seed, "RandomStreams"); }

void RandomStreams::seed(int64_t seed) {
  check_seed(seed, "RandomStreams.seed");
  seed_ = seed;
  for (auto& [state, next] : state_updates_) state.set_value(Array::from_vector<int64_t>({seed, 0}));
}

Var RandomStreams::draw(bool normal, const RandomSize& size, DType dtype, const std::string& what) {
  const auto stream = static_cast<uint32_t>(state_updates_.size());
  SharedVar state = shared(Array::from_vector<int64_t>({seed_, 0}), "random_state_" + std::to_string(stream));
  const auto [value, next] = ops::random_draw(normal ? random::Distribution::Normal : random::Distribution::Uniform,
                                              state.node(), [&] {
                                                std::vector<graph::VarPtr> dims;
                                                for (const Var& d : size.dims()) dims.push_back(d.node());
                                                return dims;
                                              }(),
                                              dtype, stream, what);
  state.node()->default_update = next;
  state_updates_.emplace_back(state, Var(next));
  return Var(value);
}

std::pair<SharedVar, Var> RandomStreams::state_update_of(const Var& draw) const {
  for (const auto& [v, index] : draws_)
    if (draw.defined() && v.lock() == draw.node()) return state_updates_[index];
  throw ValueError("RandomStreams.state_update_of: " +
                   text(draw) +
                   " was not made by this RandomStreams");
}

Var RandomStreams::returned(const Var& out) {
  draws_.emplace_back(out.node(), state_updates_.size() - 1);
  return out;
}

Var RandomStreams::uniform(const RandomSize& size, const Var& low, const Var& high, std::optional<DType> dtype) {
  const DType t = float_dtype(dtype, low, high);
  const std::string what = "uniform(size=" + size_text(size) + ", low=" + text(low) + ", high=" + text(high) + ")";
  const Var u = draw(false, size, t, what);
  const Var out = as_dtype(low + (high - low) * u, t);
  return returned(out);
}
Var RandomStreams::uniform(const RandomSize& size, double low, double high, std::optional<DType> dtype) {
  if (low == 0.0 && high == 1.0) {  // the draw itself: no arithmetic to round
    const Var u = draw(false, size, dtype.value_or(config().floatX), "uniform(size=" + size_text(size) + ")");
    return returned(u);
  }
  return uniform(size, as_var(low), as_var(high), dtype);
}

Var RandomStreams::normal(const RandomSize& size, const Var& avg, const Var& std, std::optional<DType> dtype) {
  const DType t = float_dtype(dtype, avg, std);
  const std::string what = "normal(size=" + size_text(size) + ", avg=" + text(avg) + ", std=" + text(std) + ")";
  const Var checked = checked_std(std, what);
  const Var z = draw(true, size, t, what);
  const Var out = as_dtype(avg + checked * z, t);
  return returned(out);
}
Var RandomStreams::normal(const RandomSize& size, double avg, double std, std::optional<DType> dtype) {
  if (avg == 0.0 && std == 1.0) {
    const Var z = draw(true, size, dtype.value_or(config().floatX), "normal(size=" + size_text(size) + ")");
    return returned(z);
  }
  return normal(size, as_var(avg), as_var(std), dtype);
}

Var RandomStreams::binomial(const RandomSize& size, int64_t n, const Var& p, DType dtype) {
  const std::string what = "binomial(size=" + size_text(size) + ", n=" + std::to_string(n) + ", p=" + text(p) + ")";
  if (n < 0) throw ValueError(what + ": n must be >= 0, got " + std::to_string(n));
  // n Bernoulli trials per element: uniforms of size + (n,) below p (compared in float64,
  // exact), summed over the last axis. n = 1 (dropout) is one comparison.
  std::vector<Var> dims = size.dims();
  if (n != 1) dims.push_back(as_var(n));
  const Var u = draw(false, RandomSize(dims), DType::Float64, what);
  const Var pf = checked_probabilities(p, false, what, "p");
  std::vector<int> trailing_axis;  // p[..., None]: one p per element, for each of its n trials
  for (int d = 0; d < pf.ndim(); ++d) trailing_axis.push_back(d);
  trailing_axis.push_back(-1);
  Var out = lt(u, n != 1 ? pf.dimshuffle(trailing_axis) : pf);
  if (n != 1) out = sum(out, -1);
  out = as_dtype(out, dtype);
  return returned(out);
}
Var RandomStreams::binomial(const RandomSize& size, int64_t n, double p, DType dtype) {
  return binomial(size, n, as_var(p), dtype);
}

Var RandomStreams::random_integers(const RandomSize& size, const Var& low, const Var& high, DType dtype) {
  const std::string what =
      "random_integers(size=" + size_text(size) + ", low=" + text(low) + ", high=" + text(high) + ")";
  if (!is_integer(low.dtype()) || !is_integer(high.dtype()))
    throw TypeError(what + ": low and high must be integers, got " + std::string(dtype_name(low.dtype())) + " and " +
                    std::string(dtype_name(high.dtype())));
  // high >= low (NumPy's randint refuses an empty range): constants now, else when the
  // function runs, naming the call and the values.
  const std::string message = what + ": high must be >= low";
  Var lo = as_dtype(low, DType::Int64);
  const Var hi = as_dtype(high, DType::Int64);
  if (auto c = constant_pair(low, high)) {
    for (int64_t i = 0; i < c->first.size(); ++i)
      if (c->second.item(i) < c->first.item(i))
        throw ValueError(message + ", got low = " + number(c->first.item(i)) + ", high = " + number(c->second.item(i)));
  } else if (lo.ndim() == 0 && hi.ndim() == 0) {
    lo = Var(ops::assert_op(lo.node(), {ge(hi, lo).node()}, message, {{"low", lo.node()}, {"high", hi.node()}}));
  } else {
    lo = Var(ops::assert_op(lo.node(), {(~any(lt(hi, lo))).node()}, message,
                            {{"min(high - low)", smallest(hi - lo).node()}}));
  }
  // low + floor(u * (high - low + 1)) with u = (2k + 1) / 2^53 < 1 - 2^-53: the product stays
  // below the range (exact IEEE rounding), so every value is in [low, high]; the bias is
  // below range / 2^52.
  const Var u = draw(false, size, DType::Float64, what);
  const Var range = hi - lo + as_var(1);
  const Var out = as_dtype(lo + cast(u * cast(range, DType::Float64), DType::Int64), dtype);
  return returned(out);
}
Var RandomStreams::random_integers(const RandomSize& size, int64_t low, int64_t high, DType dtype) {
  return random_integers(size, as_var(low), as_var(high), dtype);
}

namespace {

// The index of the category each uniform u falls in, given the running sums `cdf` of the
// probabilities (last axis): the number of sums <= u, at most k - 1 (rounding may leave the
// last sum just under 1).
Var category_of(const Var& u, const Var& cdf, const Var& k) {
  const Var count = sum(cast(le(cdf, u.dimshuffle({0, 1, -1})), DType::Int64), -1);
  return minimum(count, k - as_var(1));
}

}  // namespace

Var RandomStreams::multinomial(const Var& pvals, int64_t n, DType dtype) {
  const std::string what = "multinomial(pvals=" + text(pvals) + ", n=" + std::to_string(n) + ")";
  if (!pvals.defined() || pvals.ndim() != 2 || !is_float(pvals.dtype()))
    throw TypeError(what + ": pvals must be a float matrix (one probability row per draw), got " +
                    (pvals.defined() ? pvals.type_str() : std::string("undefined")));
  if (n < 1) throw ValueError(what + ": n must be >= 1, got " + std::to_string(n));
  const Var pv = checked_probabilities(pvals, true, what, "pvals");
  const Var shp = shape(pv);
  const Var rows = shp[Index(0)], k = shp[Index(1)];
  const Var u = draw(false, RandomSize(std::vector<Var>{rows, as_var(n)}), DType::Float64, what);
  const Var cdf = cumsum(pv, 1).dimshuffle({0, -1, 1});  // (rows, 1, k)
  const Var idx = category_of(u, cdf, k);                                            // (rows, n)
  const Var classes = cumsum(alloc(as_var(int64_t{1}), std::vector<Var>{k})) - as_var(1);  // 0 .. k-1
  const Var counts = sum(cast(eq(idx.dimshuffle({0, 1, -1}), classes), DType::Int64), 1);    // (rows, k)
  const Var out = as_dtype(counts, dtype);
  return returned(out);
}

Var RandomStreams::permutation(int64_t n, DType dtype) {
  const std::string what = "permutation(n=" + std::to_string(n) + ")";
  if (n < 0) throw ValueError(what + ": n must be >= 0, got " + std::to_string(n));
  // The rank of each of n uniforms (ties, with probability n^2 / 2^53, broken by index) is a
  // uniformly random permutation; out[t] = the index whose rank is t.
  const Var u = draw(false, RandomSize({n}), DType::Float64, what);
  const Var index = constant(Array::arange(n, DType::Int64));
  const Var before = or_(lt(u.dimshuffle({-1, 0}), u.dimshuffle({0, -1})),
                         and_(eq(u.dimshuffle({-1, 0}), u.dimshuffle({0, -1})),
                              lt(index.dimshuffle({-1, 0}), index.dimshuffle({0, -1}))));  // [i, j]: j before i
  const Var rank = sum(cast(before, DType::Int64), 1);
  const Var out = as_dtype(argmax(eq(rank.dimshuffle({-1, 0}), index.dimshuffle({0, -1})), 1), dtype);
  return returned(out);
}

Var RandomStreams::choice(const RandomSize& size, int64_t a, bool replace, const Var& p, DType dtype) {
  const std::string what = "choice(size=" + size_text(size) + ", a=" + std::to_string(a) +
                           ", replace=" + (replace ? "True" : "False") + (p.defined() ? ", p=" + text(p) : "") + ")";
  if (a < 1) throw ValueError(what + ": a must be >= 1, got " + std::to_string(a));
  if (!replace) {
    if (p.defined()) throw NotImplementedError(what + ": choice without replacement takes no p");
    int64_t total = 1;
    for (const Var& d : size.dims()) {
      const auto c = constant_value(d);
      if (!c) throw NotImplementedError(what + ": choice without replacement needs a constant size");
      total *= static_cast<int64_t>(c->item());
    }
    if (total > a)
      throw ValueError(what + ": cannot take " + std::to_string(total) + " values from " + std::to_string(a) +
                       " without replacement");
    std::vector<int64_t> dims;
    for (const Var& d : size.dims()) dims.push_back(static_cast<int64_t>(constant_value(d)->item()));
    const Var perm = permutation(a, dtype);
    const Var out = perm[{Slice{0, total}}].reshape(dims);
    return returned(out);
  }
  if (!p.defined()) return random_integers(size, as_var(int64_t{0}), as_var(a - 1), dtype);
  if (p.ndim() != 1 || !is_float(p.dtype()))
    throw TypeError(what + ": p must be a float vector of length a, got " + p.type_str());
  // Each draw's category among the running sums of p, as multinomial's.
  Var flat_n = as_var(int64_t{1});
  for (const Var& d : size.dims()) flat_n = flat_n * as_dtype(d, DType::Int64);
  const Var u = draw(false, RandomSize(std::vector<Var>{as_var(int64_t{1}), flat_n}), DType::Float64, what);
  const Var cdf = cumsum(checked_probabilities(p, true, what, "p")).dimshuffle({-1, -1, 0});  // (1, 1, a)
  const Var idx = category_of(u, cdf, as_var(a));                                // (1, N)
  std::vector<Var> dims;
  for (const Var& d : size.dims()) dims.push_back(as_dtype(d, DType::Int64));
  const Var out = as_dtype(dims.empty() ? reshape(idx, std::vector<int64_t>{}) : reshape(idx, stack(dims)), dtype);
  return returned(out);
}

}  // namespace theon
