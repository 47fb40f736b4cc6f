// Harness cases for pooling (pool_2d, pool_3d, max_pool_2d_same_size) and its gradients. The
// reference follows Theano's Pool.perform: the image is padded with zeros, each window is a
// slice of the padded image (clipped to it; for every mode but average_inc_pad also to the
// unpadded part) and reduced with max, sum or mean. Written here, independent of the kernels.
#include "harness.hpp"

#include <algorithm>
#include <cmath>

namespace theon::testing {
namespace {

using D = DType;

struct PoolSpec {
  int nd;
  std::vector<int64_t> ws, st, pad;
  bool ignore_border;
  std::string mode;
};

// Theano's output size rule (Python's floor division), with no windows for an empty dim.
int64_t out_size(int64_t n, int64_t ws, int64_t st, int64_t pad, bool ignore_border) {
  if (n == 0) return 0;
  const int64_t r = n + 2 * pad;
  const auto floordiv = [](int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); };
  if (ignore_border) return std::max<int64_t>(floordiv(r - ws, st) + 1, 0);
  if (st >= ws) return floordiv(r - 1, st) + 1;
  return std::max<int64_t>(0, floordiv(r - 1 - ws + st, st)) + 1;
}

// Row-major index helpers over a shape.
int64_t flat(const Shape& shape, const std::vector<int64_t>& idx) {
  int64_t f = 0;
  for (size_t d = 0; d < shape.size(); ++d) f = f * shape[d] + idx[d];
  return f;
}
bool next_index(const Shape& shape, std::vector<int64_t>& idx) {
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    if (++idx[d] < shape[d]) return true;
    idx[d] = 0;
  }
  return false;
}

struct Window {
  std::vector<int64_t> lo, hi;  // in padded coordinates
};

// The windows of output position `o` (pooled dims), as Theano's perform slices them.
Window window_of(const PoolSpec& s, const Shape& padded, const std::vector<int64_t>& o) {
  Window w;
  for (int i = 0; i < s.nd; ++i) {
    int64_t start = o[i] * s.st[i];
    int64_t end = std::min(start + s.ws[i], padded[i]);
    if (s.mode != "average_inc_pad") {
      start = std::max(start, s.pad[i]);
      end = std::min(end, padded[i] - s.pad[i]);
    }
    w.lo.push_back(start);
    w.hi.push_back(end);
  }
  return w;
}

// Visits every element of a window: fn(padded index).
template <class Fn>
void each_in(const Window& w, Fn&& fn) {
  std::vector<int64_t> idx = w.lo;
  for (size_t i = 0; i < idx.size(); ++i)
    if (w.lo[i] >= w.hi[i]) return;
  while (true) {
    fn(idx);
    int d = static_cast<int>(idx.size()) - 1;
    for (; d >= 0; --d) {
      if (++idx[d] < w.hi[d]) break;
      idx[d] = w.lo[d];
    }
    if (d < 0) return;
  }
}

// The reference problem: x split into planes (leading dims) of the pooled dims.
struct Problem {
  PoolSpec s;
  Shape lead, sp, padded, out;
  int64_t planes = 1, plane_in = 1, plane_out = 1;
  Problem(const PoolSpec& spec, const Shape& x) : s(spec) {
    const size_t k = x.size() - spec.nd;
    lead.assign(x.begin(), x.begin() + k);
    sp.assign(x.begin() + k, x.end());
    for (int64_t n : lead) planes *= n;
    for (int i = 0; i < s.nd; ++i) {
      padded.push_back(sp[i] + 2 * s.pad[i]);
      out.push_back(out_size(sp[i], s.ws[i], s.st[i], s.pad[i], s.ignore_border));
      plane_in *= sp[i];
      plane_out *= out[i];
    }
  }
  Shape out_shape() const {
    Shape o = lead;
    o.insert(o.end(), out.begin(), out.end());
    return o;
  }
  // The unpadded flat index of a padded index inside the image, else -1.
  int64_t real(const std::vector<int64_t>& q) const {
    std::vector<int64_t> i(q.size());
    for (size_t d = 0; d < q.size(); ++d) {
      i[d] = q[d] - s.pad[d];
      if (i[d] < 0 || i[d] >= sp[d]) return -1;
    }
    return flat(sp, i);
  }
};

// Pool of x (its values; padding reads 0).
std::vector<double> ref_pool_values(const Problem& P, const std::vector<double>& x) {
  std::vector<double> z;
  for (int64_t p = 0; p < P.planes; ++p) {
    if (P.plane_out == 0) break;
    std::vector<int64_t> o(P.s.nd, 0);
    do {
      const Window w = window_of(P.s, P.padded, o);
      double acc = 0, best = -INFINITY;
      int64_t count = 0;
      each_in(w, [&](const std::vector<int64_t>& q) {
        const int64_t r = P.real(q);
        const double v = r < 0 ? 0.0 : x[p * P.plane_in + r];
        acc += v;
        best = std::max(best, v);
        ++count;
      });
      if (P.s.mode == "max") z.push_back(best);
      else if (P.s.mode == "sum") z.push_back(acc);
      else z.push_back(acc / static_cast<double>(count));
    } while (next_index(P.out, o));
  }
  return z;
}

// The max-pool gradient: gz of each window to its elements equal to its maximum z.
std::vector<double> ref_max_grad(const Problem& P, const std::vector<double>& x, const std::vector<double>& z,
                                 const std::vector<double>& gz) {
  std::vector<double> gx(x.size(), 0.0);
  for (int64_t p = 0; p < P.planes; ++p) {
    if (P.plane_out == 0) break;
    std::vector<int64_t> o(P.s.nd, 0);
    int64_t k = p * P.plane_out;
    do {
      PoolSpec exc = P.s;
      exc.mode = "max";
      const Window w = window_of(exc, P.padded, o);
      each_in(w, [&](const std::vector<int64_t>& q) {
        const int64_t r = P.real(q);
        if (r >= 0 && x[p * P.plane_in + r] == z[k]) gx[p * P.plane_in + r] += gz[k];
      });
      ++k;
    } while (next_index(P.out, o));
  }
  return gx;
}

// The sum/average gradient: gz of each window over its elements (padding included in the
// count for average_inc_pad, as the forward's divisor), real elements only receiving.
std::vector<double> ref_avg_grad(const Problem& P, const std::vector<double>& gz) {
  std::vector<double> gx(static_cast<size_t>(P.planes * P.plane_in), 0.0);
  for (int64_t p = 0; p < P.planes; ++p) {
    if (P.plane_out == 0) break;
    std::vector<int64_t> o(P.s.nd, 0);
    int64_t k = p * P.plane_out;
    do {
      const Window w = window_of(P.s, P.padded, o);
      int64_t count = 0;
      each_in(w, [&](const std::vector<int64_t>&) { ++count; });
      const double share = P.s.mode == "sum" ? gz[k] : gz[k] / static_cast<double>(count);
      each_in(w, [&](const std::vector<int64_t>& q) {
        const int64_t r = P.real(q);
        if (r >= 0) gx[p * P.plane_in + r] += share;
      });
      ++k;
    } while (next_index(P.out, o));
  }
  return gx;
}

// The adjoint of ref_max_grad: per window, the sum of ggx over its elements equal to z.
std::vector<double> ref_max_grad_grad(const Problem& P, const std::vector<double>& x, const std::vector<double>& z,
                                      const std::vector<double>& ggx) {
  std::vector<double> out(z.size(), 0.0);
  for (int64_t p = 0; p < P.planes; ++p) {
    if (P.plane_out == 0) break;
    std::vector<int64_t> o(P.s.nd, 0);
    int64_t k = p * P.plane_out;
    do {
      PoolSpec exc = P.s;
      exc.mode = "max";
      each_in(window_of(exc, P.padded, o), [&](const std::vector<int64_t>& q) {
        const int64_t r = P.real(q);
        if (r >= 0 && x[p * P.plane_in + r] == z[k]) out[k] += ggx[p * P.plane_in + r];
      });
      ++k;
    } while (next_index(P.out, o));
  }
  return out;
}

Ref make_ref(DType dtype, const Shape& shape, std::vector<double> v) {
  Ref r;
  r.dtype = dtype;
  r.shape = shape;
  r.v = std::move(v);
  for (double& e : r.v) e = to_dtype(e, dtype);
  return r;
}

Var build_pool(const PoolSpec& s, const Var& x) {
  return s.nd == 2 ? tensor::pool_2d(x, s.ws, s.ignore_border, s.st, s.pad, s.mode)
                   : tensor::pool_3d(x, s.ws, s.ignore_border, s.st, s.pad, s.mode);
}

void add_pool(std::vector<Case>& cases, const std::string& label, const PoolSpec& s, std::vector<Shape> shapes) {
  Case c;
  c.op = s.nd == 2 ? "pool_2d" : "pool_3d";
  c.label = label + "_" + s.mode;
  c.dtypes = {D::Float32, D::Float64};
  for (auto& sh : shapes) c.shapes.push_back({sh});
  c.build = [s](const std::vector<Var>& v) { return build_pool(s, v[0]); };
  c.reference = [s](const std::vector<Ref>& r) {
    const Problem P(s, r[0].shape);
    return make_ref(r[0].dtype, P.out_shape(), ref_pool_values(P, r[0].v));
  };
  c.check_grad = true;
  cases.push_back(c);
}

}  // namespace

void add_pool_cases(std::vector<Case>& cases) {
  for (const std::string mode : {"max", "sum", "average_inc_pad", "average_exc_pad"}) {
    // Non-overlapping windows that divide the image, a 2-d input, size-0 and size-1 dims.
    add_pool(cases, "ws2", {2, {2, 2}, {2, 2}, {0, 0}, true, mode},
             {{2, 3, 4, 6}, {3, 7}, {0, 2, 4, 4}, {1, 1, 1, 1}, {2, 1, 5, 5}});
    // Odd sizes, stride != ws (overlapping), partial windows kept (ignore_border=False).
    add_pool(cases, "overlap_keep_border", {2, {3, 2}, {2, 1}, {0, 0}, false, mode},
             {{2, 2, 7, 6}, {1, 3, 5, 1}, {2, 1, 1, 2}});
    // Stride larger than the window, ignore_border both ways.
    add_pool(cases, "gaps_keep_border", {2, {2, 3}, {3, 4}, {0, 0}, false, mode}, {{2, 2, 7, 9}, {1, 1, 2, 2}});
    add_pool(cases, "gaps_ignore_border", {2, {2, 3}, {3, 4}, {0, 0}, true, mode}, {{2, 2, 7, 9}, {3, 8, 3}});
    // Padding (smaller than the window), odd sizes.
    add_pool(cases, "pad", {2, {3, 3}, {2, 2}, {1, 2}, true, mode}, {{2, 3, 6, 7}, {1, 1, 1, 1}, {2, 5, 4}});
    // 3-d pooling: partial windows; padding with overlapping windows.
    add_pool(cases, "3d_keep_border", {3, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}, false, mode},
             {{2, 3, 5, 4, 3}, {1, 1, 1}, {2, 1, 3, 1, 2}});
    add_pool(cases, "3d_pad", {3, {3, 2, 2}, {2, 1, 2}, {1, 0, 1}, true, mode}, {{1, 2, 5, 4, 5}, {4, 3, 3}});
  }

  // max_pool_2d_same_size: input's shape, the maximum of each full patch kept, zeros elsewhere.
  {
    Case c;
    c.op = "max_pool_2d_same_size";
    c.dtypes = {D::Float32, D::Float64};
    c.shapes = {{{2, 3, 5, 7}}, {{4, 6}}, {{1, 1, 1, 1}}};
    c.build = [](const std::vector<Var>& v) { return tensor::max_pool_2d_same_size(v[0], {2, 3}); };
    c.reference = [](const std::vector<Ref>& r) {
      const PoolSpec s{2, {2, 3}, {2, 3}, {0, 0}, true, "max"};
      const Problem P(s, r[0].shape);
      const std::vector<double> z = ref_pool_values(P, r[0].v);
      return make_ref(r[0].dtype, r[0].shape, ref_max_grad(P, r[0].v, z, z));
    };
    c.check_grad = true;
    cases.push_back(c);
  }

  // The sum/average gradients as graphs of their own (AveragePoolGrad; its gradient is Pool):
  // d/dx sum(pool(x)^2) = the pooling gradient of 2 z.
  for (const PoolSpec& s : {PoolSpec{2, {3, 2}, {2, 1}, {0, 0}, false, "average_inc_pad"},
                            PoolSpec{2, {3, 3}, {2, 2}, {1, 2}, true, "average_inc_pad"},
                            PoolSpec{2, {3, 3}, {2, 2}, {1, 1}, true, "average_exc_pad"},
                            PoolSpec{3, {2, 2, 2}, {1, 2, 2}, {1, 0, 1}, true, "sum"}}) {
    Case c;
    c.op = s.nd == 2 ? "pool_2d" : "pool_3d";
    c.label = "grad_" + s.mode;
    c.dtypes = {D::Float32, D::Float64};
    c.shapes = s.nd == 2 ? std::vector<std::vector<Shape>>{{{2, 2, 7, 5}}, {{1, 3, 4, 4}}}
                         : std::vector<std::vector<Shape>>{{{2, 3, 4, 5}}};
    c.build = [s](const std::vector<Var>& v) {
      const Var z = build_pool(s, v[0]);
      return grad(tensor::sum(z * z), v[0]);
    };
    c.reference = [s](const std::vector<Ref>& r) {
      const Problem P(s, r[0].shape);
      const std::vector<double> z = ref_pool_values(P, r[0].v);
      std::vector<double> g2(z.size());
      for (size_t i = 0; i < z.size(); ++i) g2[i] = 2 * to_dtype(z[i], r[0].dtype);
      return make_ref(r[0].dtype, r[0].shape, ref_avg_grad(P, g2));
    };
    c.check_grad = true;
    cases.push_back(c);
  }

  // A second derivative of max pooling in the graph itself (DownsampleFactorMaxGradGrad):
  // g = d/dx sum(z^2) = MaxPoolGrad(2 z); d/dx sum(g^2) = MaxPoolGrad(2 GradGrad(2 g)) (x and z
  // are constant in MaxPoolGrad's gradient, as in Theano).
  {
    const PoolSpec s{2, {3, 3}, {2, 2}, {1, 1}, true, "max"};
    Case c;
    c.op = "pool_2d";
    c.label = "max_second_derivative";
    c.dtypes = {D::Float32, D::Float64};
    c.shapes = {{{2, 2, 7, 5}}, {{1, 3, 4, 4}}};
    c.build = [s](const std::vector<Var>& v) {
      const Var z = build_pool(s, v[0]);
      const Var g = grad(tensor::sum(z * z), v[0]);
      return grad(tensor::sum(g * g), v[0]);
    };
    c.reference = [s](const std::vector<Ref>& r) {
      const Problem P(s, r[0].shape);
      const std::vector<double> z = ref_pool_values(P, r[0].v);
      std::vector<double> z2(z.size());
      for (size_t i = 0; i < z.size(); ++i) z2[i] = 2 * to_dtype(z[i], r[0].dtype);
      std::vector<double> g2 = ref_max_grad(P, r[0].v, z, z2);
      for (double& e : g2) e *= 2;
      std::vector<double> gz = ref_max_grad_grad(P, r[0].v, z, g2);
      for (double& e : gz) e *= 2;
      return make_ref(r[0].dtype, r[0].shape, ref_max_grad(P, r[0].v, z, gz));
    };
    cases.push_back(c);
  }

  // The gradient of max pooling, differentiated again (MaxPoolGrad's gradient,
  // DownsampleFactorMaxGradGrad): d/dx sum(pool(x)^2) = 2 z at each window's maximum.
  int variant = 0;
  for (const PoolSpec& s : {PoolSpec{2, {3, 2}, {2, 1}, {0, 0}, false, "max"},
                            PoolSpec{2, {3, 3}, {2, 2}, {1, 1}, true, "max"},
                            PoolSpec{3, {2, 2, 2}, {1, 2, 2}, {0, 0, 0}, true, "max"}}) {
    Case c;
    c.op = s.nd == 2 ? "pool_2d" : "pool_3d";
    c.label = "max_grad_of_grad_" + std::to_string(variant++);
    c.dtypes = {D::Float32, D::Float64};
    c.shapes = s.nd == 2 ? std::vector<std::vector<Shape>>{{{2, 2, 7, 5}}, {{1, 3, 4, 4}}}
                         : std::vector<std::vector<Shape>>{{{2, 3, 4, 5}}};
    c.build = [s](const std::vector<Var>& v) {
      const Var z = build_pool(s, v[0]);
      return grad(tensor::sum(z * z), v[0]);
    };
    c.reference = [s](const std::vector<Ref>& r) {
      const Problem P(s, r[0].shape);
      const std::vector<double> z = ref_pool_values(P, r[0].v);
      std::vector<double> g2(z.size());
      for (size_t i = 0; i < z.size(); ++i) g2[i] = 2 * to_dtype(z[i], r[0].dtype);
      return make_ref(r[0].dtype, r[0].shape, ref_max_grad(P, r[0].v, z, g2));
    };
    c.check_grad = true;
    cases.push_back(c);
  }
}

}  // namespace theon::testing
