// Harness cases for argmax/argmin, matmul and the neural-network ops. The references below
// are plain loops over row-major float64 values, independent of the library's code.
#include "harness.hpp"

#include <cmath>
#include <limits>
#include <optional>
#include <random>

namespace theon::testing {
namespace {

using D = DType;

// ---- argmax / argmin ----

// numpy.argmax/argmin over one axis (std::nullopt: flattened): first occurrence, first NaN wins.
Ref ref_arg_extreme(const Ref& x, std::optional<int> axis, bool keepdims, bool is_max) {
  const int nd = x.ndim();
  const int ax = axis ? (*axis < 0 ? *axis + nd : *axis) : -1;
  Shape lane_shape = x.shape;
  int64_t n = x.size(), inner = 1, outer = 1;
  if (axis) {
    n = x.shape[ax];
    for (int d = ax + 1; d < nd; ++d) inner *= x.shape[d];
    for (int d = 0; d < ax; ++d) outer *= x.shape[d];
  }
  Ref r;
  r.dtype = D::Int64;
  for (int d = 0; d < nd; ++d) {
    if (!axis || d == ax) {
      if (keepdims) r.shape.push_back(1);
    } else {
      r.shape.push_back(x.shape[d]);
    }
  }
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      int64_t best = 0;
      for (int64_t i = 0; i < n; ++i) {
        double v = x.v[(o * n + i) * inner + in], b = x.v[(o * n + best) * inner + in];
        if (std::isnan(b)) break;
        if (std::isnan(v) || (is_max ? v > b : v < b)) best = i;
      }
      r.v.push_back(static_cast<double>(best));
    }
  return r;
}

void add_arg_cases(std::vector<Case>& cases, const std::string& op, bool is_max) {
  struct Variant {
    std::string label;
    std::optional<int> axis;
    bool keepdims;
    std::vector<Shape> shapes;
  };
  const std::vector<Variant> variants = {
      {"flat", std::nullopt, false, {{3, 4}, {5}, {}, {2, 3, 4}, {1, 1}}},
      {"flat_keep", std::nullopt, true, {{3, 4}, {2, 1, 3}}},
      {"axis0", 0, false, {{3, 4}, {1, 5}, {4}, {4, 0}}},
      {"axis_last_keep", -1, true, {{3, 4}, {0, 3}, {2, 3, 4}, {5, 1}}},
      {"axis1", 1, false, {{2, 3, 4}, {2, 1, 3}}},
  };
  for (const auto& var : variants) {
    Case c;
    c.op = op;
    c.label = var.label;
    // Small integers (and bools) make ties common, so the first-occurrence rule is tested.
    c.dtypes = {D::Float32, D::Float64, D::Int32, D::Int8, D::UInt8, D::Bool};
    for (auto& s : var.shapes) c.shapes.push_back({s});
    auto axis = var.axis;
    bool keep = var.keepdims;
    c.build = [=](const std::vector<Var>& v) {
      return is_max ? tensor::argmax(v[0], axis, keep) : tensor::argmin(v[0], axis, keep);
    };
    c.reference = [=](const std::vector<Ref>& r) { return ref_arg_extreme(r[0], axis, keep, is_max); };
    cases.push_back(c);
  }
  // NaNs count as the extreme, the first one winning (numpy).
  Case nan;
  nan.op = op;
  nan.label = "nan";
  nan.dtypes = {D::Float32, D::Float64};
  nan.shapes = {{{4, 6}}, {{3, 5, 2}}};
  nan.make_inputs = [](D dtype, const std::vector<Shape>& shapes, uint64_t seed) {
    Array a = random_array(D::Float64, shapes[0], Domain::SmallInt, seed);
    double* p = a.data<double>();
    for (int64_t i = 0; i < a.size(); i += 3)
      if ((i / 3) % 2 == 0) p[i] = std::numeric_limits<double>::quiet_NaN();
    return std::vector<Array>{a.astype(dtype)};
  };
  nan.build = [=](const std::vector<Var>& v) {
    return is_max ? tensor::argmax(v[0], -1, false) : tensor::argmin(v[0], -1, false);
  };
  nan.reference = [=](const std::vector<Ref>& r) { return ref_arg_extreme(r[0], -1, false, is_max); };
  cases.push_back(nan);
}

// ---- matmul ----

D matmul_dtype(D a, D b) {
  D t = promote_types(a, b);
  return t == D::Bool ? D::Int64 : t;
}

// numpy.matmul by definition: promote vectors, broadcast the batch dims, then loop.
Ref ref_matmul(const Ref& a_in, const Ref& b_in) {
  Ref a = a_in, b = b_in;
  if (a.ndim() == 1) a.shape.insert(a.shape.begin(), 1);
  if (b.ndim() == 1) b.shape.push_back(1);
  const int na = a.ndim(), nb = b.ndim(), nbatch = std::max(na, nb) - 2;
  const int64_t m = a.shape[na - 2], k = a.shape[na - 1], n = b.shape[nb - 1];
  Shape batch(nbatch, 1);
  for (int d = 0; d < nbatch; ++d) {
    int da = d - (nbatch - (na - 2)), db = d - (nbatch - (nb - 2));
    int64_t x = da >= 0 ? a.shape[da] : 1, y = db >= 0 ? b.shape[db] : 1;
    batch[d] = x == 1 ? y : x;
  }
  Ref out;
  out.dtype = matmul_dtype(a_in.dtype, b_in.dtype);
  out.shape = batch;
  if (a_in.ndim() > 1) out.shape.push_back(m);
  if (b_in.ndim() > 1) out.shape.push_back(n);
  // Flat offset of a batch index in an operand whose batch dims broadcast against `batch`.
  auto batch_offset = [&](const Ref& x, int64_t flat) {
    const int bx = x.ndim() - 2;
    int64_t off = 0, stride = x.shape[bx] * x.shape[bx + 1];
    for (int d = nbatch - 1; d >= 0; --d) {
      int64_t idx = flat % batch[d];
      flat /= batch[d];
      int dx = d - (nbatch - bx);
      if (dx < 0) continue;
      if (x.shape[dx] != 1) off += idx * stride;
      stride *= x.shape[dx];
    }
    return off;
  };
  for (int64_t bi = 0; bi < shape_size(batch); ++bi) {
    const int64_t oa = batch_offset(a, bi), ob = batch_offset(b, bi);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p) s += a.v[oa + i * k + p] * b.v[ob + p * n + j];
        out.v.push_back(to_dtype(s, out.dtype));
      }
  }
  return out;
}

void add_matmul_cases(std::vector<Case>& cases) {
  Case c;
  c.op = "matmul";
  c.dtypes = {D::Float32, D::Float64, D::Int32, D::Int64, D::Int8};
  c.shapes = {{{3, 4}, {4, 5}},        {{4}, {4, 5}},           {{3, 4}, {4}},          {{4}, {4}},
              {{2, 3, 4}, {4, 5}},     {{2, 1, 3, 4}, {5, 4, 2}}, {{1, 3, 4}, {2, 4, 5}}, {{4}, {2, 4, 5}},
              {{2, 3, 4}, {4}},        {{0, 3, 4}, {4, 5}},     {{2, 3, 0}, {0, 5}},    {{2, 0, 4}, {4, 5}},
              {{1, 1}, {1, 1}},        {{3, 1, 2}, {1, 2, 1}},  {{2, 33, 17}, {17, 9}}, {{3, 33, 17}, {3, 17, 9}}};
  c.domain = Domain::Unit;
  c.build = [](const std::vector<Var>& v) { return tensor::matmul(v[0], v[1]); };
  c.reference = [](const std::vector<Ref>& r) { return ref_matmul(r[0], r[1]); };
  c.rtol32 = 5e-5;
  c.atol32 = 5e-6;
  cases.push_back(c);

  // Mixed dtypes promote (NEP 50): int8 @ float32 -> float32, int32 @ float64 -> float64.
  Case mixed = c;
  mixed.label = "mixed_dtypes";
  mixed.dtypes = {D::Float32, D::Float64};
  mixed.shapes = {{{2, 3, 4}, {4, 5}}, {{4}, {4}}, {{2, 33, 17}, {2, 17, 9}}};
  mixed.make_inputs = [](D dtype, const std::vector<Shape>& shapes, uint64_t seed) {
    D int_type = dtype == D::Float32 ? D::Int8 : D::Int32;
    return std::vector<Array>{random_array(int_type, shapes[0], Domain::SmallInt, seed),
                              random_array(dtype, shapes[1], Domain::Unit, seed + 1)};
  };
  cases.push_back(mixed);
}

// ---- softmax / log_softmax ----

D float_result(D t) { return is_float(t) ? t : upcast_to_float(t); }

Ref ref_softmax(const Ref& x, int axis, bool log) {
  const int nd = x.ndim();
  const int ax = axis < 0 ? axis + nd : axis;
  int64_t n = x.shape[ax], inner = 1, outer = 1;
  for (int d = ax + 1; d < nd; ++d) inner *= x.shape[d];
  for (int d = 0; d < ax; ++d) outer *= x.shape[d];
  Ref r;
  r.dtype = float_result(x.dtype);
  r.shape = x.shape;
  r.v.assign(x.v.size(), 0);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      auto at = [&](int64_t i) { return (o * n + i) * inner + in; };
      double m = -std::numeric_limits<double>::infinity(), s = 0;
      for (int64_t i = 0; i < n; ++i) m = std::max(m, x.v[at(i)]);
      for (int64_t i = 0; i < n; ++i) s += std::exp(x.v[at(i)] - m);
      for (int64_t i = 0; i < n; ++i)
        r.v[at(i)] = to_dtype(log ? x.v[at(i)] - m - std::log(s) : std::exp(x.v[at(i)] - m) / s, r.dtype);
    }
  return r;
}

void add_softmax_cases(std::vector<Case>& cases, const std::string& op, bool log) {
  const std::vector<std::pair<int, std::vector<Shape>>> variants = {
      {-1, {{3, 4}, {5}, {0, 3}, {3, 0}, {1, 1}, {2, 3, 4}}},
      {0, {{3, 4}, {1, 5}}},
      {1, {{2, 3, 4}, {2, 1, 3}}},
  };
  for (const auto& [axis, shapes] : variants) {
    Case c;
    c.op = op;
    c.label = "axis" + std::to_string(axis);
    c.dtypes = {D::Float32, D::Float64, D::Int32, D::Int8};
    for (auto& s : shapes) c.shapes.push_back({s});
    const int ax = axis;
    c.build = [=](const std::vector<Var>& v) {
      return log ? tensor::log_softmax(v[0], ax) : tensor::softmax(v[0], ax);
    };
    c.reference = [=](const std::vector<Ref>& r) { return ref_softmax(r[0], ax, log); };
    c.atol32 = 1e-6;
    c.rtol32 = 2e-6;
    cases.push_back(c);
  }
  // Inputs in the hundreds: exp() of them overflows unless the maximum is subtracted.
  Case large;
  large.op = op;
  large.label = "large_values";
  large.dtypes = {D::Float32, D::Float64};
  large.shapes = {{{4, 7}}, {{2, 3, 5}}};
  large.make_inputs = [](D dtype, const std::vector<Shape>& shapes, uint64_t seed) {
    Array a = random_array(D::Float64, shapes[0], Domain::Normal, seed);
    double* p = a.data<double>();
    for (int64_t i = 0; i < a.size(); ++i) p[i] = 1000 + 5 * p[i];
    return std::vector<Array>{a.astype(dtype)};
  };
  large.build = [=](const std::vector<Var>& v) { return log ? tensor::log_softmax(v[0]) : tensor::softmax(v[0]); };
  large.reference = [=](const std::vector<Ref>& r) { return ref_softmax(r[0], -1, log); };
  large.atol32 = 1e-5;  // float32 rounding of inputs near 1000 is ~3e-5 absolute, kept in the reference
  large.rtol32 = 2e-6;
  cases.push_back(large);
}

// ---- categorical_crossentropy / one_hot ----

// Class indices in [0, classes) of `dtype`, for a vector of `rows`.
Array random_labels(D dtype, int64_t rows, int64_t classes, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<double> v(rows);
  for (auto& x : v) x = classes > 0 ? static_cast<double>(rng() % static_cast<uint64_t>(classes)) : 0;
  return Array::from_vector<double>(v, Shape{rows}).astype(dtype);
}

void add_crossentropy_cases(std::vector<Case>& cases) {
  for (D label_type : {D::Int32, D::Int64, D::UInt8}) {
    Case c;
    c.op = "categorical_crossentropy";
    c.label = "indices_" + std::string(dtype_name(label_type));
    c.dtypes = {D::Float32, D::Float64};
    c.shapes = {{{4, 5}, {4}}, {{0, 3}, {0}}, {{1, 1}, {1}}, {{6, 2}, {6}}};
    c.make_inputs = [=](D dtype, const std::vector<Shape>& shapes, uint64_t seed) {
      return std::vector<Array>{random_array(dtype, shapes[0], Domain::Positive, seed),
                                random_labels(label_type, shapes[0][0], shapes[0][1], seed + 1)};
    };
    c.build = [](const std::vector<Var>& v) { return tensor::categorical_crossentropy(v[0], v[1]); };
    c.reference = [](const std::vector<Ref>& r) {
      const Ref &p = r[0], &t = r[1];
      Ref out;
      out.dtype = p.dtype;
      out.shape = {p.shape[0]};
      for (int64_t i = 0; i < p.shape[0]; ++i)
        out.v.push_back(to_dtype(-std::log(p.v[i * p.shape[1] + static_cast<int64_t>(t.v[i])]), p.dtype));
      return out;
    };
    cases.push_back(c);
  }
  Case m;
  m.op = "categorical_crossentropy";
  m.label = "distribution";
  m.dtypes = {D::Float32, D::Float64};
  m.shapes = {{{4, 5}, {4, 5}}, {{0, 3}, {0, 3}}, {{3, 0}, {3, 0}}, {{1, 1}, {1, 1}}};
  m.domain = Domain::Positive;
  m.build = [](const std::vector<Var>& v) { return tensor::categorical_crossentropy(v[0], v[1]); };
  m.reference = [](const std::vector<Ref>& r) {
    const Ref &p = r[0], &t = r[1];
    Ref out;
    out.dtype = p.dtype;
    out.shape = {p.shape[0]};
    for (int64_t i = 0; i < p.shape[0]; ++i) {
      double s = 0;
      for (int64_t j = 0; j < p.shape[1]; ++j) s += t.v[i * p.shape[1] + j] * std::log(p.v[i * p.shape[1] + j]);
      out.v.push_back(to_dtype(-s, p.dtype));
    }
    return out;
  };
  m.rtol32 = 1e-5;
  m.atol32 = 1e-5;
  cases.push_back(m);
}

void add_one_hot_cases(std::vector<Case>& cases) {
  struct Variant {
    std::string label;
    int64_t n;
    std::optional<D> dtype;
    std::vector<Shape> shapes;
  };
  const std::vector<Variant> variants = {
      {"floatX", 4, std::nullopt, {{5}, {0}, {1}}},
      {"int32", 3, D::Int32, {{6}, {1}}},
      {"float64", 1, D::Float64, {{3}}},
      {"no_classes", 0, std::nullopt, {{0}}},
  };
  for (const auto& var : variants) {
    Case c;
    c.op = "one_hot";
    c.label = var.label;
    c.dtypes = {D::Int32, D::Int64, D::Int8, D::UInt8};
    for (auto& s : var.shapes) c.shapes.push_back({s});
    const int64_t n = var.n;
    const auto out_type = var.dtype;
    c.make_inputs = [=](D dtype, const std::vector<Shape>& shapes, uint64_t seed) {
      return std::vector<Array>{random_labels(dtype, shapes[0][0], n, seed)};
    };
    c.build = [=](const std::vector<Var>& v) { return tensor::one_hot(v[0], n, out_type); };
    c.reference = [=](const std::vector<Ref>& r) {
      Ref out;
      out.dtype = out_type.value_or(config().floatX);
      out.shape = {r[0].shape[0], n};
      for (double idx : r[0].v)
        for (int64_t j = 0; j < n; ++j) out.v.push_back(static_cast<int64_t>(idx) == j ? 1 : 0);
      return out;
    };
    cases.push_back(c);
  }
}

}  // namespace

void add_nnet_cases(std::vector<Case>& cases) {
  add_arg_cases(cases, "argmax", /*is_max=*/true);
  add_arg_cases(cases, "argmin", /*is_max=*/false);
  add_matmul_cases(cases);
  add_softmax_cases(cases, "softmax", /*log=*/false);
  add_softmax_cases(cases, "log_softmax", /*log=*/true);
  add_crossentropy_cases(cases);
  add_one_hot_cases(cases);
}

}  // namespace theon::testing
