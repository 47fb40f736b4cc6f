// Contexts on GPUs: the seed's program (issue 28) with its two contexts on two devices and on
// one device gives the one-context results. These tests need CUDA devices: on the simulated
// device they run under the gpu-sim label's orderings (SIM_STREAMS=deferred: a missing wait
// shows as stale data; random: a missing cross-stream dependency shows), with SIM_DEVICES=2.
// Without a device they skip (THEON_GPU_SIM=1 turns a skip into a failure).
#include "exec/function_impl.hpp"
#include "ops/transfer.hpp"

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

}  // namespace
}  // namespace theon
