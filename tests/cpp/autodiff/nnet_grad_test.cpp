// Gradients of matmul, softmax, log_softmax, categorical_crossentropy, argmax and one_hot:
// finite differences (first and second derivatives), exact values, the softmax +
// crossentropy gradient where a probability underflows, and the integer ops as
// disconnected.
#include <theon/theon.hpp>

#include "graph/node.hpp"
#include "graph/op.hpp"
#include "ops/nnet_fused.hpp"

#include "grad_cases.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace theon {
namespace {

using namespace theon::testing;

Array pos(const Shape& s, uint64_t seed) {  // values in (0.5, 1.5): safe for log and division
  std::vector<double> v = Array::rand(s, seed, DType::Float64).to_vector<double>();
  for (double& x : v) x += 0.5;
  return Array::from_vector<double>(v, s);
}
Var labels(const std::vector<int64_t>& v, DType dtype = DType::Int64) {
  return constant(Array::from_vector<int64_t>(v).astype(dtype), "labels");
}
Var onehot_matrix(const std::vector<int64_t>& v, int64_t n) {
  std::vector<double> m(v.size() * n, 0.0);
  for (size_t i = 0; i < v.size(); ++i) m[i * n + v[i]] = 1.0;
  return constant(Array::from_vector<double>(m, Shape{static_cast<int64_t>(v.size()), n}), "targets");
}

// The fused ops that specialize makes, built directly (output 0: loss, 1: softmax).
Var fused(const Var& x, const Var& t, int output) { return Var(ops::softmax_crossentropy(x.node(), t.node())[output]); }
Var fused_grad(const Var& dy, const Var& sm, const Var& t) {
  return Var(ops::softmax_crossentropy_grad(dy.node(), sm.node(), t.node()));
}

class NnetGradTest : public ::testing::TestWithParam<GradCase> {};

TEST_P(NnetGradTest, MatchesFiniteDifferences) { expect_matches_finite_differences(GetParam()); }

std::vector<GradCase> cases() {
  using namespace tensor;
  auto u = [](auto f) { return [f](const std::vector<Var>& v) { return f(v[0]); }; };
  auto b = [](auto f) { return [f](const std::vector<Var>& v) { return f(v[0], v[1]); }; };
  auto mm = b([](Var a, Var c) { return matmul(a, c); });
  const std::vector<int64_t> t4 = {2, 0, 3, 2}, t3 = {1, 0, 4};
  return {
      // ---- matmul ----
      {"matmul_2d", mm, {nrm({3, 4}, 1), nrm({4, 2}, 2)}},
      {"matmul_3d", mm, {nrm({2, 3, 4}, 1), nrm({2, 4, 5}, 2)}},
      {"matmul_3d_batch_broadcast_b", mm, {nrm({2, 3, 4}, 1), nrm({1, 4, 5}, 2)}},
      {"matmul_3d_batch_broadcast_a", mm, {nrm({1, 3, 4}, 1), nrm({2, 4, 5}, 2)}},
      {"matmul_3d_by_2d", mm, {nrm({2, 3, 4}, 1), nrm({4, 5}, 2)}},
      {"matmul_2d_by_3d", mm, {nrm({3, 4}, 1), nrm({2, 4, 5}, 2)}},
      {"matmul_4d_both_broadcast", mm, {nrm({2, 1, 3, 4}, 1), nrm({3, 4, 2}, 2)}},
      {"matmul_vec_mat", mm, {nrm({4}, 1), nrm({4, 3}, 2)}},
      {"matmul_mat_vec", mm, {nrm({3, 4}, 1), nrm({4}, 2)}},
      {"matmul_vec_batched", mm, {nrm({4}, 1), nrm({2, 4, 3}, 2)}},
      {"matmul_batched_vec", mm, {nrm({2, 3, 4}, 1), nrm({4}, 2)}},
      {"matmul_vec_vec", mm, {nrm({4}, 1), nrm({4}, 2)}},
      {"matmul_mlp", b([](Var x, Var w) { return tanh(matmul(x, w) + 1.0); }), {nrm({3, 4}, 1), nrm({4, 5}, 2)}},
      // ---- softmax / log_softmax ----
      {"softmax_vector", u([](Var x) { return softmax(x); }), {nrm({5}, 1)}},
      {"softmax_rows", u([](Var x) { return softmax(x); }), {nrm({3, 4}, 1)}},
      {"softmax_cols", u([](Var x) { return softmax(x, 0); }), {nrm({3, 4}, 1)}},
      {"softmax_3d_axis1", u([](Var x) { return softmax(x, 1); }), {nrm({2, 3, 4}, 1)}},
      {"softmax_3d_last", u([](Var x) { return softmax(x, -1); }), {nrm({2, 3, 4}, 1)}},
      {"log_softmax_vector", u([](Var x) { return log_softmax(x); }), {nrm({5}, 1)}},
      {"log_softmax_rows", u([](Var x) { return log_softmax(x); }), {nrm({3, 4}, 1)}},
      {"log_softmax_cols", u([](Var x) { return log_softmax(x, 0); }), {nrm({3, 4}, 1)}},
      {"log_softmax_3d_axis0", u([](Var x) { return log_softmax(x, 0); }), {nrm({2, 3, 4}, 1)}},
      {"log_softmax_3d_axis1", u([](Var x) { return log_softmax(x, 1); }), {nrm({2, 3, 4}, 1)}},
      // ---- categorical_crossentropy ----
      {"xent_softmax_int64_labels", u([t4](Var x) { return categorical_crossentropy(softmax(x), labels(t4)); }),
       {nrm({4, 5}, 1)}},
      {"xent_softmax_int32_labels",
       u([t3](Var x) { return categorical_crossentropy(softmax(x), labels(t3, DType::Int32)); }), {nrm({3, 5}, 2)}},
      {"xent_softmax_uint8_labels",
       u([t3](Var x) { return categorical_crossentropy(softmax(x), labels(t3, DType::UInt8)); }), {nrm({3, 5}, 3)}},
      {"xent_probabilities_direct", u([t4](Var p) { return categorical_crossentropy(p, labels(t4)); }),
       {pos({4, 5}, 1)}},
      {"xent_softmax_output_reused",  // sm's gradient is a sum: the general softmax rule
       u([t4](Var x) {
         Var p = softmax(x);
         return categorical_crossentropy(p, labels(t4)) + sum(p * p, std::vector<int>{1});
       }),
       {nrm({4, 5}, 1)}},
      {"xent_softmax_cols_transposed",  // softmax over axis 0: not the fused form
       u([t3](Var x) { return categorical_crossentropy(transpose(softmax(x, 0)), labels(t3)); }), {nrm({5, 3}, 1)}},
      {"xent_mlp_mean", b([t4](Var x, Var w) { return mean(categorical_crossentropy(softmax(dot(x, w)), labels(t4))); }),
       {nrm({4, 3}, 1), nrm({3, 5}, 2)}},
      {"xent_onehot_matrix", u([t4](Var x) { return categorical_crossentropy(softmax(x), onehot_matrix(t4, 5)); }),
       {nrm({4, 5}, 1)}},
      {"xent_one_hot_op", u([t4](Var x) { return categorical_crossentropy(softmax(x), one_hot(labels(t4), 5)); }),
       {nrm({4, 5}, 1)}},
      // ---- the fused SoftmaxCrossentropy / SoftmaxCrossentropyGrad ----
      {"fused_xent_loss", u([t4](Var x) { return fused(x, labels(t4), 0); }), {nrm({4, 5}, 1)}},
      {"fused_xent_int32_labels", u([t3](Var x) { return fused(x, labels(t3, DType::Int32), 0); }), {nrm({3, 5}, 2)}},
      {"fused_xent_softmax_output", u([t4](Var x) { return fused(x, labels(t4), 1); }), {nrm({4, 5}, 1)}},
      {"fused_xent_both_outputs",  // both output gradients at once: summed into x's
       u([t4](Var x) { return fused(x, labels(t4), 0) + sum(sqr(fused(x, labels(t4), 1)), std::vector<int>{1}); }),
       {nrm({4, 5}, 1)}},
      {"fused_xent_one_row", u([](Var x) { return fused(x, labels({2}), 0); }), {nrm({1, 3}, 4)}},
      {"fused_xent_grad_op",  // d/d dy and d/d sm of dy[:, None] * (sm - one_hot)
       b([t4](Var dy, Var sm) { return fused_grad(dy, sm, labels(t4)); }), {nrm({4}, 1), pos({4, 5}, 2)}},
      {"fused_xent_grad_of_grad",
       u([t4](Var x) { return grad(mean(fused(x, labels(t4), 0)), x); }), {nrm({4, 5}, 1)}},
      {"fused_xent_grad_of_grad_of_grad",
       u([t4](Var x) { return grad(sum(sqr(grad(sum(fused(x, labels(t4), 0)), x))), x); }), {nrm({4, 5}, 3)}},
      // ---- second derivatives ----
      {"softmax_grad_of_grad",
       u([](Var x) { return grad(sum(softmax(x) * constant(nrm({3, 4}, 7))), x); }), {nrm({3, 4}, 1)}},
      {"softmax_cols_grad_of_grad",
       u([](Var x) { return grad(sum(sqr(softmax(x, 0)) * constant(nrm({3, 4}, 7))), x); }), {nrm({3, 4}, 1)}},
      {"log_softmax_grad_of_grad",
       u([](Var x) { return grad(sum(log_softmax(x) * constant(nrm({3, 4}, 7))), x); }), {nrm({3, 4}, 1)}},
      {"log_softmax_3d_grad_of_grad",
       u([](Var x) { return grad(sum(sqr(log_softmax(x, 1))), x); }), {nrm({2, 3, 4}, 1)}},
      {"xent_softmax_grad_of_grad",
       u([t4](Var x) { return grad(mean(categorical_crossentropy(softmax(x), labels(t4))), x); }), {nrm({4, 5}, 1)}},
      {"xent_direct_grad_of_grad",
       u([t4](Var p) { return grad(sum(categorical_crossentropy(p, labels(t4)) * constant(nrm({4}, 9))), p); }),
       {pos({4, 5}, 1)}},
      {"matmul_grad_of_grad",
       b([](Var a, Var c) { return grad(sum(exp(matmul(a, c) * 0.3)), a); }), {nrm({2, 3, 4}, 1), nrm({1, 4, 2}, 2)}},
      {"matmul_vec_grad_of_grad",
       b([](Var a, Var c) { return grad(sum(sqr(matmul(a, c))), c); }), {nrm({4}, 1), nrm({4, 3}, 2)}},
  };
}

INSTANTIATE_TEST_SUITE_P(Nnet, NnetGradTest, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param.name; });

TEST(NnetGrad, SoftmaxCrossentropyValues) {
  // d mean(-log softmax(x)[i, t_i]) / dx = (softmax(x) - one_hot(t)) / rows, in float32 with
  // the demo's types (int32 labels).
  Var x = tensor::fmatrix("x"), y = tensor::ivector("y");
  Var p = tensor::softmax(x);
  Var loss = tensor::mean(tensor::categorical_crossentropy(p, y));
  Function f = function({x, y}, {grad(loss, x), p});
  Array xs = Array::randn({4, 3}, 5, DType::Float32);
  std::vector<int32_t> ts = {0, 2, 1, 2};
  auto out = f({xs, Array::from_vector<int32_t>(ts)});
  ASSERT_EQ(out[0].dtype(), DType::Float32);
  std::vector<float> g = out[0].to_vector<float>(), sm = out[1].to_vector<float>();
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j)
      EXPECT_NEAR(g[i * 3 + j], (sm[i * 3 + j] - (j == ts[i] ? 1.0f : 0.0f)) / 4.0f, 1e-6) << i << "," << j;
}

TEST(NnetGrad, SoftmaxCrossentropyUnderflowStaysFinite) {
  // The target class's probability underflows to 0 in float32: the loss is inf, but the
  // gradient is softmax - one_hot, finite (the division by p cancels).
  Var x = tensor::fmatrix("x"), y = tensor::ivector("y");
  Var gx = grad(tensor::sum(tensor::categorical_crossentropy(tensor::softmax(x), y)), x);
  Function f = function({x, y}, {gx});
  Array xs = Array::from_vector<float>({0, -200, 5, 1, 2, 3}, Shape{2, 3});
  std::vector<float> g = f({xs, Array::from_vector<int32_t>({1, 0})})[0].to_vector<float>();
  for (float v : g) EXPECT_TRUE(std::isfinite(v)) << v;
  EXPECT_NEAR(g[1], -1.0f, 1e-6);  // sm ~ 0 at the label
  EXPECT_NEAR(g[0] + g[1] + g[2], 0.0f, 1e-6);
}

TEST(NnetGrad, CrossentropyLabelOutOfRange) {
  Var p = tensor::dmatrix("p"), y = tensor::lvector("y");
  Function f = function({p, y}, {grad(tensor::sum(tensor::categorical_crossentropy(p, y)), p)});
  EXPECT_THROW(f({Array::ones({2, 3}, DType::Float64), Array::from_vector<int64_t>({0, 3})}), IndexError);
}

TEST(NnetGrad, ArgMaxAndOneHotAreDisconnected) {
  Var x = tensor::dmatrix("x");
  Array xs = Array::from_vector<double>({1, 5, 2, 7, 0, 3}, Shape{2, 3});
  // The argmax term contributes nothing: d/dx = ones.
  Var cost = tensor::sum(tensor::cast(tensor::argmax(x, 1), DType::Float64) * 1.0) + tensor::sum(x);
  Array g = function({x}, {grad(cost, x)})({xs})[0];
  EXPECT_EQ(g.to_vector<double>(), std::vector<double>(6, 1.0));
  // one_hot(argmax(x)) * x: the mask is a constant, so the gradient is the mask itself.
  Var mask = tensor::one_hot(tensor::argmax(x, 1), 3, DType::Float64);
  Array gm = function({x}, {grad(tensor::sum(mask * x), x)})({xs})[0];
  EXPECT_EQ(gm.to_vector<double>(), (std::vector<double>{0, 1, 0, 1, 0, 0}));
  // Only through argmax / one_hot: disconnected.
  EXPECT_THROW(grad(tensor::sum(mask), x), ValueError);
  Var gz = grad(tensor::sum(mask), x, {.disconnected_inputs = "ignore"});
  EXPECT_EQ(function({x}, {gz})({xs})[0].to_vector<double>(), std::vector<double>(6, 0.0));
  // The ops say so explicitly (the driver skips integer paths before asking them).
  Var am = tensor::argmax(x, 1), oh = tensor::one_hot(am, 3, DType::Float64);
  for (const Var& v : {am, oh}) {
    graph::Apply& node = *v.node()->owner;
    std::vector<graph::VarPtr> gs = node.op().L_op(node, {tensor::dmatrix("g").node()});
    ASSERT_EQ(gs.size(), 1u);
    EXPECT_EQ(gs[0], nullptr) << node.op().name();
  }
}

TEST(NnetGrad, MatmulBroadcastValues) {
  // b's batch dim broadcasts at run time (static size unknown): its gradient is summed.
  Var a = tensor::dtensor3("a"), c = tensor::dtensor3("c");
  Function f = function({a, c}, grad(tensor::sum(tensor::matmul(a, c)), {a, c}));
  auto out = f({Array::ones({2, 3, 4}, DType::Float64), Array::ones({1, 4, 5}, DType::Float64)});
  EXPECT_EQ(out[0].shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(out[0].to_vector<double>(), std::vector<double>(24, 5.0));
  EXPECT_EQ(out[1].shape(), (Shape{1, 4, 5}));
  EXPECT_EQ(out[1].to_vector<double>(), std::vector<double>(20, 6.0));
}

}  // namespace
}  // namespace theon
