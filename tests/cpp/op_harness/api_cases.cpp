// Harness cases for Theano's everyday names added in issue 17: the special functions (erfinv,
// gamma, gammaln, psi, tri_gamma, xlogx, xlogy0, softsign) and the builders composed from
// other ops (eye, tile, repeat, ...). References are float64 code written here, independent
// of src/ops/scalar and of the builders.
#include "harness.hpp"

#include <algorithm>
#include <cmath>

namespace theon::testing {
namespace {

using D = DType;

D float_of(D t) {
  if (is_float(t)) return t;
  return (t == D::Int32 || t == D::Int64) ? D::Float64 : D::Float32;
}

const std::vector<std::vector<Shape>> kUnaryShapes = {{{3, 4}}, {{0, 3}}, {{1, 1}}, {{2, 3, 4}}, {{}}, {{5}}};

Case unary(const std::string& op, std::function<Var(const Var&)> build, std::function<double(double)> fn,
           Domain domain, bool grad) {
  Case c;
  c.op = op;
  c.dtypes = {D::Float32, D::Float64, D::Int32, D::Int8};
  c.shapes = kUnaryShapes;
  c.domain = domain;
  c.build = [build](const std::vector<Var>& v) { return build(v[0]); };
  c.reference = [fn](const std::vector<Ref>& r) {
    return ref_map(r, float_of(r[0].dtype), [fn](const std::vector<double>& x) { return fn(x[0]); });
  };
  c.check_grad = grad;
  return c;
}

// erf^-1 by bisection on erf (on erfc above 0.5, where 1 - x is exact).
double ref_erfinv(double x) {
  if (std::isnan(x) || x < -1 || x > 1) return NAN;
  if (std::fabs(x) == 1) return x * INFINITY;
  const double a = std::fabs(x);
  double lo = 0, hi = 7;
  for (int i = 0; i < 200 && hi - lo > 0; ++i) {
    const double m = 0.5 * (lo + hi);
    const bool below = a < 0.5 ? std::erf(m) < a : std::erfc(m) > 1 - a;
    (below ? lo : hi) = m;
    if (m == lo && m == hi) break;
  }
  return std::copysign(0.5 * (lo + hi), x);
}

// digamma / trigamma: recurrence to x >= 40, three asymptotic terms; reflection below 0.
double ref_psi(double x) {
  if (x <= 0 && std::floor(x) == x) return NAN;
  if (x < 0) return ref_psi(1 - x) - M_PI / std::tan(M_PI * x);
  double r = 0;
  for (; x < 40; x += 1) r -= 1 / x;
  const double z = 1 / (x * x);
  return r + std::log(x) - 1 / (2 * x) - z / 12 + z * z / 120 - z * z * z / 252;
}
double ref_trigamma(double x) {
  if (x <= 0 && std::floor(x) == x) return NAN;
  if (x < 0) {
    const double s = std::sin(M_PI * x);
    return M_PI * M_PI / (s * s) - ref_trigamma(1 - x);
  }
  double r = 0;
  for (; x < 40; x += 1) r += 1 / (x * x);
  const double z = 1 / (x * x);
  return r + 1 / x + z / 2 + z / x / 6 - z * z / x / 30 + z * z * z / x / 42;
}

void add_special_cases(std::vector<Case>& cases) {
  cases.push_back(unary("erfinv", [](auto& a) { return tensor::erfinv(a); }, ref_erfinv, Domain::Unit, true));
  cases.back().rtol64 = 1e-11;
  // Close to +-1, where the tails are steep; exact +-1, beyond, and integers (0, +-1, others NaN).
  Case tails = unary("erfinv", [](auto& a) { return tensor::erfinv(a); }, ref_erfinv, Domain::Unit, false);
  tails.label = "tails";
  tails.dtypes = {D::Float64, D::Float32};
  tails.shapes = {{{12}}};
  tails.vary_layout = false;
  tails.make_inputs = [](D dtype, const std::vector<Shape>&, uint64_t) {
    std::vector<double> v = {0.999, -0.9999, 0.99999, 1 - 1e-7, -(1 - 1e-7), 1, -1, 1.5, -2, 0, 1e-300, 0.5};
    return std::vector<Array>{Array::from_vector<double>(v, {12}).astype(dtype)};
  };
  tails.rtol64 = 1e-10;
  cases.push_back(tails);

  cases.push_back(unary("gamma", [](auto& a) { return tensor::gamma(a); }, [](double x) { return std::tgamma(x); },
                        Domain::Normal, false));
  cases.back().rtol64 = 1e-13;
  cases.push_back(unary("gamma", [](auto& a) { return tensor::gamma(a); }, [](double x) { return std::tgamma(x); },
                        Domain::Positive, true));
  cases.back().label = "positive";
  cases.push_back(unary("gammaln", [](auto& a) { return tensor::gammaln(a); }, [](double x) { return std::lgamma(x); },
                        Domain::Positive, true));
  cases.back().atol64 = 1e-14;
  cases.push_back(unary("psi", [](auto& a) { return tensor::psi(a); }, ref_psi, Domain::Normal, false));
  cases.back().rtol64 = 1e-11;
  cases.back().atol64 = 1e-12;
  cases.back().atol32 = 1e-5;
  cases.push_back(unary("psi", [](auto& a) { return tensor::psi(a); }, ref_psi, Domain::Positive, true));
  cases.back().label = "positive";
  cases.back().rtol64 = 1e-11;
  cases.back().atol64 = 1e-12;
  cases.push_back(unary("tri_gamma", [](auto& a) { return tensor::tri_gamma(a); }, ref_trigamma, Domain::Normal, false));
  cases.back().rtol64 = 1e-11;
  cases.back().rtol32 = 1e-4;  // float32 inputs near the poles: steep (1/x^2)

  // xlogx / xlogy0: every third x is 0 (the value Theano defines as 0).
  Case xlx = unary("xlogx", [](auto& a) { return tensor::xlogx(a); },
                   [](double x) { return x == 0 ? 0.0 : x * std::log(x); }, Domain::Positive, true);
  xlx.make_inputs = [](D dtype, const std::vector<Shape>& shapes, uint64_t seed) {
    std::vector<double> v = random_array(D::Float64, shapes[0], Domain::Positive, seed).to_vector<double>();
    for (size_t i = 0; i < v.size(); i += 3) v[i] = 0;
    if (!is_float(dtype))
      for (double& x : v) x = std::round(x * 3);
    return std::vector<Array>{Array::from_vector<double>(v, shapes[0]).astype(dtype)};
  };
  cases.push_back(xlx);

  Case xly;
  xly.op = "xlogy0";
  xly.dtypes = {D::Float32, D::Float64, D::Int32};
  xly.shapes = {{{3, 4}, {3, 4}}, {{3, 1}, {1, 4}}, {{0, 4}, {1, 4}}, {{}, {2, 3}}, {{2, 3, 4}, {4}}};
  xly.make_inputs = [](D dtype, const std::vector<Shape>& shapes, uint64_t seed) {
    std::vector<double> x = random_array(D::Float64, shapes[0], Domain::Positive, seed).to_vector<double>();
    for (size_t i = 0; i < x.size(); i += 3) x[i] = 0;
    if (!is_float(dtype))
      for (double& e : x) e = std::round(e * 3);
    return std::vector<Array>{Array::from_vector<double>(x, shapes[0]).astype(dtype),
                              random_array(dtype, shapes[1], Domain::Positive, seed + 1)};
  };
  xly.domain = Domain::Positive;
  xly.build = [](const std::vector<Var>& v) { return tensor::xlogy0(v[0], v[1]); };
  xly.reference = [](const std::vector<Ref>& r) {
    return ref_map(r, float_of(r[0].dtype), [](const std::vector<double>& x) {
      return x[0] == 0 ? 0.0 : x[0] * std::log(x[1]);
    });
  };
  xly.check_grad = true;
  cases.push_back(xly);

  cases.push_back(unary("softsign", [](auto& a) { return tensor::softsign(a); },
                        [](double x) { return x / (1 + std::fabs(x)); }, Domain::Normal, true));
}

// ---- compositions ----
Case make(const std::string& op, const std::string& label, std::vector<D> dtypes, std::vector<std::vector<Shape>> shapes,
          std::function<Var(const std::vector<Var>&)> build, std::function<Ref(const std::vector<Ref>&)> ref,
          bool grad = false) {
  Case c;
  c.op = op;
  c.label = label;
  c.dtypes = std::move(dtypes);
  c.shapes = std::move(shapes);
  c.build = std::move(build);
  c.reference = std::move(ref);
  c.check_grad = grad;
  return c;
}

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}
std::vector<int64_t> unravel(int64_t i, const Shape& s) {
  std::vector<int64_t> idx(s.size());
  for (int d = int(s.size()) - 1; d >= 0; --d) {
    idx[d] = s[d] ? i % s[d] : 0;
    if (s[d]) i /= s[d];
  }
  return idx;
}
int64_t ravel(const std::vector<int64_t>& idx, const Shape& s) {
  int64_t o = 0;
  for (size_t d = 0; d < s.size(); ++d) o = o * s[d] + idx[d];
  return o;
}
// out[i] = x[source(i)] for every i of `shape`.
Ref gather(const Ref& x, const Shape& shape, const std::function<int64_t(const std::vector<int64_t>&)>& source) {
  Ref r{x.dtype, shape, {}};
  for (int64_t i = 0; i < numel(shape); ++i) r.v.push_back(x.v[source(unravel(i, shape))]);
  return r;
}
Ref with_shape(Ref r, Shape s) {
  r.shape = std::move(s);
  return r;
}
const std::vector<D> kValues = {D::Float32, D::Float64, D::Int32};

void add_constructor_cases(std::vector<Case>& cases) {
  struct E { std::string label; int64_t n, m, k; };
  for (const E& e : std::vector<E>{{"square", 3, 3, 0}, {"wide_k1", 3, 5, 1}, {"tall_km2", 4, 3, -2},
                                    {"empty", 0, 2, 0}, {"k_beyond", 2, 3, 7}}) {
    Case c = make("eye", e.label, {D::Int64, D::Int32}, {{{}, {}, {}}},
                  [](auto& v) { return tensor::eye(v[0], v[1], v[2], D::Float64); },
                  [e](auto&) {
                    Ref r{D::Float64, {e.n, e.m}, {}};
                    for (int64_t i = 0; i < e.n; ++i)
                      for (int64_t j = 0; j < e.m; ++j) r.v.push_back(j - i == e.k ? 1.0 : 0.0);
                    return r;
                  });
    c.make_inputs = [e](D dtype, const std::vector<Shape>&, uint64_t) {
      return std::vector<Array>{Array::scalar(double(e.n), dtype), Array::scalar(double(e.m), dtype),
                                Array::scalar(double(e.k), dtype)};
    };
    c.vary_layout = false;
    cases.push_back(c);
  }
  cases.push_back(make("identity_like", "", kValues, {{{3, 4}}, {{0, 2}}, {{1, 1}}, {{4, 2}}},
                       [](auto& v) { return tensor::identity_like(v[0]); }, [](auto& r) {
                         Ref o{r[0].dtype, r[0].shape, {}};
                         for (int64_t i = 0; i < r[0].shape[0]; ++i)
                           for (int64_t j = 0; j < r[0].shape[1]; ++j) o.v.push_back(i == j);
                         return o;
                       }));
  struct L { std::string label; int64_t num; bool endpoint; };
  for (const L& l : std::vector<L>{{"five", 5, true}, {"no_endpoint", 4, false}, {"one", 1, true}, {"zero", 0, true}}) {
    Case c = make("linspace", l.label, {D::Float64, D::Float32}, {{{}, {}}},
                  [l](auto& v) { return tensor::linspace(v[0], v[1], l.num, l.endpoint); },
                  [l](auto& r) {
                    const double a = r[0].v[0], b = r[1].v[0];
                    const int64_t div = l.endpoint ? l.num - 1 : l.num;
                    Ref o{r[0].dtype, {l.num}, {}};
                    for (int64_t i = 0; i < l.num; ++i)
                      o.v.push_back(to_dtype(l.endpoint && i == l.num - 1 && l.num > 1 ? b
                                             : div > 0 ? a + double(i) * ((b - a) / double(div)) : a, r[0].dtype));
                    return o;
                  });
    c.vary_layout = false;
    c.check_grad = l.label == "five";
    cases.push_back(c);
  }
  cases.push_back(make("linspace", "int_bounds", {D::Int32}, {{{}, {}}},
                       [](auto& v) { return tensor::linspace(v[0], v[1], 3); }, [](auto& r) {
                         return Ref{D::Float64, {3}, {r[0].v[0], (r[0].v[0] + r[1].v[0]) / 2, r[1].v[0]}};
                       }));
}

// numpy.tile's reference: out[i] = x[i mod x.shape] after the padding.
Ref ref_tile(const Ref& x, std::vector<int64_t> reps) {
  const size_t d = std::max(x.shape.size(), reps.size());
  Shape xs(d - x.shape.size(), 1);
  xs.insert(xs.end(), x.shape.begin(), x.shape.end());
  reps.insert(reps.begin(), d - reps.size(), 1);
  Shape out(d);
  for (size_t i = 0; i < d; ++i) out[i] = xs[i] * reps[i];
  return gather(x, out, [&](const std::vector<int64_t>& idx) {
    std::vector<int64_t> s(d);
    for (size_t i = 0; i < d; ++i) s[i] = idx[i] % xs[i];
    return ravel(s, xs);
  });
}

void add_layout_cases(std::vector<Case>& cases) {
  cases.push_back(make("tile", "2d", kValues, {{{3, 4}}, {{1, 2}}, {{0, 3}}},
                       [](auto& v) { return tensor::tile(v[0], {2, 3}); },
                       [](auto& r) { return ref_tile(r[0], {2, 3}); }, true));
  cases.push_back(make("tile", "more_reps", kValues, {{{3}}, {{2}}},
                       [](auto& v) { return tensor::tile(v[0], {2, 1, 2}); },
                       [](auto& r) { return ref_tile(r[0], {2, 1, 2}); }, true));
  cases.push_back(make("tile", "fewer_reps", kValues, {{{2, 3}}, {{2, 1, 2}}},
                       [](auto& v) { return tensor::tile(v[0], {3}); },
                       [](auto& r) { return ref_tile(r[0], {3}); }, true));

  // repeat: a scalar count along an axis, over the flattened tensor, and one count per element.
  auto ref_repeat = [](const Ref& x, std::vector<int64_t> counts, std::optional<int> axis) {
    Ref src = axis ? x : with_shape(x, {x.size()});
    const int a = axis.value_or(0);
    if (counts.size() == 1) counts.assign(src.shape[a], counts[0]);
    std::vector<int64_t> from;
    for (size_t j = 0; j < counts.size(); ++j)
      for (int64_t k = 0; k < counts[j]; ++k) from.push_back(int64_t(j));
    Shape out = src.shape;
    out[a] = int64_t(from.size());
    return gather(src, out, [&](std::vector<int64_t> idx) {
      idx[a] = from[idx[a]];
      return ravel(idx, src.shape);
    });
  };
  cases.push_back(make("repeat", "scalar_axis1", kValues, {{{3, 4}}, {{2, 0}}, {{1, 1}}},
                       [](auto& v) { return tensor::repeat(v[0], theon::constant(Array::scalar(2, D::Int64)), 1); },
                       [ref_repeat](auto& r) { return ref_repeat(r[0], {2}, 1); }, true));
  cases.push_back(make("repeat", "flattened", kValues, {{{2, 3}}, {{4}}},
                       [](auto& v) { return tensor::repeat(v[0], theon::constant(Array::scalar(3, D::Int32))); },
                       [ref_repeat](auto& r) { return ref_repeat(r[0], {3}, std::nullopt); }, true));
  cases.push_back(make("repeat", "counts", kValues, {{{3, 2}}, {{3}}},
                       [](auto& v) {
                         return tensor::repeat(v[0], theon::constant(Array::from_vector<int64_t>({1, 0, 3}, {3})), 0);
                       },
                       [ref_repeat](auto& r) { return ref_repeat(r[0], {1, 0, 3}, 0); }, true));

  // squeeze / addbroadcast / unbroadcast / patternbroadcast: the harness's inputs have unknown
  // sizes, so the broadcastable dims come from addbroadcast.
  cases.push_back(make("squeeze", "", kValues, {{{3, 1, 4}}, {{0, 1, 2}}},
                       [](auto& v) { return tensor::squeeze(tensor::addbroadcast(v[0], {1})); },
                       [](auto& r) { return with_shape(r[0], {r[0].shape[0], r[0].shape[2]}); }, true));
  cases.push_back(make("addbroadcast", "", kValues, {{{1, 4}}, {{1, 0}}},
                       [](auto& v) { return tensor::addbroadcast(v[0], {0}) + tensor::zeros_like(v[0]); },
                       [](auto& r) { return r[0]; }, true));
  cases.push_back(make("unbroadcast", "", kValues, {{{4}}, {{0}}},
                       [](auto& v) { return tensor::unbroadcast(v[0].dimshuffle({-1, 0}), {0}); },
                       [](auto& r) { return with_shape(r[0], {1, r[0].shape[0]}); }, true));
  cases.push_back(make("patternbroadcast", "", kValues, {{{1, 3}}},
                       [](auto& v) { return tensor::patternbroadcast(v[0], {true, false}); },
                       [](auto& r) { return r[0]; }, true));
  // print is x (its printing is tested in tests/cpp/ops/print_test.cpp); here a quiet function.
  cases.push_back(make("print", "", kValues, {{{3, 4}}, {{0, 3}}, {{}}},
                       [](auto& v) { return print(v[0] * 2, "x2", [](const std::string&, const Array&) {}); },
                       [](auto& r) { return ref_map(r, r[0].dtype, [](const std::vector<double>& x) { return 2 * x[0]; }); },
                       true));
  cases.push_back(make("specify_shape", "", kValues, {{{3, 4}}},
                       [](auto& v) { return tensor::specify_shape(v[0], {3, 4}); }, [](auto& r) { return r[0]; }, true));
  cases.push_back(make("specify_shape", "symbolic", kValues, {{{2, 5}}, {{0, 5}}},
                       [](auto& v) { return tensor::specify_shape(v[0], {v[0].shape()[{Index(0)}], 5}); },
                       [](auto& r) { return r[0]; }, true));

  struct R { std::string label; int64_t shift; std::optional<int> axis; };
  for (const R& e : std::vector<R>{{"axis0", 1, 0}, {"axis1_neg", -2, 1}, {"wrap", 7, -1}, {"flat", 5, std::nullopt}}) {
    cases.push_back(make("roll", e.label, kValues, {{{3, 4}}, {{0, 3}}, {{1, 5}}},
                         [e](auto& v) { return tensor::roll(v[0], e.shift, e.axis); },
                         [e](auto& r) {
                           const Ref& x = r[0];
                           if (!e.axis) {
                             const int64_t n = x.size();
                             Ref o = x;
                             for (int64_t i = 0; i < n; ++i) o.v[((i + e.shift) % n + n) % n] = x.v[i];
                             return o;
                           }
                           const int a = *e.axis < 0 ? *e.axis + x.ndim() : *e.axis;
                           const int64_t n = x.shape[a];
                           return gather(x, x.shape, [&](std::vector<int64_t> idx) {
                             idx[a] = ((idx[a] - e.shift) % n + n) % n;
                             return ravel(idx, x.shape);
                           });
                         }, true));
  }

  auto ref_diagonal = [](const Ref& x, int offset, int a1, int a2) {
    Shape rest;
    for (int d = 0; d < x.ndim(); ++d)
      if (d != a1 && d != a2) rest.push_back(x.shape[d]);
    const int64_t r = x.shape[a1], c = x.shape[a2];
    const int64_t len = std::max<int64_t>(0, offset >= 0 ? std::min(r, c - offset) : std::min(r + offset, c));
    Shape out = rest;
    out.push_back(len);
    return gather(x, out, [&](const std::vector<int64_t>& idx) {
      std::vector<int64_t> full(x.ndim());
      for (int d = 0, k = 0; d < x.ndim(); ++d)
        if (d != a1 && d != a2) full[d] = idx[k++];
      const int64_t i = idx.back();
      full[a1] = offset >= 0 ? i : i - offset;
      full[a2] = offset >= 0 ? i + offset : i;
      return ravel(full, x.shape);
    });
  };
  for (int off : {0, 1, -2})
    cases.push_back(make("diagonal", "offset" + std::to_string(off + 2), kValues, {{{3, 4}}, {{4, 2}}, {{0, 3}}},
                         [off](auto& v) { return tensor::diagonal(v[0], off); },
                         [off, ref_diagonal](auto& r) { return ref_diagonal(r[0], off, 0, 1); }, true));
  cases.push_back(make("diagonal", "axes", kValues, {{{2, 3, 4}}, {{3, 1, 2}}},
                       [](auto& v) { return tensor::diagonal(v[0], 1, 2, 0); },
                       [ref_diagonal](auto& r) { return ref_diagonal(r[0], 1, 2, 0); }, true));
  for (int k : {0, 2, -1})
    cases.push_back(make("diag", "vector_k" + std::to_string(k + 1), kValues, {{{4}}, {{1}}, {{0}}},
                         [k](auto& v) { return tensor::diag(v[0], k); },
                         [k](auto& r) {
                           const int64_t n = r[0].size() + std::abs(k);
                           Ref o{r[0].dtype, {n, n}, {}};
                           for (int64_t i = 0; i < n; ++i)
                             for (int64_t j = 0; j < n; ++j)
                               o.v.push_back(j - i == k ? r[0].v[k >= 0 ? i : j] : 0.0);
                           return o;
                         }, true));
  cases.push_back(make("diag", "matrix", kValues, {{{3, 4}}, {{2, 2}}},
                       [](auto& v) { return tensor::diag(v[0], 1); },
                       [ref_diagonal](auto& r) { return ref_diagonal(r[0], 1, 0, 1); }, true));
}

// sort / argsort: a stable sort per lane with NaN last, written here with std::stable_sort on
// double keys.
Ref ref_sort(const Ref& x_in, std::optional<int> axis_in, bool indices) {
  Ref x = axis_in ? x_in : with_shape(x_in, {x_in.size()});
  const int axis = axis_in ? (*axis_in < 0 ? *axis_in + x.ndim() : *axis_in) : 0;
  Ref r{indices ? D::Int64 : x.dtype, x.shape, std::vector<double>(x.v.size())};
  const int64_t n = x.shape[axis];
  int64_t stride = 1;
  for (int d = x.ndim() - 1; d > axis; --d) stride *= x.shape[d];
  for (int64_t i = 0; i < x.size(); ++i) {
    if ((i / stride) % n != 0) continue;  // i is the first element of its lane
    std::vector<int64_t> order(n);
    for (int64_t k = 0; k < n; ++k) order[k] = k;
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      const double va = x.v[i + a * stride], vb = x.v[i + b * stride];
      if (std::isnan(va)) return false;
      return std::isnan(vb) || va < vb;
    });
    for (int64_t k = 0; k < n; ++k) r.v[i + k * stride] = indices ? double(order[k]) : x.v[i + order[k] * stride];
  }
  return r;
}

void add_sort_cases(std::vector<Case>& cases) {
  const std::vector<std::vector<Shape>> shapes = {{{3, 5}}, {{0, 4}}, {{1, 1}}, {{2, 3, 4}}, {{7}}, {{4, 0}}};
  struct A { std::string label; std::optional<int> axis; };
  for (bool idx : {false, true})
    for (const A& a : std::vector<A>{{"last", -1}, {"axis0", 0}, {"flat", std::nullopt}}) {
      const std::string op = idx ? "argsort" : "sort";
      Case c = make(op, a.label, {D::Float32, D::Float64, D::Int32, D::Int8, D::UInt8, D::Bool}, shapes,
                    [idx, a](auto& v) { return idx ? tensor::argsort(v[0], a.axis) : tensor::sort(v[0], a.axis); },
                    [idx, a](auto& r) { return ref_sort(r[0], a.axis, idx); });
      c.domain = Domain::SmallInt;  // many ties: checks stability
      cases.push_back(c);
    }
  // Floats with NaN (last, in input order among themselves) and signed zeros.
  for (bool idx : {false, true}) {
    Case c = make(idx ? "argsort" : "sort", "nan", {D::Float64, D::Float32}, {{{2, 6}}},
                  [idx](auto& v) { return idx ? tensor::argsort(v[0]) : tensor::sort(v[0]); },
                  [idx](auto& r) { return ref_sort(r[0], -1, idx); });
    c.vary_layout = false;
    c.make_inputs = [](D dtype, const std::vector<Shape>&, uint64_t) {
      std::vector<double> v = {NAN, 2, -1, NAN, 0.5, -3, 1, 1, -0.0, 0.0, NAN, -2};
      return std::vector<Array>{Array::from_vector<double>(v, {2, 6}).astype(dtype)};
    };
    cases.push_back(c);
  }
  // The gradient rows on distinct values (normal draws: finite differences need no ties).
  for (const A& a : std::vector<A>{{"grad_axis0", 0}, {"grad_last", -1}, {"grad_flat", std::nullopt}})
    cases.push_back(make("sort", a.label, {D::Float64}, {{{4, 3}}, {{2, 3, 4}}},
                         [a](auto& v) { return tensor::sort(v[0], a.axis); },
                         [a](auto& r) { return ref_sort(r[0], a.axis, false); }, true));
}

// flatnonzero / nonzero / nonzero_values: inputs with many zeros (|v| < 4 set to 0).
std::vector<Array> sparse_inputs(D dtype, const std::vector<Shape>& shapes, uint64_t seed) {
  std::vector<double> v = random_array(D::Float64, shapes[0], Domain::SmallInt, seed).to_vector<double>();
  for (double& e : v)
    if (std::fabs(e) < 4) e = 0;
    else if (is_float(dtype)) e *= 0.37;
  return {Array::from_vector<double>(v, shapes[0]).astype(dtype)};
}

std::vector<int64_t> ref_positions(const Ref& x) {
  std::vector<int64_t> p;
  for (int64_t i = 0; i < x.size(); ++i)
    if (x.v[i] != 0) p.push_back(i);  // NaN != 0: non-zero, as NumPy
  return p;
}

void add_nonzero_cases(std::vector<Case>& cases) {
  const std::vector<D> dtypes = {D::Float32, D::Float64, D::Int32, D::Int8, D::UInt8, D::Bool};
  Case flat = make("flatnonzero", "", dtypes, {{{3, 5}}, {{0, 4}}, {{1, 1}}, {{2, 3, 4}}, {{7}}, {{}}},
                   [](auto& v) { return tensor::flatnonzero(v[0]); }, [](auto& r) {
                     std::vector<int64_t> p = ref_positions(r[0]);
                     return Ref{D::Int64, {int64_t(p.size())}, std::vector<double>(p.begin(), p.end())};
                   });
  flat.make_inputs = sparse_inputs;
  cases.push_back(flat);
  Case coords = make("flatnonzero", "nonzero", dtypes, {{{3, 5}}, {{0, 4}}, {{2, 3, 4}}, {{7}}},
                     [](auto& v) { return tensor::stack(tensor::nonzero(v[0]), 0); }, [](auto& r) {
                       std::vector<int64_t> p = ref_positions(r[0]);
                       const int64_t k = int64_t(p.size());
                       Ref o{D::Int64, {int64_t(r[0].ndim()), k}, std::vector<double>(r[0].ndim() * k)};
                       for (int64_t j = 0; j < k; ++j) {
                         std::vector<int64_t> idx = unravel(p[j], r[0].shape);
                         for (int d = 0; d < r[0].ndim(); ++d) o.v[d * k + j] = double(idx[d]);
                       }
                       return o;
                     });
  coords.make_inputs = sparse_inputs;
  cases.push_back(coords);
  Case nan = make("flatnonzero", "nan_signed_zero", {D::Float64, D::Float32}, {{{8}}},
                  [](auto& v) { return tensor::flatnonzero(v[0]); },
                  [](auto&) { return Ref{D::Int64, {4}, {0, 2, 5, 7}}; });
  nan.vary_layout = false;
  nan.make_inputs = [](D dtype, const std::vector<Shape>&, uint64_t) {
    std::vector<double> v = {NAN, 0.0, 1.5, -0.0, 0.0, -2, 0, INFINITY};
    return std::vector<Array>{Array::from_vector<double>(v, {8}).astype(dtype)};
  };
  cases.push_back(nan);
  Case values = make("nonzero_values", "", dtypes, {{{3, 5}}, {{0, 4}}, {{2, 3, 4}}, {{}}},
                     [](auto& v) { return tensor::nonzero_values(v[0]); }, [](auto& r) {
                       std::vector<int64_t> p = ref_positions(r[0]);
                       Ref o{r[0].dtype, {int64_t(p.size())}, {}};
                       for (int64_t i : p) o.v.push_back(r[0].v[i]);
                       return o;
                     }, true);  // gradient rows: normal draws, all non-zero
  values.make_inputs = sparse_inputs;
  cases.push_back(values);
}

}  // namespace

void add_api_cases(std::vector<Case>& cases) {
  add_special_cases(cases);
  add_constructor_cases(cases);
  add_layout_cases(cases);
  add_sort_cases(cases);
  add_nonzero_cases(cases);
}

}  // namespace theon::testing
