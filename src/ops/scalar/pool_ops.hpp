// The per-element semantics of pooling (Theano's theano.tensor.signal.pool), written once.
// The CPU loops (backends/cpu/pool_cpu.cpp) call these functions; the generated CUDA kernels
// (backends/cuda/pool_cuda.cpp) paste this same header's text (embedded at build time, as
// nnet_ops.hpp is), so both sides compute each element the same way, in the same order.
//
// Geometry, per pooled dim (2-d pooling is 3-d pooling with a leading spatial dim of size 1,
// window 1, stride 1, pad 0): the input has n elements, padded with `pad` on both sides to
// R = n + 2 pad; window w covers the padded positions [w st, min(w st + ws, R)). Its real
// elements are the part inside [pad, pad + n), in input coordinates [lo, hi). Modes:
//   max               the maximum of the real elements (a NaN wins, as numpy.max);
//   sum               their sum;
//   average_inc_pad   the sum over the window clipped to R (padding counts);
//   average_exc_pad   the sum over the number of real elements.
// Sums run in double, divided once, rounded once to the element type. The max-pool gradient
// goes to every element equal to its window's maximum (Theano's rule for ties); every
// gradient below is a gather (an input element walks the windows holding it), so it needs no
// atomics and its sum order is fixed.
#pragma once
#include "scalar_ops.hpp"

namespace theon::pool {

enum Mode { kMax = 0, kSum = 1, kAverageIncPad = 2, kAverageExcPad = 3 };

/// At most this many leading (non-pooled) dims.
constexpr int kMaxLead = 6;

/// One pooling problem: the leading dims (their product is `planes`), the pooled dims.
struct Geometry {
  int mode;
  int lead;                     // number of leading dims
  long long lead_shape[kMaxLead];
  long long planes;             // product of lead_shape
  long long n[3];               // input size per pooled dim
  long long out[3];             // output size per pooled dim
  long long ws[3], st[3], pad[3];
};

/// Strides (in elements) of one operand: leading dims, then the three pooled dims.
struct Strides {
  long long lead[kMaxLead];
  long long sp[3];
};

/// The element offset of plane p's first element.
THEON_HD long long plane_offset(const Geometry& g, const Strides& s, long long p) {
  long long off = 0;
  for (int d = g.lead - 1; d >= 0; --d) {
    const long long k = p % g.lead_shape[d];
    p /= g.lead_shape[d];
    off += k * s.lead[d];
  }
  return off;
}

/// Window w along dim d: its real elements [lo, hi) in input coordinates, and its size
/// clipped to the padded input (what average_inc_pad divides by).
THEON_HD void window(const Geometry& g, int d, long long w, long long* lo, long long* hi, long long* clipped) {
  const long long s = w * g.st[d];
  long long e = s + g.ws[d];
  const long long r = g.n[d] + 2 * g.pad[d];
  if (e > r) e = r;
  *clipped = e - s;
  const long long a = s < g.pad[d] ? g.pad[d] : s;
  const long long b = e > g.n[d] + g.pad[d] ? g.n[d] + g.pad[d] : e;
  *lo = a - g.pad[d];
  *hi = b - g.pad[d];
}

/// The windows along dim d that hold input element i: [*first, *last] (empty if first > last).
THEON_HD void windows_of(const Geometry& g, int d, long long i, long long* first, long long* last) {
  const long long q = i + g.pad[d];
  const long long f = q - g.ws[d] + 1;
  *first = f <= 0 ? 0 : (f + g.st[d] - 1) / g.st[d];
  long long l = q / g.st[d];
  if (l > g.out[d] - 1) l = g.out[d] - 1;
  *last = l;
}

/// What a window's sum is divided by (1 for sum; max does not divide).
THEON_HD double divisor(const Geometry& g, const long long* lo, const long long* hi, const long long* clipped) {
  if (g.mode == kAverageIncPad) return double(clipped[0]) * double(clipped[1]) * double(clipped[2]);
  if (g.mode == kAverageExcPad) return double(hi[0] - lo[0]) * double(hi[1] - lo[1]) * double(hi[2] - lo[2]);
  return 1.0;
}

/// The pooled value of window (w0, w1, w2) of the plane at x (strides s.sp).
template <class T>
THEON_HD T pool_value(const Geometry& g, const T* x, const long long* sp, long long w0, long long w1, long long w2) {
  long long lo[3], hi[3], cl[3];
  window(g, 0, w0, &lo[0], &hi[0], &cl[0]);
  window(g, 1, w1, &lo[1], &hi[1], &cl[1]);
  window(g, 2, w2, &lo[2], &hi[2], &cl[2]);
  if (g.mode == kMax) {
    bool first = true;
    T m = T(0);
    for (long long a = lo[0]; a < hi[0]; ++a)
      for (long long b = lo[1]; b < hi[1]; ++b)
        for (long long c = lo[2]; c < hi[2]; ++c) {
          const T v = x[a * sp[0] + b * sp[1] + c * sp[2]];
          if (first || ((v > m || v != v) && !(m != m))) m = v;
          first = false;
        }
    return m;
  }
  double sum = 0;
  for (long long a = lo[0]; a < hi[0]; ++a)
    for (long long b = lo[1]; b < hi[1]; ++b)
      for (long long c = lo[2]; c < hi[2]; ++c) sum += double(x[a * sp[0] + b * sp[1] + c * sp[2]]);
  return T(sum / divisor(g, lo, hi, cl));
}

/// The max-pool gradient at input element (i0, i1, i2): the sum of gz over the windows whose
/// maximum (z) this element equals. x, z, gz point at the plane's first elements.
template <class T>
THEON_HD T max_pool_grad_value(const Geometry& g, const T* x, const long long* xs, const T* z, const long long* zs,
                               const T* gz, const long long* gs, long long i0, long long i1, long long i2) {
  long long f[3], l[3];
  windows_of(g, 0, i0, &f[0], &l[0]);
  windows_of(g, 1, i1, &f[1], &l[1]);
  windows_of(g, 2, i2, &f[2], &l[2]);
  const T v = x[i0 * xs[0] + i1 * xs[1] + i2 * xs[2]];
  double sum = 0;
  for (long long a = f[0]; a <= l[0]; ++a)
    for (long long b = f[1]; b <= l[1]; ++b)
      for (long long c = f[2]; c <= l[2]; ++c)
        if (v == z[a * zs[0] + b * zs[1] + c * zs[2]]) sum += double(gz[a * gs[0] + b * gs[1] + c * gs[2]]);
  return T(sum);
}

/// The sum/average-pool gradient at input element (i0, i1, i2): gz of each window holding it,
/// divided by that window's divisor.
template <class T>
THEON_HD T average_pool_grad_value(const Geometry& g, const T* gz, const long long* gs, long long i0, long long i1,
                                   long long i2) {
  long long f[3], l[3];
  windows_of(g, 0, i0, &f[0], &l[0]);
  windows_of(g, 1, i1, &f[1], &l[1]);
  windows_of(g, 2, i2, &f[2], &l[2]);
  double sum = 0;
  long long lo[3], hi[3], cl[3];
  for (long long a = f[0]; a <= l[0]; ++a) {
    window(g, 0, a, &lo[0], &hi[0], &cl[0]);
    for (long long b = f[1]; b <= l[1]; ++b) {
      window(g, 1, b, &lo[1], &hi[1], &cl[1]);
      for (long long c = f[2]; c <= l[2]; ++c) {
        window(g, 2, c, &lo[2], &hi[2], &cl[2]);
        sum += double(gz[a * gs[0] + b * gs[1] + c * gs[2]]) / divisor(g, lo, hi, cl);
      }
    }
  }
  return T(sum);
}

/// The gradient of the max-pool gradient with respect to gz (Theano's
/// DownsampleFactorMaxGradGrad) at window (w0, w1, w2): the sum of ggx over the window's
/// elements equal to its maximum z.
template <class T>
THEON_HD T max_pool_grad_grad_value(const Geometry& g, const T* x, const long long* xs, const T* z, const long long* zs,
                                    const T* ggx, const long long* ggs, long long w0, long long w1, long long w2) {
  long long lo[3], hi[3], cl[3];
  window(g, 0, w0, &lo[0], &hi[0], &cl[0]);
  window(g, 1, w1, &lo[1], &hi[1], &cl[1]);
  window(g, 2, w2, &lo[2], &hi[2], &cl[2]);
  const T m = z[w0 * zs[0] + w1 * zs[1] + w2 * zs[2]];
  double sum = 0;
  for (long long a = lo[0]; a < hi[0]; ++a)
    for (long long b = lo[1]; b < hi[1]; ++b)
      for (long long c = lo[2]; c < hi[2]; ++c)
        if (x[a * xs[0] + b * xs[1] + c * xs[2]] == m) sum += double(ggx[a * ggs[0] + b * ggs[1] + c * ggs[2]]);
  return T(sum);
}

}  // namespace theon::pool
