// conv_epilogue: conv2d + per-channel bias (+ relu) folds into the Conv2d node's epilogue
// where the intermediate has no other client, in forward and training graphs; the folded
// graph computes what the unoptimized one does; the epilogue's props, checks and gradient.
#include <theon/theon.hpp>

#include "graph/function_graph.hpp"
#include "graph/print.hpp"
#include "ops/conv.hpp"
#include "ops/make_op.hpp"
#include "rewrite/passes/passes.hpp"

#include "text_count.hpp"

#include <gtest/gtest.h>

namespace theon {
namespace {

using theon::testing::count;

struct Net {
  Var x = tensor::tensor4("x", DType::Float64), w = tensor::tensor4("w", DType::Float64);
  Var b = tensor::vector("b", DType::Float64);
};

std::vector<Array> values(uint64_t seed = 1, int64_t m = 3) {
  return {Array::randn({2, 2, 6, 5}, seed).astype(DType::Float64),
          Array::randn({m, 2, 3, 2}, seed + 1).astype(DType::Float64),
          Array::randn({m}, seed + 2).astype(DType::Float64)};
}

// Compiles in fast_run and in none, returns the fast_run printout, checks equal values.
std::string compile_and_compare(const std::vector<Var>& ins, const std::vector<Var>& outs,
                                const std::vector<Array>& vals) {
  Function opt = function(ins, outs, {.mode = "fast_run", .on_unused_input = "ignore"});
  Function ref = function(ins, outs, {.mode = "none", .on_unused_input = "ignore"});
  const std::vector<Array> a = opt(vals), r = ref(vals);
  EXPECT_EQ(a.size(), r.size());
  for (size_t i = 0; i < a.size() && i < r.size(); ++i)
    EXPECT_TRUE(allclose(a[i], r[i], 1e-12, 1e-12)) << "output " << i << "\nfast_run:\n" << a[i] << "\nnone:\n" << r[i];
  return debugprint(opt);
}

TEST(ConvEpilogue, BiasAndReluFoldIntoTheConvolution) {
  Net n;
  Var y = tensor::relu(tensor::conv2d(n.x, n.w) + n.b.dimshuffle({-1, 0, -1, -1}));
  const std::string p = compile_and_compare({n.x, n.w, n.b}, {y}, values());
  EXPECT_EQ(count(p, "epilogue=bias+relu"), 1u) << p;
  EXPECT_EQ(count(p, "Conv2d"), 1u) << p;
  EXPECT_EQ(count(p, "Elemwise"), 0u) << p;  // no add, no relu left (nor a Composite of them)
  EXPECT_EQ(count(p, "Composite"), 0u) << p;
}

TEST(ConvEpilogue, BiasForms) {
  Net n;
  Var c = tensor::conv2d(n.x, n.w);
  // b + conv (the other order), a reshape to (1, C, 1, 1), and maximum(., 0) for relu.
  for (const Var& y : {n.b.dimshuffle({-1, 0, -1, -1}) + c, c + tensor::reshape(n.b, std::vector<int64_t>{1, -1, 1, 1}),
                       tensor::maximum(c + n.b.dimshuffle({-1, 0, -1, -1}), constant(Array::scalar(0.0, DType::Float64)))}) {
    const std::string p = compile_and_compare({n.x, n.w, n.b}, {y}, values());
    EXPECT_EQ(count(p, "epilogue=bias"), 1u) << p;
  }
  const std::string p = compile_and_compare({n.x, n.w, n.b}, {tensor::relu(c)}, values());
  EXPECT_EQ(count(p, "epilogue=relu"), 1u) << p;
}

TEST(ConvEpilogue, NotFoldedWhenTheIntermediateHasAnotherClient) {
  Net n;
  Var c = tensor::conv2d(n.x, n.w);
  Var z = c + n.b.dimshuffle({-1, 0, -1, -1});
  // z is an output too: the bias folds (c has one client), the relu does not.
  std::string p = compile_and_compare({n.x, n.w, n.b}, {tensor::relu(z), z}, values());
  EXPECT_EQ(count(p, "epilogue=bias+relu"), 0u) << p;
  EXPECT_GE(count(p, "epilogue=bias}"), 1u) << p;
  // c is an output too: nothing folds.
  p = compile_and_compare({n.x, n.w, n.b}, {tensor::relu(z), c}, values());
  EXPECT_EQ(count(p, "epilogue="), 0u) << p;
  // A bias whose channel dim is a broadcast (static 1) is not a per-channel bias.
  Var b1 = tensor::vector("b1", DType::Float64);
  p = compile_and_compare({n.x, n.w, b1}, {c + tensor::reshape(b1, std::vector<int64_t>{1, 1, 1, 1})},
                          {values()[0], values()[1], Array::randn({1}, 9).astype(DType::Float64)});
  EXPECT_EQ(count(p, "epilogue="), 0u) << p;
}

TEST(ConvEpilogue, FoldsInTheTrainingStep) {
  // relu's gradient masks with relu's input; the pass makes it read relu's output, so the
  // forward conv + bias + relu is one node in the training graph as well.
  Net n;
  Var y = tensor::relu(tensor::conv2d(n.x, n.w) + n.b.dimshuffle({-1, 0, -1, -1}));
  Var cost = tensor::sum(y * y);
  std::vector<Var> g = grad(cost, {n.w, n.b, n.x});
  const std::string p = compile_and_compare({n.x, n.w, n.b}, {cost, g[0], g[1], g[2]}, values(4));
  // Every print of a forward Conv2d (one node, printed where used) carries the epilogue, and
  // no relu is left outside it.
  EXPECT_GE(count(p, "epilogue=bias+relu"), 1u) << p;
  EXPECT_EQ(count(p, "Conv2d{"), count(p, "epilogue=bias+relu")) << p;
  EXPECT_EQ(count(p, "relu"), count(p, "epilogue=bias+relu")) << p;
}

TEST(ConvEpilogue, GradientsOfTheFoldedGraph) {
  verify_grad(
      [](const std::vector<Var>& v) {
        return tensor::relu(tensor::conv2d(v[0], v[1]) + v[2].dimshuffle({-1, 0, -1, -1}));
      },
      values(7));
  // The fused op's own L_op (a graph built with the epilogue already in it).
  verify_grad(
      [](const std::vector<Var>& v) {
        return Var(ops::conv2d(v[0].node(), v[1].node(), ops::ConvParams{}, v[2].node(), ops::ConvActivation::Relu));
      },
      values(8));
}

TEST(ConvEpilogue, PropsChecksAndErrors) {
  const ops::ConvParams p;
  const ops::Conv2d plain(graph::OpKind::Conv2d, p), fused(graph::OpKind::Conv2d, p, {true, ops::ConvActivation::Relu}),
      bias_only(graph::OpKind::Conv2d, p, {true, ops::ConvActivation::None});
  EXPECT_FALSE(plain.equals(fused));
  EXPECT_FALSE(bias_only.equals(fused));
  EXPECT_TRUE(fused.equals(ops::Conv2d(graph::OpKind::Conv2d, p, {true, ops::ConvActivation::Relu})));
  EXPECT_NE(plain.hash(), fused.hash());
  EXPECT_NE(fused.display().find("epilogue=bias+relu"), std::string::npos) << fused.display();
  EXPECT_EQ(plain.display().find("epilogue"), std::string::npos) << plain.display();
  // The props round-trip (serialization), and a bad epilogue or one on a gradient kind is refused.
  EXPECT_TRUE(ops::make_op(graph::OpKind::Conv2d, fused.props())->equals(fused));
  EXPECT_TRUE(ops::make_op(graph::OpKind::Conv2d, bias_only.props())->equals(bias_only));
  graph::OpProps bad_props = plain.props();
  bad_props.emplace_back("epilogue", "tanh");
  EXPECT_THROW(ops::make_op(graph::OpKind::Conv2d, bad_props), ValueError);
  EXPECT_THROW(ops::make_op(graph::OpKind::Conv2dGradInputs, fused.props()), ValueError);
  // Static checks name the bias and the sizes.
  Var x = tensor::tensor4("x"), b2 = tensor::vector("b2");
  Var w = constant(Array::zeros({3, 2, 2, 2}, DType::Float32), "w");
  Var bad = constant(Array::zeros({4}, DType::Float32), "bias4");
  try {
    ops::conv2d(x.node(), w.node(), p, bad.node(), ops::ConvActivation::None);
    ADD_FAILURE() << "no error";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("bias4"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("4 entries"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ops::conv2d(x.node(), w.node(), p, tensor::matrix("bm").node(), ops::ConvActivation::None), TypeError);
  // Run-time: a bias of the wrong length.
  Var wv = tensor::tensor4("wv");
  Function f = function({x, wv, b2}, {Var(ops::conv2d(x.node(), wv.node(), p, b2.node(), ops::ConvActivation::Relu))});
  try {
    f({Array::zeros({1, 2, 4, 4}, DType::Float32), Array::zeros({3, 2, 2, 2}, DType::Float32),
       Array::zeros({2}, DType::Float32)});
    ADD_FAILURE() << "no error";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("b2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("3 output channels"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace theon
