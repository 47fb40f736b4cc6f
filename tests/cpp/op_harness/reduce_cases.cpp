// Harness cases for the reductions (every axis set, keepdims, empty inputs) and the scans.
#include "harness.hpp"

#include <cmath>
#include <limits>
#include <optional>
#include <utility>

namespace theon::testing {
namespace {

using D = DType;

struct AxisCase {
  std::optional<std::vector<int>> axes;
  bool keepdims;
  std::vector<Shape> shapes;
};

const std::vector<AxisCase> kAxisCases = {
    {std::nullopt, false, {{3, 4}, {0, 3}, {5}, {2, 3, 4}, {}}},
    {std::vector<int>{0}, false, {{3, 4}, {0, 3}, {1, 5}, {2, 3, 4}}},
    {std::vector<int>{-1}, true, {{3, 4}, {3, 0}, {2, 3, 4}}},
    {std::vector<int>{0, 2}, false, {{2, 3, 4}, {2, 1, 3}}},
    {std::vector<int>{1, 2}, true, {{2, 3, 4}}},
};

void add(std::vector<Case>& cases, const std::string& op, std::vector<D> dtypes,
         std::function<Var(const Var&, tensor::Axes, bool)> build, std::function<D(D)> out, double init,
         std::function<double(double, double)> combine, std::function<double(double, int64_t)> finish = nullptr,
         bool skip_empty = false, bool check_grad = false) {
  for (auto& ac : kAxisCases) {
    Case c;
    c.op = op;
    c.label = ac.axes ? "axes" + std::to_string(ac.axes->size()) + (ac.keepdims ? "_keep" : "") : "all";
    c.dtypes = dtypes;
    for (auto& s : ac.shapes)
      if (!(skip_empty && shape_size(s) == 0)) c.shapes.push_back({s});
    c.domain = Domain::Unit;
    auto axes = ac.axes;
    bool keep = ac.keepdims;
    c.build = [=](const std::vector<Var>& v) { return build(v[0], axes, keep); };
    c.reference = [=](const std::vector<Ref>& r) {
      return ref_reduce(r[0], axes.value_or(std::vector<int>{}), keep, out(r[0].dtype), init, combine, finish);
    };
    c.rtol32 = 1e-5;
    c.atol32 = 1e-5;
    c.check_grad = check_grad;
    cases.push_back(c);
  }
}

D sum_dtype(D t) { return is_float(t) ? t : D::Int64; }

// numpy.cumsum / numpy.cumprod along `axis` (std::nullopt: over the flattened tensor), in float64.
Ref ref_cumulative(const Ref& x, std::optional<int> axis, bool product) {
  Ref r;
  r.dtype = sum_dtype(x.dtype);
  const int nd = x.ndim();
  int64_t n = x.size(), inner = 1, outer = 1;
  if (axis) {
    const int ax = *axis < 0 ? *axis + nd : *axis;
    n = x.shape[ax];
    for (int d = ax + 1; d < nd; ++d) inner *= x.shape[d];
    for (int d = 0; d < ax; ++d) outer *= x.shape[d];
    r.shape = x.shape;
  } else {
    r.shape = {x.size()};
  }
  r.v.assign(x.v.size(), 0.0);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      double acc = product ? 1 : 0;
      for (int64_t i = 0; i < n; ++i) {
        const int64_t k = (o * n + i) * inner + in;
        acc = product ? acc * x.v[k] : acc + x.v[k];
        r.v[k] = acc;
      }
    }
  return r;
}

void add_cumulative_cases(std::vector<Case>& cases, const std::string& op, bool product) {
  const std::vector<std::pair<std::optional<int>, std::vector<Shape>>> variants = {
      {std::nullopt, {{3, 4}, {5}, {}, {0, 3}, {2, 3, 4}}},
      {0, {{3, 4}, {1, 5}, {6}, {0, 2}}},
      {-1, {{3, 4}, {2, 3, 5}, {4, 0}, {5, 1}}},
      {1, {{2, 3, 4}, {2, 1, 3}}},
  };
  for (const auto& [axis, shapes] : variants) {
    Case c;
    c.op = op;
    c.label = axis ? "axis" + std::to_string(*axis) : "flat";
    c.dtypes = {D::Float32, D::Float64, D::Int32, D::Int8, D::UInt8, D::Bool};
    for (auto& s : shapes) c.shapes.push_back({s});
    c.domain = Domain::Unit;
    c.build = [axis, product](const std::vector<Var>& v) {
      return product ? tensor::cumprod(v[0], axis) : tensor::cumsum(v[0], axis);
    };
    c.reference = [axis, product](const std::vector<Ref>& r) { return ref_cumulative(r[0], axis, product); };
    c.rtol32 = 1e-5;
    c.atol32 = 1e-5;
    c.check_grad = true;
    cases.push_back(c);
  }
}

}  // namespace

void add_reduce_cases(std::vector<Case>& cases) {
  const std::vector<D> numbers = {D::Float32, D::Float64, D::Int32, D::Int8, D::UInt8, D::Bool};
  const double inf = std::numeric_limits<double>::infinity();
  add(cases, "sum", numbers, [](auto& x, auto a, bool k) { return tensor::sum(x, a, k); }, sum_dtype, 0,
      [](double a, double b) { return a + b; }, nullptr, false, /*check_grad=*/true);
  add(cases, "prod", numbers, [](auto& x, auto a, bool k) { return tensor::prod(x, a, k); }, sum_dtype, 1,
      [](double a, double b) { return a * b; });
  add(cases, "mean", {D::Float32, D::Float64, D::Int32, D::Bool}, [](auto& x, auto a, bool k) { return tensor::mean(x, a, k); },
      [](D t) { return is_float(t) ? t : D::Float64; }, 0, [](double a, double b) { return a + b; },
      [](double s, int64_t n) { return n == 0 ? std::nan("") : s / double(n); });
  add(cases, "max", {D::Float32, D::Float64, D::Int32, D::UInt8, D::Bool},
      [](auto& x, auto a, bool k) { return tensor::max(x, a, k); }, [](D t) { return t; }, -inf,
      [](double a, double b) { return std::max(a, b); }, nullptr, /*skip_empty=*/true);
  add(cases, "min", {D::Float32, D::Float64, D::Int32, D::Int8},
      [](auto& x, auto a, bool k) { return tensor::min(x, a, k); }, [](D t) { return t; }, inf,
      [](double a, double b) { return std::min(a, b); }, nullptr, /*skip_empty=*/true);
  add(cases, "any", {D::Bool, D::Int32, D::Float32}, [](auto& x, auto a, bool k) { return tensor::any(x, a, k); },
      [](D) { return D::Bool; }, 0, [](double a, double b) { return double(a != 0 || b != 0); });
  add(cases, "all", {D::Bool, D::Int32, D::Float32}, [](auto& x, auto a, bool k) { return tensor::all(x, a, k); },
      [](D) { return D::Bool; }, 1, [](double a, double b) { return double(a != 0 && b != 0); });
  add_cumulative_cases(cases, "cumsum", false);
  add_cumulative_cases(cases, "cumprod", true);
}

namespace {

// Dense layers: dot(x, W) + bias (+ relu), which specialize and gemm_epilogue turn into one
// Gemm with an epilogue (a row or col bias vector, a matrix addend, relu; ops/gemm.hpp). The
// shapes cover the skinny kernel (n <= 16, k <= 256: skinny_gemm.cpp), the reference loop
// (small float64 products past it), the BLAS path with the vectorised epilogue
// (m * n * k > 16384), a row wider than the CPU's bias tile (n > 512), size-0 and size-1
// dims; the harness adds transposed and strided inputs. Each variant has a gradient row on
// small shapes (`_grad`). relu(dot(x, W)) with no bias is a Gemm with no addend (bias=none).
enum class DenseBias { Row, Col, Matrix, None };

Ref ref_dense(const std::vector<Ref>& r, DenseBias bias, double alpha, double beta, bool relu) {
  const Ref &x = r[0], &w = r[1];
  const Ref& c = bias == DenseBias::None ? r[0] : r[2];  // (not read without a bias)
  const int64_t m = x.shape[0], k = x.shape[1], n = w.shape[1];
  Ref out;
  out.dtype = x.dtype;
  out.shape = {m, n};
  out.v.assign(m * n, 0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) s += x.v[i * k + p] * w.v[p * n + j];
      const double cv = bias == DenseBias::Row ? c.v[j] : bias == DenseBias::Col ? c.v[i] : bias == DenseBias::None ? 0 : c.v[i * n + j];
      double v = to_dtype(alpha * s + beta * cv, out.dtype);
      if (relu && !(v > 0) && v == v) v = 0;
      out.v[i * n + j] = v;
    }
  return out;
}

void add_dense_cases(std::vector<Case>& cases) {
  struct Variant {
    const char* label;
    DenseBias bias;
    double alpha, beta;
    bool relu, maximum_form, ints;
  };
  const Variant variants[] = {
      {"dense_bias", DenseBias::Row, 1, 1, false, false, false},
      {"dense_bias_relu", DenseBias::Row, 1, 1, true, false, true},
      {"dense_bias_maximum0", DenseBias::Row, 1, 1, true, true, false},
      {"dense_scaled_bias_relu", DenseBias::Row, 2, -0.5, true, false, false},
      {"dense_col_bias_relu", DenseBias::Col, 1, 1, true, false, false},
      {"dense_matrix_relu", DenseBias::Matrix, 1, 1, true, false, false},
      {"dense_relu", DenseBias::None, 1, 0, true, false, true},
      {"dense_maximum0", DenseBias::None, 1, 0, true, true, false},
  };
  for (const Variant& v : variants) {
    Case c;
    c.op = "dot";
    c.label = v.label;
    c.dtypes = {D::Float32, D::Float64};
    if (v.ints) c.dtypes.push_back(D::Int32);
    auto bias_shape = [&](int64_t m, int64_t n) -> Shape {
      return v.bias == DenseBias::Row ? Shape{n} : v.bias == DenseBias::Col ? Shape{m} : Shape{m, n};
    };
    auto operands = [&](int64_t m, int64_t k, int64_t n) -> std::vector<Shape> {
      if (v.bias == DenseBias::None) return {{m, k}, {k, n}};
      return {{m, k}, {k, n}, bias_shape(m, n)};
    };
    for (auto [m, k, n] : {std::tuple<int64_t, int64_t, int64_t>{3, 4, 5}, {40, 30, 20}, {257, 10, 5}, {2, 30, 600},
                           {0, 4, 5}, {3, 0, 5}, {3, 4, 0}, {1, 1, 1}, {1, 40, 600}, {33, 64, 1},
                           // the skinny kernel's edges (n <= 16, k <= 256; one or two vectors a
                           // row, the row block of 8 or 4, and the threaded split of many rows)
                           {9, 7, 8}, {13, 5, 9}, {6, 3, 16}, {4, 2, 17}, {5, 256, 3}, {4, 257, 6},
                           {20011, 10, 5}})
      c.shapes.push_back(operands(m, k, n));
    c.domain = Domain::Unit;
    c.build = [v](const std::vector<Var>& in) {
      Var y = tensor::dot(in[0], in[1]);
      if (v.alpha != 1) y = v.alpha * y;
      if (v.bias != DenseBias::None) {
        Var b = v.bias == DenseBias::Col ? in[2].dimshuffle({0, -1}) : in[2];
        y = y + (v.beta != 1 ? v.beta * b : b);
      }
      if (v.relu) y = v.maximum_form ? tensor::maximum(y, literal(0.0, false)) : tensor::relu(y);
      return y;
    };
    c.reference = [v](const std::vector<Ref>& r) { return ref_dense(r, v.bias, v.alpha, v.beta, v.relu); };
    c.rtol32 = 5e-5;
    c.atol32 = 5e-6;
    cases.push_back(c);
    // The gradient row on small shapes (finite differences cost two calls per element).
    Case g = c;
    g.label = std::string(v.label) + "_grad";
    g.dtypes = {D::Float64};
    g.shapes.clear();
    for (auto [m, k, n] : {std::tuple<int64_t, int64_t, int64_t>{3, 4, 5}, {1, 1, 1}, {5, 3, 2}})
      g.shapes.push_back(operands(m, k, n));
    g.check_grad = true;
    cases.push_back(g);
  }
}

}  // namespace

void add_blas_cases(std::vector<Case>& cases) {
  Case c;
  c.op = "dot";
  c.dtypes = {D::Float32, D::Float64, D::Int32, D::Int64, D::Int8};
  c.shapes = {{{3, 4}, {4, 5}}, {{3, 4}, {4}}, {{4}, {4, 5}}, {{4}, {4}}, {{0, 4}, {4, 5}},
              {{3, 0}, {0, 5}}, {{1, 1}, {1, 1}}, {{17, 33}, {33, 9}}, {{9, 12}, {12, 16}},
              {{700, 30}, {30, 3}}, {{40, 300}, {300, 4}}, {{20011, 10}, {10}}};
  c.domain = Domain::Unit;
  c.build = [](const std::vector<Var>& v) { return tensor::dot(v[0], v[1]); };
  c.reference = [](const std::vector<Ref>& r) {
    const Ref &a = r[0], &b = r[1];
    int64_t m = a.ndim() == 2 ? a.shape[0] : 1, k = a.shape.back(), n = b.ndim() == 2 ? b.shape[1] : 1;
    Ref out;
    out.dtype = a.dtype;
    if (a.ndim() == 2) out.shape.push_back(m);
    if (b.ndim() == 2) out.shape.push_back(n);
    out.v.assign(m * n, 0);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p) s += a.v[i * k + p] * b.v[p * n + j];
        out.v[i * n + j] = to_dtype(s, out.dtype);
      }
    return out;
  };
  c.rtol32 = 5e-5;
  c.atol32 = 5e-6;
  cases.push_back(c);

  add_dense_cases(cases);

  Case ds;
  ds.op = "dimshuffle";
  ds.dtypes = {D::Float32, D::Int32, D::Bool};
  ds.shapes = {{{3, 4}}, {{0, 2}}, {{1, 5}}};
  ds.build = [](const std::vector<Var>& v) {
    Var d = v[0].dimshuffle({1, -1, 0});
    return tensor::maximum(d, d);  // a computed (non-view) output, any dtype
  };
  ds.reference = [](const std::vector<Ref>& r) {
    const Ref& a = r[0];
    Ref out;
    out.dtype = a.dtype;
    out.shape = {a.shape[1], 1, a.shape[0]};
    for (int64_t j = 0; j < a.shape[1]; ++j)
      for (int64_t i = 0; i < a.shape[0]; ++i) out.v.push_back(a.v[i * a.shape[1] + j]);
    return out;
  };
  cases.push_back(ds);
}

}  // namespace theon::testing
