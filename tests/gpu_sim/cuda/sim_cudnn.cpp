// The stand-in cuDNN of the simulated device (docs/guide/testing.md): built as libcudnn.so.9
// with the real symbol version, defining the legacy convolution API libtheon_cuda resolves
// with dlsym (src/backends/cuda/cudnn_functions.def). Convolutions are a reference computed
// in double and enqueued on the handle's stream; the calls enforce cuDNN's contract, so
// Theon's mapping is checked without a GPU:
//   handles and descriptors must have been created (and set) and not destroyed;
//   tensors and filters are 4-d with sizes >= 1, one data type for x, w, y and the compute
//   type (float/float, double/double); x's channels == filter channels * group count and the
//   filter count divisible by it;
//   y's dims equal cudnnGetConvolution2dForwardOutputDim (the same rule as cuDNN's);
//   the algorithm is one Get*Algorithm_v7 offers; the workspace is at least what
//   Get*WorkspaceSize returns for it and 256-byte aligned (nullptr only for 0 bytes);
//   every tensor lies inside one device allocation; y (dx, dw) is not read when beta == 0;
//   CUDNN_DEFAULT_MATH on float data rounds the inputs to TF32 (as tensor cores would);
//   CUDNN_FMA_MATH keeps FP32.
// The epilogue calls (Theon's fused Conv2d):
//   cudnnConvolutionBiasActivationForward: y = act(alpha1 * conv(x, w) + alpha2 * z + bias);
//   the forward checks above, plus: z's descriptor has y's dims and type; bias is
//   (1, K, 1, 1) with K = y's channels, of y's type; the activation descriptor is set, RELU
//   or IDENTITY, and IDENTITY only with CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM (as
//   documented); z is read only when alpha2 != 0;
//   cudnnAddTensor: C = alpha * A + beta * C, A of C's type with each dim C's or 1;
//   cudnnActivationForward: y = alpha * act(x) + beta * y (RELU only is simulated), x and y
//   of one shape and type; in place (x == y) only with equal strides; y not read when
//   beta == 0. RELU with CUDNN_NOT_PROPAGATE_NAN turns NaN into 0, PROPAGATE_NAN keeps it.
// A violation prints "gpu_sim cuDNN: <function>: <why>" and returns CUDNN_STATUS_BAD_PARAM.
#include <cudnn.h>

#include "sim_internal.hpp"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace {

struct Handle {
  cudaStream_t stream = nullptr;
};
struct Tensor {
  bool set = false;
  cudnnDataType_t type = CUDNN_DATA_FLOAT;
  int d[4] = {0, 0, 0, 0};
  int s[4] = {0, 0, 0, 0};
};
struct Filter {
  bool set = false;
  cudnnDataType_t type = CUDNN_DATA_FLOAT;
  int d[4] = {0, 0, 0, 0};  // k, c, h, w (NCHW only)
};
struct Conv {
  bool set = false;
  int pad[2] = {0, 0}, stride[2] = {1, 1}, dil[2] = {1, 1};
  cudnnConvolutionMode_t mode = CUDNN_CONVOLUTION;
  cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  int groups = 1;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
};

struct Activation {
  bool set = false;
  cudnnActivationMode_t mode = CUDNN_ACTIVATION_RELU;
  cudnnNanPropagation_t nan = CUDNN_NOT_PROPAGATE_NAN;
};

double activate(const Activation& a, double v) {
  if (a.mode == CUDNN_ACTIVATION_IDENTITY) return v;
  if (v != v) return a.nan == CUDNN_PROPAGATE_NAN ? v : 0.0;
  return v > 0 ? v : 0.0;
}

// What cudnnConvolutionBiasActivationForward adds to a forward convolution.
struct Epilogue {
  bool on = false;
  double alpha2 = 0;
  Tensor z;
  const void* zp = nullptr;
  Tensor b;                  // (1, K, 1, 1)
  const void* bp = nullptr;
  Activation act;
};

std::mutex g_mu;
std::set<const void*> g_live;  // every live handle and descriptor

template <class T>
T* live(void* p) {
  std::lock_guard<std::mutex> lock(g_mu);
  return p && g_live.count(p) ? static_cast<T*>(p) : nullptr;
}
template <class T, class H>
cudnnStatus_t create(H* out) {
  if (!out) return CUDNN_STATUS_BAD_PARAM;
  auto* p = new T();
  std::lock_guard<std::mutex> lock(g_mu);
  g_live.insert(p);
  *out = reinterpret_cast<H>(p);
  return CUDNN_STATUS_SUCCESS;
}
template <class T>
cudnnStatus_t destroy(void* p) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (!p || !g_live.count(p)) return CUDNN_STATUS_BAD_PARAM;
  g_live.erase(p);
  delete static_cast<T*>(p);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t complain(const char* fn, const std::string& why) {
  std::fprintf(stderr, "gpu_sim cuDNN: %s: %s\n", fn, why.c_str());
  return CUDNN_STATUS_BAD_PARAM;
}

using gpu_sim_internal::enqueue_on;

using gpu_sim_internal::tf32;

size_t elem(cudnnDataType_t t) { return t == CUDNN_DATA_DOUBLE ? 8 : 4; }

// The algorithms each direction offers, with their workspace: one without, one with, and
// (backward) a non-deterministic one listed first, so both of Theon's choices run.
struct AlgoInfo {
  int algo;
  bool deterministic;
  size_t workspace_per_output;  // bytes per output element
};
const std::vector<AlgoInfo>& fwd_algos() {
  static const std::vector<AlgoInfo> a = {{CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, true, 8},
                                          {CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, true, 0}};
  return a;
}
const std::vector<AlgoInfo>& bwd_data_algos() {
  static const std::vector<AlgoInfo> a = {{CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, false, 0},
                                          {CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, true, 4}};
  return a;
}
const std::vector<AlgoInfo>& bwd_filter_algos() {
  static const std::vector<AlgoInfo> a = {{CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0, false, 0},
                                          {CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, true, 4}};
  return a;
}
const AlgoInfo* find_algo(const std::vector<AlgoInfo>& list, int algo) {
  for (const auto& a : list)
    if (a.algo == algo) return &a;
  return nullptr;
}

int out_dim(int in, int k, int pad, int stride, int dil) { return (in + 2 * pad - ((k - 1) * dil + 1)) / stride + 1; }

// Checks a (x, w, conv, y) quadruple; "" when consistent.
std::string check_geometry(const Tensor* x, const Filter* w, const Conv* c, const Tensor* y) {
  if (!x || !x->set) return "the input tensor descriptor is invalid or not set";
  if (!w || !w->set) return "the filter descriptor is invalid or not set";
  if (!c || !c->set) return "the convolution descriptor is invalid or not set";
  if (x->type != w->type || (y && y->type != x->type)) return "tensor and filter data types differ";
  if (c->compute != x->type) return "the compute type differs from the data type";
  if (x->d[1] != w->d[1] * c->groups)
    return "x has " + std::to_string(x->d[1]) + " channels, filters " + std::to_string(w->d[1]) + " x " +
           std::to_string(c->groups) + " groups";
  if (w->d[0] % c->groups != 0) return "the filter count is not divisible by the group count";
  for (int i = 0; i < 2; ++i)
    if ((w->d[2 + i] - 1) * c->dil[i] + 1 > x->d[2 + i] + 2 * c->pad[i]) return "the filter is larger than the padded input";
  if (y) {
    const int want[4] = {x->d[0], w->d[0], out_dim(x->d[2], w->d[2], c->pad[0], c->stride[0], c->dil[0]),
                         out_dim(x->d[3], w->d[3], c->pad[1], c->stride[1], c->dil[1])};
    for (int i = 0; i < 4; ++i)
      if (y->d[i] != want[i])
        return "y's dims (" + std::to_string(y->d[0]) + ", " + std::to_string(y->d[1]) + ", " + std::to_string(y->d[2]) +
               ", " + std::to_string(y->d[3]) + ") are not cudnnGetConvolution2dForwardOutputDim's";
  }
  return "";
}

int64_t span_elems(const Tensor& t) {
  int64_t last = 0;
  for (int i = 0; i < 4; ++i) last += int64_t(t.d[i] - 1) * t.s[i];
  return last + 1;
}

bool in_device(const void* p, size_t bytes) { return theon_gpu_sim_device_range(p, bytes) >= 0; }

double load(const void* p, cudnnDataType_t t, int64_t i, bool round_tf32) {
  if (t == CUDNN_DATA_DOUBLE) return static_cast<const double*>(p)[i];
  const float v = static_cast<const float*>(p)[i];
  return round_tf32 ? tf32(v) : v;
}
void store(void* p, cudnnDataType_t t, int64_t i, double v) {
  if (t == CUDNN_DATA_DOUBLE) static_cast<double*>(p)[i] = v;
  else static_cast<float*>(p)[i] = static_cast<float>(v);
}

enum class Dir { Fwd, BwdData, BwdFilter };

// The whole convolution in double: visits (y index, x index, w index) triples.
template <class F>
void for_each_product(const Tensor& x, const Filter& w, const Conv& c, const Tensor& y, F&& fn) {
  const int cg = w.d[1], mg = w.d[0] / c.groups;
  for (int n = 0; n < x.d[0]; ++n)
    for (int o = 0; o < w.d[0]; ++o) {
      const int g = o / mg;
      for (int oy = 0; oy < y.d[2]; ++oy)
        for (int ox = 0; ox < y.d[3]; ++ox)
          for (int ci = 0; ci < cg; ++ci)
            for (int i = 0; i < w.d[2]; ++i)
              for (int j = 0; j < w.d[3]; ++j) {
                const int r = oy * c.stride[0] - c.pad[0] + i * c.dil[0];
                const int q = ox * c.stride[1] - c.pad[1] + j * c.dil[1];
                if (r < 0 || r >= x.d[2] || q < 0 || q >= x.d[3]) continue;
                const int fi = c.mode == CUDNN_CONVOLUTION ? w.d[2] - 1 - i : i;
                const int fj = c.mode == CUDNN_CONVOLUTION ? w.d[3] - 1 - j : j;
                const int64_t yi = int64_t(n) * y.s[0] + int64_t(o) * y.s[1] + int64_t(oy) * y.s[2] + int64_t(ox) * y.s[3];
                const int64_t xi = int64_t(n) * x.s[0] + int64_t(g * cg + ci) * x.s[1] + int64_t(r) * x.s[2] +
                                   int64_t(q) * x.s[3];
                const int64_t wi = ((int64_t(o) * cg + ci) * w.d[2] + fi) * w.d[3] + fj;
                fn(yi, xi, wi);
              }
    }
}

cudnnStatus_t run(const char* fn, Dir dir, cudnnHandle_t handle, const void* alpha, cudnnTensorDescriptor_t xd,
                  const void* xp, cudnnFilterDescriptor_t wd, const void* wp, cudnnConvolutionDescriptor_t cd, int algo,
                  void* ws, size_t ws_bytes, const void* beta, cudnnTensorDescriptor_t yd, const void* yp,
                  const Epilogue& epi = {}) {
  Handle* h = live<Handle>(handle);
  if (!h) return complain(fn, "invalid handle");
  const Tensor* x = live<Tensor>(xd);
  const Filter* w = live<Filter>(wd);
  const Conv* c = live<Conv>(cd);
  const Tensor* y = live<Tensor>(yd);
  if (!y || !y->set) return complain(fn, "the output-side tensor descriptor is invalid or not set");
  const std::string bad = check_geometry(x, w, c, y);
  if (!bad.empty()) return complain(fn, bad);
  if (!alpha || !beta) return complain(fn, "alpha and beta must be host pointers");
  const std::vector<AlgoInfo>& algos = dir == Dir::Fwd ? fwd_algos() : dir == Dir::BwdData ? bwd_data_algos() : bwd_filter_algos();
  const AlgoInfo* a = find_algo(algos, algo);
  if (!a) return complain(fn, "algorithm " + std::to_string(algo) + " is not one Get*Algorithm_v7 offers");
  const size_t need = a->workspace_per_output * size_t(y->d[0]) * y->d[1] * y->d[2] * y->d[3];
  if (ws_bytes < need)
    return complain(fn, "workspace of " + std::to_string(ws_bytes) + " bytes, the algorithm needs " + std::to_string(need));
  if (ws_bytes > 0 && (!ws || reinterpret_cast<uintptr_t>(ws) % 256 != 0 || !in_device(ws, ws_bytes)))
    return complain(fn, "the workspace is not a 256-byte aligned device block of its size");
  const size_t es = elem(x->type);
  const size_t w_bytes = size_t(w->d[0]) * w->d[1] * w->d[2] * w->d[3] * es;
  if (!in_device(xp, span_elems(*x) * es)) return complain(fn, "x is not inside one device allocation");
  if (!in_device(wp, w_bytes)) return complain(fn, "w is not inside one device allocation");
  if (!in_device(yp, span_elems(*y) * es)) return complain(fn, "y is not inside one device allocation");
  const bool dbl = x->type == CUDNN_DATA_DOUBLE;
  const double al = dbl ? *static_cast<const double*>(alpha) : *static_cast<const float*>(alpha);
  const double be = dbl ? *static_cast<const double*>(beta) : *static_cast<const float*>(beta);
  const bool round = x->type == CUDNN_DATA_FLOAT && c->math != CUDNN_FMA_MATH;
  if (epi.on) {
    if (epi.alpha2 != 0 && !in_device(epi.zp, span_elems(epi.z) * es)) return complain(fn, "z is not inside one device allocation");
    if (!in_device(epi.bp, size_t(y->d[1]) * es)) return complain(fn, "bias is not inside one device allocation");
  }
  const Tensor X = *x, Y = *y;
  const Filter W = *w;
  const Conv C = *c;
  const Epilogue E = epi;
  const void* wsp = ws;
  enqueue_on(h->stream, [=] {
    (void)wsp;
    const cudnnDataType_t t = X.type;
    if (dir == Dir::Fwd) {
      std::vector<double> acc(size_t(span_elems(Y)), 0.0);
      for_each_product(X, W, C, Y, [&](int64_t yi, int64_t xi, int64_t wi) {
        acc[yi] += load(xp, t, xi, round) * load(wp, t, wi, round);
      });
      void* out = const_cast<void*>(yp);
      for (int n = 0; n < Y.d[0]; ++n)
        for (int o = 0; o < Y.d[1]; ++o)
          for (int r = 0; r < Y.d[2]; ++r)
            for (int q = 0; q < Y.d[3]; ++q) {
              const int64_t i = int64_t(n) * Y.s[0] + int64_t(o) * Y.s[1] + int64_t(r) * Y.s[2] + int64_t(q) * Y.s[3];
              if (E.on) {
                const int64_t zi = int64_t(n) * E.z.s[0] + int64_t(o) * E.z.s[1] + int64_t(r) * E.z.s[2] +
                                   int64_t(q) * E.z.s[3];
                const double zv = E.alpha2 != 0 ? E.alpha2 * load(E.zp, t, zi, false) : 0.0;
                store(out, t, i, activate(E.act, al * acc[i] + zv + load(E.bp, t, int64_t(o) * E.b.s[1], false)));
              } else {
                store(out, t, i, al * acc[i] + (be != 0 ? be * load(out, t, i, false) : 0.0));
              }
            }
    } else if (dir == Dir::BwdData) {
      // x is the output (dx), y the input (dy).
      std::vector<double> acc(size_t(span_elems(X)), 0.0);
      for_each_product(X, W, C, Y, [&](int64_t yi, int64_t xi, int64_t wi) {
        acc[xi] += load(yp, t, yi, round) * load(wp, t, wi, round);
      });
      void* out = const_cast<void*>(xp);
      for (int n = 0; n < X.d[0]; ++n)
        for (int o = 0; o < X.d[1]; ++o)
          for (int r = 0; r < X.d[2]; ++r)
            for (int q = 0; q < X.d[3]; ++q) {
              const int64_t i = int64_t(n) * X.s[0] + int64_t(o) * X.s[1] + int64_t(r) * X.s[2] + int64_t(q) * X.s[3];
              store(out, t, i, al * acc[i] + (be != 0 ? be * load(out, t, i, false) : 0.0));
            }
    } else {
      const int64_t wn = int64_t(W.d[0]) * W.d[1] * W.d[2] * W.d[3];
      std::vector<double> acc(size_t(wn), 0.0);
      for_each_product(X, W, C, Y, [&](int64_t yi, int64_t xi, int64_t wi) {
        acc[wi] += load(yp, t, yi, round) * load(xp, t, xi, round);
      });
      void* out = const_cast<void*>(wp);
      for (int64_t i = 0; i < wn; ++i) store(out, t, i, al * acc[i] + (be != 0 ? be * load(out, t, i, false) : 0.0));
    }
  });
  return CUDNN_STATUS_SUCCESS;
}

template <class Perf>
cudnnStatus_t offer(const char* fn, const std::vector<AlgoInfo>& algos, const Tensor* x, const Filter* w, const Conv* c,
                    const Tensor* y, int requested, int* returned, Perf* perf) {
  const std::string bad = check_geometry(x, w, c, y);
  if (!bad.empty()) return complain(fn, bad);
  if (!returned || !perf || requested < 1) return complain(fn, "no room for the results");
  const size_t outputs = size_t(y->d[0]) * y->d[1] * y->d[2] * y->d[3];
  int n = 0;
  for (const auto& a : algos) {
    if (n == requested) break;
    Perf p{};
    p.algo = static_cast<decltype(p.algo)>(a.algo);
    p.status = CUDNN_STATUS_SUCCESS;
    p.time = 1.0f + n;
    p.memory = a.workspace_per_output * outputs;
    p.determinism = a.deterministic ? CUDNN_DETERMINISTIC : CUDNN_NON_DETERMINISTIC;
    p.mathType = c->math;
    perf[n++] = p;
  }
  *returned = n;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t workspace(const char* fn, const std::vector<AlgoInfo>& algos, const Tensor* x, const Filter* w,
                        const Conv* c, const Tensor* y, int algo, size_t* bytes) {
  const std::string bad = check_geometry(x, w, c, y);
  if (!bad.empty()) return complain(fn, bad);
  const AlgoInfo* a = find_algo(algos, algo);
  if (!a || !bytes) return complain(fn, "unknown algorithm " + std::to_string(algo));
  *bytes = a->workspace_per_output * size_t(y->d[0]) * y->d[1] * y->d[2] * y->d[3];
  return CUDNN_STATUS_SUCCESS;
}

}  // namespace

extern "C" {

size_t cudnnGetVersion(void) { return CUDNN_VERSION; }

const char* cudnnGetErrorString(cudnnStatus_t s) {
  switch (s) {
    case CUDNN_STATUS_SUCCESS: return "CUDNN_STATUS_SUCCESS";
    case CUDNN_STATUS_BAD_PARAM: return "CUDNN_STATUS_BAD_PARAM (gpu_sim)";
    default: return "CUDNN_STATUS_(other) (gpu_sim)";
  }
}

cudnnStatus_t cudnnCreate(cudnnHandle_t* handle) { return create<Handle>(handle); }
cudnnStatus_t cudnnDestroy(cudnnHandle_t handle) { return destroy<Handle>(handle); }

cudnnStatus_t cudnnSetStream(cudnnHandle_t handle, cudaStream_t stream) {
  Handle* h = live<Handle>(handle);
  if (!h) return complain("cudnnSetStream", "invalid handle");
  h->stream = stream;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t* d) { return create<Tensor>(d); }
cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t d) { return destroy<Tensor>(d); }
cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t* d) { return create<Filter>(d); }
cudnnStatus_t cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t d) { return destroy<Filter>(d); }
cudnnStatus_t cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t* d) { return create<Conv>(d); }
cudnnStatus_t cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t d) { return destroy<Conv>(d); }

cudnnStatus_t cudnnSetTensor4dDescriptorEx(cudnnTensorDescriptor_t d, cudnnDataType_t type, int n, int c, int h, int w,
                                           int ns, int cs, int hs, int ws) {
  Tensor* t = live<Tensor>(d);
  if (!t) return complain("cudnnSetTensor4dDescriptorEx", "invalid descriptor");
  if (type != CUDNN_DATA_FLOAT && type != CUDNN_DATA_DOUBLE) return complain("cudnnSetTensor4dDescriptorEx", "data type");
  if (n < 1 || c < 1 || h < 1 || w < 1 || ns < 1 || cs < 1 || hs < 1 || ws < 1)
    return complain("cudnnSetTensor4dDescriptorEx", "sizes and strides must be >= 1");
  *t = Tensor{true, type, {n, c, h, w}, {ns, cs, hs, ws}};
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t d, cudnnDataType_t type, cudnnTensorFormat_t format,
                                         int k, int c, int h, int w) {
  Filter* f = live<Filter>(d);
  if (!f) return complain("cudnnSetFilter4dDescriptor", "invalid descriptor");
  if (format != CUDNN_TENSOR_NCHW) return complain("cudnnSetFilter4dDescriptor", "only NCHW is simulated");
  if (type != CUDNN_DATA_FLOAT && type != CUDNN_DATA_DOUBLE) return complain("cudnnSetFilter4dDescriptor", "data type");
  if (k < 1 || c < 1 || h < 1 || w < 1) return complain("cudnnSetFilter4dDescriptor", "sizes must be >= 1");
  *f = Filter{true, type, {k, c, h, w}};
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t d, int ph, int pw, int u, int v, int dh,
                                              int dw, cudnnConvolutionMode_t mode, cudnnDataType_t compute) {
  Conv* c = live<Conv>(d);
  if (!c) return complain("cudnnSetConvolution2dDescriptor", "invalid descriptor");
  if (ph < 0 || pw < 0 || u < 1 || v < 1 || dh < 1 || dw < 1)
    return complain("cudnnSetConvolution2dDescriptor", "pads >= 0, strides and dilations >= 1");
  if (mode != CUDNN_CONVOLUTION && mode != CUDNN_CROSS_CORRELATION) return complain("cudnnSetConvolution2dDescriptor", "mode");
  c->set = true;
  c->pad[0] = ph, c->pad[1] = pw, c->stride[0] = u, c->stride[1] = v, c->dil[0] = dh, c->dil[1] = dw;
  c->mode = mode;
  c->compute = compute;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t d, int groups) {
  Conv* c = live<Conv>(d);
  if (!c || groups < 1) return complain("cudnnSetConvolutionGroupCount", "invalid descriptor or group count");
  c->groups = groups;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t d, cudnnMathType_t math) {
  Conv* c = live<Conv>(d);
  if (!c) return complain("cudnnSetConvolutionMathType", "invalid descriptor");
  c->math = math;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetConvolution2dForwardOutputDim(const cudnnConvolutionDescriptor_t cd,
                                                    const cudnnTensorDescriptor_t xd, const cudnnFilterDescriptor_t wd,
                                                    int* n, int* c, int* h, int* w) {
  const Tensor* x = live<Tensor>(xd);
  const Filter* f = live<Filter>(wd);
  const Conv* cv = live<Conv>(cd);
  const std::string bad = check_geometry(x, f, cv, nullptr);
  if (!bad.empty()) return complain("cudnnGetConvolution2dForwardOutputDim", bad);
  *n = x->d[0];
  *c = f->d[0];
  *h = out_dim(x->d[2], f->d[2], cv->pad[0], cv->stride[0], cv->dil[0]);
  *w = out_dim(x->d[3], f->d[3], cv->pad[1], cv->stride[1], cv->dil[1]);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(cudnnHandle_t h, const cudnnTensorDescriptor_t x,
                                                     const cudnnFilterDescriptor_t w,
                                                     const cudnnConvolutionDescriptor_t c,
                                                     const cudnnTensorDescriptor_t y, const int requested,
                                                     int* returned, cudnnConvolutionFwdAlgoPerf_t* perf) {
  if (!live<Handle>(h)) return complain("cudnnGetConvolutionForwardAlgorithm_v7", "invalid handle");
  return offer("cudnnGetConvolutionForwardAlgorithm_v7", fwd_algos(), live<Tensor>(x), live<Filter>(w), live<Conv>(c),
               live<Tensor>(y), requested, returned, perf);
}

cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(cudnnHandle_t h, const cudnnTensorDescriptor_t x,
                                                      const cudnnFilterDescriptor_t w,
                                                      const cudnnConvolutionDescriptor_t c,
                                                      const cudnnTensorDescriptor_t y, cudnnConvolutionFwdAlgo_t algo,
                                                      size_t* bytes) {
  if (!live<Handle>(h)) return complain("cudnnGetConvolutionForwardWorkspaceSize", "invalid handle");
  return workspace("cudnnGetConvolutionForwardWorkspaceSize", fwd_algos(), live<Tensor>(x), live<Filter>(w),
                   live<Conv>(c), live<Tensor>(y), algo, bytes);
}

cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t h, const void* alpha, const cudnnTensorDescriptor_t xd,
                                      const void* x, const cudnnFilterDescriptor_t wd, const void* w,
                                      const cudnnConvolutionDescriptor_t cd, cudnnConvolutionFwdAlgo_t algo, void* ws,
                                      size_t ws_bytes, const void* beta, const cudnnTensorDescriptor_t yd, void* y) {
  return run("cudnnConvolutionForward", Dir::Fwd, h, alpha, xd, x, wd, w, cd, algo, ws, ws_bytes, beta, yd, y);
}

cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithm_v7(cudnnHandle_t h, const cudnnFilterDescriptor_t w,
                                                          const cudnnTensorDescriptor_t dy,
                                                          const cudnnConvolutionDescriptor_t c,
                                                          const cudnnTensorDescriptor_t dx, const int requested,
                                                          int* returned, cudnnConvolutionBwdDataAlgoPerf_t* perf) {
  if (!live<Handle>(h)) return complain("cudnnGetConvolutionBackwardDataAlgorithm_v7", "invalid handle");
  return offer("cudnnGetConvolutionBackwardDataAlgorithm_v7", bwd_data_algos(), live<Tensor>(dx), live<Filter>(w),
               live<Conv>(c), live<Tensor>(dy), requested, returned, perf);
}

cudnnStatus_t cudnnGetConvolutionBackwardDataWorkspaceSize(cudnnHandle_t h, const cudnnFilterDescriptor_t w,
                                                           const cudnnTensorDescriptor_t dy,
                                                           const cudnnConvolutionDescriptor_t c,
                                                           const cudnnTensorDescriptor_t dx,
                                                           cudnnConvolutionBwdDataAlgo_t algo, size_t* bytes) {
  if (!live<Handle>(h)) return complain("cudnnGetConvolutionBackwardDataWorkspaceSize", "invalid handle");
  return workspace("cudnnGetConvolutionBackwardDataWorkspaceSize", bwd_data_algos(), live<Tensor>(dx),
                   live<Filter>(w), live<Conv>(c), live<Tensor>(dy), algo, bytes);
}

cudnnStatus_t cudnnConvolutionBackwardData(cudnnHandle_t h, const void* alpha, const cudnnFilterDescriptor_t wd,
                                           const void* w, const cudnnTensorDescriptor_t dyd, const void* dy,
                                           const cudnnConvolutionDescriptor_t cd, cudnnConvolutionBwdDataAlgo_t algo,
                                           void* ws, size_t ws_bytes, const void* beta,
                                           const cudnnTensorDescriptor_t dxd, void* dx) {
  return run("cudnnConvolutionBackwardData", Dir::BwdData, h, alpha, dxd, dx, wd, w, cd, algo, ws, ws_bytes, beta, dyd,
             dy);
}

cudnnStatus_t cudnnGetConvolutionBackwardFilterAlgorithm_v7(cudnnHandle_t h, const cudnnTensorDescriptor_t x,
                                                            const cudnnTensorDescriptor_t dy,
                                                            const cudnnConvolutionDescriptor_t c,
                                                            const cudnnFilterDescriptor_t dw, const int requested,
                                                            int* returned, cudnnConvolutionBwdFilterAlgoPerf_t* perf) {
  if (!live<Handle>(h)) return complain("cudnnGetConvolutionBackwardFilterAlgorithm_v7", "invalid handle");
  return offer("cudnnGetConvolutionBackwardFilterAlgorithm_v7", bwd_filter_algos(), live<Tensor>(x), live<Filter>(dw),
               live<Conv>(c), live<Tensor>(dy), requested, returned, perf);
}

cudnnStatus_t cudnnGetConvolutionBackwardFilterWorkspaceSize(cudnnHandle_t h, const cudnnTensorDescriptor_t x,
                                                             const cudnnTensorDescriptor_t dy,
                                                             const cudnnConvolutionDescriptor_t c,
                                                             const cudnnFilterDescriptor_t dw,
                                                             cudnnConvolutionBwdFilterAlgo_t algo, size_t* bytes) {
  if (!live<Handle>(h)) return complain("cudnnGetConvolutionBackwardFilterWorkspaceSize", "invalid handle");
  return workspace("cudnnGetConvolutionBackwardFilterWorkspaceSize", bwd_filter_algos(), live<Tensor>(x),
                   live<Filter>(dw), live<Conv>(c), live<Tensor>(dy), algo, bytes);
}

cudnnStatus_t cudnnConvolutionBackwardFilter(cudnnHandle_t h, const void* alpha, const cudnnTensorDescriptor_t xd,
                                             const void* x, const cudnnTensorDescriptor_t dyd, const void* dy,
                                             const cudnnConvolutionDescriptor_t cd,
                                             cudnnConvolutionBwdFilterAlgo_t algo, void* ws, size_t ws_bytes,
                                             const void* beta, const cudnnFilterDescriptor_t dwd, void* dw) {
  return run("cudnnConvolutionBackwardFilter", Dir::BwdFilter, h, alpha, xd, x, dwd, dw, cd, algo, ws, ws_bytes, beta,
             dyd, dy);
}

cudnnStatus_t cudnnCreateActivationDescriptor(cudnnActivationDescriptor_t* d) { return create<Activation>(d); }
cudnnStatus_t cudnnDestroyActivationDescriptor(cudnnActivationDescriptor_t d) { return destroy<Activation>(d); }

cudnnStatus_t cudnnSetActivationDescriptor(cudnnActivationDescriptor_t d, cudnnActivationMode_t mode,
                                           cudnnNanPropagation_t nan, double coef) {
  Activation* a = live<Activation>(d);
  if (!a) return complain("cudnnSetActivationDescriptor", "invalid descriptor");
  if (mode != CUDNN_ACTIVATION_RELU && mode != CUDNN_ACTIVATION_IDENTITY)
    return complain("cudnnSetActivationDescriptor", "only RELU and IDENTITY are simulated");
  if (nan != CUDNN_PROPAGATE_NAN && nan != CUDNN_NOT_PROPAGATE_NAN) return complain("cudnnSetActivationDescriptor", "nan option");
  (void)coef;  // the clipping / alpha coefficient: unused by RELU and IDENTITY
  *a = Activation{true, mode, nan};
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnConvolutionBiasActivationForward(
    cudnnHandle_t h, const void* alpha1, const cudnnTensorDescriptor_t xd, const void* x,
    const cudnnFilterDescriptor_t wd, const void* w, const cudnnConvolutionDescriptor_t cd,
    cudnnConvolutionFwdAlgo_t algo, void* ws, size_t ws_bytes, const void* alpha2, const cudnnTensorDescriptor_t zd,
    const void* z, const cudnnTensorDescriptor_t bd, const void* bias, const cudnnActivationDescriptor_t ad,
    const cudnnTensorDescriptor_t yd, void* y) {
  const char* fn = "cudnnConvolutionBiasActivationForward";
  const Tensor* yt = live<Tensor>(yd);
  const Tensor* zt = live<Tensor>(zd);
  const Tensor* bt = live<Tensor>(bd);
  const Activation* act = live<Activation>(ad);
  if (!yt || !yt->set) return complain(fn, "the output tensor descriptor is invalid or not set");
  if (!zt || !zt->set) return complain(fn, "the z tensor descriptor is invalid or not set");
  if (!bt || !bt->set) return complain(fn, "the bias tensor descriptor is invalid or not set");
  if (!act || !act->set) return complain(fn, "the activation descriptor is invalid or not set");
  if (!alpha2) return complain(fn, "alpha2 must be a host pointer");
  for (int i = 0; i < 4; ++i)
    if (zt->d[i] != yt->d[i]) return complain(fn, "z's dims differ from y's");
  if (zt->type != yt->type || bt->type != yt->type) return complain(fn, "z and bias must have y's data type");
  if (bt->d[0] != 1 || bt->d[1] != yt->d[1] || bt->d[2] != 1 || bt->d[3] != 1)
    return complain(fn, "the bias must be (1, " + std::to_string(yt->d[1]) + ", 1, 1), got (" + std::to_string(bt->d[0]) +
                            ", " + std::to_string(bt->d[1]) + ", " + std::to_string(bt->d[2]) + ", " +
                            std::to_string(bt->d[3]) + ")");
  if (act->mode == CUDNN_ACTIVATION_IDENTITY && algo != CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM)
    return complain(fn, "CUDNN_ACTIVATION_IDENTITY needs CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM");
  Epilogue e;
  e.on = true;
  e.alpha2 = yt->type == CUDNN_DATA_DOUBLE ? *static_cast<const double*>(alpha2) : *static_cast<const float*>(alpha2);
  e.z = *zt;
  e.zp = z;
  e.b = *bt;
  e.bp = bias;
  e.act = *act;
  static const double zero_d = 0.0;
  static const float zero_f = 0.f;
  const void* beta = yt->type == CUDNN_DATA_DOUBLE ? static_cast<const void*>(&zero_d) : &zero_f;
  return run(fn, Dir::Fwd, h, alpha1, xd, x, wd, w, cd, algo, ws, ws_bytes, beta, yd, y, e);
}

cudnnStatus_t cudnnAddTensor(cudnnHandle_t handle, const void* alpha, const cudnnTensorDescriptor_t ad, const void* A,
                             const void* beta, const cudnnTensorDescriptor_t cd, void* C) {
  const char* fn = "cudnnAddTensor";
  Handle* h = live<Handle>(handle);
  if (!h) return complain(fn, "invalid handle");
  const Tensor* a = live<Tensor>(ad);
  const Tensor* c = live<Tensor>(cd);
  if (!a || !a->set || !c || !c->set) return complain(fn, "a tensor descriptor is invalid or not set");
  if (a->type != c->type) return complain(fn, "A and C data types differ");
  for (int i = 0; i < 4; ++i)
    if (a->d[i] != c->d[i] && a->d[i] != 1) return complain(fn, "A's dims must each be C's or 1");
  if (!alpha || !beta) return complain(fn, "alpha and beta must be host pointers");
  const size_t es = elem(c->type);
  if (!in_device(A, span_elems(*a) * es) || !in_device(C, span_elems(*c) * es))
    return complain(fn, "A or C is not inside one device allocation");
  const bool dbl = c->type == CUDNN_DATA_DOUBLE;
  const double al = dbl ? *static_cast<const double*>(alpha) : *static_cast<const float*>(alpha);
  const double be = dbl ? *static_cast<const double*>(beta) : *static_cast<const float*>(beta);
  const Tensor TA = *a, TC = *c;
  enqueue_on(h->stream, [=] {
    for (int n = 0; n < TC.d[0]; ++n)
      for (int k = 0; k < TC.d[1]; ++k)
        for (int r = 0; r < TC.d[2]; ++r)
          for (int q = 0; q < TC.d[3]; ++q) {
            const int idx[4] = {n, k, r, q};
            int64_t ai = 0, ci = 0;
            for (int i = 0; i < 4; ++i) {
              ai += int64_t(TA.d[i] == 1 ? 0 : idx[i]) * TA.s[i];
              ci += int64_t(idx[i]) * TC.s[i];
            }
            store(C, TC.type, ci, al * load(A, TC.type, ai, false) + (be != 0 ? be * load(C, TC.type, ci, false) : 0.0));
          }
  });
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnActivationForward(cudnnHandle_t handle, cudnnActivationDescriptor_t adesc, const void* alpha,
                                     const cudnnTensorDescriptor_t xd, const void* x, const void* beta,
                                     const cudnnTensorDescriptor_t yd, void* y) {
  const char* fn = "cudnnActivationForward";
  Handle* h = live<Handle>(handle);
  if (!h) return complain(fn, "invalid handle");
  const Activation* act = live<Activation>(adesc);
  if (!act || !act->set || act->mode != CUDNN_ACTIVATION_RELU) return complain(fn, "a set RELU activation descriptor is needed");
  const Tensor* xt = live<Tensor>(xd);
  const Tensor* yt = live<Tensor>(yd);
  if (!xt || !xt->set || !yt || !yt->set) return complain(fn, "a tensor descriptor is invalid or not set");
  if (xt->type != yt->type) return complain(fn, "x and y data types differ");
  for (int i = 0; i < 4; ++i) {
    if (xt->d[i] != yt->d[i]) return complain(fn, "x and y dims differ");
    if (x == y && xt->s[i] != yt->s[i]) return complain(fn, "in place needs equal strides");
  }
  if (!alpha || !beta) return complain(fn, "alpha and beta must be host pointers");
  const size_t es = elem(xt->type);
  if (!in_device(x, span_elems(*xt) * es) || !in_device(y, span_elems(*yt) * es))
    return complain(fn, "x or y is not inside one device allocation");
  const bool dbl = xt->type == CUDNN_DATA_DOUBLE;
  const double al = dbl ? *static_cast<const double*>(alpha) : *static_cast<const float*>(alpha);
  const double be = dbl ? *static_cast<const double*>(beta) : *static_cast<const float*>(beta);
  const Tensor TX = *xt, TY = *yt;
  const Activation A = *act;
  enqueue_on(h->stream, [=] {
    for (int n = 0; n < TY.d[0]; ++n)
      for (int k = 0; k < TY.d[1]; ++k)
        for (int r = 0; r < TY.d[2]; ++r)
          for (int q = 0; q < TY.d[3]; ++q) {
            const int64_t xi = int64_t(n) * TX.s[0] + int64_t(k) * TX.s[1] + int64_t(r) * TX.s[2] + int64_t(q) * TX.s[3];
            const int64_t yi = int64_t(n) * TY.s[0] + int64_t(k) * TY.s[1] + int64_t(r) * TY.s[2] + int64_t(q) * TY.s[3];
            const double v = al * activate(A, load(x, TX.type, xi, false));
            store(y, TY.type, yi, v + (be != 0 ? be * load(y, TY.type, yi, false) : 0.0));
          }
  });
  return CUDNN_STATUS_SUCCESS;
}

}  // extern "C"
