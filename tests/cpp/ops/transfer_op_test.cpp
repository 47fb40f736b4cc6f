// Transfer (inserted by placement): the reference copy and its gradient. Host-to-host here;
// host<->GPU copies are covered by tests/cpp/backends/cuda/runtime_gpu_test.cpp.
#include "ops/make_op.hpp"
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
  EXPECT_FALSE(ops::Transfer("cuda0").pure());
  EXPECT_EQ(ops::Transfer("cuda1").display(), "Transfer{to=cuda1}");
  EXPECT_EQ(ops::Transfer("dev1").display(), "Transfer{to=dev1}");
}

TEST(TransferOp, TargetsAContextByNameAndPinsItsOutputThere) {
  Var x = tensor::matrix("x", DType::Float64);
  graph::VarPtr y = ops::transfer(x.node(), "dev1");
  EXPECT_EQ(y->type.context, "dev1");
  EXPECT_EQ(y->type.dtype, x.node()->type.dtype);
  EXPECT_EQ(graph::op_as<ops::Transfer>(y->owner->op()).context(), "dev1");
  EXPECT_EQ(ops::transfer(x.node(), Device::cuda(1))->type.context, "cuda1");  // a device's own context
  EXPECT_THROW(ops::transfer(x.node(), ""), ValueError);
  // Rebuilt from its props (to=<name>), as the printer and pickling see it.
  auto op = ops::make_op(graph::OpKind::Transfer, {{"to", "dev1"}});
  EXPECT_EQ(graph::op_as<ops::Transfer>(*op).context(), "dev1");
}

TEST(TransferOp, GradientGoesBackToTheInputsContext) {
  Var x = tensor::matrix("x", DType::Float64);
  x.node()->type.context = "dev0";
  graph::VarPtr y = ops::transfer(x.node(), "dev1");
  Var g = tensor::matrix("g", DType::Float64);
  g.node()->type.context = "dev1";
  const auto grads = y->owner->op().L_op(*y->owner, {g.node()});
  ASSERT_TRUE(grads[0] && grads[0]->owner);
  EXPECT_EQ(graph::op_as<ops::Transfer>(grads[0]->owner->op()).context(), "dev0");
  EXPECT_EQ(grads[0]->type.context, "dev0");
  // An unpinned input: the gradient as it is (placement decides where it is read).
  Var u = tensor::matrix("u", DType::Float64);
  graph::VarPtr z = ops::transfer(u.node(), "dev1");
  EXPECT_EQ(z->owner->op().L_op(*z->owner, {g.node()})[0], g.node());
}

}  // namespace
}  // namespace theon
