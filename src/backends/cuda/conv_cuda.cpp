// Convolution on CUDA devices through cuDNN (ops/conv.hpp: Conv2d, Conv2dGradInputs,
// Conv2dGradWeights): cudnnConvolutionForward / BackwardData / BackwardFilter on NCHW
// tensors. cuDNN is optional (cudnn_api.hpp): without it supports() answers "no cuDNN ..."
// and placement keeps the nodes on the CPU, saying so.
//
// Theano's semantics map one to one: filter_flip is CUDNN_CONVOLUTION (flipped filters),
// otherwise CUDNN_CROSS_CORRELATION; the border mode's pads are symmetric, as cuDNN's;
// cuDNN's output rule is Theano's, checked against cudnnGetConvolution2dForwardOutputDim.
// float32 computes in FP32 with CUDNN_FMA_MATH (no TF32) unless the plan's allow_tf32;
// float64 in double. The algorithm is cudnnGet*Algorithm_v7's first successful choice
// (a deterministic one when the plan's deterministic is set), cached per (kind, dtype,
// shapes, params, math, determinism); its workspace comes from Theon's caching allocator on
// the node's stream. Inputs cuDNN would read through other strides are made contiguous first.
//
// A forward node's epilogue (ops::ConvEpilogue): bias + relu is one
// cudnnConvolutionBiasActivationForward (y = relu(conv(x, w) + alpha2 * z + bias) with
// alpha2 = 0 and z = y, so z is not read; the bias a (1, C, 1, 1) tensor; relu propagating
// NaN like Theon's). cuDNN documents CUDNN_ACTIVATION_IDENTITY there for
// CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM only, so a bias alone (any algorithm) is
// cudnnConvolutionForward then cudnnAddTensor, and a relu alone cudnnConvolutionForward then
// an in-place cudnnActivationForward.
#include "backends/cuda/copy_codegen.hpp"
#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/cuda_runtime.hpp"
#include "backends/cuda/cudnn_api.hpp"
#include "ops/conv.hpp"

#include <theon/error.hpp>

#include <climits>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

namespace theon::backends::cuda {
namespace {

using graph::OpKind;

#ifdef THEON_HAVE_CUDNN_H

#define THEON_CUDNN(api, call) cudnn_check((api).call, #call)

// Descriptors, destroyed with their scope.
struct Descriptors {
  const CudnnApi& api;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnTensorDescriptor_t bias = nullptr;
  cudnnActivationDescriptor_t act = nullptr;
  explicit Descriptors(const CudnnApi& a) : api(a) {}
  ~Descriptors() {
    if (bias) api.cudnnDestroyTensorDescriptor(bias);
    if (act) api.cudnnDestroyActivationDescriptor(act);
    if (x) api.cudnnDestroyTensorDescriptor(x);
    if (y) api.cudnnDestroyTensorDescriptor(y);
    if (w) api.cudnnDestroyFilterDescriptor(w);
    if (conv) api.cudnnDestroyConvolutionDescriptor(conv);
  }
};

int as_int(int64_t v, const std::string& what) {
  if (v > INT_MAX) throw NotImplementedError(what + ": a size of " + std::to_string(v) + " exceeds cuDNN's int range");
  return static_cast<int>(v);
}

void set_tensor(const CudnnApi& api, cudnnTensorDescriptor_t d, cudnnDataType_t t, int n, int c, int h, int w) {
  THEON_CUDNN(api, cudnnSetTensor4dDescriptorEx(d, t, n, c, h, w, c * h * w, h * w, w, 1));
}

struct AlgoChoice {
  int algo = 0;
  size_t workspace = 0;
};

// Picks the first successful algorithm of a cudnnGet*Algorithm_v7 answer (deterministic
// ones only when asked).
template <class Perf>
int pick(const Perf* perf, int count, bool deterministic, const std::string& what) {
  for (int i = 0; i < count; ++i)
    if (perf[i].status == CUDNN_STATUS_SUCCESS && (!deterministic || perf[i].determinism == CUDNN_DETERMINISTIC))
      return static_cast<int>(perf[i].algo);
  throw DeviceError(what + ": cuDNN offers no " + std::string(deterministic ? "deterministic " : "") +
                    "algorithm for this convolution");
}

using AlgoKey = std::tuple<int, int, int, int, int, int, int, int, int, int, int, int, int, int, int, int, int, int, int>;

AlgoChoice choose(const CudnnApi& api, cudnnHandle_t h, OpKind kind, const Descriptors& d, const AlgoKey& key,
                  bool deterministic, const std::string& what) {
  static std::mutex mu;
  static auto* cache = new std::map<AlgoKey, AlgoChoice>();  // never destroyed: kernels may run at exit
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache->find(key);
    if (it != cache->end()) return it->second;
  }
  AlgoChoice c;
  int count = 0;
  if (kind == OpKind::Conv2d) {
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    THEON_CUDNN(api, cudnnGetConvolutionForwardAlgorithm_v7(h, d.x, d.w, d.conv, d.y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                                            &count, perf));
    const auto algo = static_cast<cudnnConvolutionFwdAlgo_t>(pick(perf, count, deterministic, what));
    THEON_CUDNN(api, cudnnGetConvolutionForwardWorkspaceSize(h, d.x, d.w, d.conv, d.y, algo, &c.workspace));
    c.algo = algo;
  } else if (kind == OpKind::Conv2dGradInputs) {
    cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    THEON_CUDNN(api, cudnnGetConvolutionBackwardDataAlgorithm_v7(h, d.w, d.y, d.conv, d.x,
                                                                 CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &count, perf));
    const auto algo = static_cast<cudnnConvolutionBwdDataAlgo_t>(pick(perf, count, deterministic, what));
    THEON_CUDNN(api, cudnnGetConvolutionBackwardDataWorkspaceSize(h, d.w, d.y, d.conv, d.x, algo, &c.workspace));
    c.algo = algo;
  } else {
    cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    THEON_CUDNN(api, cudnnGetConvolutionBackwardFilterAlgorithm_v7(
                         h, d.x, d.y, d.conv, d.w, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &count, perf));
    const auto algo = static_cast<cudnnConvolutionBwdFilterAlgo_t>(pick(perf, count, deterministic, what));
    THEON_CUDNN(api, cudnnGetConvolutionBackwardFilterWorkspaceSize(h, d.x, d.y, d.conv, d.w, algo, &c.workspace));
    c.algo = algo;
  }
  std::lock_guard<std::mutex> lock(mu);
  if (cache->size() >= 1024) cache->clear();  // bounded: shapes are usually few
  return cache->emplace(key, c).first->second;
}

// y = act(y + bias) in place on an (n, m, oh, ow) output: cudnnAddTensor for the bias, then
// cudnnActivationForward (relu, NaN propagated) in place.
void run_epilogue_alone(const CudnnApi& api, cudnnHandle_t handle, const ops::ConvEpilogue& epi, DType t, int n, int m,
                        int oh, int ow, const Array* bias_in, int dev, cudaStream_t stream, Array& out,
                        const std::string& what) {
  Descriptors d(api);
  const cudnnDataType_t dt = t == DType::Float64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  const float one_f = 1.f, zero_f = 0.f;
  const double one_d = 1.0, zero_d = 0.0;
  const void* one = t == DType::Float64 ? static_cast<const void*>(&one_d) : &one_f;
  const void* zero = t == DType::Float64 ? static_cast<const void*>(&zero_d) : &zero_f;
  THEON_CUDNN(api, cudnnCreateTensorDescriptor(&d.y));
  set_tensor(api, d.y, dt, n, m, oh, ow);
  if (epi.bias) {
    const Array bias = contiguous_on_device(*bias_in, dev, stream, what);
    THEON_CUDNN(api, cudnnCreateTensorDescriptor(&d.bias));
    set_tensor(api, d.bias, dt, 1, m, 1, 1);
    THEON_CUDNN(api, cudnnAddTensor(handle, one, d.bias, bias.data(), one, d.y, out.data()));
  }
  if (epi.act == ops::ConvActivation::Relu) {
    THEON_CUDNN(api, cudnnCreateActivationDescriptor(&d.act));
    THEON_CUDNN(api, cudnnSetActivationDescriptor(d.act, CUDNN_ACTIVATION_RELU, CUDNN_PROPAGATE_NAN, 0.0));
    THEON_CUDNN(api, cudnnActivationForward(handle, d.act, one, d.y, out.data(), zero, d.y, out.data()));
  }
}

#endif

class ConvKernel final : public CudaKernel {
 public:
  std::string name() const override { return "cudnn"; }

  Support supports(const graph::Apply& node) const override {
    if (!cudnn_missing().empty()) return {false, cudnn_missing()};
    const DType t = node.output_raw(0)->type.dtype;
    if (t != DType::Float32 && t != DType::Float64)
      return {false, "cuDNN convolutions take float32 or float64, not " + std::string(dtype_name(t))};
    return {true, ""};
  }
  // The shape input of the gradients decides the output's shape: read on the host.
  bool host_input(const graph::Apply& node, int input) const override {
    return input == 2 && node.op().kind() != OpKind::Conv2d;
  }
  // cuDNN itself needs no NVRTC program; operands in other layouts are first copied to
  // contiguous ones by the shared strided copy, whose kernels are listed here.
  std::vector<KernelSource> sources(const graph::Apply& node, const std::vector<Array>& inputs,
                                    const KernelOptions&) const override {
    std::vector<KernelSource> out;
    // The tensors: input and filters (or output gradient), and a forward epilogue's bias.
    const int tensors = node.op().kind() == OpKind::Conv2d ? static_cast<int>(inputs.size()) : 2;
    for (int i = 0; i < tensors && i < static_cast<int>(inputs.size()); ++i) {
      const Array& x = inputs[i];
      if (x.is_contiguous()) continue;
      for (auto& src : copy_sources(x, Array(nullptr, x.dtype(), x.shape(), contiguous_strides(x.shape())))) {
        bool seen = false;
        for (auto& o : out) seen = seen || o.name == src.name;
        if (!seen) out.push_back(std::move(src));
      }
    }
    return out;
  }

  void run(const KernelPlan* plan, const ExecContext& where, const graph::Apply& node, const std::vector<Array>& inputs,
           std::vector<Array>& outputs) const override {
#ifdef THEON_HAVE_CUDNN_H
    const ops::Conv2d& op = *ops::Conv2d::of(node.op());
    const OpKind kind = op.kind();
    const ops::ConvGeometry g = op.geometry(node, inputs);
    Array& out = outputs[0];
    if (out.size() == 0) return;
    const int dev = device_of({inputs[0], inputs[1]}, outputs);
    const cudaStream_t stream = stream_for(where, dev);
    const std::string what = node.describe();
    const ops::ConvEpilogue& epi = op.epilogue();
    // An empty operand (no images, channels, rows or columns; all taps in the padding) makes
    // every sum empty: zeros. cuDNN takes no empty tensors.
    const bool empty_sums =
        g.n == 0 || g.cg() == 0 || g.mg() == 0 || g.h == 0 || g.w == 0 || g.oh == 0 || g.ow == 0;
    if (!epi.any() && empty_sums) {
      THEON_CUDA_CHECK(cudaMemsetAsync(out.data(), 0, out.nbytes(), stream));
      return;
    }
    const CudnnApi* api_p = cudnn_api();
    if (!api_p) throw DeviceError(what + ": " + cudnn_missing());
    const CudnnApi& api = *api_p;
    const KernelOptions& options = options_of(plan);
    const Array a = contiguous_on_device(inputs[0], dev, stream, what);
    const Array b = contiguous_on_device(inputs[1], dev, stream, what);
    const DType t = out.dtype();
    const cudnnDataType_t dt = t == DType::Float64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
    const int n = as_int(g.n, what), c = as_int(g.c, what), h = as_int(g.h, what), w = as_int(g.w, what);
    const int m = as_int(g.m, what), cg = as_int(g.cg(), what), kh = as_int(g.kh, what), kw = as_int(g.kw, what);
    const int oh = as_int(g.oh, what), ow = as_int(g.ow, what);
    if (epi.any() && empty_sums) {
      // y = act(0 + bias) by cuDNN's tensor ops.
      THEON_CUDA_CHECK(cudaMemsetAsync(out.data(), 0, out.nbytes(), stream));
      run_epilogue_alone(api, cudnn_handle(dev, stream), epi, t, n, m, oh, ow, epi.bias ? &inputs[2] : nullptr, dev,
                         stream, out, what);
      return;
    }
    const int ph = as_int(g.ph, what), pw = as_int(g.pw, what), sh = as_int(g.sh, what), sw = as_int(g.sw, what);
    const int dh = as_int(g.dh, what), dw = as_int(g.dw, what), groups = as_int(g.groups, what);
    const cudnnMathType_t math =
        t == DType::Float32 && !options.allow_tf32 ? CUDNN_FMA_MATH : CUDNN_DEFAULT_MATH;

    cudnnHandle_t handle = cudnn_handle(dev, stream);
    Descriptors d(api);
    THEON_CUDNN(api, cudnnCreateTensorDescriptor(&d.x));
    THEON_CUDNN(api, cudnnCreateTensorDescriptor(&d.y));
    THEON_CUDNN(api, cudnnCreateFilterDescriptor(&d.w));
    THEON_CUDNN(api, cudnnCreateConvolutionDescriptor(&d.conv));
    set_tensor(api, d.x, dt, n, c, h, w);
    set_tensor(api, d.y, dt, n, m, oh, ow);
    THEON_CUDNN(api, cudnnSetFilter4dDescriptor(d.w, dt, CUDNN_TENSOR_NCHW, m, cg, kh, kw));
    THEON_CUDNN(api, cudnnSetConvolution2dDescriptor(d.conv, ph, pw, sh, sw, dh, dw,
                                                     g.flip ? CUDNN_CONVOLUTION : CUDNN_CROSS_CORRELATION, dt));
    THEON_CUDNN(api, cudnnSetConvolutionGroupCount(d.conv, groups));
    THEON_CUDNN(api, cudnnSetConvolutionMathType(d.conv, math));
    int dims[4] = {0, 0, 0, 0};
    THEON_CUDNN(api, cudnnGetConvolution2dForwardOutputDim(d.conv, d.x, d.w, &dims[0], &dims[1], &dims[2], &dims[3]));
    if (dims[0] != n || dims[1] != m || dims[2] != oh || dims[3] != ow)
      throw InternalError(what + ": cuDNN's output shape (" + std::to_string(dims[0]) + ", " + std::to_string(dims[1]) +
                          ", " + std::to_string(dims[2]) + ", " + std::to_string(dims[3]) + ") differs from Theano's " +
                          shape_str(Shape{g.n, g.m, g.oh, g.ow}));

    const AlgoKey key{static_cast<int>(kind), static_cast<int>(dt), n, c, h, w, m, kh, kw, ph, pw, sh, sw, dh, dw,
                      groups, g.flip ? 1 : 0, static_cast<int>(math), options.deterministic ? 1 : 0};
    const AlgoChoice choice = choose(api, handle, kind, d, key, options.deterministic, what);
    std::shared_ptr<Buffer> workspace;
    if (choice.workspace > 0) workspace = CudaRuntime::instance().allocate_on(Device::cuda(dev), choice.workspace, stream);
    void* ws = workspace ? workspace->data() : nullptr;
    const float one_f = 1.f, zero_f = 0.f;
    const double one_d = 1.0, zero_d = 0.0;
    const void* one = t == DType::Float64 ? static_cast<const void*>(&one_d) : &one_f;
    const void* zero = t == DType::Float64 ? static_cast<const void*>(&zero_d) : &zero_f;
    if (kind == OpKind::Conv2d && epi.bias && epi.act == ops::ConvActivation::Relu) {
      const Array bias = contiguous_on_device(inputs[2], dev, stream, what);
      THEON_CUDNN(api, cudnnCreateTensorDescriptor(&d.bias));
      set_tensor(api, d.bias, dt, 1, m, 1, 1);
      THEON_CUDNN(api, cudnnCreateActivationDescriptor(&d.act));
      THEON_CUDNN(api, cudnnSetActivationDescriptor(d.act, CUDNN_ACTIVATION_RELU, CUDNN_PROPAGATE_NAN, 0.0));
      // alpha2 = 0: z (= y) is not read.
      THEON_CUDNN(api, cudnnConvolutionBiasActivationForward(
                           handle, one, d.x, a.data(), d.w, b.data(), d.conv,
                           static_cast<cudnnConvolutionFwdAlgo_t>(choice.algo), ws, choice.workspace, zero, d.y,
                           out.data(), d.bias, bias.data(), d.act, d.y, out.data()));
    } else if (kind == OpKind::Conv2d) {
      THEON_CUDNN(api, cudnnConvolutionForward(handle, one, d.x, a.data(), d.w, b.data(), d.conv,
                                               static_cast<cudnnConvolutionFwdAlgo_t>(choice.algo), ws,
                                               choice.workspace, zero, d.y, out.data()));
      if (epi.any())
        run_epilogue_alone(api, handle, epi, t, n, m, oh, ow, epi.bias ? &inputs[2] : nullptr, dev, stream, out, what);
    } else if (kind == OpKind::Conv2dGradInputs) {
      THEON_CUDNN(api, cudnnConvolutionBackwardData(handle, one, d.w, a.data(), d.y, b.data(), d.conv,
                                                    static_cast<cudnnConvolutionBwdDataAlgo_t>(choice.algo), ws,
                                                    choice.workspace, zero, d.x, out.data()));
    } else {
      THEON_CUDNN(api, cudnnConvolutionBackwardFilter(handle, one, d.x, a.data(), d.y, b.data(), d.conv,
                                                      static_cast<cudnnConvolutionBwdFilterAlgo_t>(choice.algo), ws,
                                                      choice.workspace, zero, d.w, out.data()));
    }
    // The workspace goes back to the stream-ordered allocator here: reused only by later
    // work on this stream.
#else
    (void)plan, (void)where, (void)inputs, (void)outputs;
    throw DeviceError(node.describe() + ": " + cudnn_missing());
#endif
  }
};

}  // namespace

void register_conv_kernels(CudaBackend& backend) {
  for (OpKind k : {OpKind::Conv2d, OpKind::Conv2dGradInputs, OpKind::Conv2dGradWeights})
    backend.register_kernel(k, std::make_unique<ConvKernel>());
}

}  // namespace theon::backends::cuda
