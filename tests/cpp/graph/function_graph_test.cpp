// FunctionGraph: cloning (the user's graph is never changed), givens, toposort, replace.
#include <theon/theon.hpp>

#include "graph/function_graph.hpp"
#include "graph/print.hpp"
#include "ops/elemwise.hpp"

#include <gtest/gtest.h>

namespace theon {
namespace {

using graph::FunctionGraph;

TEST(FunctionGraph, ClonesWithoutTouchingTheUserGraph) {
  Var x = tensor::matrix("x");
  Var y = tensor::exp(x) + 1.0;
  FunctionGraph fg({x.node()}, {y.node()});
  ASSERT_EQ(fg.nodes().size(), 2u);
  EXPECT_NE(fg.inputs()[0].get(), x.node().get());
  EXPECT_EQ(fg.inputs()[0]->name, "x");
  EXPECT_NE(fg.outputs()[0].get(), y.node().get());
  // replace on the clone leaves the user's graph alone
  Var z = tensor::log(tensor::matrix("other"));
  auto clone_exp = fg.nodes()[0]->output(0);
  auto fresh = ops::elemwise(ops::ScalarOpId::Log, {fg.inputs()[0]});
  fg.replace(clone_exp, fresh, "test");
  EXPECT_NE(graph::debugprint(fg.outputs()).find("Elemwise{log}"), std::string::npos);
  EXPECT_NE(debugprint(y).find("Elemwise{exp}"), std::string::npos);
  fg.verify();
}

TEST(FunctionGraph, MissingInputIsNamed) {
  Var x = tensor::matrix("x"), w = tensor::matrix("w");
  try {
    FunctionGraph fg({x.node()}, {tensor::dot(x, w).node()});
    FAIL();
  } catch (const TypeError& e) {
    EXPECT_NE(std::string(e.what()).find("needs input 'w'"), std::string::npos) << e.what();
  }
}

TEST(FunctionGraph, GivensReplaceVariablesAndCutTheGraphAbove) {
  Var x = tensor::vector("x"), unused_input = tensor::vector("u");
  Var mid = tensor::exp(unused_input);  // replaced by a given: its inputs need not be provided
  Var y = mid + x;
  Var repl = x * 2.0;
  FunctionGraph fg({x.node()}, {y.node()}, {{mid.node(), repl.node()}});
  std::string p = graph::debugprint(fg.outputs());
  EXPECT_EQ(p.find("exp"), std::string::npos) << p;
  EXPECT_NE(p.find("mul"), std::string::npos) << p;
}

TEST(FunctionGraph, ReplaceMustKeepTheType) {
  Var x = tensor::fmatrix("x");
  Var y = tensor::exp(x);
  FunctionGraph fg({x.node()}, {y.node()});
  auto wrong = ops::cast(fg.inputs()[0], DType::Float64);
  EXPECT_THROW(fg.replace(fg.outputs()[0], wrong, "bad rewrite"), InternalError);
}

TEST(FunctionGraph, DeepChainsDoNotOverflowTheStack) {
  Var x = tensor::vector("x");
  Var y = x;
  for (int i = 0; i < 20000; ++i) y = y + 1.0;
  FunctionGraph fg({x.node()}, {y.node()});
  EXPECT_EQ(fg.nodes().size(), 20000u);
  EXPECT_EQ(graph::toposort(fg.outputs()).size(), 20000u);
  Function f = function({x}, {y});
  EXPECT_EQ(f({Array::from_vector<float>({1})})[0].to_vector<float>()[0], 20001.0f);
  // Freeing a very long chain must not recurse per node.
  Var z = x;
  for (int i = 0; i < 300000; ++i) z = tensor::exp(z);
  z = Var();
}

TEST(Printing, DebugprintShowsOpsNamesTypesAndSharedIds) {
  Var x = tensor::matrix("x");
  SharedVar w = shared(Array::zeros({3, 2}, DType::Float32), "w");
  Var h = tensor::dot(x, w);
  Var y = h * h;
  y.set_name("y");
  std::string p = debugprint(y);
  EXPECT_NE(p.find("Elemwise{mul} [id A] 'y'  float32 (?, ?)"), std::string::npos) << p;
  EXPECT_NE(p.find(" |Dot [id B]"), std::string::npos) << p;
  EXPECT_NE(p.find(" | |x [id C]  float32 (?, ?)"), std::string::npos) << p;
  EXPECT_NE(p.find(" | |w [id D] (shared)"), std::string::npos) << p;
  EXPECT_NE(p.find(" |Dot [id B]  float32 (?, ?)\n"), p.rfind(" |Dot [id B]")) << "second use is a back-reference";
}

TEST(Printing, ConstantsAndStaticShapes) {
  Var x = tensor::tensor(DType::Float32, {1, -1}, "row");
  std::string p = debugprint(x * 2.5);
  EXPECT_NE(p.find("TensorConstant{2.5}"), std::string::npos) << p;
  EXPECT_NE(p.find("float32 (1, ?)"), std::string::npos) << p;
}

}  // namespace
}  // namespace theon
