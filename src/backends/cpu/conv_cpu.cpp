// Convolution on the CPU (ops/conv.hpp: Conv2d, Conv2dGradInputs, Conv2dGradWeights).
//
// float32 runs oneDNN's convolution primitives (forward, backward data, backward weights;
// groups, stride, dilation, padding) on the plain NCHW / (g)oihw layouts, one primitive per
// (kind, shapes, params) kept in a process-wide cache. float64 (and float32 in builds without
// oneDNN, or where oneDNN declines a geometry) runs im2col + GEMM: per image and group the
// receptive fields are gathered into a (Cg*kh*kw, oh*ow) matrix `col` (zeros for the padding,
// the filter flip folded into the gather), so that
//   forward           out_g  = W_g . col               (Mg x K)(K x P)
//   backward data     col    = W_g^T . gz_g, then scatter-added back (col2im)
//   backward weights  gw_g  += gz_g . col^T            summed over the batch
// with the GEMM of blas_call (CBLAS dgemm / oneDNN or CBLAS sgemm; a plain loop in builds
// with neither).
//
// A forward node's epilogue (ops::ConvEpilogue: bias per output channel, relu) runs inside the
// convolution: oneDNN's bias argument and an eltwise_relu post-op for float32; on the im2col
// path each group's (Mg x P) output block gets bias and relu right after its GEMM, while it
// is still in cache (the scalar relu of ops/scalar, NaN kept).
#include "backends/cpu/blas_call.hpp"
#include "backends/cpu/cpu_backend.hpp"
#include "backends/cpu/cpu_kernels.hpp"
#include "ops/conv.hpp"
#include "ops/scalar/scalar_ops.hpp"  // theon::scalar::Relu

#include <theon/error.hpp>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <unordered_map>
#include <vector>

#ifdef THEON_HAVE_DNNL
#include <dnnl.hpp>
#endif

namespace theon::backends::cpu {
namespace {

using graph::OpKind;
using ops::ConvGeometry;

// ---- GEMM: row-major C(m, n) = A . B (+ C when accumulate) ----

template <class T>
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb,
          bool accumulate, T* c, const graph::Apply& node) {
  if (have_blas(dtype_of<T>())) {
    blas_gemm(dtype_of<T>(), BlasOperand{ta, lda, true}, BlasOperand{tb, ldb, true}, m, n, k, 1.0, a, b,
              accumulate ? 1.0 : 0.0, c, node);
    return;
  }
  // No BLAS in this build: a cache-friendly i-p-j loop accumulating in double per row.
  std::vector<double> row(static_cast<size_t>(n));
  for (int64_t i = 0; i < m; ++i) {
    std::fill(row.begin(), row.end(), 0.0);
    for (int64_t p = 0; p < k; ++p) {
      const double av = ta ? a[p * lda + i] : a[i * lda + p];
      if (av == 0) continue;
      for (int64_t j = 0; j < n; ++j) row[j] += av * (tb ? b[j * ldb + p] : b[p * ldb + j]);
    }
    for (int64_t j = 0; j < n; ++j) c[i * n + j] = static_cast<T>(row[j] + (accumulate ? double(c[i * n + j]) : 0.0));
  }
}

// ---- im2col / col2im for one image and one group ----

// col[(c*kh + i)*kw + j][y*ow + x] = img[c, y*sh - ph + i'*dh, x*sw - pw + j'*dw] (0 outside),
// (i', j') flipped when g.flip; `img` points at the group's first channel (contiguous image).
template <class T>
void im2col(const ConvGeometry& g, const T* img, T* col) {
  const int64_t P = g.oh * g.ow;
  for (int64_t c = 0; c < g.cg(); ++c)
    for (int64_t i = 0; i < g.kh; ++i)
      for (int64_t j = 0; j < g.kw; ++j) {
        const int64_t ii = g.flip ? g.kh - 1 - i : i, jj = g.flip ? g.kw - 1 - j : j;
        T* dst = col + ((c * g.kh + i) * g.kw + j) * P;
        const T* src = img + c * g.h * g.w;
        for (int64_t y = 0; y < g.oh; ++y) {
          const int64_t r = y * g.sh - g.ph + ii * g.dh;
          T* d = dst + y * g.ow;
          if (r < 0 || r >= g.h) {
            std::fill_n(d, g.ow, T(0));
            continue;
          }
          const T* s = src + r * g.w;
          for (int64_t x = 0; x < g.ow; ++x) {
            const int64_t q = x * g.sw - g.pw + jj * g.dw;
            d[x] = q >= 0 && q < g.w ? s[q] : T(0);
          }
        }
      }
}

// The adjoint of im2col: img[...] += col[...] (img zeroed by the caller).
template <class T>
void col2im(const ConvGeometry& g, const T* col, T* img) {
  const int64_t P = g.oh * g.ow;
  for (int64_t c = 0; c < g.cg(); ++c)
    for (int64_t i = 0; i < g.kh; ++i)
      for (int64_t j = 0; j < g.kw; ++j) {
        const int64_t ii = g.flip ? g.kh - 1 - i : i, jj = g.flip ? g.kw - 1 - j : j;
        const T* src = col + ((c * g.kh + i) * g.kw + j) * P;
        T* dst = img + c * g.h * g.w;
        for (int64_t y = 0; y < g.oh; ++y) {
          const int64_t r = y * g.sh - g.ph + ii * g.dh;
          if (r < 0 || r >= g.h) continue;
          const T* s = src + y * g.ow;
          T* d = dst + r * g.w;
          for (int64_t x = 0; x < g.ow; ++x) {
            const int64_t q = x * g.sw - g.pw + jj * g.dw;
            if (q >= 0 && q < g.w) d[q] += s[x];
          }
        }
      }
}

// The epilogue on `rows` output channels starting at channel `c0`, each P values long, at `out`.
template <class T>
void apply_epilogue(const ops::ConvEpilogue& e, const T* bias, int64_t c0, int64_t rows, int64_t P, T* out) {
  if (!e.any()) return;
  const bool relu = e.act == ops::ConvActivation::Relu;
  for (int64_t r = 0; r < rows; ++r) {
    T* o = out + r * P;
    const T bv = e.bias ? bias[c0 + r] : T(0);
    if (relu)
      for (int64_t i = 0; i < P; ++i) o[i] = theon::scalar::Relu()(T(o[i] + bv));
    else
      for (int64_t i = 0; i < P; ++i) o[i] += bv;
  }
}

// a = (input or filters), b = (filters or output_grad); `out` contiguous and allocated;
// `bias` the contiguous bias of a forward epilogue with one.
template <class T>
void run_im2col(OpKind kind, const ConvGeometry& g, const Array& a_in, const Array& b_in, Array& out,
                const graph::Apply& node, const ops::ConvEpilogue& epi = {}, const T* bias = nullptr) {
  const Array a = a_in.contiguous(), b = b_in.contiguous();
  const int64_t K = g.cg() * g.kh * g.kw, P = g.oh * g.ow, Mg = g.mg();
  std::vector<T> col(static_cast<size_t>(K * P));
  T* po = out.data<T>();
  if (kind == OpKind::Conv2d) {
    const T* x = a.data<T>();
    const T* w = b.data<T>();
    for (int64_t n = 0; n < g.n; ++n)
      for (int64_t gr = 0; gr < g.groups; ++gr) {
        im2col(g, x + (n * g.c + gr * g.cg()) * g.h * g.w, col.data());
        gemm<T>(false, false, Mg, P, K, w + gr * Mg * K, K, col.data(), P, false, po + (n * g.m + gr * Mg) * P, node);
        apply_epilogue(epi, bias, gr * Mg, Mg, P, po + (n * g.m + gr * Mg) * P);
      }
  } else if (kind == OpKind::Conv2dGradInputs) {
    const T* w = a.data<T>();
    const T* gz = b.data<T>();
    std::fill_n(po, out.size(), T(0));
    for (int64_t n = 0; n < g.n; ++n)
      for (int64_t gr = 0; gr < g.groups; ++gr) {
        gemm<T>(true, false, K, P, Mg, w + gr * Mg * K, K, gz + (n * g.m + gr * Mg) * P, P, false, col.data(), node);
        col2im(g, col.data(), po + (n * g.c + gr * g.cg()) * g.h * g.w);
      }
  } else {
    const T* x = a.data<T>();
    const T* gz = b.data<T>();
    for (int64_t n = 0; n < g.n; ++n)
      for (int64_t gr = 0; gr < g.groups; ++gr) {
        im2col(g, x + (n * g.c + gr * g.cg()) * g.h * g.w, col.data());
        gemm<T>(false, true, Mg, K, P, gz + (n * g.m + gr * Mg) * P, P, col.data(), P, n > 0, po + gr * Mg * K, node);
      }
    if (g.n == 0) std::fill_n(po, out.size(), T(0));
  }
}

#ifdef THEON_HAVE_DNNL
// ---- oneDNN ----

struct DnnlContext {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
};
DnnlContext& dnnl_context() {
  static auto* c = new DnnlContext();  // never destroyed: kernels may run at exit
  return *c;
}

using DnnlKey = std::tuple<int, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                           int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int>;

struct DnnlEntry {
  bool ok = false;  // false: oneDNN declined this geometry (im2col runs)
  dnnl::primitive prim;
  dnnl::memory::desc src, wei, dst;  // src/diff_src, weights/diff_weights, dst/diff_dst
  dnnl::memory::desc bias;           // forward with a bias epilogue
  int64_t h_eff = 0, w_eff = 0;      // input rows/cols the convolution reads (a leading view)
};

// oneDNN wants in + pl + pr == (out - 1)*stride + (k - 1)*dil + 1 with pr >= 0: rows the
// convolution never reads (a stride leaving a remainder) are cut off by a view of the input.
std::shared_ptr<const DnnlEntry> dnnl_entry(OpKind kind, const ConvGeometry& g, const ops::ConvEpilogue& epi) {
  static std::mutex mu;
  static auto* cache = new std::map<DnnlKey, std::shared_ptr<const DnnlEntry>>();
  const DnnlKey key{static_cast<int>(kind), g.n,  g.c,  g.h,  g.w,  g.m,      g.kh, g.kw,
                    g.ph,                   g.pw, g.sh, g.sw, g.dh, g.dw, g.groups, g.flip,
                    (epi.bias ? 2 : 0) + (epi.act == ops::ConvActivation::Relu ? 1 : 0)};
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache->find(key);
    if (it != cache->end()) return it->second;
  }
  auto e = std::make_shared<DnnlEntry>();
  const int64_t need_h = (g.oh - 1) * g.sh + (g.kh - 1) * g.dh + 1 - g.ph;
  const int64_t need_w = (g.ow - 1) * g.sw + (g.kw - 1) * g.dw + 1 - g.pw;
  e->h_eff = std::min(g.h, need_h), e->w_eff = std::min(g.w, need_w);
  if (e->h_eff >= 1 && e->w_eff >= 1) {
    try {
      using md = dnnl::memory::desc;
      using dt = dnnl::memory::data_type;
      const dnnl::memory::dims src_dims = {g.n, g.c, e->h_eff, e->w_eff};
      const dnnl::memory::dims src_strides = {g.c * g.h * g.w, g.h * g.w, g.w, 1};
      const md src(src_dims, dt::f32, src_strides);
      const md wei = g.groups == 1 ? md({g.m, g.c, g.kh, g.kw}, dt::f32, dnnl::memory::format_tag::oihw)
                                   : md({g.groups, g.mg(), g.cg(), g.kh, g.kw}, dt::f32, dnnl::memory::format_tag::goihw);
      const md dst({g.n, g.m, g.oh, g.ow}, dt::f32, dnnl::memory::format_tag::nchw);
      const dnnl::memory::dims strides = {g.sh, g.sw}, dil = {g.dh - 1, g.dw - 1}, pl = {g.ph, g.pw};
      const dnnl::memory::dims pr = {need_h - e->h_eff, need_w - e->w_eff};
      const auto& eng = dnnl_context().engine;
      const dnnl::convolution_forward::desc fd(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
                                               src, wei, dst, strides, dil, pl, pr);
      const dnnl::convolution_forward::primitive_desc fpd(fd, eng);
      // oneDNN's reference implementations ("ref:any") are loops, slower than im2col + sgemm:
      // those geometries (often backward passes on plain layouts) take the im2col path.
      const auto fast = [](const dnnl::primitive_desc_base& pd) { return std::string(pd.impl_info_str()).rfind("ref", 0) != 0; };
      if (kind == OpKind::Conv2d && epi.any()) {
        // The epilogue: the bias argument and a relu post-op (out = relu(conv + bias)).
        dnnl::primitive_attr attr;
        if (epi.act == ops::ConvActivation::Relu) {
          dnnl::post_ops po;
          po.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
          attr.set_post_ops(po);
        }
        if (epi.bias) e->bias = md({g.m}, dt::f32, dnnl::memory::format_tag::x);
        const dnnl::convolution_forward::desc ed =
            epi.bias ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                       dnnl::algorithm::convolution_direct, src, wei, e->bias, dst,
                                                       strides, dil, pl, pr)
                     : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                       dnnl::algorithm::convolution_direct, src, wei, dst, strides, dil,
                                                       pl, pr);
        const dnnl::convolution_forward::primitive_desc epd(ed, attr, eng);
        if (fast(epd)) e->prim = dnnl::convolution_forward(epd);
      } else if (kind == OpKind::Conv2d) {
        if (fast(fpd)) e->prim = dnnl::convolution_forward(fpd);
      } else if (kind == OpKind::Conv2dGradInputs) {
        const dnnl::convolution_backward_data::desc bd(dnnl::algorithm::convolution_direct, src, wei, dst, strides, dil,
                                                       pl, pr);
        const dnnl::convolution_backward_data::primitive_desc bpd(bd, eng, fpd);
        if (fast(bpd)) e->prim = dnnl::convolution_backward_data(bpd);
      } else {
        const dnnl::convolution_backward_weights::desc bw(dnnl::algorithm::convolution_direct, src, wei, dst, strides,
                                                          dil, pl, pr);
        const dnnl::convolution_backward_weights::primitive_desc bpd(bw, eng, fpd);
        if (fast(bpd)) e->prim = dnnl::convolution_backward_weights(bpd);
      }
      e->src = src, e->wei = wei, e->dst = dst;
      e->ok = static_cast<bool>(e->prim);
    } catch (const dnnl::error&) {
      e->ok = false;  // an unsupported geometry: im2col
    }
  }
  std::lock_guard<std::mutex> lock(mu);
  if (cache->size() >= 512) cache->clear();  // bounded: shapes are usually few
  return cache->emplace(key, std::move(e)).first->second;
}

// True when oneDNN ran the node (with its epilogue; `bias` contiguous when the epilogue has one).
bool run_dnnl(OpKind kind, const ConvGeometry& g, const Array& a_in, const Array& b_in, Array& out,
              const ops::ConvEpilogue& epi = {}, const Array* bias = nullptr) {
  const std::shared_ptr<const DnnlEntry> e = dnnl_entry(kind, g, epi);
  if (!e->ok) return false;
  const Array a = a_in.contiguous(), b = b_in.contiguous();
  const auto& eng = dnnl_context().engine;
  dnnl::stream stream(eng);
  auto mem = [&](const dnnl::memory::desc& d, const Array& x) {
    return dnnl::memory(d, eng, const_cast<float*>(x.data<float>()));
  };
  if (kind == OpKind::Conv2d) {
    std::unordered_map<int, dnnl::memory> args = {
        {DNNL_ARG_SRC, mem(e->src, a)}, {DNNL_ARG_WEIGHTS, mem(e->wei, b)}, {DNNL_ARG_DST, mem(e->dst, out)}};
    if (epi.bias) args.emplace(DNNL_ARG_BIAS, mem(e->bias, *bias));
    e->prim.execute(stream, args);
  } else if (kind == OpKind::Conv2dGradInputs) {
    // Rows and cols past the view get no gradient.
    if (e->h_eff < g.h || e->w_eff < g.w) std::memset(out.data(), 0, out.nbytes());
    e->prim.execute(stream, {{DNNL_ARG_DIFF_SRC, mem(e->src, out)}, {DNNL_ARG_WEIGHTS, mem(e->wei, a)},
                             {DNNL_ARG_DIFF_DST, mem(e->dst, b)}});
  } else {
    e->prim.execute(stream, {{DNNL_ARG_SRC, mem(e->src, a)}, {DNNL_ARG_DIFF_WEIGHTS, mem(e->wei, out)},
                             {DNNL_ARG_DIFF_DST, mem(e->dst, b)}});
  }
  stream.wait();
  return true;
}

// The filters reversed along both spatial axes (oneDNN computes cross-correlations).
Array flipped(const Array& w_in, const ConvGeometry& g) {
  const Array w = w_in.contiguous();
  Array f = Array::empty(w.shape(), DType::Float32);
  const float* s = w.data<float>();
  float* d = f.data<float>();
  const int64_t planes = w.size() / (g.kh * g.kw);
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t i = 0; i < g.kh; ++i)
      for (int64_t j = 0; j < g.kw; ++j)
        d[(p * g.kh + i) * g.kw + j] = s[(p * g.kh + (g.kh - 1 - i)) * g.kw + (g.kw - 1 - j)];
  return f;
}
#endif

class ConvKernel final : public Kernel {
 public:
  std::string name() const override {
#ifdef THEON_HAVE_DNNL
    return "onednn/im2col-gemm";  // float32: oneDNN; float64: im2col + CBLAS
#else
    return "im2col-gemm";
#endif
  }

  void run(const KernelPlan*, const ExecContext&, const graph::Apply& node, const std::vector<Array>& inputs,
           std::vector<Array>& outputs) const override {
    const ops::Conv2d& op = *ops::Conv2d::of(node.op());
    const OpKind kind = op.kind();
    const ConvGeometry g = op.geometry(node, inputs);
    const ops::ConvEpilogue& epi = op.epilogue();
    Array& out = outputs[0];
    if (out.size() == 0) return;
    const Array bias = epi.bias ? inputs[2].contiguous() : Array();
    if (g.n == 0 || g.cg() == 0 || g.mg() == 0 || g.oh == 0 || g.ow == 0) {  // empty sums
      std::memset(out.data(), 0, out.nbytes());
      if (epi.any()) {  // act(0 + bias)
        const int64_t P = g.oh * g.ow;
        for (int64_t n = 0; n < g.n; ++n) {
          if (out.dtype() == DType::Float32)
            apply_epilogue(epi, epi.bias ? bias.data<float>() : nullptr, 0, g.m, P, out.data<float>() + n * g.m * P);
          else
            apply_epilogue(epi, epi.bias ? bias.data<double>() : nullptr, 0, g.m, P, out.data<double>() + n * g.m * P);
        }
      }
      return;
    }
    if (out.dtype() == DType::Float32) {
#ifdef THEON_HAVE_DNNL
      if (kind == OpKind::Conv2dGradWeights) {
        if (run_dnnl(kind, g, inputs[0], inputs[1], out)) {
          if (g.flip) {
            const Array unflipped = out.copy();
            const Array f = flipped(unflipped, g);
            std::memcpy(out.data(), f.data(), out.nbytes());
          }
          return;
        }
      } else {
        const int wi = kind == OpKind::Conv2d ? 1 : 0;
        const Array w = g.flip ? flipped(inputs[wi], g) : inputs[wi];
        const Array& a = wi == 1 ? inputs[0] : w;
        const Array& b = wi == 1 ? w : inputs[1];
        if (run_dnnl(kind, g, a, b, out, epi, &bias)) return;
      }
#endif
      return run_im2col<float>(kind, g, inputs[0], inputs[1], out, node, epi,
                               epi.bias ? bias.data<float>() : nullptr);
    }
    run_im2col<double>(kind, g, inputs[0], inputs[1], out, node, epi, epi.bias ? bias.data<double>() : nullptr);
  }
};

}  // namespace

void register_conv_kernels(CpuBackend& backend) {
  for (OpKind k : {OpKind::Conv2d, OpKind::Conv2dGradInputs, OpKind::Conv2dGradWeights})
    backend.register_kernel(k, std::make_unique<ConvKernel>());
}

}  // namespace theon::backends::cpu
