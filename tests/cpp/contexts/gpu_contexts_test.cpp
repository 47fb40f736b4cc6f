// Contexts on GPUs: the seed's program (issue 28) with its two contexts on two devices and on
// one device gives the one-context results. These tests need CUDA devices: on the simulated
// device they run under the gpu-sim label's orderings (SIM_STREAMS=deferred: a missing wait
// shows as stale data; random: a missing cross-stream dependency shows), with SIM_DEVICES=2.
// Without a device they skip (THEON_GPU_SIM=1 turns a skip into a failure).
#include "backends/cuda/sim_counters.hpp"
#include "exec/function_impl.hpp"
#include "ops/transfer.hpp"
#include "runtime/streams.hpp"

#include <theon/theon.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>

namespace theon {
namespace {

bool have_gpus(int n) {
  const CudaStatus s = cuda_status();
  if (s.ok && s.device_count >= n) return true;
  if (std::getenv("THEON_GPU_SIM")) ADD_FAILURE() << "THEON_GPU_SIM=1 but " << s.device_count << " device(s): " << s.reason;
  return false;
}

struct ContextsFlag {
  std::string saved = config().contexts;
  explicit ContextsFlag(const std::string& map) { config().contexts = map; }
  ~ContextsFlag() { config().contexts = saved; }
};

// The seed's program (two products, one per context), plus a value moved from dev1 to dev0
// and back (transfers between the contexts, and their ordering).
std::vector<Array> seed_program(const std::vector<Array>& values, bool pin) {
  std::vector<SharedVar> v;
  const char* context[] = {"dev0", "dev0", "dev1", "dev1"};
  for (size_t i = 0; i < values.size(); ++i) {
    v.push_back(shared(values[i], "v" + std::to_string(i)));
    if (pin) v.back().node()->type.context = context[i];
  }
  Var d0 = tensor::dot(v[0], v[1]), d1 = tensor::dot(v[2], v[3]);
  Var moved = pin ? Var(ops::transfer(d1.node(), "dev0")) : d1;
  Var back = pin ? Var(ops::transfer(tensor::tanh(d0 + moved).node(), "dev1")) : tensor::tanh(d0 + moved);
  Function f = function({}, {d0, d1, back * 2.0f + d1});
  if (pin) {  // each product runs on its context's device
    const auto program = f.impl()->program_for({}).program;
    std::vector<std::string> dots;
    for (auto& t : program->thunks)
      if (t.node->op().kind() == graph::OpKind::Dot || t.node->op().kind() == graph::OpKind::Gemm)
        dots.push_back(t.exec.context.name + "@" + t.dev.str());
    const std::string map = config().contexts;
    const std::string dev1 = map.find("dev1->cuda1") != std::string::npos ? "cuda1" : "cuda0";
    EXPECT_EQ(dots, (std::vector<std::string>{"dev0@cuda0", "dev1@" + dev1})) << f.explain();
    // A copy between devices runs on its context's copy stream (its readers wait for it by an
    // event); a handover between two contexts of one device copies nothing.
    int copies = 0, handovers = 0;
    for (auto& t : program->thunks) {
      if (!t.is_transfer || !t.dev.is_cuda()) continue;
      const bool copy = t.pass_through.empty() || t.pass_through[0] < 0;
      (copy ? copies : handovers)++;
      EXPECT_EQ(t.on_copy_stream, copy) << t.op;
      EXPECT_EQ(t.exec.stream.kind, copy ? runtime::StreamKind::Copy : runtime::StreamKind::Compute) << t.op;
      EXPECT_EQ(t.exec.stream.handle, copy ? runtime::streams_of(t.exec.context).copy.handle
                                           : runtime::streams_of(t.exec.context).compute.handle);
    }
    EXPECT_EQ(copies, dev1 == "cuda1" ? 2 : 0) << f.explain();
    EXPECT_EQ(handovers, dev1 == "cuda1" ? 0 : 2) << f.explain();
    if (const char* show = std::getenv("THEON_SHOW_EXPLAIN"); show && *show == '1') std::cerr << f.explain();
  }
  std::vector<Array> out;
  for (int call = 0; call < 2; ++call) out = f({});  // a warm call too
  return out;
}

void expect_single_context_results(const std::string& map) {
  std::vector<Array> values;
  for (int i = 0; i < 4; ++i) values.push_back(Array::randn({64, 48 + 16 * (i % 2)}, 30 + i));
  values[1] = Array::randn({64, 64}, 31);
  values[0] = Array::randn({64, 64}, 30);
  values[2] = Array::randn({64, 64}, 32);
  values[3] = Array::randn({64, 64}, 33);
  const std::vector<Array> one = seed_program(values, false);  // device=cpu, one context
  ContextsFlag flag(map);
  const std::vector<Array> two = seed_program(values, true);
  ASSERT_EQ(one.size(), two.size());
  for (size_t k = 0; k < one.size(); ++k) {
    EXPECT_TRUE(two[k].on_host()) << "output " << k;
    EXPECT_TRUE(allclose(two[k], one[k], 1e-4, 1e-4)) << map << ": output " << k;
  }
}

TEST(ContextGpu, TwoGpusGiveTheSingleContextResults) {
  if (!have_gpus(2)) GTEST_SKIP() << "needs two CUDA devices";
  expect_single_context_results("dev0->cuda0;dev1->cuda1");
}

TEST(ContextGpu, TwoContextsOnOneGpuGiveTheSingleContextResults) {
  if (!have_gpus(1)) GTEST_SKIP() << "needs a CUDA device";
  expect_single_context_results("dev0->cuda0;dev1->cuda0");
}

// What one call of the seed's program (its two products, outputs to the host) asks of the
// device: every context's work is enqueued before the host's first wait, and the host waits
// once per device holding outputs (the simulator's counters; under SIM_STREAMS=deferred work
// runs only when the host waits, so the work pending then is the work issued before it).
void expect_one_wait_per_device(const std::string& map, const std::vector<Device>& devices) {
  ContextsFlag flag(map);
  const bool saved_print = config().print_active_device;
  config().print_active_device = false;
  SharedVar v01 = shared(Array::randn({64, 64}, 40), "v01", {.target = "dev0"});
  SharedVar v02 = shared(Array::randn({64, 64}, 41), "v02", {.target = "dev0"});
  SharedVar v11 = shared(Array::randn({64, 64}, 42), "v11", {.target = "dev1"});
  SharedVar v12 = shared(Array::randn({64, 64}, 43), "v12", {.target = "dev1"});
  Function f = function({}, {tensor::dot(v01, v02), tensor::dot(v11, v12)});
  f({});  // compiles, and fills the caches
  for (Device d : devices) synchronize(d);
  ::theon::testing::SimCounters sim;
  if (!sim.available()) {
    config().print_active_device = saved_print;
    GTEST_SKIP() << "needs the simulated device's counters";
  }
  std::vector<int64_t> waits_before;
  for (Device d : devices) waits_before.push_back(memory_stats(d).host_waits);
  sim.reset();
  std::vector<Array> out = f({});
  const theon_gpu_sim_counters c = sim.read();
  EXPECT_EQ(c.host_syncs, devices.size()) << map << ": host synchronisations in one call";
  EXPECT_GE(c.operations, 2u) << map << ": device work issued (two products: cuBLAS calls, not launches)";
  for (size_t k = 0; k < devices.size(); ++k)
    EXPECT_EQ(memory_stats(devices[k]).host_waits - waits_before[k], 1) << map << ": host waits on " << devices[k].str();
  if (::theon::testing::sim_streams_are("deferred") && c.host_syncs > 0) {
    const runtime::Context dev0 = runtime::resolve_context("dev0"), dev1 = runtime::resolve_context("dev1");
    EXPECT_GE(sim.pending_at(0, runtime::streams_of(dev0).compute.handle), 1u) << map << ": dev0's product ran before the first wait";
    EXPECT_GE(sim.pending_at(0, runtime::streams_of(dev1).compute.handle), 1u) << map << ": dev1's product ran before the first wait";
  }
  config().print_active_device = saved_print;
}

// Two cpu contexts make the call run its lanes on worker threads, the GPU contexts' lanes
// too (they enqueue): each lane's kernels must work on their device from a thread whose current
// device is whatever it was, and read the cpu contexts' values after they were written.
TEST(ContextGpu, GpuContextsBesideTwoCpuContextsRunOnWorkerLanes) {
  if (!have_gpus(2)) GTEST_SKIP() << "needs two CUDA devices";
  ContextsFlag flag("c0->cpu;c1->cpu;g0->cuda0;g1->cuda1");
  const bool saved_print = config().print_active_device;
  config().print_active_device = false;
  const Array a = Array::randn({32, 32}, 50), b = Array::randn({32, 32}, 51);
  SharedVar ca = shared(a, "ca", {.target = "c0"}), cb = shared(b, "cb", {.target = "c1"});
  SharedVar ga = shared(a, "ga", {.target = "g1"}), gb = shared(b, "gb", {.target = "g0"});
  Var on_c0 = tensor::dot(ca, ca) + 1.0f;                        // c0
  Var on_c1 = tensor::tanh(tensor::dot(cb, cb));                 // c1
  Var on_g1 = tensor::dot(ga, transfer(on_c0, "g1"));            // g1 (cuda1), after c0
  Var on_g0 = tensor::dot(gb, transfer(on_c1, "g0")) * 2.0f;     // g0 (cuda0), after c1
  Var joined = transfer(on_g1, "c1") + transfer(on_g0, "c1");    // c1, after both GPUs
  Function f = function({}, {joined, on_g1});
  std::vector<Array> out;
  for (int call = 0; call < 3; ++call) out = f({});
  const auto program = f.impl()->program_for({}).program;
  EXPECT_EQ(program->cpu_contexts, 2) << f.explain();
  // The same values computed on the host alone.
  Function ref = function({}, {tensor::dot(constant(a), tensor::dot(constant(a), constant(a)) + 1.0f) +
                                   tensor::dot(constant(b), tensor::tanh(tensor::dot(constant(b), constant(b)))) * 2.0f});
  EXPECT_TRUE(allclose(out[0], ref({})[0], 1e-3, 1e-3)) << f.explain();
  config().print_active_device = saved_print;
}

TEST(ContextGpu, TwoGpusEnqueueBothContextsBeforeTheHostWaitsOncePerDevice) {
  if (!have_gpus(2)) GTEST_SKIP() << "needs two CUDA devices";
  expect_one_wait_per_device("dev0->cuda0;dev1->cuda1", {Device::cuda(0), Device::cuda(1)});
}

TEST(ContextGpu, TwoContextsOnOneGpuEnqueueBothBeforeTheHostWaitsOnce) {
  if (!have_gpus(1)) GTEST_SKIP() << "needs a CUDA device";
  expect_one_wait_per_device("dev0->cuda0;dev1->cuda0", {Device::cuda(0)});
}

}  // namespace
}  // namespace theon
