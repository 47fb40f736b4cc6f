// Random streams on a GPU (label gpu; on the simulated device in CI): every distribution
// draws the very bits the CPU draws, for sizes that split Philox blocks unevenly, the state
// advances on the device, and Assert's run-time checks fire there too.
#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/gpu_test_support.hpp"

#include <theon/theon.hpp>

#include <gtest/gtest.h>

#include <cstring>

namespace theon {
namespace {

class RandomGpuTest : public testing::Cuda0Test {};

// The outputs of `make(rng)` computed on the CPU and on cuda0 from equal states.
template <class Make>
void expect_same_bits(Make make, const std::string& what) {
  std::vector<std::vector<Array>> results;
  for (const char* device : {"cpu", "cuda0"}) {
    config().device = device;
    RandomStreams rng(2024);
    Function f = function({}, {make(rng)});
    f({});  // the second call: calls = 1 on both
    results.push_back({f({})[0].to_host()});
  }
  const Array& cpu = results[0][0];
  const Array& gpu = results[1][0];
  ASSERT_EQ(cpu.shape(), gpu.shape()) << what;
  ASSERT_EQ(cpu.dtype(), gpu.dtype()) << what;
  EXPECT_EQ(std::memcmp(cpu.contiguous().data(), gpu.contiguous().data(), cpu.nbytes()), 0) << what;
}

TEST_F(RandomGpuTest, EveryDistributionDrawsTheCpuBits) {
  for (DType t : {DType::Float32, DType::Float64}) {
    const std::string d(dtype_name(t));
    expect_same_bits([&](RandomStreams& r) { return r.uniform({1001}, 0.0, 1.0, t); }, "uniform " + d);
    expect_same_bits([&](RandomStreams& r) { return r.uniform({7, 3}, -2.0, 5.0, t); }, "uniform(-2, 5) " + d);
    expect_same_bits([&](RandomStreams& r) { return r.normal({1001}, 0.0, 1.0, t); }, "normal " + d);
    expect_same_bits([&](RandomStreams& r) { return r.normal({5, 3}, 1.0, 2.0, t); }, "normal(1, 2) " + d);
  }
  expect_same_bits([](RandomStreams& r) { return r.random_integers({999}, int64_t{-5}, int64_t{1000}); },
                   "random_integers");
  expect_same_bits([](RandomStreams& r) { return r.binomial({333}, 1, 0.3, DType::Float32); }, "binomial n=1");
  expect_same_bits([](RandomStreams& r) { return r.binomial({33}, 5, 0.6); }, "binomial n=5");
  expect_same_bits([](RandomStreams& r) { return r.permutation(40); }, "permutation");
  expect_same_bits([](RandomStreams& r) { return r.uniform({0}); }, "empty");
}

TEST_F(RandomGpuTest, DrawRunsOnTheDeviceAndTheStateAdvancesThere) {
  RandomStreams rng(5);
  const Var u = rng.uniform({10});
  Function f = function({}, {u});
  const std::vector<double> a = f({})[0].to_host().astype(DType::Float64).to_vector<double>();
  const std::vector<double> b = f({})[0].to_host().astype(DType::Float64).to_vector<double>();
  EXPECT_NE(a, b);
  bool found = false;
  for (const NodeInfo& n : f.nodes())
    if (n.op.find("RandomDraw") != std::string::npos) {
      found = true;
      EXPECT_EQ(n.device, "cuda0") << f.explain();
      EXPECT_EQ(n.kernel, "cuda_philox") << f.explain();
    }
  EXPECT_TRUE(found) << f.explain();
  EXPECT_EQ(rng.state_update_of(u).first.get_value().to_host().to_vector<int64_t>(), (std::vector<int64_t>{5, 2}));
}

TEST_F(RandomGpuTest, RunTimeChecksFireOnTheDevice) {
  RandomStreams rng(1);
  const Var p = tensor::vector("p", DType::Float32);
  Function f = function({p}, {rng.binomial({2}, 1, p)});
  EXPECT_NO_THROW(f({Array::from_vector<float>({0.25f, 1.f})}));
  EXPECT_THROW(f({Array::from_vector<float>({0.25f, 2.f})}), ValueError);
}

}  // namespace
}  // namespace theon
