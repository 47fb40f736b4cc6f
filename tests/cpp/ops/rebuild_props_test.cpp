// rebuild_props: the props make_op rebuilds an op from, for the kinds whose printed props
// leave part of the op out (Elemwise's output dtype, Reduce's dtype, DimShuffle's input rank):
// what pickling records (theon/serialize.hpp).
#include "ops/dimshuffle.hpp"
#include "ops/elemwise.hpp"
#include "ops/make_op.hpp"
#include "ops/reduce.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace theon {
namespace {

using graph::OpKind;
using OpPtr = std::shared_ptr<const graph::Op>;

TEST(RebuildProps, RebuildsTheKindsWhosePrintedPropsLeaveSomethingOut) {
  const std::vector<OpPtr> ops = {
      std::make_shared<ops::Elemwise>(ops::ScalarOpId::Add, DType::Float32),
      std::make_shared<ops::Elemwise>(ops::ScalarOpId::Lt, DType::Bool),
      std::make_shared<ops::Elemwise>(ops::ScalarOpId::Mul, DType::Int64, 1),
      std::make_shared<ops::Elemwise>(ops::ScalarOpId::Cast, DType::Float16),
      std::make_shared<ops::DimShuffle>(3, std::vector<int>{2, -1, 0}),  // dim 1 dropped
      std::make_shared<ops::DimShuffle>(0, std::vector<int>{-1, -1}),
      std::make_shared<ops::Reduce>(ops::ReduceKind::Sum, std::vector<int>{0, 2}, DType::Int64),
      std::make_shared<ops::Reduce>(ops::ReduceKind::Mean, std::vector<int>{}, DType::Float64),
      std::make_shared<ops::Reduce>(ops::ReduceKind::Count, std::vector<int>{1}, DType::Int32),
  };
  for (const OpPtr& op : ops) {
    const OpPtr again = ops::make_op(op->kind(), ops::rebuild_props(*op));
    EXPECT_TRUE(again->equals(*op)) << op->display();
    EXPECT_EQ(ops::rebuild_props(*again), ops::rebuild_props(*op)) << op->display();
  }
  const OpPtr d_op = ops::make_op(OpKind::DimShuffle, ops::rebuild_props(*ops[4]));  // held: op_as refers into it
  EXPECT_EQ(graph::op_as<ops::DimShuffle>(*d_op).input_ndim(), 3);
  const OpPtr e_op = ops::make_op(OpKind::Elemwise, ops::rebuild_props(*ops[2]));
  const auto& e = graph::op_as<ops::Elemwise>(*e_op);
  EXPECT_EQ(e.out_dtype(), DType::Int64);
  EXPECT_EQ(e.inplace(), 1);
}

TEST(RebuildProps, PrintedPropsAloneStillSayWhatIsMissing) {
  const ops::Elemwise add(ops::ScalarOpId::Add, DType::Float32);
  EXPECT_THROW(ops::make_op(OpKind::Elemwise, add.props()), NotImplementedError);
  const ops::Reduce sum(ops::ReduceKind::Sum, {0}, DType::Float32);
  EXPECT_THROW(ops::make_op(OpKind::Sum, sum.props()), NotImplementedError);
}

TEST(RebuildProps, BadPropsAreValueErrorsNamingTheKind) {
  auto fails = [](OpKind kind, const graph::OpProps& props, const std::string& part) {
    try {
      ops::make_op(kind, props);
      ADD_FAILURE() << "accepted " << part;
    } catch (const ValueError& e) {
      EXPECT_NE(std::string(e.what()).find("make_op(" + std::string(graph::kind_name(kind)) + "): "),
                std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  fails(OpKind::Elemwise, {{"", "nosuch"}, {"out_dtype", "float32"}}, "unknown scalar op 'nosuch'");
  fails(OpKind::Elemwise, {{"", "add"}, {"out_dtype", "float99"}}, "prop 'out_dtype': unknown dtype 'float99'");
  fails(OpKind::Elemwise, {{"", "cast"}, {"", "int3"}}, "unknown dtype 'int3'");
  fails(OpKind::Elemwise, {{"", "exp"}, {"", "inplace(1)"}, {"out_dtype", "float32"}}, "inplace(1)");
  fails(OpKind::Elemwise, {{"", "add"}, {"out_dtype", "float32"}, {"shell", "rm"}}, "unexpected prop 'shell=rm'");
  fails(OpKind::DimShuffle, {{"", "(0,3)"}, {"input_ndim", "2"}}, "'3' is not a new dim");
  fails(OpKind::DimShuffle, {{"", "(0,0)"}, {"input_ndim", "2"}}, "'0' is not a new dim");
  fails(OpKind::DimShuffle, {{"", "(0)"}, {"input_ndim", "-1"}}, "is not a rank");
  fails(OpKind::Sum, {{"axes", "(1, 0)"}, {"dtype", "float32"}}, "increasing order");
  fails(OpKind::Sum, {{"axes", "(0,)"}, {"dtype", "str"}}, "prop 'dtype'");
}

}  // namespace
}  // namespace theon
