// OpKind: every kind of the registry (include/theon/ops.def) is answered by its Op class, names
// round-trip, and make_op rebuilds each kind whose props describe it (the others state why).
#include "autodiff/grad_ops.hpp"
#include "ops/argmax.hpp"
#include "ops/blas.hpp"
#include "ops/composite.hpp"
#include "ops/dimshuffle.hpp"
#include "ops/elemwise.hpp"
#include "ops/fused_reduce.hpp"
#include "ops/gemm.hpp"
#include "ops/join.hpp"
#include "ops/make_op.hpp"
#include "ops/matmul.hpp"
#include "ops/nnet.hpp"
#include "ops/nnet_fused.hpp"
#include "ops/reduce.hpp"
#include "ops/registry.hpp"
#include "ops/shape.hpp"
#include "ops/subtensor.hpp"
#include "ops/sum_to.hpp"
#include "ops/transfer.hpp"

#include <theon/error.hpp>

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace theon {
namespace {

using graph::OpKind;
using OpPtr = std::shared_ptr<const graph::Op>;

// One op per Op class configuration, so that together they answer every kind.
std::vector<OpPtr> sample_ops() {
  using namespace ops;
  auto region = std::make_shared<const Composite>(
      std::vector<DType>{DType::Float32, DType::Float32},
      std::vector<CompositeInstr>{{ScalarOpId::Add, DType::Float32, {0, 1}}}, std::vector<int>{2});
  using Part = IndexEntry::Part;
  using PK = IndexEntry::Kind;
  // x[1:$0:2, 3, ::-1, $1, :]
  const IndexSpec spec = {{true, {PK::Const, 1}, {PK::Input, 0}, {PK::Const, 2}},
                          {false, {PK::Const, 3}, {}, {}},
                          {true, {}, {}, {PK::Const, -1}},
                          {false, {PK::Input, 1}, {}, {}},
                          {true, Part{}, Part{}, Part{}}};
  std::vector<OpPtr> all = {
      std::make_shared<Elemwise>(ScalarOpId::Add, DType::Float32),
      std::make_shared<Dot>(),
      std::make_shared<DimShuffle>(2, std::vector<int>{1, 0}),
      std::make_shared<Reshape>(2, true),
      std::make_shared<BroadcastTo>(Shape{2, 3}),
      std::make_shared<Join>(1, true),
      std::make_shared<ShapeOf>(true),
      std::make_shared<Subtensor>(IndexSpec{}),
      std::make_shared<Subtensor>(spec),
      std::make_shared<AdvancedSubtensor1>(1, true),
      std::make_shared<IncSubtensor>(IndexSpec{}, true),
      std::make_shared<IncSubtensor>(spec, false),
      std::make_shared<BroadcastTo>(Shape{4}),
      std::make_shared<BroadcastTo>(Shape{}),
      std::make_shared<AdvancedIncSubtensor1>(0, false),
      std::make_shared<Alloc>(),
      std::make_shared<ArgMax>(false, 1),
      std::make_shared<ArgMax>(true, std::nullopt),
      std::make_shared<BatchedMatmul>(),
      std::make_shared<Softmax>(false, 1),
      std::make_shared<Softmax>(true, 0),
      std::make_shared<CategoricalCrossentropy>(),
      std::make_shared<OneHot>(7, DType::Int32),
      std::make_shared<SumTo>(),
      std::make_shared<Gemm>(0.5, 1.0),
      std::make_shared<Gemm>(2.0, 0.0, GemmEpilogue{GemmAddend::None, GemmAct::Relu}),
      region,
      std::make_shared<FusedReduce>(region, ReduceKind::Sum, std::vector<int>{0}, DType::Float32),
      std::make_shared<Transfer>("cpu"),
      std::make_shared<SoftmaxCrossentropy>(),
      std::make_shared<SoftmaxCrossentropyGrad>(),
      std::make_shared<CrossentropyGrad>(),
      std::make_shared<LabelGather>(),
      std::make_shared<LabelScatter>(),
      std::make_shared<autodiff::GradientBlock>(true),
      std::make_shared<autodiff::GradientBlock>(false),
  };
  for (ReduceKind r : {ReduceKind::Sum, ReduceKind::Prod, ReduceKind::Max, ReduceKind::Min, ReduceKind::Any,
                       ReduceKind::All, ReduceKind::Mean, ReduceKind::Count})
    all.push_back(std::make_shared<Reduce>(r, std::vector<int>{0, 1}, DType::Float64));
  return all;
}

TEST(OpKind, EveryKindIsAnsweredByItsClass) {
  for (const OpPtr& op : sample_ops()) {
    EXPECT_EQ(op->name(), graph::kind_name(op->kind()));
  }
  // Kinds without a sample here (new ones) are answered by their representative nodes in the
  // support matrix (tests/cpp/op_harness/support_matrix_test.cpp), which covers every kind.
}

TEST(OpKind, NamesRoundTrip) {
  for (const graph::OpKindInfo& info : graph::op_kinds) {
    EXPECT_EQ(graph::kind_name(info.kind), info.name);
    EXPECT_EQ(graph::kind_from_name(info.name), info.kind);
  }
  EXPECT_EQ(graph::kind_from_name("NoSuchOp"), std::nullopt);
}

TEST(OpKind, ReduceKindsMapBothWays) {
  for (const graph::OpKindInfo& info : graph::op_kinds) {
    const std::optional<ops::ReduceKind> r = ops::reduce_kind_of(info.kind);
    EXPECT_EQ(r.has_value(), info.op_class == "ops::Reduce") << info.name;
    if (r) {
      EXPECT_EQ(ops::reduce_op_kind(*r), info.kind);
    }
  }
}

TEST(OpKind, UserFamiliesAreUserKinds) {
  // Each builder row's family is a user-facing kind, or Reduce (whose kinds are per reduction).
  for (const ops::OpEntry& e : ops::registered_ops()) {
    if (e.family == "Reduce") continue;
    const std::optional<OpKind> k = graph::kind_from_name(e.family);
    ASSERT_TRUE(k.has_value()) << e.name << ": family " << e.family << " is no kind";
    EXPECT_EQ(graph::op_kind_info(*k).visibility, graph::OpVisibility::User) << e.name;
  }
}

TEST(OpKind, OpAsChecksTheKind) {
  const ops::Join join(0, false);
  EXPECT_EQ(graph::op_as<ops::Join>(join).axis(), 0);
  EXPECT_EQ(graph::op_if<ops::Dot>(join), nullptr);
  EXPECT_THROW(graph::op_as<ops::Dot>(join), InternalError);
}

TEST(MakeOp, RebuildsTheSamplesOrSaysWhyNot) {
  // Every kind's factory is also exercised on its representative node by the support matrix
  // (tests/cpp/op_harness/support_matrix_test.cpp), new kinds included.
  for (const OpPtr& op : sample_ops()) {
    const OpKind kind = op->kind();
    OpPtr again;
    try {
      again = ops::make_op(kind, op->props());
    } catch (const NotImplementedError& e) {
      EXPECT_NE(std::string(e.what()).find("make_op(" + op->name() + "): "), std::string::npos) << e.what();
      continue;
    }
    EXPECT_EQ(again->kind(), kind);
    EXPECT_EQ(again->props(), op->props()) << op->display();
    EXPECT_TRUE(again->equals(*op)) << op->display();
    EXPECT_EQ(again->hash(), op->hash()) << op->display();
  }
}

TEST(MakeOp, RejectsPropsTheKindDoesNotTake) {
  EXPECT_THROW(ops::make_op(OpKind::Join, {{"axis", "x"}}), ValueError);
  EXPECT_THROW(ops::make_op(OpKind::Dot, {{"axis", "1"}}), ValueError);
  EXPECT_THROW(ops::make_op(OpKind::Gemm, {{"alpha", "1"}}), ValueError);
  // No addend: nothing for beta to scale.
  EXPECT_THROW(ops::make_op(OpKind::Gemm, {{"alpha", "1"}, {"beta", "1"}, {"bias", "none"}}), ValueError);
  EXPECT_THROW(ops::make_op(OpKind::BroadcastTo, {{"shape", "(2, x)"}}), ValueError);
  EXPECT_THROW(ops::make_op(OpKind::Subtensor, {{"", "1:$a"}}), ValueError);
  EXPECT_THROW(ops::make_op(OpKind::IncSubtensor, {{"", "1:2"}, {"", "add"}}), ValueError);
  EXPECT_THROW(ops::make_op(OpKind::Composite, {}), NotImplementedError);
}

}  // namespace
}  // namespace theon
