// Neural-network ops on the GPU: Softmax, LogSoftmax, the fused SoftmaxCrossentropy and
// its gradient, CategoricalCrossentropy, CrossentropyGrad, LabelGather, LabelScatter and
// OneHot. The per-element math is ops/scalar/nnet_ops.hpp, pasted into every kernel: the
// functions the CPU loops (backends/cpu/nnet_cpu.cpp) call. The row maximum first, sums of
// exp in double, the same divisions and roundings, so GPU and CPU agree to float32 rounding
// (and exactly for the gather/scatter ops).
//
// Row-wise ops (softmax family) pick per call, from shapes and strides only:
//   col:   one thread per row, walking it sequentially (the CPU's order); for short rows or
//          rows whose elements are far apart while neighbouring rows are neighbours;
//   warp:  32 threads per row (rows up to 1024 elements), shuffle trees;
//   block: 256 threads per row, shuffle trees then one over the warps.
// Label checks run on the device: a kernel that meets a label outside [0, classes)
// records the lowest such row in a device word (atomicMin) and writes NaN/0 instead of
// reading out of bounds; run() copies the word back after the launch (one stream sync)
// and raises the CPU's IndexError, naming the op, the row, the label and the shapes.
#include "backends/cuda/embedded_headers.hpp"
#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/cuda_runtime.hpp"
#include "backends/cuda/reduce_codegen.hpp"

#include "ops/matmul.hpp"
#include "ops/nnet.hpp"
#include "ops/nnet_fused.hpp"

#include <theon/error.hpp>

#include <cstring>

namespace theon::backends::cuda {
namespace {

bool device_dtype(DType t) { return t != DType::Float16 && t != DType::BFloat16; }

Support check_node(const graph::Apply& node) {
  for (const auto& v : node.inputs())
    if (!device_dtype(v->type.dtype))
      return {false, std::string("no CUDA kernel for dtype ") + std::string(dtype_name(v->type.dtype))};
  for (int i = 0; i < node.num_outputs(); ++i)
    if (const DType t = node.output_raw(i)->type.dtype; !device_dtype(t))
      return {false, std::string("no CUDA kernel for dtype ") + std::string(dtype_name(t))};
  if (node.input(0)->type.ndim() > kMaxRank)
    return {false, "rank " + std::to_string(node.input(0)->type.ndim()) + " above the CUDA limit of 8"};
  return {true, "generated kernel"};
}

// ---- device-side label errors ----

constexpr unsigned long long kNoError = ~0ull;

struct ErrorWord {
  std::shared_ptr<Buffer> buf;
  unsigned long long* ptr = nullptr;
};

ErrorWord error_word(int device, cudaStream_t stream) {
  ErrorWord w;
  w.buf = CudaRuntime::instance().allocate_on(Device::cuda(device), sizeof(unsigned long long), stream);
  w.ptr = static_cast<unsigned long long*>(w.buf->data());
  THEON_CUDA_CHECK(cudaMemsetAsync(w.ptr, 0xff, sizeof(unsigned long long), stream));
  return w;
}

/// The first bad row the kernels recorded, or -1 (waits for them).
int64_t first_bad_row(const ErrorWord& w, int device, cudaStream_t stream) {
  unsigned long long v = kNoError;
  CudaRuntime::instance().copy_on(&v, Device::cpu(), w.ptr, Device::cuda(device), sizeof v, stream);  // pageable: synchronous
  return v == kNoError ? -1 : static_cast<int64_t>(v);
}

/// labels[row] read from the device, for the error message.
int64_t label_value(const Array& labels, int64_t row, int device, cudaStream_t stream) {
  const size_t item = itemsize(labels.dtype());
  unsigned char raw[8] = {0};
  const char* src = static_cast<const char*>(labels.data()) + row * labels.strides()[0] * static_cast<int64_t>(item);
  CudaRuntime::instance().copy_on(raw, Device::cpu(), src, Device::cuda(device), item, stream);
  switch (labels.dtype()) {
    case DType::Int8: { int8_t x; std::memcpy(&x, raw, 1); return x; }
    case DType::Int16: { int16_t x; std::memcpy(&x, raw, 2); return x; }
    case DType::Int32: { int32_t x; std::memcpy(&x, raw, 4); return x; }
    case DType::Int64: { int64_t x; std::memcpy(&x, raw, 8); return x; }
    case DType::UInt8: return raw[0];
    default: break;
  }
  throw InternalError("label_value: labels of dtype " + std::string(dtype_name(labels.dtype())));
}

// The messages of the CPU ops (nnet.cpp, nnet_grad.cpp, nnet_fused.cpp), word for word.
std::string crossentropy_message(const graph::Apply& node, int64_t label, int64_t row, const Shape& coding) {
  return "categorical_crossentropy(" + ops::input_label(node, 0) + ", " + ops::input_label(node, 1) +
         "): class index " + std::to_string(label) + " in row " + std::to_string(row) + " of " +
         ops::input_label(node, 1) + " is out of range for " + std::to_string(coding[1]) + " classes (" +
         ops::input_label(node, 0) + " has shape " + shape_str(coding) + ")";
}

std::string label_message(const graph::Apply& node, int64_t label, int64_t row, int64_t classes) {
  return node.describe() + ": label " + std::to_string(label) + " in row " + std::to_string(row) +
         " is out of range for " + std::to_string(classes) + " classes";
}

std::string fused_message(const graph::Apply& node, int64_t label, int64_t row, int64_t classes, const Shape& x) {
  const int n = static_cast<int>(node.inputs().size());
  const std::string call = node.describe() + (n == 2 ? ", the fused " : ", the gradient of ") +
                           "categorical_crossentropy(softmax(" + (n == 2 ? ops::input_label(node, 0) : "...") +
                           "), " + ops::input_label(node, n - 1) + ")";
  return call + ": class index " + std::to_string(label) + " in row " + std::to_string(row) + " of " +
         ops::input_label(node, n - 1) + " is out of range for " + std::to_string(classes) + " classes (" +
         ops::input_label(node, n - 2) + " has shape " + shape_str(x) + ")";
}

std::string one_hot_message(const graph::Apply& node, int64_t index, int64_t pos, int64_t n, const Shape& shape) {
  const std::string l = node.input(0)->label();
  return node.describe() + ": index " + std::to_string(index) + " at position " + std::to_string(pos) + " of " + l +
         " is out of range for " + std::to_string(n) + " classes (" + l + " has shape " + shape_str(shape) + ")";
}

// ---- generated sources ----

// The shared softmax/crossentropy functions (theon::nnet), pasted so the cache key covers
// them; they include scalar_ops.hpp, an NVRTC header.
const std::string& nnet_ops_text() {
  static const std::string text = pasteable(detail::kNnetOpsHeader);
  return text;
}

std::string prologue(const std::vector<std::pair<std::string, DType>>& types) {
  std::string s = reduce_device_helpers() + nnet_ops_text();
  for (auto& [name, t] : types) s += "typedef " + std::string(cuda_type(t)) + " " + name + ";\n";
  return s;
}

// Row statistics shared by the row-wise kernels.
constexpr const char* kRowHelpers = R"CUDA(
__device__ __forceinline__ double theon_inf() { return __longlong_as_double(0x7ff0000000000000LL); }
__device__ __forceinline__ double theon_nan() { return __longlong_as_double(0x7ff8000000000000LL); }
// Combines one value per thread over the TPO threads of a row (a warp or a 256-thread
// block) in a fixed tree and gives every thread the result.
template <int TPO, bool MAX>
__device__ __forceinline__ double theon_row_reduce(double v, double* sm) {
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) {
    const double o = theon_shfl_down(v, d);
    v = MAX ? theon::nnet::row_max(v, o) : v + o;
  }
  if constexpr (TPO == 32) {
    return theon_shfl_idx(v, 0);
  } else {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads();  // sm's previous use is over
    if (lane == 0) sm[warp] = v;
    __syncthreads();
    if (warp == 0) {
      v = lane < TPO / 32 ? sm[lane] : (MAX ? -theon_inf() : 0.0);
#pragma unroll
      for (int d = 16; d > 0; d >>= 1) {
        const double o = theon_shfl_down(v, d);
        v = MAX ? theon::nnet::row_max(v, o) : v + o;
      }
      if (lane == 0) sm[0] = v;
    }
    __syncthreads();
    return sm[0];
  }
}
)CUDA";

// Softmax / LogSoftmax over one axis: rows are the lanes along the axis.
KernelSource softmax_source(DType t, bool log, int kept_rank) {
  KernelSource s;
  s.name = std::string(log ? "nnet_log_softmax_" : "nnet_softmax_") + dtype_tag(t) + "_k" + std::to_string(kept_rank);
  s.code = prologue({{"T", t}}) + "#define KR " + std::to_string(kept_rank) + "\n#define LOG " + (log ? "1" : "0") +
           "\n" + kRowHelpers + R"CUDA(
// log_softmax or softmax of one element, in double (s is log(sum) for log_softmax, else sum).
__device__ __forceinline__ T theon_sm_value(double x, double m, double s) {
#if LOG
  return (T)theon::nnet::log_softmax_value(x, m, s);
#else
  return (T)theon::nnet::softmax_value(x, m, s);
#endif
}

#define THEON_SM_PARAMS                                                                                          \
  const T *__restrict__ in, T *__restrict__ out, long long n_rows, long long n, TheonShape ks, TheonStrides kin, \
      TheonStrides kout, long long is, long long os

template <int TPO>
__device__ __forceinline__ void theon_softmax_rows(THEON_SM_PARAMS) {
  __shared__ double sm[32];
  constexpr int groups = 256 / TPO;
  const int t = TPO == 32 ? (threadIdx.x & 31) : threadIdx.x;
  const int group = TPO == 32 ? (threadIdx.x >> 5) : 0;
  for (long long u = (long long)blockIdx.x * groups + group; u < n_rows; u += (long long)gridDim.x * groups) {
    const T* x = in + theon_roff<KR>(u, ks, kin);
    T* y = out + theon_roff<KR>(u, ks, kout);
    double m = -theon_inf();
    for (long long j = t; j < n; j += TPO) m = theon::nnet::row_max(m, (double)x[j * is]);
    m = theon_row_reduce<TPO, true>(m, sm);
    double sum = 0;
    for (long long j = t; j < n; j += TPO) sum += theon::nnet::shifted_exp((double)x[j * is], m);
    sum = theon_row_reduce<TPO, false>(sum, sm);
    const double s = LOG ? log(sum) : sum;
    for (long long j = t; j < n; j += TPO) y[j * os] = theon_sm_value((double)x[j * is], m, s);
  }
}

extern "C" __global__ void __launch_bounds__(256) softmax_warp(THEON_SM_PARAMS) {
  theon_softmax_rows<32>(in, out, n_rows, n, ks, kin, kout, is, os);
}
extern "C" __global__ void __launch_bounds__(256) softmax_block(THEON_SM_PARAMS) {
  theon_softmax_rows<256>(in, out, n_rows, n, ks, kin, kout, is, os);
}
// One thread per row, in the CPU's order.
extern "C" __global__ void __launch_bounds__(256) softmax_col(THEON_SM_PARAMS) {
  for (long long u = (long long)blockIdx.x * blockDim.x + threadIdx.x; u < n_rows; u += (long long)gridDim.x * blockDim.x) {
    const T* x = in + theon_roff<KR>(u, ks, kin);
    T* y = out + theon_roff<KR>(u, ks, kout);
    double m = -theon_inf();
    for (long long j = 0; j < n; ++j) m = theon::nnet::row_max(m, (double)x[j * is]);
    double sum = 0;
    for (long long j = 0; j < n; ++j) sum += theon::nnet::shifted_exp((double)x[j * is], m);
    const double s = LOG ? log(sum) : sum;
    for (long long j = 0; j < n; ++j) y[j * os] = theon_sm_value((double)x[j * is], m, s);
  }
}
)CUDA";
  s.kernels = {"softmax_warp", "softmax_block", "softmax_col"};
  return s;
}

// SoftmaxCrossentropy(x, labels) -> (loss, sm), as the CPU loop: exp(x - m) stored rounded
// to T and rescaled by 1/sum, loss = m + log(sum) - x[label].
KernelSource sxent_source(DType t, DType l) {
  KernelSource s;
  s.name = std::string("nnet_softmax_xent_") + dtype_tag(t) + "_" + dtype_tag(l);
  s.code = prologue({{"T", t}, {"L", l}}) + kRowHelpers + R"CUDA(
#define THEON_SX_PARAMS                                                                                    \
  const T *__restrict__ x, const L *__restrict__ labels, T *__restrict__ loss, T *__restrict__ smo,        \
      unsigned long long *__restrict__ err, long long rows, long long classes, long long rs, long long cs, \
      long long ls

// The row's loss, or NaN and an error record for a label out of range.
__device__ __forceinline__ void theon_sx_loss(const T* xi, const L* __restrict__ labels, T* __restrict__ loss,
                                              unsigned long long* err, long long i, long long classes, long long cs,
                                              long long ls, double m, double sum) {
  const long long lab = (long long)labels[i * ls];
  if (!theon::nnet::label_ok(lab, classes)) {
    atomicMin(err, (unsigned long long)i);
    loss[i] = (T)theon_nan();
  } else {
    loss[i] = (T)theon::nnet::softmax_xent_loss(m, sum, (double)xi[lab * cs]);
  }
}

template <int TPO>
__device__ __forceinline__ void theon_sx_rows(THEON_SX_PARAMS) {
  __shared__ double sm[32];
  constexpr int groups = 256 / TPO;
  const int t = TPO == 32 ? (threadIdx.x & 31) : threadIdx.x;
  const int group = TPO == 32 ? (threadIdx.x >> 5) : 0;
  for (long long i = (long long)blockIdx.x * groups + group; i < rows; i += (long long)gridDim.x * groups) {
    const T* xi = x + i * rs;
    T* si = smo + i * classes;
    double m = -theon_inf();
    for (long long j = t; j < classes; j += TPO) m = theon::nnet::row_max(m, (double)xi[j * cs]);
    m = theon_row_reduce<TPO, true>(m, sm);
    double sum = 0;
    for (long long j = t; j < classes; j += TPO) {
      const double e = theon::nnet::shifted_exp((double)xi[j * cs], m);
      si[j] = (T)e;
      sum += e;
    }
    sum = theon_row_reduce<TPO, false>(sum, sm);
    const double inv = 1.0 / sum;
    for (long long j = t; j < classes; j += TPO) si[j] = (T)((double)si[j] * inv);  // this thread's own writes
    if (t == 0) theon_sx_loss(xi, labels, loss, err, i, classes, cs, ls, m, sum);
  }
}

extern "C" __global__ void __launch_bounds__(256) sxent_warp(THEON_SX_PARAMS) {
  theon_sx_rows<32>(x, labels, loss, smo, err, rows, classes, rs, cs, ls);
}
extern "C" __global__ void __launch_bounds__(256) sxent_block(THEON_SX_PARAMS) {
  theon_sx_rows<256>(x, labels, loss, smo, err, rows, classes, rs, cs, ls);
}
extern "C" __global__ void __launch_bounds__(256) sxent_col(THEON_SX_PARAMS) {
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < rows; i += (long long)gridDim.x * blockDim.x) {
    const T* xi = x + i * rs;
    T* si = smo + i * classes;
    double m = -theon_inf();
    for (long long j = 0; j < classes; ++j) m = theon::nnet::row_max(m, (double)xi[j * cs]);
    double sum = 0;
    for (long long j = 0; j < classes; ++j) {
      const double e = theon::nnet::shifted_exp((double)xi[j * cs], m);
      si[j] = (T)e;
      sum += e;
    }
    const double inv = 1.0 / sum;
    for (long long j = 0; j < classes; ++j) si[j] = (T)((double)si[j] * inv);
    theon_sx_loss(xi, labels, loss, err, i, classes, cs, ls, m, sum);
  }
}
)CUDA";
  s.kernels = {"sxent_warp", "sxent_block", "sxent_col"};
  return s;
}

// Kernels with one thread per output element of a (rows, classes) matrix or per row. Each
// reads its row's label, records a bad one (once per row) and never indexes with it.
constexpr const char* kLabelHelpers = R"CUDA(
__device__ __forceinline__ bool theon_label(const L* __restrict__ labels, long long ls, long long i, long long classes,
                                            unsigned long long* err, bool record, long long& lab) {
  lab = (long long)labels[i * ls];
  if (theon::nnet::label_ok(lab, classes)) return true;
  if (record) atomicMin(err, (unsigned long long)i);
  return false;
}
#define THEON_FLAT_LOOP(total)                                                                       \
  for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < (total); \
       idx += (long long)gridDim.x * blockDim.x)
)CUDA";

enum class Flat { SxentGrad, XentGrad, Scatter, OneHot };

KernelSource flat_source(Flat kind, DType t, DType l) {
  KernelSource s;
  std::string body;
  switch (kind) {
    case Flat::SxentGrad:
      s.name = "nnet_softmax_xent_grad_";
      body = R"CUDA(
// out[i, j] = dy[i] * (sm[i, j] - (j == label)), in double as the CPU.
extern "C" __global__ void __launch_bounds__(256) flat_kernel(const T* __restrict__ dy, const T* __restrict__ sm,
    const L* __restrict__ labels, T* __restrict__ out, unsigned long long* err, long long rows, long long classes,
    long long ds, long long rs, long long cs, long long ls) {
  THEON_FLAT_LOOP(rows * classes) {
    const long long i = idx / classes, j = idx - i * classes;
    long long lab;
    const bool ok = theon_label(labels, ls, i, classes, err, j == 0, lab);
    const double d = (double)dy[i * ds], p = (double)sm[i * rs + j * cs];
    out[idx] = !ok ? (T)theon_nan() : (T)theon::nnet::softmax_xent_grad(d, p, j == lab);
  }
}
)CUDA";
      break;
    case Flat::XentGrad:
      s.name = "nnet_xent_grad_";
      body = R"CUDA(
// out[i, j] = -gz[i] / p[i, j] at the label, 0 elsewhere.
extern "C" __global__ void __launch_bounds__(256) flat_kernel(const T* __restrict__ gz, const T* __restrict__ p,
    const L* __restrict__ labels, T* __restrict__ out, unsigned long long* err, long long rows, long long classes,
    long long gs, long long rs, long long cs, long long ls) {
  THEON_FLAT_LOOP(rows * classes) {
    const long long i = idx / classes, j = idx - i * classes;
    long long lab;
    const bool ok = theon_label(labels, ls, i, classes, err, j == 0, lab);
    out[idx] = ok && j == lab ? (T)theon::nnet::crossentropy_grad((double)gz[i * gs], (double)p[i * rs + j * cs]) : (T)0;
  }
}
)CUDA";
      break;
    case Flat::Scatter:
      s.name = "nnet_label_scatter_";
      body = R"CUDA(
// out[i, j] = v[i] at the label, 0 elsewhere.
extern "C" __global__ void __launch_bounds__(256) flat_kernel(const T* __restrict__ v, const L* __restrict__ labels,
    T* __restrict__ out, unsigned long long* err, long long rows, long long classes, long long vs, long long ls) {
  THEON_FLAT_LOOP(rows * classes) {
    const long long i = idx / classes, j = idx - i * classes;
    long long lab;
    const bool ok = theon_label(labels, ls, i, classes, err, j == 0, lab);
    out[idx] = ok && j == lab ? v[i * vs] : (T)0;
  }
}
)CUDA";
      break;
    case Flat::OneHot:
      s.name = "nnet_one_hot_";
      body = R"CUDA(
// out[i, j] = (indices[i] == j), of T.
extern "C" __global__ void __launch_bounds__(256) flat_kernel(const L* __restrict__ labels, T* __restrict__ out,
    unsigned long long* err, long long rows, long long classes, long long ls) {
  THEON_FLAT_LOOP(rows * classes) {
    const long long i = idx / classes, j = idx - i * classes;
    long long lab;
    const bool ok = theon_label(labels, ls, i, classes, err, j == 0, lab);
    out[idx] = (T)(ok && j == lab ? 1 : 0);
  }
}
)CUDA";
      break;
  }
  s.name += std::string(dtype_tag(t)) + "_" + dtype_tag(l);
  s.code = prologue({{"T", t}, {"L", l}}) + "__device__ __forceinline__ double theon_nan() { return "
                                             "__longlong_as_double(0x7ff8000000000000LL); }\n" +
           kLabelHelpers + body;
  s.kernels = {"flat_kernel"};
  return s;
}

enum class PerRow { Xent, Gather };

KernelSource row_source(PerRow kind, DType t, DType l) {
  KernelSource s;
  s.name = std::string(kind == PerRow::Xent ? "nnet_xent_" : "nnet_label_gather_") + dtype_tag(t) + "_" + dtype_tag(l);
  const std::string value = kind == PerRow::Xent ? "(T)theon::nnet::crossentropy((double)x[i * rs + lab * cs])" : "x[i * rs + lab * cs]";
  const std::string bad = kind == PerRow::Xent ? "(T)theon_nan()" : "(T)0";
  s.code = prologue({{"T", t}, {"L", l}}) +
           "__device__ __forceinline__ double theon_nan() { return __longlong_as_double(0x7ff8000000000000LL); }\n" +
           kLabelHelpers +
           "// out[i] from x[i, labels[i]] (" + (kind == PerRow::Xent ? "-log of it" : "the value") + ").\n"
           "extern \"C\" __global__ void __launch_bounds__(256) row_kernel(const T* __restrict__ x, const L* "
           "__restrict__ labels,\n    T* __restrict__ out, unsigned long long* err, long long rows, long long "
           "classes, long long rs, long long cs, long long ls) {\n"
           "  THEON_FLAT_LOOP(rows) {\n    const long long i = idx;\n    long long lab;\n"
           "    out[i] = theon_label(labels, ls, i, classes, err, true, lab) ? " + value + " : " + bad + ";\n  }\n}\n";
  s.kernels = {"row_kernel"};
  return s;
}

// ---- launching ----

unsigned flat_grid(int64_t n, int device) { return grid_for(n, 256, device); }

template <class... A>
void launch_args(const KernelSource& src, const std::string& kernel, dim3 grid, dim3 block, int device,
                 cudaStream_t stream, bool fmad, const std::string& what, A&... args) {
  cudaKernel_t k = cached_kernel(src.name, device, fmad, [&] { return src; }, kernel);
  void* ptrs[] = {static_cast<void*>(&args)...};
  launch(k, grid, block, ptrs, 0, stream, what);
}

// Row-wise strategy (see the top of the file).
enum class RowMode { Col, Warp, Block };
RowMode row_mode(int64_t n, int64_t elem_stride) {
  if (n <= 32 || elem_stride != 1) return RowMode::Col;
  return n <= 1024 ? RowMode::Warp : RowMode::Block;
}

void launch_rows(RowMode mode, const KernelSource& src, const char* prefix, int64_t rows, int device,
                 cudaStream_t stream, bool fmad, const std::string& what, void** args) {
  const std::string kernel = std::string(prefix) + (mode == RowMode::Col ? "_col" : mode == RowMode::Warp ? "_warp" : "_block");
  cudaKernel_t k = cached_kernel(src.name, device, fmad, [&] { return src; }, kernel);
  const int64_t threads = mode == RowMode::Col ? rows : mode == RowMode::Warp ? rows * 32 : rows * 256;
  launch(k, dim3(grid_for(threads, 256, device)), dim3(256), args, 0, stream, what);
}

// ---- kernels ----

class SoftmaxKernel final : public CudaKernel {
 public:
  std::string name() const override { return "cuda_softmax"; }
  Support supports(const graph::Apply& node) const override { return check_node(node); }

  std::vector<KernelSource> sources(const graph::Apply& node, const std::vector<Array>& inputs,
                                    const KernelOptions&) const override {
    const auto& op = static_cast<const ops::Softmax&>(node.op());
    return {softmax_source(inputs[0].dtype(), op.is_log(), lane_plan(op, inputs[0]).kept.rank())};
  }

  void run(const KernelPlan* plan, const ExecContext& where, const graph::Apply& node, const std::vector<Array>& inputs,
           std::vector<Array>& outputs) const override {
    const auto& op = static_cast<const ops::Softmax&>(node.op());
    const Array& in = inputs[0];
    Array& out = outputs[0];
    if (out.size() == 0) return;
    const int device = device_of(inputs, outputs);
    const cudaStream_t stream = stream_for(where, device);
    const LanePlan p = lane_plan(op, in);
    const KernelSource src = softmax_source(in.dtype(), op.is_log(), p.kept.rank());
    const void* ip = in.data();
    void* op_ = out.data();
    long long rows = p.kept.size(), n = in.shape()[op.axis()];
    DeviceShape ks = device_shape(p.kept);
    DeviceStrides kin = device_strides(p.kept, 0), kout = device_strides(p.kept, 1);
    long long is = in.strides()[op.axis()], os = contiguous_strides(out.shape())[op.axis()];
    void* args[] = {&ip, &op_, &rows, &n, &ks, &kin, &kout, &is, &os};
    launch_rows(row_mode(n, is), src, "softmax", rows, device, stream, options_of(plan).fmad, node.describe(), args);
  }

 private:
  // Kept: every dim but the axis, with the input's and the (contiguous) output's strides.
  static LanePlan lane_plan(const ops::Softmax& op, const Array& in) {
    std::vector<bool> mask(static_cast<size_t>(in.ndim()), false);
    mask[static_cast<size_t>(op.axis())] = true;
    return plan_lanes(in.shape(), {in.strides(), contiguous_strides(in.shape())}, mask);
  }
};

class SoftmaxCrossentropyKernel final : public CudaKernel {
 public:
  std::string name() const override { return "cuda_softmax_xent"; }
  Support supports(const graph::Apply& node) const override { return check_node(node); }

  std::vector<KernelSource> sources(const graph::Apply&, const std::vector<Array>& inputs,
                                    const KernelOptions&) const override {
    return {sxent_source(inputs[0].dtype(), inputs[1].dtype())};
  }

  void run(const KernelPlan* plan, const ExecContext& where, const graph::Apply& node, const std::vector<Array>& inputs,
           std::vector<Array>& outputs) const override {
    const Array &x = inputs[0], &labels = inputs[1];
    long long rows = x.shape()[0], classes = x.shape()[1];
    if (rows == 0) return;
    const int device = device_of(inputs, outputs);
    const cudaStream_t stream = stream_for(where, device);
    const KernelSource src = sxent_source(x.dtype(), labels.dtype());
    ErrorWord err = error_word(device, stream);
    const void *xp = x.data(), *lp = labels.data();
    void *loss = outputs[0].data(), *sm = outputs[1].data();
    long long rs = x.strides()[0], cs = x.strides()[1], ls = labels.strides()[0];
    void* args[] = {&xp, &lp, &loss, &sm, &err.ptr, &rows, &classes, &rs, &cs, &ls};
    launch_rows(row_mode(classes, cs), src, "sxent", rows, device, stream, options_of(plan).fmad, node.describe(), args);
    if (const int64_t r = first_bad_row(err, device, stream); r >= 0)
      throw IndexError(fused_message(node, label_value(labels, r, device, stream), r, classes, x.shape()));
  }
};

class CategoricalCrossentropyKernel final : public CudaKernel {
 public:
  std::string name() const override { return "cuda_crossentropy"; }
  Support supports(const graph::Apply& node) const override { return check_node(node); }
  std::vector<KernelSource> sources(const graph::Apply&, const std::vector<Array>& inputs,
                                    const KernelOptions&) const override {
    return {row_source(PerRow::Xent, inputs[0].dtype(), inputs[1].dtype())};
  }
  void run(const KernelPlan* plan, const ExecContext& where, const graph::Apply& node, const std::vector<Array>& inputs,
           std::vector<Array>& outputs) const override {
    const Array &coding = inputs[0], &targets = inputs[1];
    run_gather(where, PerRow::Xent, options_of(plan).fmad, node, coding, targets, outputs[0], [&](int64_t label, int64_t row) {
      return crossentropy_message(node, label, row, coding.shape());
    });
  }

  template <class Message>
  static void run_gather(const ExecContext& where, PerRow kind, bool fmad, const graph::Apply& node, const Array& x,
                         const Array& labels, Array& out, const Message& message) {
    long long rows = x.shape()[0], classes = x.shape()[1];
    if (rows == 0) return;
    const int device = device_of({x, labels}, {out});
    const cudaStream_t stream = stream_for(where, device);
    const KernelSource src = row_source(kind, x.dtype(), labels.dtype());
    ErrorWord err = error_word(device, stream);
    const void *xp = x.data(), *lp = labels.data();
    void* op = out.data();
    long long rs = x.strides()[0], cs = x.strides()[1], ls = labels.strides()[0];
    launch_args(src, "row_kernel", dim3(flat_grid(rows, device)), dim3(256), device, stream, fmad, node.describe(), xp, lp,
                op, err.ptr, rows, classes, rs, cs, ls);
    if (const int64_t r = first_bad_row(err, device, stream); r >= 0)
      throw IndexError(message(label_value(labels, r, device, stream), r));
  }
};

class LabelGatherKernel final : public CudaKernel {
 public:
  std::string name() const override { return "cuda_label_gather"; }
  Support supports(const graph::Apply& node) const override { return check_node(node); }
  std::vector<KernelSource> sources(const graph::Apply&, const std::vector<Array>& inputs,
                                    const KernelOptions&) const override {
    return {row_source(PerRow::Gather, inputs[0].dtype(), inputs[1].dtype())};
  }
  void run(const KernelPlan* plan, const ExecContext& where, const graph::Apply& node, const std::vector<Array>& inputs,
           std::vector<Array>& outputs) const override {
    const int64_t classes = inputs[0].shape()[1];
    CategoricalCrossentropyKernel::run_gather(
        where, PerRow::Gather, options_of(plan).fmad, node, inputs[0], inputs[1], outputs[0],
        [&](int64_t label, int64_t row) { return label_message(node, label, row, classes); });
  }
};

// The (rows, classes) element-wise label ops. With no classes no element runs, yet every
// row's label is out of range: that is checked on the host (row 0 is the first bad one).
template <class Message, class Go>
void run_flat(const Array& labels, int64_t rows, int64_t classes, int device, cudaStream_t stream, const Message& message,
              const Go& go) {
  if (rows == 0) return;
  if (classes == 0) throw IndexError(message(label_value(labels, 0, device, stream), 0));
  ErrorWord err = error_word(device, stream);
  go(err.ptr);
  if (const int64_t r = first_bad_row(err, device, stream); r >= 0)
    throw IndexError(message(label_value(labels, r, device, stream), r));
}

class SoftmaxCrossentropyGradKernel final : public CudaKernel {
 public:
  std::string name() const override { return "cuda_softmax_xent_grad"; }
  Support supports(const graph::Apply& node) const override { return check_node(node); }
  std::vector<KernelSource> sources(const graph::Apply&, const std::vector<Array>& inputs,
                                    const KernelOptions&) const override {
    return {flat_source(Flat::SxentGrad, inputs[1].dtype(), inputs[2].dtype())};
  }
  void run(const KernelPlan* plan, const ExecContext& where, const graph::Apply& node, const std::vector<Array>& inputs,
           std::vector<Array>& outputs) const override {
    const Array &dy = inputs[0], &sm = inputs[1], &labels = inputs[2];
    long long rows = sm.shape()[0], classes = sm.shape()[1];
    const int device = device_of(inputs, outputs);
    const cudaStream_t stream = stream_for(where, device);
    const KernelSource src = flat_source(Flat::SxentGrad, sm.dtype(), labels.dtype());
    run_flat(labels, rows, classes, device, stream,
             [&](int64_t label, int64_t row) { return fused_message(node, label, row, classes, sm.shape()); },
             [&](unsigned long long* err) {
               const void *dp = dy.data(), *sp = sm.data(), *lp = labels.data();
               void* op = outputs[0].data();
               long long ds = dy.strides()[0], rs = sm.strides()[0], cs = sm.strides()[1], ls = labels.strides()[0];
               launch_args(src, "flat_kernel", dim3(flat_grid(rows * classes, device)), dim3(256), device, stream,
                           options_of(plan).fmad, node.describe(), dp, sp, lp, op, err, rows, classes, ds, rs, cs, ls);
             });
  }
};

class CrossentropyGradKernel final : public CudaKernel {
 public:
  std::string name() const override { return "cuda_crossentropy_grad"; }
  Support supports(const graph::Apply& node) const override { return check_node(node); }
  std::vector<KernelSource> sources(const graph::Apply&, const std::vector<Array>& inputs,
                                    const KernelOptions&) const override {
    return {flat_source(Flat::XentGrad, inputs[1].dtype(), inputs[2].dtype())};
  }
  void run(const KernelPlan* plan, const ExecContext& where, const graph::Apply& node, const std::vector<Array>& inputs,
           std::vector<Array>& outputs) const override {
    const Array &gz = inputs[0], &p = inputs[1], &labels = inputs[2];
    long long rows = p.shape()[0], classes = p.shape()[1];
    const int device = device_of(inputs, outputs);
    const cudaStream_t stream = stream_for(where, device);
    const KernelSource src = flat_source(Flat::XentGrad, p.dtype(), labels.dtype());
    run_flat(labels, rows, classes, device, stream,
             [&](int64_t label, int64_t row) { return label_message(node, label, row, classes); },
             [&](unsigned long long* err) {
               const void *gp = gz.data(), *pp = p.data(), *lp = labels.data();
               void* op = outputs[0].data();
               long long gs = gz.strides()[0], rs = p.strides()[0], cs = p.strides()[1], ls = labels.strides()[0];
               launch_args(src, "flat_kernel", dim3(flat_grid(rows * classes, device)), dim3(256), device, stream,
                           options_of(plan).fmad, node.describe(), gp, pp, lp, op, err, rows, classes, gs, rs, cs, ls);
             });
  }
};

class LabelScatterKernel final : public CudaKernel {
 public:
  std::string name() const override { return "cuda_label_scatter"; }
  Support supports(const graph::Apply& node) const override { return check_node(node); }
  std::vector<KernelSource> sources(const graph::Apply&, const std::vector<Array>& inputs,
                                    const KernelOptions&) const override {
    return {flat_source(Flat::Scatter, inputs[1].dtype(), inputs[2].dtype())};
  }
  void run(const KernelPlan* plan, const ExecContext& where, const graph::Apply& node, const std::vector<Array>& inputs,
           std::vector<Array>& outputs) const override {
    const Array &v = inputs[0], &labels = inputs[2];
    Array& out = outputs[0];
    long long rows = out.shape()[0], classes = out.shape()[1];
    const int device = device_of(inputs, outputs);
    const cudaStream_t stream = stream_for(where, device);
    const KernelSource src = flat_source(Flat::Scatter, out.dtype(), labels.dtype());
    run_flat(labels, rows, classes, device, stream,
             [&](int64_t label, int64_t row) { return label_message(node, label, row, classes); },
             [&](unsigned long long* err) {
               const void *vp = v.data(), *lp = labels.data();
               void* op = out.data();
               long long vs = v.strides()[0], ls = labels.strides()[0];
               launch_args(src, "flat_kernel", dim3(flat_grid(rows * classes, device)), dim3(256), device, stream,
                           options_of(plan).fmad, node.describe(), vp, lp, op, err, rows, classes, vs, ls);
             });
  }
};

class OneHotKernel final : public CudaKernel {
 public:
  std::string name() const override { return "cuda_one_hot"; }
  Support supports(const graph::Apply& node) const override { return check_node(node); }
  std::vector<KernelSource> sources(const graph::Apply& node, const std::vector<Array>& inputs,
                                    const KernelOptions&) const override {
    return {flat_source(Flat::OneHot, node.output_raw(0)->type.dtype, inputs[0].dtype())};
  }
  void run(const KernelPlan* plan, const ExecContext& where, const graph::Apply& node, const std::vector<Array>& inputs,
           std::vector<Array>& outputs) const override {
    const Array& indices = inputs[0];
    Array& out = outputs[0];
    long long rows = out.shape()[0], classes = out.shape()[1];
    const int device = device_of(inputs, outputs);
    const cudaStream_t stream = stream_for(where, device);
    const KernelSource src = flat_source(Flat::OneHot, out.dtype(), indices.dtype());
    run_flat(indices, rows, classes, device, stream,
             [&](int64_t index, int64_t pos) { return one_hot_message(node, index, pos, classes, indices.shape()); },
             [&](unsigned long long* err) {
               const void* lp = indices.data();
               void* op = out.data();
               long long ls = indices.strides()[0];
               launch_args(src, "flat_kernel", dim3(flat_grid(rows * classes, device)), dim3(256), device, stream,
                           options_of(plan).fmad, node.describe(), lp, op, err, rows, classes, ls);
             });
  }
};

}  // namespace

void register_nnet_kernels(CudaBackend& b) {
  b.register_kernel(graph::OpKind::Softmax, std::make_unique<SoftmaxKernel>());
  b.register_kernel(graph::OpKind::LogSoftmax, std::make_unique<SoftmaxKernel>());
  b.register_kernel(graph::OpKind::SoftmaxCrossentropy, std::make_unique<SoftmaxCrossentropyKernel>());
  b.register_kernel(graph::OpKind::SoftmaxCrossentropyGrad, std::make_unique<SoftmaxCrossentropyGradKernel>());
  b.register_kernel(graph::OpKind::CategoricalCrossentropy, std::make_unique<CategoricalCrossentropyKernel>());
  b.register_kernel(graph::OpKind::CrossentropyGrad, std::make_unique<CrossentropyGradKernel>());
  b.register_kernel(graph::OpKind::LabelGather, std::make_unique<LabelGatherKernel>());
  b.register_kernel(graph::OpKind::LabelScatter, std::make_unique<LabelScatterKernel>());
  b.register_kernel(graph::OpKind::OneHot, std::make_unique<OneHotKernel>());
}

}  // namespace theon::backends::cuda
