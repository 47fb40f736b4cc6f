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

// Issue 29's rows: in each row of n, a value at one lane class (the first lane, either side of
// the CPU's 8- and 16-lane vector bodies and of a GPU warp's 32, the tail) and sometimes another: the dtype's
// largest values of both signs (x - max overflows the dtype), +-inf, NaN, denormals. The
// rows' lengths: shorter than 8, 8 + a tail and shorter than 16, 16 + a tail, 2 * 16 + a
// tail (the GPU: one thread per row up to 32, a warp above). Each row's label is its
// special lane, or the other one every other row. The reference follows NumPy: NaN or +inf
// make the row NaN, an all -inf row is NaN, a -inf lane is 0.
constexpr int64_t kExtremeLengths[] = {3, 12, 21, 37};

std::pair<std::vector<std::vector<double>>, std::vector<int64_t>> extreme_rows(D dtype, int64_t n,
                                                                                std::vector<int64_t> lanes = {}) {
  const double big = dtype == D::Float64   ? std::numeric_limits<double>::max()
                     : dtype == D::Float16 ? 65504.0
                                           : double(std::numeric_limits<float>::max());
  const double tiny = dtype == D::Float64   ? std::numeric_limits<double>::denorm_min()
                      : dtype == D::Float16 ? std::ldexp(1.0, -24)
                                            : double(std::numeric_limits<float>::denorm_min());
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> base(static_cast<size_t>(n)), all_minus_big(static_cast<size_t>(n), -big);
  std::vector<double> all_minus_inf(static_cast<size_t>(n), -inf), denormals(static_cast<size_t>(n), 3 * tiny);
  for (int64_t i = 0; i < n; ++i) base[i] = 0.25 * double(i % 7) - 0.5;
  std::vector<std::vector<double>> rows = {all_minus_inf, denormals};
  std::vector<int64_t> labels = {0, n - 1};
  if (lanes.empty())
    for (int64_t i : {int64_t(0), int64_t(7), int64_t(8), int64_t(15), int64_t(16), int64_t(31), int64_t(32), n - 1})
      if (i < n && (lanes.empty() || lanes.back() < i)) lanes.push_back(i);
  for (int64_t at : lanes) {
    const int64_t other = (at + n / 2 + 1) % n == at ? (at + 1) % n : (at + n / 2 + 1) % n;
    auto with = [&](std::vector<double> row, std::initializer_list<std::pair<int64_t, double>> set) {
      for (auto [i, v] : set) row[i] = v;
      rows.push_back(std::move(row));
      labels.push_back(rows.size() % 2 ? at : other);
    };
    with(base, {{at, big}, {other, -big}});  // a spread of twice the range: one-hot
    with(base, {{at, 0.53 * big}, {other, -0.53 * big}});  // float32: issue 29's 1.8e38
    with(all_minus_big, {{at, big}});
    with(all_minus_big, {{at, -inf}, {other, big}});
    with(all_minus_inf, {{at, -big}});
    with(base, {{at, -inf}});
    with(base, {{at, inf}});
    with(base, {{at, nan}, {other, big}});
    with(denormals, {{at, tiny}, {other, -tiny}});
  }
  return {rows, labels};
}

std::vector<std::vector<Shape>> extreme_shapes(bool with_labels) {
  std::vector<std::vector<Shape>> shapes;
  for (int64_t n : kExtremeLengths) {
    const int64_t r = static_cast<int64_t>(extreme_rows(D::Float32, n).first.size());
    shapes.push_back(with_labels ? std::vector<Shape>{{r, n}, {r}} : std::vector<Shape>{{r, n}});
  }
  return shapes;
}

}  // namespace

std::pair<Array, Array> extreme_softmax_rows(DType dtype, int64_t n, const std::vector<int64_t>& lanes) {
  const auto [rows, labels] = extreme_rows(dtype, n, lanes);
  std::vector<double> v;
  for (const auto& row : rows) v.insert(v.end(), row.begin(), row.end());
  const int64_t r = static_cast<int64_t>(rows.size());
  return {Array::from_vector<double>(v, Shape{r, n}).astype(dtype), Array::from_vector<int64_t>(labels, Shape{r})};
}

namespace {

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
  // Issue 29: spreads beyond the dtype's range, +-inf, NaN and denormals (extreme_rows).
  Case extreme;
  extreme.op = op;
  extreme.label = "extreme_spreads";
  extreme.dtypes = {D::Float32, D::Float64};
  extreme.shapes = extreme_shapes(/*with_labels=*/false);
  extreme.make_inputs = [](D dtype, const std::vector<Shape>& shapes, uint64_t) {
    return std::vector<Array>{extreme_softmax_rows(dtype, shapes[0][1]).first};
  };
  extreme.build = large.build;
  extreme.reference = large.reference;
  extreme.atol32 = 1e-6;
  extreme.rtol32 = 2e-6;
  cases.push_back(extreme);
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

// categorical_crossentropy(softmax(x), labels), which `specialize` fuses into
// SoftmaxCrossentropy, and its gradient SoftmaxCrossentropyGrad (from the fused op's softmax),
// on issue 29's extreme rows: one output [d sum(loss) / dx | loss].
void add_softmax_crossentropy_cases(std::vector<Case>& cases) {
  Case c;
  c.op = "categorical_crossentropy";
  c.label = "softmax_extreme_spreads";
  c.dtypes = {D::Float32, D::Float64};
  c.shapes = extreme_shapes(/*with_labels=*/true);
  c.make_inputs = [](D dtype, const std::vector<Shape>& shapes, uint64_t) {
    auto [x, labels] = extreme_softmax_rows(dtype, shapes[0][1]);
    return std::vector<Array>{x, labels};
  };
  c.build = [](const std::vector<Var>& v) {
    const Var loss = tensor::categorical_crossentropy(tensor::softmax(v[0]), v[1]);
    return tensor::concatenate({grad(tensor::sum(loss), v[0]), tensor::shape_padright(loss)}, 1);
  };
  c.reference = [](const std::vector<Ref>& r) {
    const Ref &x = r[0], &t = r[1];
    const int64_t rows = x.shape[0], n = x.shape[1];
    const Ref p = ref_softmax(x, -1, false), logp = ref_softmax(x, -1, true);
    Ref out;
    out.dtype = x.dtype;
    out.shape = {rows, n + 1};
    for (int64_t i = 0; i < rows; ++i) {
      const auto label = static_cast<int64_t>(t.v[i]);
      for (int64_t j = 0; j < n; ++j) out.v.push_back(to_dtype(p.v[i * n + j] - (j == label ? 1 : 0), x.dtype));
      out.v.push_back(to_dtype(-logp.v[i * n + label], x.dtype));
    }
    return out;
  };
  cases.push_back(c);
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
  add_softmax_crossentropy_cases(cases);
  add_one_hot_cases(cases);
}

}  // namespace theon::testing
