// Random streams (ops/scalar/philox.hpp, ops/random.hpp, theon/random.hpp): Philox against
// Random123's known answers, the transforms, each distribution's moments and a
// Kolmogorov-Smirnov or chi-square test (fixed seeds: deterministic, so never flaky), the
// state's advance, seeding, default updates, checks of bad input, and that draws are never
// merged. CPU vs GPU bits: tests/cpp/backends/cuda/random_gpu_test.cpp.
#include "ops/random.hpp"
#include "ops/scalar/philox.hpp"

#include "error_of.hpp"

#include <theon/theon.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

namespace theon {
namespace {

using testing_util::error_of;

// ---- the generator and the transforms ----

TEST(Philox, MatchesRandom123KnownAnswerVectors) {
  // Random123's kat_vectors, philox4x32_10: counter, key -> output.
  struct Kat {
    random::Block ctr;
    uint32_t k0, k1;
    random::Block out;
  };
  const Kat kats[] = {
      {{{0, 0, 0, 0}}, 0, 0, {{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}}},
      {{{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}},
       0xffffffff,
       0xffffffff,
       {{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}}},
      {{{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}},
       0xa4093822,
       0x299f31d0,
       {{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}}},
  };
  for (const Kat& k : kats) {
    const random::Block got = random::philox4x32_10(k.ctr, k.k0, k.k1);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(got.w[i], k.out.w[i]) << "word " << i;
  }
}

TEST(Philox, UniformsAreOpenIntervalsAndExact) {
  EXPECT_EQ(random::uniform_float32(0), 0x1p-24f);
  EXPECT_EQ(random::uniform_float32(0xffffffffu), 1.0f - 0x1p-24f);
  EXPECT_EQ(random::uniform_float64(0, 0), 0x1p-53);
  EXPECT_EQ(random::uniform_float64(0xffffffffu, 0xffffffffu), 1.0 - 0x1p-53);
}

TEST(Philox, OwnLogAndSinCosAreAccurate) {
  for (uint64_t n : {uint64_t{1}, uint64_t{3}, uint64_t{12345}, uint64_t{1} << 40, (uint64_t{1} << 53) - 1,
                     uint64_t{6755399441055744}, uint64_t{1} << 53}) {
    const long double want = std::log(static_cast<long double>(n)) - 53 * std::log(2.0L);
    EXPECT_NEAR(random::log_of_53bit_fraction(n), static_cast<double>(want), 4e-16 * std::max(1.0, std::fabs((double)want)))
        << n;
  }
  for (uint32_t w : {0u, 1u << 29, 1u << 30, 3u << 30, 0xffffffffu, 123456789u, 0x9e3779b9u}) {
    double c = 0, s = 0;
    random::cos_sin_of_turn(w, c, s);
    const long double t = 2 * 3.14159265358979323846264338327950288L * (w + 0.5L) / 4294967296.0L;
    EXPECT_NEAR(c, static_cast<double>(std::cos(t)), 1e-15) << w;
    EXPECT_NEAR(s, static_cast<double>(std::sin(t)), 1e-15) << w;
  }
}

// ---- distributions ----

std::vector<double> values(const Array& a) { return a.astype(DType::Float64).to_vector<double>(); }

// The Kolmogorov-Smirnov statistic of `x` against the CDF `F`.
template <class F>
double ks_statistic(std::vector<double> x, F cdf) {
  std::sort(x.begin(), x.end());
  const double n = static_cast<double>(x.size());
  double d = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double f = cdf(x[i]);
    d = std::max({d, (i + 1) / n - f, f - i / n});
  }
  return d;
}
// The critical value at significance 0.001.
double ks_critical(size_t n) { return 1.95 / std::sqrt(static_cast<double>(n)); }

// Pearson's chi-square of integer draws in [0, k) against probabilities p.
double chi_square(const std::vector<double>& x, const std::vector<double>& p) {
  std::vector<double> count(p.size(), 0);
  for (double v : x) {
    EXPECT_TRUE(v >= 0 && v < static_cast<double>(p.size()) && v == std::floor(v)) << v;
    if (v >= 0 && v < static_cast<double>(p.size())) count[static_cast<size_t>(v)] += 1;
  }
  double chi = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    const double e = p[i] * static_cast<double>(x.size());
    chi += (count[i] - e) * (count[i] - e) / e;
  }
  return chi;
}
// Chi-square critical values at significance 0.001, by degrees of freedom.
double chi_critical(int dof) {
  static const double table[] = {0, 10.83, 13.82, 16.27, 18.47, 20.52, 22.46, 24.32, 26.12, 27.88, 29.59};
  return table[dof];
}

double mean_of(const std::vector<double>& x) { return std::accumulate(x.begin(), x.end(), 0.0) / x.size(); }
double var_of(const std::vector<double>& x) {
  const double m = mean_of(x);
  double s = 0;
  for (double v : x) s += (v - m) * (v - m);
  return s / x.size();
}

std::vector<double> draw(const Var& v) { return values(function({}, {v})({})[0]); }

constexpr int64_t kN = 200000;

TEST(RandomStreams, UniformPassesKolmogorovSmirnovInBothDtypes) {
  for (DType t : {DType::Float32, DType::Float64}) {
    RandomStreams rng(42);
    const Var u = rng.uniform({kN}, 0.0, 1.0, t);
    EXPECT_EQ(u.dtype(), t);
    const std::vector<double> x = draw(u);
    for (double v : x) ASSERT_TRUE(v > 0 && v < 1) << v;
    EXPECT_NEAR(mean_of(x), 0.5, 0.003);
    EXPECT_NEAR(var_of(x), 1.0 / 12, 0.001);
    EXPECT_LT(ks_statistic(x, [](double v) { return v; }), ks_critical(x.size())) << dtype_name(t);
    // low/high: (low, high), moments scaled.
    const std::vector<double> y = draw(rng.uniform({kN}, -3.0, 5.0, t));
    EXPECT_LT(ks_statistic(y, [](double v) { return (v + 3) / 8; }), ks_critical(y.size()));
  }
}

TEST(RandomStreams, NormalPassesKolmogorovSmirnovAndMoments) {
  for (DType t : {DType::Float32, DType::Float64}) {
    RandomStreams rng(7);
    const std::vector<double> x = draw(rng.normal({kN}, 0.0, 1.0, t));
    EXPECT_NEAR(mean_of(x), 0.0, 0.01);
    EXPECT_NEAR(var_of(x), 1.0, 0.01);
    EXPECT_LT(ks_statistic(x, [](double v) { return 0.5 * std::erfc(-v / std::sqrt(2.0)); }), ks_critical(x.size()));
    const std::vector<double> y = draw(rng.normal({kN}, 2.0, 3.0, t));
    EXPECT_NEAR(mean_of(y), 2.0, 0.03);
    EXPECT_NEAR(std::sqrt(var_of(y)), 3.0, 0.03);
  }
}

TEST(RandomStreams, RandomIntegersPassChiSquareAndStayInRange) {
  RandomStreams rng(3);
  const std::vector<double> x = draw(rng.random_integers({kN}, int64_t{-2}, int64_t{7}));
  std::vector<double> shifted;
  for (double v : x) shifted.push_back(v + 2);
  EXPECT_LT(chi_square(shifted, std::vector<double>(10, 0.1)), chi_critical(9));
}

TEST(RandomStreams, BinomialPassesChiSquare) {
  RandomStreams rng(5);
  // n = 1 (dropout's mask) and n = 4: P(k) = C(4, k) p^k (1-p)^(4-k).
  const std::vector<double> b1 = draw(rng.binomial({kN}, 1, 0.3));
  EXPECT_LT(chi_square(b1, {0.7, 0.3}), chi_critical(1));
  const double p = 0.3, q = 0.7;
  const std::vector<double> b4 = draw(rng.binomial({kN}, 4, p));
  EXPECT_LT(chi_square(b4, {q * q * q * q, 4 * p * q * q * q, 6 * p * p * q * q, 4 * p * p * p * q, p * p * p * p}),
            chi_critical(4));
  // p broadcasts: a column of probabilities 0 and 1 gives rows of 0s and 1s.
  const Var pcol = constant(Array::from_vector<double>({0.0, 1.0}, {2, 1}));
  const std::vector<double> rows = draw(rng.binomial({2, 5}, 1, pcol));
  EXPECT_EQ(rows, (std::vector<double>{0, 0, 0, 0, 0, 1, 1, 1, 1, 1}));
}

TEST(RandomStreams, MultinomialCountsFollowTheRows) {
  RandomStreams rng(11);
  const Var pvals = tensor::matrix("pvals", DType::Float64);
  Function f = function({pvals}, {rng.multinomial(pvals, 1)});
  const int rows = 50000;
  std::vector<double> p;
  for (int r = 0; r < rows; ++r) p.insert(p.end(), {0.2, 0.5, 0.3});
  const std::vector<double> counts = values(f({Array::from_vector<double>(p, {rows, 3})})[0]);
  std::vector<double> category;
  for (int r = 0; r < rows; ++r) {
    ASSERT_EQ(counts[3 * r] + counts[3 * r + 1] + counts[3 * r + 2], 1.0);
    category.push_back(counts[3 * r + 1] == 1 ? 1 : counts[3 * r + 2] == 1 ? 2 : 0);
  }
  EXPECT_LT(chi_square(category, {0.2, 0.5, 0.3}), chi_critical(2));
  // n draws per row sum to n.
  const std::vector<double> ten = draw(rng.multinomial(constant(Array::from_vector<double>({0.5, 0.5}, {1, 2})), 10));
  EXPECT_EQ(ten[0] + ten[1], 10.0);
}

TEST(RandomStreams, PermutationAndChoiceWithoutReplacementAreDistinct) {
  RandomStreams rng(13);
  std::vector<double> perm = draw(rng.permutation(50));
  std::sort(perm.begin(), perm.end());
  for (int i = 0; i < 50; ++i) EXPECT_EQ(perm[i], i);
  const std::vector<double> c = draw(rng.choice({4, 5}, 20, /*replace=*/false));
  EXPECT_EQ(std::set<double>(c.begin(), c.end()).size(), 20u);
  // With replacement and probabilities: a chi-square on the draws.
  const std::vector<double> w = draw(rng.choice({kN}, 3, true, constant(Array::from_vector<double>({0.1, 0.6, 0.3}))));
  EXPECT_LT(chi_square(w, {0.1, 0.6, 0.3}), chi_critical(2));
}

TEST(RandomStreams, ElementIIsPhiloxOfSeedStreamCallsAndI) {
  // Large enough for the CPU loop's threads: the values depend on the element index only.
  RandomStreams rng(77);
  rng.uniform({3});  // stream 0
  const Var u = rng.uniform({100003}, 0.0, 1.0, DType::Float32), z = rng.normal({5}, 0.0, 1.0, DType::Float64);
  Function f = function({}, {u, z});
  f({});
  const std::vector<Array> r = f({});  // calls = 1
  const std::vector<float> got = r[0].to_vector<float>();
  for (int64_t i = 0; i < 100003; ++i) {
    const random::Block b = random::draw_block(77, 1, 1, static_cast<uint64_t>(i / 4));
    ASSERT_EQ(got[i], random::uniform_float32(b.w[i % 4])) << i;
  }
  const std::vector<double> normal = r[1].to_vector<double>();
  for (int64_t i = 0; i < 5; ++i)
    EXPECT_EQ(normal[i], random::normal_of_block(random::draw_block(77, 2, 1, static_cast<uint64_t>(i / 2)), i % 2));
}

TEST(RandomStreams, GradientsReachTheParameters) {
  RandomStreams rng(6);
  const Var mu = tensor::dscalar("mu"), sigma = tensor::dscalar("sigma");
  const Var z = rng.normal({4}, mu, sigma, DType::Float64);
  const std::vector<Var> g = grad(tensor::sum(z), {mu, sigma});
  const std::vector<Array> r = function({mu, sigma}, {g[0], g[1], z})({Array::scalar(1.0, DType::Float64),
                                                                       Array::scalar(2.0, DType::Float64)});
  EXPECT_EQ(r[0].item(), 4.0);  // d/dmu sum(mu + sigma z) = 4
  double sum_standard = 0;      // d/dsigma = sum z_standard = sum (z - mu) / sigma
  for (double v : values(r[2])) sum_standard += (v - 1.0) / 2.0;
  EXPECT_NEAR(r[1].item(), sum_standard, 1e-12);
}

// ---- state, seeding, default updates ----

TEST(RandomStreams, EachCallDrawsNewNumbersAndTheStateCountsCalls) {
  RandomStreams rng(1);
  const Var u = rng.uniform({5});
  Function f = function({}, {u});
  const std::vector<double> a = values(f({})[0]), b = values(f({})[0]);
  EXPECT_NE(a, b);
  SharedVar state = rng.state_update_of(u).first;
  EXPECT_EQ(state.get_value().to_vector<int64_t>(), (std::vector<int64_t>{1, 2}));
  // Setting the state back replays the first call.
  state.set_value(Array::from_vector<int64_t>({1, 0}));
  EXPECT_EQ(values(f({})[0]), a);
}

TEST(RandomStreams, SeedMakesDrawsReproducible) {
  RandomStreams rng(99);
  const Var u = rng.uniform({6}), z = rng.normal({6});
  Function f = function({}, {u, z});
  const std::vector<Array> first = f({});
  f({});
  rng.seed(99);
  const std::vector<Array> again = f({});
  EXPECT_EQ(values(again[0]), values(first[0]));
  EXPECT_EQ(values(again[1]), values(first[1]));
  // Another stream with the same seed draws the same numbers for the same creation order.
  RandomStreams other(99);
  EXPECT_EQ(draw(other.uniform({6})), values(first[0]));
  // Two variables of one stream differ.
  EXPECT_NE(values(first[0]), draw(RandomStreams(99).normal({6})));
  rng.seed(100);
  EXPECT_NE(values(f({})[0]), values(first[0]));
}

TEST(RandomStreams, NoDefaultUpdatesKeepsTheState) {
  RandomStreams rng(4);
  const Var u = rng.uniform({3});
  const SharedVar state = rng.state_update_of(u).first;
  Function frozen = function({}, {u}, {.no_default_updates = true});
  EXPECT_EQ(values(frozen({})[0]), values(frozen({})[0]));
  EXPECT_EQ(state.get_value().to_vector<int64_t>()[1], 0);
  Function skip = function({}, {u}, {.no_default_updates_of = {state}});
  skip({});
  EXPECT_EQ(state.get_value().to_vector<int64_t>()[1], 0);
  // An explicit update of the state wins over the default one.
  Function custom = function({}, {u}, {.updates = {{state, Var(state) + int64_t{0}}}});
  custom({});
  EXPECT_EQ(state.get_value().to_vector<int64_t>()[1], 0);
}

TEST(RandomStreams, DrawsOfOneShapeAreNeverMerged) {
  RandomStreams rng(8);
  const Var a = rng.uniform({4}), b = rng.uniform({4});
  for (const char* mode : {"fast_run", "none"}) {
    const std::vector<Array> r = function({}, {a, b}, {.mode = mode})({});
    EXPECT_NE(values(r[0]), values(r[1])) << mode;
  }
  // One variable used twice is one draw.
  const std::vector<double> d = draw(a - a);
  for (double v : d) EXPECT_EQ(v, 0.0);
}

TEST(RandomStreams, SymbolicSizesAndShapeVectors) {
  RandomStreams rng(2);
  const Var x = tensor::matrix("x", DType::Float32);
  const Var n = tensor::lscalar("n");
  Function f = function({x, n}, {rng.normal(x.shape(), 0.0, 1.0), rng.uniform({n, as_var(int64_t{2})})});
  const std::vector<Array> r = f({Array::zeros({3, 4}, DType::Float32), Array::scalar(5, DType::Int64)});
  EXPECT_EQ(r[0].shape(), (Shape{3, 4}));
  EXPECT_EQ(r[1].shape(), (Shape{5, 2}));
  const std::string neg =
      error_of<ShapeError>([&] { f({Array::zeros({1, 1}, DType::Float32), Array::scalar(-2, DType::Int64)}); });
  EXPECT_NE(neg.find("negative size -2"), std::string::npos) << neg;
}

// ---- bad input ----

TEST(RandomStreams, BadInputIsAClearErrorNamingTheCall) {
  RandomStreams rng(0);
  std::string e = error_of<ValueError>([&] { rng.binomial({3}, 1, 1.5); });
  EXPECT_NE(e.find("binomial"), std::string::npos) << e;
  EXPECT_NE(e.find("p must be in [0, 1], got 1.5"), std::string::npos) << e;
  e = error_of<ShapeError>([&] { rng.uniform({2, -3}); });
  EXPECT_NE(e.find("uniform(size=(2, -3))"), std::string::npos) << e;
  EXPECT_NE(e.find("negative size -3"), std::string::npos) << e;
  e = error_of<ValueError>([&] { rng.choice({5}, 3, false); });
  EXPECT_NE(e.find("cannot take 5 values from 3 without replacement"), std::string::npos) << e;
  e = error_of<ValueError>([&] { rng.multinomial(constant(Array::from_vector<double>({0.5, 0.6}, {1, 2}))); });
  EXPECT_NE(e.find("sums to 1.1"), std::string::npos) << e;
  e = error_of<ValueError>([&] { RandomStreams bad(-1); });
  EXPECT_NE(e.find("seed must be in [0, 2^32)"), std::string::npos) << e;
  e = error_of<TypeError>([&] { rng.uniform({2}, 0.0, 1.0, DType::Int32); });
  EXPECT_NE(e.find("dtype must be float16, float32 or float64"), std::string::npos) << e;

  // Run-time values: checked when the function runs.
  const Var p = tensor::vector("p", DType::Float64);
  Function f = function({p}, {rng.binomial({3}, 1, p)});
  EXPECT_NO_THROW(f({Array::from_vector<double>({0.0, 0.5, 1.0})}));
  e = error_of<ValueError>([&] { f({Array::from_vector<double>({0.5, -0.1, 1.0})}); });
  EXPECT_NE(e.find("binomial(size=(3,), n=1, p=p): p must be in [0, 1]"), std::string::npos) << e;
  const Var pvals = tensor::matrix("pvals", DType::Float64);
  Function g = function({pvals}, {rng.multinomial(pvals)});
  e = error_of<ValueError>([&] { g({Array::from_vector<double>({0.5, 0.2, 0.5, 0.5}, {2, 2})}); });
  EXPECT_NE(e.find("multinomial(pvals=pvals, n=1): pvals must be in [0, 1] with rows summing to 1"),
            std::string::npos)
      << e;
}

// Issue 29: normal's std and random_integers' range are checked as NumPy's RandomState checked
// them (Theano's RandomStreams raised when called): a constant when the variable is made, a
// symbolic one when the function runs, naming the call and the value; the failed call changes
// no shared variable, the random states included.
TEST(RandomStreams, NegativeStdIsRefused) {
  RandomStreams rng(0);
  std::string e = error_of<ValueError>([&] { rng.normal({2, 3}, 0.0, -1.0); });
  EXPECT_NE(e.find("normal(size=(2, 3), avg=0.0, std=-1.0): std must be >= 0, got -1"), std::string::npos) << e;
  e = error_of<ValueError>([&] { rng.normal({2}, as_var(0.0), constant(Array::from_vector<double>({1.0, -0.5}))); });
  EXPECT_NE(e.find("std must be >= 0, got -0.5"), std::string::npos) << e;
  EXPECT_NO_THROW(rng.normal({2}, 0.0, 0.0));  // a zero std is a constant draw, as in NumPy

  const Var s = tensor::dscalar("s");
  const Var z = rng.normal({4}, as_var(0.0), s, DType::Float64);
  const SharedVar acc = shared(Array::zeros({4}, DType::Float64), "acc");
  Function f = function({s}, {z}, {.updates = {{acc, acc + z}}});
  EXPECT_NO_THROW(f({Array::scalar(2.0, DType::Float64)}));
  const SharedVar state = rng.state_update_of(z).first;
  const std::vector<int64_t> state_before = state.get_value().to_vector<int64_t>();
  const std::vector<double> acc_before = acc.get_value().to_vector<double>();
  e = error_of<ValueError>([&] { f({Array::scalar(-1.5, DType::Float64)}); });
  EXPECT_NE(e.find("normal(size=(4,), avg=0.0, std=s): std must be >= 0, got s = -1.5"), std::string::npos) << e;
  EXPECT_EQ(state.get_value().to_vector<int64_t>(), state_before);
  EXPECT_EQ(acc.get_value().to_vector<double>(), acc_before);
  EXPECT_NO_THROW(f({Array::scalar(0.5, DType::Float64)}));  // and the function still runs

  const Var sv = tensor::dvector("sv");
  Function g = function({sv}, {rng.normal({3}, as_var(0.0), sv, DType::Float64)});
  EXPECT_NO_THROW(g({Array::from_vector<double>({1, 2, 3})}));
  e = error_of<ValueError>([&] { g({Array::from_vector<double>({1, -2, -3})}); });
  EXPECT_NE(e.find("std must be >= 0, got min(sv) = -3"), std::string::npos) << e;
}

TEST(RandomStreams, RandomIntegersNeedHighAtLeastLow) {
  RandomStreams rng(0);
  std::string e = error_of<ValueError>([&] { rng.random_integers({2}, 5, 3); });
  EXPECT_NE(e.find("high must be >= low, got low = 5, high = 3"), std::string::npos) << e;
  e = error_of<ValueError>([&] {
    rng.random_integers({2}, constant(Array::from_vector<int64_t>({0, 4})), constant(Array::from_vector<int64_t>({1, 2})));
  });
  EXPECT_NE(e.find("got low = 4, high = 2"), std::string::npos) << e;
  const Var lo = tensor::lscalar("lo"), hi = tensor::lscalar("hi");
  Function f = function({lo, hi}, {rng.random_integers({3}, lo, hi)});
  EXPECT_NO_THROW(f({Array::scalar(2, DType::Int64), Array::scalar(2, DType::Int64)}));
  e = error_of<ValueError>([&] { f({Array::scalar(5, DType::Int64), Array::scalar(3, DType::Int64)}); });
  EXPECT_NE(e.find("random_integers(size=(3,), low=lo, high=hi): high must be >= low, got low = 5, high = 3"),
            std::string::npos)
      << e;
}

// A size must be an integer: a float constant is a TypeError naming it (C++ braces refuse
// `{2.5, 3}` at compile time; a Var gets here).
TEST(RandomStreams, NonIntegralSizeIsRefused) {
  RandomStreams rng(0);
  const std::string e = error_of<TypeError>([&] { rng.uniform({as_var(2.5), as_var(int64_t{3})}); });
  EXPECT_NE(e.find("2.5"), std::string::npos) << e;
  EXPECT_NE(e.find("must be an integer scalar"), std::string::npos) << e;
}

TEST(RandomDrawOp, IsImpureAndRoundTripsItsProps) {
  const ops::RandomDraw op(random::Distribution::Normal, DType::Float32, 3);
  EXPECT_FALSE(op.pure());
  EXPECT_EQ(op.display(), "RandomDraw{distribution=normal, dtype=float32, stream=3}");
}

}  // namespace
}  // namespace theon
