// RandomDraw on the GPU: a grid-stride loop over Philox blocks, each thread computing the
// elements of its blocks with ops/scalar/philox.hpp (pasted: the CPU loop's very functions),
// so the draw is bit-identical to the CPU's for any launch shape. The state stays on the
// device: every thread reads [seed, calls] there and thread 0 writes the next state, so a
// call never waits for the host. The sizes are read on the host (they shape the output).
// The source never contracts a*b+c (fmad_applies = false): the transforms must round as the
// CPU's do whatever fmad the function asks for.
#include "backends/cuda/embedded_headers.hpp"
#include "backends/cuda/cuda_backend.hpp"

#include "ops/assert.hpp"
#include "ops/print.hpp"
#include "ops/random.hpp"

#include <algorithm>

namespace theon::backends::cuda {
namespace {

constexpr const char* kDrawKernel = R"CUDA(
extern "C" __global__ void random_draw(const long long* state, long long* next_state, T* out, long long n,
                                       unsigned int stream, int distribution) {
  const unsigned int seed = (unsigned int)state[0];
  const unsigned long long calls = (unsigned long long)state[1];
  const theon::random::Distribution d = (theon::random::Distribution)distribution;
  const int per = theon::random::per_block(d, sizeof(T) == 8);
  const long long blocks = (n + per - 1) / per;
  const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (first == 0) {
    next_state[0] = state[0];
    next_state[1] = (long long)(calls + 1);
  }
  for (long long b = first; b < blocks; b += (long long)gridDim.x * blockDim.x) {
    const theon::random::Block block = theon::random::draw_block(seed, stream, calls, (unsigned long long)b);
    for (int j = 0; j < per && b * per + j < n; ++j) out[b * per + j] = theon::random::draw_element<T>(d, block, j);
  }
}
)CUDA";

const std::string& random_ops_text() {
  static const std::string text = pasteable(detail::kRandomOpsHeader);
  return text;
}

KernelSource draw_source(DType dtype) {
  KernelSource s;
  s.name = std::string("random_draw_") + dtype_tag(dtype);
  s.code = random_ops_text() + "typedef " + cuda_type(dtype) + " T;\n" + kDrawKernel;
  s.kernels = {"random_draw"};
  s.fmad_applies = false;
  return s;
}

class RandomDrawKernel final : public CudaKernel {
 public:
  std::string name() const override { return "cuda_philox"; }
  Support supports(const graph::Apply&) const override { return {true, "Philox4x32-10, the CPU's bits"}; }
  bool host_input(const graph::Apply&, int input) const override { return input >= 1; }  // the sizes
  std::vector<KernelSource> sources(const graph::Apply& node, const std::vector<Array>&,
                                    const KernelOptions&) const override {
    return {draw_source(graph::op_as<ops::RandomDraw>(node.op()).dtype())};
  }
  void run(const KernelPlan* plan, const ExecContext& where, const graph::Apply& node, const std::vector<Array>& inputs,
           std::vector<Array>& outputs) const override {
    const auto& op = graph::op_as<ops::RandomDraw>(node.op());
    const int device = device_of(inputs, outputs);
    const KernelSource src = draw_source(op.dtype());
    cudaKernel_t k = cached_kernel(src.name, device, options_of(plan).fmad, [&] { return src; }, "random_draw");
    const void* state = inputs[0].data();
    void* next = outputs[1].data();
    void* out = outputs[0].data();
    long long n = outputs[0].size();
    unsigned int stream = op.stream();
    int distribution = static_cast<int>(op.distribution());
    void* args[] = {&state, &next, &out, &n, &stream, &distribution};
    const unsigned block = 128;
    const long long blocks = std::max<long long>(1, (n + 1) / 2);
    launch(k, dim3(grid_for(blocks, block, device)), dim3(block), args, 0, stream_for(where, device), node);
  }
};

// Assert: the conditions come to the host (host_input), x stays where it is (a view).
class AssertKernel final : public CudaKernel {
 public:
  std::string name() const override { return "cuda_view"; }
  Support supports(const graph::Apply&) const override { return {true, "a view; conditions read on the host"}; }
  bool host_input(const graph::Apply&, int input) const override { return input >= 1; }
  std::vector<KernelSource> sources(const graph::Apply&, const std::vector<Array>&, const KernelOptions&) const override {
    return {};
  }
  void run(const KernelPlan*, const ExecContext&, const graph::Apply& node, const std::vector<Array>& inputs,
           std::vector<Array>& outputs) const override {
    node.op().perform(node, inputs, outputs);
  }
};

// Print: x stays where it is (a view); the op copies its value to the host for the printer,
// waiting for the work that made it.
class PrintKernel final : public CudaKernel {
 public:
  std::string name() const override { return "cuda_view"; }
  Support supports(const graph::Apply&) const override { return {true, "a view; the value is copied to the host"}; }
  std::vector<KernelSource> sources(const graph::Apply&, const std::vector<Array>&, const KernelOptions&) const override {
    return {};
  }
  void run(const KernelPlan*, const ExecContext& where, const graph::Apply& node, const std::vector<Array>& inputs,
           std::vector<Array>& outputs) const override {
    // The op reads x on the host through the device's own stream: the context's stream's
    // work (which made x) is waited for first.
    where.stream.synchronize();
    node.op().perform(node, inputs, outputs);
  }
};

}  // namespace

void register_random_kernels(CudaBackend& b) {
  b.register_kernel(graph::OpKind::RandomDraw, std::make_unique<RandomDrawKernel>());
  b.register_kernel(graph::OpKind::Assert, std::make_unique<AssertKernel>());
  b.register_kernel(graph::OpKind::Print, std::make_unique<PrintKernel>());
}

}  // namespace theon::backends::cuda
