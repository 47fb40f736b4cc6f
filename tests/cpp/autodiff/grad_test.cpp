// grad and verify_grad: every differentiable op of the core against finite differences,
// second derivatives, Theano's controls and their errors.
#include <theon/theon.hpp>

#include "grad_cases.hpp"
#include "graph/node.hpp"
#include "graph/op.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace theon {
namespace {

using namespace theon::testing;


class VerifyGradTest : public ::testing::TestWithParam<GradCase> {};

TEST_P(VerifyGradTest, MatchesFiniteDifferences) { expect_matches_finite_differences(GetParam()); }

std::vector<GradCase> cases() {
  using namespace tensor;
  const Shape m{3, 4}, row{1, 4}, col{3, 1};
  auto u = [](auto f) { return [f](const std::vector<Var>& v) { return f(v[0]); }; };
  auto b = [](auto f) { return [f](const std::vector<Var>& v) { return f(v[0], v[1]); }; };
  return {
      {"add_broadcast", b([](Var a, Var c) { return a + c; }), {nrm(m, 1), nrm(row, 2)}},
      {"sub_broadcast_col", b([](Var a, Var c) { return a - c; }), {nrm(m, 1), nrm(col, 2)}},
      {"mul_rank_diff", b([](Var a, Var c) { return a * c; }), {nrm(m, 1), nrm({4}, 2)}},
      {"true_div", b([](Var a, Var c) { return a / c; }), {nrm(m, 1), pos(m, 2)}},
      {"pow", b([](Var a, Var c) { return tensor::pow(a, c); }), {pos(m, 1), nrm(m, 2)}},
      {"mod", b([](Var a, Var c) { return a % c; }), {pos(m, 1), pos({}, 2)}},
      {"neg", u([](Var a) { return -a; }), {nrm(m, 1)}},
      {"abs", u([](Var a) { return tensor::abs(a); }), {nrm(m, 1)}},
      {"sqr", u([](Var a) { return sqr(a); }), {nrm(m, 1)}},
      {"exp", u([](Var a) { return tensor::exp(a); }), {nrm(m, 1)}},
      {"log", u([](Var a) { return tensor::log(a); }), {pos(m, 1)}},
      {"log1p", u([](Var a) { return tensor::log1p(a); }), {pos(m, 1)}},
      {"expm1", u([](Var a) { return tensor::expm1(a); }), {nrm(m, 1)}},
      {"sqrt", u([](Var a) { return tensor::sqrt(a); }), {pos(m, 1)}},
      {"tanh", u([](Var a) { return tensor::tanh(a); }), {nrm(m, 1)}},
      {"sigmoid", u([](Var a) { return sigmoid(a); }), {nrm(m, 1)}},
      {"softplus", u([](Var a) { return softplus(a); }), {nrm(m, 1)}},
      {"sin", u([](Var a) { return tensor::sin(a); }), {nrm(m, 1)}},
      {"cos", u([](Var a) { return tensor::cos(a); }), {nrm(m, 1)}},
      {"relu", u([](Var a) { return relu(a); }), {nrm(m, 5)}},
      {"maximum", b([](Var a, Var c) { return maximum(a, c); }), {nrm(m, 1), nrm(row, 2)}},
      {"minimum", b([](Var a, Var c) { return minimum(a, c); }), {nrm(m, 1), nrm(col, 2)}},
      {"clip", b([](Var a, Var c) { return clip(a, c, c + 1.0); }), {nrm(m, 1), nrm({}, 2)}},
      {"switch", b([](Var a, Var c) { return switch_(a > 0.0, a * c, c); }), {nrm(m, 1), nrm(m, 2)}},
      {"cast_to_int_is_constant", u([](Var a) { return cast(cast(a * 3.0, DType::Int32), DType::Float64) * a; }), {nrm(m, 1)}},
      {"sum_all", u([](Var a) { return sum(a * a); }), {nrm(m, 1)}},
      {"sum_axis_keep", u([](Var a) { return sum(a * a, std::vector<int>{1}, true) * a; }), {nrm(m, 1)}},
      {"mean_axis", u([](Var a) { return mean(tensor::exp(a), std::vector<int>{0}); }), {nrm(m, 1)}},
      {"prod", u([](Var a) { return prod(a, std::vector<int>{1}); }), {pos(m, 1)}},
      {"max_axis", u([](Var a) { return tensor::max(a, std::vector<int>{1}); }), {nrm(m, 1)}},
      {"min_all", u([](Var a) { return tensor::min(a); }), {nrm(m, 1)}},
      {"dot_mm", b([](Var a, Var c) { return dot(a, c); }), {nrm(m, 1), nrm({4, 2}, 2)}},
      {"dot_mv", b([](Var a, Var c) { return dot(a, c); }), {nrm(m, 1), nrm({4}, 2)}},
      {"dot_vm", b([](Var a, Var c) { return dot(a, c); }), {nrm({3}, 1), nrm(m, 2)}},
      {"dot_vv", b([](Var a, Var c) { return dot(a, c); }), {nrm({4}, 1), nrm({4}, 2)}},
      {"transpose_dimshuffle", u([](Var a) { return a.T().dimshuffle({-1, 0, 1}) * 2.0; }), {nrm(m, 1)}},
      {"mlp_layer", b([](Var x, Var w) { return tensor::tanh(dot(x, w) + 1.0); }), {nrm(m, 1), nrm({4, 5}, 2)}},
  };
}

INSTANTIATE_TEST_SUITE_P(Ops, VerifyGradTest, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param.name; });

TEST(Grad, SimpleValues) {
  Var x = tensor::dscalar("x");
  Var g = grad(x * x * 3.0, x);
  Function f = function({x}, {g});
  EXPECT_DOUBLE_EQ(f({Array::scalar(2, DType::Float64)})[0].item(), 12.0);
}

TEST(Grad, BroadcastIsSummedBackAtRunTime) {
  // b's dim 0 has size 1 only at run time (not statically): its gradient must be summed.
  Var x = tensor::dmatrix("x"), b = tensor::dmatrix("b");
  Function f = function({x, b}, {grad(tensor::sum(x * b), b)});
  Array gb = f({Array::ones({3, 2}, DType::Float64), Array::ones({1, 2}, DType::Float64)})[0];
  EXPECT_EQ(gb.shape(), (Shape{1, 2}));
  EXPECT_EQ(gb.to_vector<double>(), (std::vector<double>{3, 3}));
}

TEST(Grad, SecondDerivatives) {
  // d2/dx2 of sum(x^3) = 6x, via grad of grad; checked against finite differences of the first.
  Var x = tensor::dvector("x");
  Var g = grad(tensor::sum(x * x * x), x);
  Var h = grad(tensor::sum(g), x);
  Function f = function({x}, {h});
  Array xs = Array::from_vector<double>({1, -2, 0.5});
  EXPECT_EQ(f({xs})[0].to_vector<double>(), (std::vector<double>{6, -12, 3}));
  verify_grad([](const std::vector<Var>& v) { return grad(tensor::sum(tensor::tanh(v[0]) * v[0]), v[0]); },
              {Array::randn({4}, 3, DType::Float64)});
  verify_grad(
      [](const std::vector<Var>& v) {
        Var y = tensor::dot(v[0], v[1]);
        return grad(tensor::sum(tensor::exp(y) * 0.1), v[1]);
      },
      {Array::randn({2, 3}, 1, DType::Float64), Array::randn({3, 2}, 2, DType::Float64)});
  verify_grad([](const std::vector<Var>& v) { return grad(tensor::max(v[0] * v[0]) + tensor::mean(v[0]), v[0]); },
              {Array::from_vector<double>({0.3, -1.2, 0.7})});
}

TEST(Grad, JacobianAndHessian) {
  Var x = tensor::tensor(DType::Float64, {3}, "x");
  Var y = x * x;  // J = diag(2x)
  Function fj = function({x}, {jacobian(y, x)});
  Array j = fj({Array::from_vector<double>({1, 2, 3})})[0];
  EXPECT_EQ(j.shape(), (Shape{3, 3}));
  EXPECT_EQ(j.to_vector<double>(), (std::vector<double>{2, 0, 0, 0, 4, 0, 0, 0, 6}));
  Function fh = function({x}, {hessian(tensor::sum(x * x * x), x)});
  EXPECT_EQ(fh({Array::from_vector<double>({1, 2, 3})})[0].to_vector<double>(),
            (std::vector<double>{6, 0, 0, 0, 12, 0, 0, 0, 18}));
  EXPECT_THROW(jacobian(tensor::dvector("free") * 2.0, x), NotImplementedError);
}

TEST(Grad, Controls) {
  Var x = tensor::dvector("x"), y = tensor::dvector("y");
  Var cost = tensor::sum(x * y);
  // consider_constant: y * x with x constant -> no gradient through x.
  Var gy = grad(cost, y, {.consider_constant = {x}});
  EXPECT_EQ(function({x, y}, {gy})({Array::from_vector<double>({2, 3}), Array::from_vector<double>({1, 1})})[0]
                .to_vector<double>(),
            (std::vector<double>{2, 3}));
  // disconnected_grad stops, zero_grad zeroes.
  Var gx = grad(tensor::sum(disconnected_grad(x) * x), x);
  EXPECT_EQ(function({x}, {gx})({Array::from_vector<double>({2, 3})})[0].to_vector<double>(),
            (std::vector<double>{2, 3}));
  Var gz = grad(tensor::sum(zero_grad(x) * 5.0), x, {.disconnected_inputs = "ignore"});
  EXPECT_EQ(function({x}, {gz})({Array::from_vector<double>({2, 3})})[0].to_vector<double>(),
            (std::vector<double>{0, 0}));
  // known_grads: inject d cost / d h.
  Var h = x * 2.0;
  Var g = grad(Var(), x, {.known_grads = {{h, tensor::dvector("gh")}}});
  (void)g;
}

TEST(Grad, GradClipAndGradScaleChangeOnlyTheGradient) {
  // Forward both are x; backward the gradient 3 * x^2 * w is clipped to [-2, 5] / scaled by -0.5.
  Var x = tensor::dvector("x"), w = tensor::dvector("w");
  Var clipped = grad_clip(x, -2.0, 5.0);
  Var scaled = grad_scale(x, -0.5);
  EXPECT_EQ(clipped.node()->owner->op().kind(), graph::OpKind::GradClip);
  EXPECT_EQ(scaled.node()->owner->op().kind(), graph::OpKind::GradScale);
  const Array xs = Array::from_vector<double>({-2, -0.5, 1, 3}), ws = Array::from_vector<double>({1, -1, 2, 0.5});
  Function f = function({x, w}, {clipped * 1.0, scaled * 1.0, grad(tensor::sum(tensor::pow(clipped, as_var(3.0)) * w), x),
                                 grad(tensor::sum(tensor::pow(scaled, as_var(3.0)) * w), x)});
  const std::vector<Array> r = f({xs, ws});
  EXPECT_EQ(r[0].to_vector<double>(), xs.to_vector<double>());
  EXPECT_EQ(r[1].to_vector<double>(), xs.to_vector<double>());
  std::vector<double> want_clip, want_scale;
  for (size_t i = 0; i < 4; ++i) {
    const double g = 3 * xs.to_vector<double>()[i] * xs.to_vector<double>()[i] * ws.to_vector<double>()[i];
    want_clip.push_back(std::min(5.0, std::max(-2.0, g)));
    want_scale.push_back(-0.5 * g);
  }
  EXPECT_EQ(r[2].to_vector<double>(), want_clip);
  EXPECT_EQ(r[3].to_vector<double>(), want_scale);
  // Equal parameters merge; the bounds are checked.
  EXPECT_TRUE(grad_clip(x, -2.0, 5.0).node()->owner->op().equals(clipped.node()->owner->op()));
  EXPECT_FALSE(grad_clip(x, -2.0, 4.0).node()->owner->op().equals(clipped.node()->owner->op()));
  EXPECT_THROW(grad_clip(x, 1.0, -1.0), ValueError);
  EXPECT_THROW(grad_scale(x, std::nan("")), ValueError);
}

TEST(Grad, Errors) {
  Var x = tensor::dvector("x"), z = tensor::dvector("z"), i = tensor::ivector("i");
  try {
    grad(x * 2.0, x);
    FAIL();
  } catch (const TypeError& e) {
    EXPECT_NE(std::string(e.what()).find("cost must be a scalar, but"), std::string::npos) << e.what();
  }
  try {
    grad(tensor::sum(x), z);
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("does not depend on 'z'"), std::string::npos) << e.what();
  }
  Var gz = grad(tensor::sum(x), z, {.disconnected_inputs = "ignore"});
  EXPECT_EQ(function({x, z}, {gz}, {.on_unused_input = "ignore"})(
                {Array::ones({2}, DType::Float64), Array::ones({3}, DType::Float64)})[0]
                .to_vector<double>(),
            (std::vector<double>{0, 0, 0}));
  try {
    grad(tensor::sum(i), x);  // an integer cost that does not involve x
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("does not depend on 'x'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(grad(tensor::sum(x), x, {.disconnected_inputs = "maybe"}), ValueError);
}

// Theano's rules for integers: a gradient is never an integer; integer-valued results pass a
// zero gradient back (an integer cost has a zero gradient); an integer wrt is differentiated
// as if real through a cast to float.
TEST(Grad, IntegersAsInTheano) {
  Var x = tensor::dvector("x"), i = tensor::ivector("i"), n = tensor::lscalar("n");
  auto run = [](const std::vector<Var>& ins, const Var& out, const std::vector<Array>& args) {
    return function(ins, {out})(args)[0];
  };
  Array xs = Array::from_vector<double>({1.5, -2}), is = Array::from_vector<int32_t>({1, 2, 3});
  // An integer cost: zeros, of x's dtype for a float x and of floatX for an integer wrt.
  Array g = run({i}, grad(tensor::sum(i * 2), i), {is});
  EXPECT_EQ(g.dtype(), config().floatX);
  EXPECT_EQ(g.to_vector<float>(), (std::vector<float>{0, 0, 0}));
  g = run({x}, grad(tensor::sum(tensor::cast(x, DType::Int64)), x), {xs});
  EXPECT_EQ(g.dtype(), DType::Float64);
  EXPECT_EQ(g.to_vector<double>(), (std::vector<double>{0, 0}));
  // Through an integer-valued sum beside a float one: zero for i, no error.
  g = run({x, i}, grad(tensor::sum(x) + tensor::sum(i), i), {xs, is});
  EXPECT_EQ(g.to_vector<float>(), (std::vector<float>{0, 0, 0}));
  // A cast of an integer to a float passes the gradient on: d(3 * float(n))/dn = 3.
  g = run({n}, grad(tensor::cast(n, DType::Float64) * 3.0, n), {Array::scalar(4, DType::Int64)});
  EXPECT_EQ(g.dtype(), DType::Float64);
  EXPECT_EQ(g.item(), 3.0);
  // A comparison is piecewise constant: zero, not disconnected.
  g = run({x}, grad(tensor::sum(tensor::switch_(x > 0.0, as_var(1.0), as_var(0.0))), x), {xs});
  EXPECT_EQ(g.to_vector<double>(), (std::vector<double>{0, 0}));
  // A shape is disconnected, as in Theano.
  EXPECT_THROW(grad(tensor::shape(x)[{0}], x), ValueError);
}

TEST(Grad, DependsOnTheInputsOfTheCost) {
  // Theano seeds with ones_like(cost): a constant gradient still uses the cost's inputs, so a
  // function of them is not refused for an unused input.
  Var x = tensor::dscalar("x"), y = tensor::dscalar("y");
  Function f = function({x}, {grad(x * 3.0, x)});
  EXPECT_EQ(f({Array::scalar(2, DType::Float64)})[0].item(), 3.0);
  Function h = function({x, y}, {grad(x * y + y, x)});  // d/dx is y: x is still an input of the cost
  EXPECT_EQ(h({Array::scalar(2, DType::Float64), Array::scalar(5, DType::Float64)})[0].item(), 5.0);
}

TEST(VerifyGrad, ReportsTheWorstElement) {
  // A deliberately wrong gradient: zero_grad hides d/dx of the second term.
  try {
    verify_grad([](const std::vector<Var>& v) { return v[0] * 2.0 + zero_grad(v[0] * v[0]); },
                {Array::from_vector<double>({1, 5, 2})});
    FAIL();
  } catch (const GradientError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("input 0 (shape (3,))"), std::string::npos) << m;
    EXPECT_NE(m.find("worst element (1,)"), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace theon
