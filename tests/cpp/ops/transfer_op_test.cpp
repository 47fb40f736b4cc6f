// Transfer (inserted by placement): the reference copy and its gradient. Host-to-host here;
// host<->GPU copies are covered by tests/cpp/backends/cuda/runtime_gpu_test.cpp.
#include "ops/transfer.hpp"

#include <theon/theon.hpp>

#include <gtest/gtest.h>

namespace theon {
namespace {

Var transfer(const Var& x, Device to) { return Var(ops::transfer(x.node(), to)); }

TEST(TransferOp, CopiesValuesOfAnyLayout) {
  Var x = tensor::matrix("x", DType::Float64);
  Function f = function({x}, {transfer(x, Device::cpu()) * 1.0}, {.mode = "none"});
  Array a = Array::randn({5, 3}, 1, DType::Float64);
  for (const Array& v : {a, a.transpose().copy().transpose(), a.slice(0, 0, 5, 2), Array::zeros({0, 3}, DType::Float64)})
    EXPECT_TRUE(allclose(f({v})[0], v, 0, 0));
}

TEST(TransferOp, GradientPassesThrough) {
  verify_grad([](const std::vector<Var>& v) { return tensor::tanh(transfer(v[0], Device::cpu())); },
              {Array::randn({3, 4}, 2, DType::Float64)});
}

TEST(TransferOp, IsNeverMergedOrFolded) {
  EXPECT_FALSE(ops::Transfer(Device::cuda(0)).pure());
  EXPECT_EQ(ops::Transfer(Device::cuda(1)).display(), "Transfer{to=cuda1}");
}

}  // namespace
}  // namespace theon
