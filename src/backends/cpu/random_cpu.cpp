// RandomDraw on the CPU: element i of the draw from Philox block i / per_block
// (ops/scalar/philox.hpp, the functions the CUDA kernel runs), so the thread count and the
// chunking change nothing. The next state is [seed, calls + 1]. Also Assert, which random
// streams use to check parameters known only at run time, and Print (theano.printing.Print).
#include "backends/cpu/cpu_kernels.hpp"
#include "backends/cpu/parallel.hpp"

#include "ops/assert.hpp"
#include "ops/print.hpp"
#include "ops/random.hpp"

namespace theon::backends::cpu {
namespace {

template <class T>
void draw(const ops::RandomDraw& op, uint32_t seed, uint64_t calls, Array& out) {
  T* p = out.data<T>();
  const int64_t n = out.size();
  const int per = random::per_block(op.distribution(), std::is_same_v<T, double>);
  const int64_t blocks = (n + per - 1) / per;
  const random::Distribution d = op.distribution();
  const uint32_t stream = op.stream();
  const int threads = parallel_threads(n);  // parallel.hpp
  (void)threads;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
  for (int64_t b = 0; b < blocks; ++b) {
    const random::Block block = random::draw_block(seed, stream, calls, static_cast<uint64_t>(b));
    for (int j = 0; j < per && b * per + j < n; ++j) p[b * per + j] = random::draw_element<T>(d, block, j);
  }
}

void random_draw_loop(const graph::Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) {
  const auto& op = graph::op_as<ops::RandomDraw>(node.op());
  const std::vector<int64_t> state = inputs[0].to_vector<int64_t>();
  const auto seed = static_cast<uint32_t>(state[0]);
  const auto calls = static_cast<uint64_t>(state[1]);
  if (op.dtype() == DType::Float64) draw<double>(op, seed, calls, outputs[0]);
  else draw<float>(op, seed, calls, outputs[0]);
  int64_t* next = outputs[1].data<int64_t>();
  next[0] = state[0];
  next[1] = static_cast<int64_t>(calls + 1);
}

// Assert (the run-time checks of random parameters) and Print: views, made by the op itself.
void perform_loop(const graph::Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) {
  node.op().perform(node, inputs, outputs);
}

}  // namespace

void register_random_loops(CpuBackend& backend) {
  register_loop(backend, graph::OpKind::RandomDraw, random_draw_loop);
  register_loop(backend, graph::OpKind::Assert, perform_loop);
  register_loop(backend, graph::OpKind::Print, perform_loop);
}

}  // namespace theon::backends::cpu
