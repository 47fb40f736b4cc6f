// Harness cases for conv2d and its two gradients (theano.tensor.nnet.conv2d,
// abstract_conv.conv2d_grad_wrt_inputs / _weights). The references are direct float64 loops
// over the definition (Theano's output-shape rule, zero padding, optional filter flip),
// written here independently of the library: the forward sum, and the gradients as the
// forward's adjoint scattered element by element. Rows pair border mode x stride x dilation
// x groups x flip (each pair of values of two parameters appears in some row), each with
// verify_grad for both tensor inputs.
#include "harness.hpp"

#include <cmath>
#include <string>

namespace theon::testing {
namespace {

using D = DType;

struct P {
  std::string border = "valid";  // valid, full, half, or "" with pads
  int64_t ph = 0, pw = 0;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1, groups = 1;
  bool flip = true;
};

tensor::Conv2dOptions options_of(const P& p) {
  tensor::Conv2dOptions o;
  o.border_mode = p.border.empty() ? tensor::BorderMode(p.ph, p.pw) : tensor::BorderMode(p.border);
  o.subsample = {p.sh, p.sw};
  o.filter_dilation = {p.dh, p.dw};
  o.num_groups = p.groups;
  o.filter_flip = p.flip;
  return o;
}

std::string label_of(const P& p) {
  std::string s = p.border.empty() ? "pad" + std::to_string(p.ph) + "x" + std::to_string(p.pw) : p.border;
  s += "_s" + std::to_string(p.sh) + "x" + std::to_string(p.sw);
  s += "_d" + std::to_string(p.dh) + "x" + std::to_string(p.dw);
  s += "_g" + std::to_string(p.groups);
  s += p.flip ? "_flip" : "_xcorr";
  return s;
}

// The pads of the border mode for a kh x kw filter (Theano's rule, written out here).
void pads(const P& p, int64_t kh, int64_t kw, int64_t& ph, int64_t& pw) {
  const int64_t eh = (kh - 1) * p.dh + 1, ew = (kw - 1) * p.dw + 1;
  if (p.border == "valid") ph = pw = 0;
  else if (p.border == "full") ph = eh - 1, pw = ew - 1;
  else if (p.border == "half") ph = eh / 2, pw = ew / 2;
  else ph = p.ph, pw = p.pw;
}

int64_t out_size(int64_t in, int64_t k, int64_t pad, int64_t s, int64_t d) {
  return (in + 2 * pad - ((k - 1) * d + 1)) / s + 1;
}

// Visits every (output, input, filter) index triple of the convolution of an (n, c, h, w)
// input with (m, c/groups, kh, kw) filters: fn(out_index, in_index, filter_index).
template <class F>
void for_each_product(const P& p, int64_t n, int64_t c, int64_t h, int64_t w, int64_t m, int64_t kh, int64_t kw,
                      F&& fn) {
  int64_t ph, pw;
  pads(p, kh, kw, ph, pw);
  const int64_t oh = out_size(h, kh, ph, p.sh, p.dh), ow = out_size(w, kw, pw, p.sw, p.dw);
  const int64_t cg = c / p.groups, mg = m / p.groups;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t o = 0; o < m; ++o) {
      const int64_t grp = o / mg;
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x)
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t i = 0; i < kh; ++i)
              for (int64_t j = 0; j < kw; ++j) {
                const int64_t r = y * p.sh - ph + i * p.dh, q = x * p.sw - pw + j * p.dw;
                if (r < 0 || r >= h || q < 0 || q >= w) continue;
                const int64_t fi = p.flip ? kh - 1 - i : i, fj = p.flip ? kw - 1 - j : j;
                const int64_t out_i = ((b * m + o) * oh + y) * ow + x;
                const int64_t in_i = ((b * c + grp * cg + ci) * h + r) * w + q;
                const int64_t f_i = ((o * cg + ci) * kh + fi) * kw + fj;
                fn(out_i, in_i, f_i);
              }
    }
}

Ref ref_forward(const P& p, const Ref& x, const Ref& f) {
  int64_t ph, pw;
  pads(p, f.shape[2], f.shape[3], ph, pw);
  Ref r;
  r.dtype = x.dtype;
  r.shape = {x.shape[0], f.shape[0], out_size(x.shape[2], f.shape[2], ph, p.sh, p.dh),
             out_size(x.shape[3], f.shape[3], pw, p.sw, p.dw)};
  r.v.assign(static_cast<size_t>(shape_size(r.shape)), 0.0);
  for_each_product(p, x.shape[0], x.shape[1], x.shape[2], x.shape[3], f.shape[0], f.shape[2], f.shape[3],
                   [&](int64_t o, int64_t i, int64_t k) { r.v[o] += x.v[i] * f.v[k]; });
  for (double& v : r.v) v = to_dtype(v, r.dtype);
  return r;
}

// d(sum(gz * conv(x, f)))/dx for an input of spatial size (h, w).
Ref ref_grad_inputs(const P& p, const Ref& gz, const Ref& f, int64_t h, int64_t w) {
  Ref r;
  r.dtype = gz.dtype;
  r.shape = {gz.shape[0], f.shape[1] * p.groups, h, w};
  r.v.assign(static_cast<size_t>(shape_size(r.shape)), 0.0);
  for_each_product(p, r.shape[0], r.shape[1], h, w, f.shape[0], f.shape[2], f.shape[3],
                   [&](int64_t o, int64_t i, int64_t k) { r.v[i] += gz.v[o] * f.v[k]; });
  for (double& v : r.v) v = to_dtype(v, r.dtype);
  return r;
}

// d(sum(gz * conv(x, f)))/df for filters of spatial size (kh, kw).
Ref ref_grad_weights(const P& p, const Ref& x, const Ref& gz, int64_t kh, int64_t kw) {
  Ref r;
  r.dtype = x.dtype;
  r.shape = {gz.shape[1], x.shape[1] / p.groups, kh, kw};
  r.v.assign(static_cast<size_t>(shape_size(r.shape)), 0.0);
  for_each_product(p, x.shape[0], x.shape[1], x.shape[2], x.shape[3], r.shape[0], kh, kw,
                   [&](int64_t o, int64_t i, int64_t k) { r.v[k] += gz.v[o] * x.v[i]; });
  for (double& v : r.v) v = to_dtype(v, r.dtype);
  return r;
}

// The output gradient's shape for input (n, c, h, w) and filters (m, cg, kh, kw).
Shape out_shape(const P& p, const Shape& x, const Shape& f) {
  int64_t ph, pw;
  pads(p, f[2], f[3], ph, pw);
  return {x[0], f[0], out_size(x[2], f[2], ph, p.sh, p.dh), out_size(x[3], f[3], pw, p.sw, p.dw)};
}

Case base(const std::string& op, const P& p) {
  Case c;
  c.op = op;
  c.label = label_of(p);
  c.dtypes = {D::Float32, D::Float64};
  c.rtol32 = 1e-4;
  c.atol32 = 1e-4;
  c.rtol64 = 1e-11;
  c.atol64 = 1e-11;
  c.check_grad = true;
  // cuDNN's backward algorithms may sum with atomics: on a GPU each row also runs with
  // config().deterministic, which restricts cuDNN to deterministic algorithms.
  c.float_atomics = true;
  c.atomics_tol32 = 1e-4;
  c.atomics_tol64 = 1e-11;
  return c;
}

// The pairwise rows: border x stride x dilation x groups x flip.
std::vector<P> rows() {
  std::vector<P> r;
  auto add = [&](std::string border, int64_t ph, int64_t pw, int64_t sh, int64_t sw, int64_t dh, int64_t dw,
                 int64_t g, bool flip) {
    P p;
    p.border = std::move(border);
    p.ph = ph, p.pw = pw, p.sh = sh, p.sw = sw, p.dh = dh, p.dw = dw, p.groups = g, p.flip = flip;
    r.push_back(p);
  };
  add("valid", 0, 0, 1, 1, 1, 1, 1, true);
  add("valid", 0, 0, 2, 3, 2, 1, 2, false);
  add("full", 0, 0, 1, 1, 2, 1, 2, true);
  add("full", 0, 0, 2, 3, 1, 1, 1, false);
  add("half", 0, 0, 1, 1, 1, 1, 2, false);
  add("half", 0, 0, 2, 3, 2, 1, 1, true);
  add("", 1, 1, 1, 1, 2, 1, 1, false);
  add("", 2, 1, 2, 3, 1, 1, 2, true);
  add("", 0, 2, 2, 3, 2, 1, 2, false);
  add("valid", 0, 0, 2, 3, 1, 1, 1, true);
  add("full", 0, 0, 1, 1, 1, 1, 2, false);
  add("half", 0, 0, 2, 3, 1, 1, 2, true);
  return r;
}

void add_forward(std::vector<Case>& cases, const P& p) {
  Case c = base("conv2d", p);
  // Input and filter shapes (channels 4 = 2 groups x 2, out channels 4 = 2 x 2): batch 2
  // and 1, a filter as tall as allowed, a size-0 batch (forward only).
  const int64_t cin = 4, cg = 4 / p.groups;
  c.shapes = {{{2, cin, 6, 7}, {4, cg, 3, 2}}, {{1, cin, 5, 5}, {2 * p.groups, cg, 2, 3}}, {{0, cin, 5, 6}, {4, cg, 3, 3}}};
  c.build = [p](const std::vector<Var>& v) { return tensor::conv2d(v[0], v[1], options_of(p)); };
  c.reference = [p](const std::vector<Ref>& r) { return ref_forward(p, r[0], r[1]); };
  cases.push_back(c);
}

void add_grad_inputs(std::vector<Case>& cases, const P& p) {
  Case c = base("conv2d_grad_wrt_inputs", p);
  const int64_t cg = 4 / p.groups;
  const Shape x = {2, 4, 6, 7}, f = {4, cg, 3, 2};
  c.shapes = {{out_shape(p, x, f), f}, {out_shape(p, {1, 4, 6, 7}, f), f}};
  const int64_t h = x[2], w = x[3];
  c.build = [p, h, w](const std::vector<Var>& v) {
    return tensor::conv2d_grad_wrt_inputs(v[0], v[1], std::vector<int64_t>{-1, -1, h, w}, options_of(p));
  };
  c.reference = [p, h, w](const std::vector<Ref>& r) { return ref_grad_inputs(p, r[0], r[1], h, w); };
  cases.push_back(c);
}

void add_grad_weights(std::vector<Case>& cases, const P& p) {
  Case c = base("conv2d_grad_wrt_weights", p);
  const int64_t cg = 4 / p.groups;
  const Shape x = {2, 4, 6, 7}, f = {4, cg, 3, 2};
  c.shapes = {{x, out_shape(p, x, f)}, {Shape{1, 4, 6, 7}, out_shape(p, {1, 4, 6, 7}, f)}};
  const int64_t kh = f[2], kw = f[3];
  c.build = [p, kh, kw](const std::vector<Var>& v) {
    return tensor::conv2d_grad_wrt_weights(v[0], v[1], std::vector<int64_t>{kh, kw}, options_of(p));
  };
  c.reference = [p, kh, kw](const std::vector<Ref>& r) { return ref_grad_weights(p, r[0], r[1], kh, kw); };
  cases.push_back(c);
}

// The forms the conv_epilogue rewrite folds into the Conv2d node (src/rewrite/passes/
// conv_epilogue.cpp): conv2d(x, w) + b broadcast per channel (b.dimshuffle('x', 0, 'x', 'x')
// or b.reshape((1, C, 1, 1))), and relu of either. The harness compiles in fast_run, so these
// rows run the kernels' epilogues (the rewrite test checks that the fold happens); the
// reference is the plain definition, and verify_grad checks the gradient graph, which the
// rewrite also folds (relu's mask read from its output).
enum class Bias { None, Dimshuffle, Reshape };

void add_fused(std::vector<Case>& cases, const P& p, Bias bias, bool relu) {
  Case c = base("conv2d", p);
  c.label = std::string(bias == Bias::None ? "" : bias == Bias::Dimshuffle ? "bias_" : "bias4_") +
            (relu ? "relu_" : "") + label_of(p);
  const int64_t cin = 4, cg = 4 / p.groups;
  c.shapes = {{{2, cin, 6, 7}, {4, cg, 3, 2}}, {{1, cin, 5, 5}, {2 * p.groups, cg, 2, 3}}, {{0, cin, 5, 6}, {4, cg, 3, 3}}};
  if (bias != Bias::None)
    for (auto& set : c.shapes) set.push_back(Shape{set[1][0]});
  c.build = [p, bias, relu](const std::vector<Var>& v) {
    Var y = tensor::conv2d(v[0], v[1], options_of(p));
    if (bias == Bias::Dimshuffle) y = y + v[2].dimshuffle({-1, 0, -1, -1});
    if (bias == Bias::Reshape) y = y + tensor::reshape(v[2], std::vector<int64_t>{1, -1, 1, 1});
    return relu ? tensor::relu(y) : y;
  };
  c.reference = [p, bias, relu](const std::vector<Ref>& r) {
    Ref out = ref_forward(p, r[0], r[1]);
    const int64_t m = out.shape[1], per = out.shape[2] * out.shape[3];
    for (int64_t i = 0; i < out.size(); ++i) {
      double v = out.v[i];
      if (bias != Bias::None) v = to_dtype(v + r[2].v[(i / per) % m], out.dtype);
      if (relu) v = v > 0 ? v : 0.0;
      out.v[i] = v;
    }
    return out;
  };
  cases.push_back(c);
}

// separable_conv2d (Theano 1.0's abstract_conv.separable_conv2d): the depthwise reference
// (groups = channels) then the pointwise one ('valid', stride 1), each the loop above.
void add_separable(std::vector<Case>& cases, P p, int64_t mult) {
  const int64_t C = 3;
  p.groups = 1;  // the label's g is the depth multiplier here
  Case c = base("separable_conv2d", p);
  c.label = "mult" + std::to_string(mult) + "_" + label_of(p);
  c.shapes = {{{2, C, 6, 7}, {C * mult, 1, 3, 2}, {4, C * mult, 1, 1}},
              {{1, C, 5, 5}, {C * mult, 1, 2, 3}, {2, C * mult, 1, 1}},
              {{0, C, 5, 6}, {C * mult, 1, 3, 3}, {4, C * mult, 1, 1}}};
  c.build = [p, C](const std::vector<Var>& v) {
    tensor::SeparableConv2dOptions o;
    o.border_mode = p.border.empty() ? tensor::BorderMode(p.ph, p.pw) : tensor::BorderMode(p.border);
    o.subsample = {p.sh, p.sw};
    o.filter_dilation = {p.dh, p.dw};
    o.filter_flip = p.flip;
    return tensor::separable_conv2d(v[0], v[1], v[2], C, o);
  };
  c.reference = [p, C](const std::vector<Ref>& r) {
    P depthwise = p;
    depthwise.groups = C;
    P pointwise;
    pointwise.flip = p.flip;
    return ref_forward(pointwise, ref_forward(depthwise, r[0], r[1]), r[2]);
  };
  cases.push_back(c);
}

}  // namespace

void add_conv_cases(std::vector<Case>& cases) {
  const std::vector<P> all = rows();
  for (const P& p : all) add_forward(cases, p);
  // The gradient ops on their own: every other row (their L_op is checked by verify_grad too,
  // and the forward rows' verify_grad already runs them as conv2d's gradient).
  for (size_t i = 0; i < all.size(); i += 2) add_grad_inputs(cases, all[i]);
  for (size_t i = 1; i < all.size(); i += 2) add_grad_weights(cases, all[i]);
  // The epilogue forms on a spread of rows (border modes, strides, dilation, groups, flip).
  add_fused(cases, all[0], Bias::Dimshuffle, true);
  add_fused(cases, all[1], Bias::Dimshuffle, false);
  add_fused(cases, all[4], Bias::None, true);
  add_fused(cases, all[5], Bias::Dimshuffle, true);
  add_fused(cases, all[7], Bias::Reshape, true);
  // separable_conv2d: valid/half/explicit pads, strides, dilation, flip and xcorr, multiplier 1 and 2.
  add_separable(cases, all[0], 1);
  add_separable(cases, all[5], 2);
  add_separable(cases, all[8], 2);
}

}  // namespace theon::testing
