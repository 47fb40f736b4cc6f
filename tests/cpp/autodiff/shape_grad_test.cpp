// Gradients of the shape, join and indexing ops (reshape, flatten, broadcast_to, alloc,
// shape, concatenate, stack, x[...], take, set/inc_subtensor) against finite differences,
// exact values for the accumulating cases, second derivatives and jacobian/hessian.
#include <theon/theon.hpp>

#include "grad_cases.hpp"

#include <gtest/gtest.h>

namespace theon {
namespace {

using namespace theon::testing;

Var i64(int64_t v) { return constant(Array::scalar(static_cast<double>(v), DType::Int64)); }
Var ivec(const std::vector<int64_t>& v) { return constant(Array::from_vector<int64_t>(v)); }

class ShapeGradTest : public ::testing::TestWithParam<GradCase> {};

TEST_P(ShapeGradTest, MatchesFiniteDifferences) { expect_matches_finite_differences(GetParam()); }

std::vector<GradCase> cases() {
  using namespace tensor;
  const Shape m{3, 4};
  auto u = [](auto f) { return [f](const std::vector<Var>& v) { return f(v[0]); }; };
  auto b = [](auto f) { return [f](const std::vector<Var>& v) { return f(v[0], v[1]); }; };
  auto t = [](auto f) { return [f](const std::vector<Var>& v) { return f(v[0], v[1], v[2]); }; };
  return {
      // ---- reshape / flatten ----
      {"reshape_2d_to_3d", u([](Var a) { return tensor::tanh(reshape(a, std::vector<int64_t>{2, 3, 2})); }), {nrm(m, 1)}},
      {"reshape_infer", u([](Var a) { return reshape(a * a, std::vector<int64_t>{-1, 2}); }), {nrm(m, 1)}},
      {"reshape_to_scalar", u([](Var a) { return reshape(a, std::vector<int64_t>{}) * a; }), {nrm({1, 1}, 1)}},
      {"reshape_symbolic_shape", b([](Var a, Var c) { return reshape(a, shape(c)) * c; }), {nrm({12}, 1), nrm(m, 2)}},
      {"reshape_size1_dims", u([](Var a) { return reshape(a, std::vector<int64_t>{1, 4, 1, 3}); }), {nrm(m, 1)}},
      {"flatten_1", u([](Var a) { return flatten(sqr(a), 1); }), {nrm({2, 3, 2}, 1)}},
      {"flatten_2", u([](Var a) { return flatten(a, 2) * 3.0; }), {nrm({2, 3, 2}, 1)}},
      {"flatten_transposed", u([](Var a) { return flatten(a.T(), 1); }), {nrm(m, 1)}},
      // ---- broadcast_to ----
      {"broadcast_to_leading", u([](Var a) { return broadcast_to(a, {2, 3, 4}); }), {nrm({4}, 1)}},
      {"broadcast_to_col", u([](Var a) { return broadcast_to(a, {3, 4}) * 2.0; }), {nrm({3, 1}, 1)}},
      {"broadcast_to_size1", u([](Var a) { return broadcast_to(a, {2, 3, 4}); }), {nrm({1, 1}, 1)}},
      {"broadcast_to_scalar", u([](Var a) { return broadcast_to(a * a, {2, 3}); }), {nrm({}, 1)}},
      {"broadcast_to_same", u([](Var a) { return broadcast_to(a, {3, 4}); }), {nrm(m, 1)}},
      // ---- alloc ----
      {"alloc_vector", u([](Var a) { return alloc(a, std::vector<int64_t>{2, 3, 4}); }), {nrm({4}, 1)}},
      {"alloc_scalar", u([](Var a) { return alloc(a, std::vector<int64_t>{3, 2}); }), {nrm({}, 1)}},
      {"alloc_size1", u([](Var a) { return alloc(a, std::vector<int64_t>{2, 3, 4}); }), {nrm({3, 1}, 1)}},
      {"alloc_symbolic_sizes",
       b([](Var a, Var c) { return alloc(a, std::vector<Var>{c.shape()[0], i64(2), c.shape()[1]}) * 1.5; }),
       {nrm({1, 1, 4}, 1), nrm(m, 2)}},
      // ---- shape: no gradient, the rest of the graph still differentiates ----
      {"shape_times_x", u([](Var a) { return cast(sum(shape(a)), DType::Float64) * a + cast(size(a), DType::Float64); }),
       {nrm(m, 1)}},
      {"zeros_ones_like", u([](Var a) { return ones_like(a) * a + zeros_like(a); }), {nrm(m, 1)}},
      // ---- concatenate / stack ----
      {"concat_axis0_3", t([](Var a, Var c, Var d) { return concatenate({a, c, d}, 0); }),
       {nrm({2, 3}, 1), nrm({1, 3}, 2), nrm({3, 3}, 3)}},
      {"concat_axis1_3", t([](Var a, Var c, Var d) { return tensor::tanh(concatenate({a, c, d}, 1)); }),
       {nrm({2, 3}, 1), nrm({2, 1}, 2), nrm({2, 2}, 3)}},
      {"concat_neg_axis", t([](Var a, Var c, Var d) { return concatenate({a, c * c, d}, -1); }),
       {nrm({2, 2, 1}, 1), nrm({2, 2, 3}, 2), nrm({2, 2, 2}, 3)}},
      {"concat_static_and_dynamic",
       b([](Var a, Var c) { return concatenate({broadcast_to(a, {2, 3}), c, broadcast_to(a, {1, 3}), c}, 0); }),
       {nrm({3}, 1), nrm({2, 3}, 2)}},
      {"concat_vectors", t([](Var a, Var c, Var d) { return concatenate({a, c, d}); }),
       {nrm({1}, 1), nrm({4}, 2), nrm({2}, 3)}},
      {"stack_axis0_3", t([](Var a, Var c, Var d) { return stack({a, c, d}, 0); }),
       {nrm(m, 1), nrm(m, 2), nrm(m, 3)}},
      {"stack_axis1_3", t([](Var a, Var c, Var d) { return stack({a, c * d, d}, 1); }),
       {nrm(m, 1), nrm(m, 2), nrm(m, 3)}},
      {"stack_last_axis", t([](Var a, Var c, Var d) { return stack({a, c, d}, -1); }),
       {nrm({2}, 1), nrm({2}, 2), nrm({2}, 3)}},
      {"stack_scalars", b([](Var a, Var c) { return stack({a, c, a * c}, 0); }), {nrm({}, 1), nrm({}, 2)}},
      // ---- subtensor ----
      {"sub_slice", u([](Var a) { return a[Slice{1, 3}]; }), {nrm(m, 1)}},
      {"sub_int", u([](Var a) { return a[1] * a[2]; }), {nrm(m, 1)}},
      {"sub_neg_int", u([](Var a) { return a[{-1, Slice{1, std::nullopt}}]; }), {nrm(m, 1)}},
      {"sub_reverse", u([](Var a) { return a[Slice{std::nullopt, std::nullopt, -1}] * a; }), {nrm(m, 1)}},
      {"sub_neg_step2", u([](Var a) { return a[{Slice{std::nullopt, std::nullopt, -2}, Slice{3, 0, -1}}]; }),
       {nrm({5, 4}, 1)}},
      {"sub_step2_3d", u([](Var a) { return a[{Slice{}, Slice{0, std::nullopt, 2}, 1}]; }), {nrm({2, 5, 3}, 1)}},
      {"sub_size1", u([](Var a) { return a[{0, Slice{1, 3}}]; }), {nrm({1, 4}, 1)}},
      {"sub_empty", u([](Var a) { return concatenate({a[Slice{2, 2}], a}, 0); }), {nrm(m, 1)}},
      {"sub_scalar_from_vector", u([](Var a) { return a[2] * a; }), {nrm({4}, 1)}},
      {"sub_symbolic_bounds",
       u([](Var a) {
         Var stop = a.shape()[0] - 1;  // computed at run time: a symbolic bound input
         return a[{Slice{i64(1) + 0, stop}, Slice{std::nullopt, a.shape()[1], i64(1) + 1}}];
       }),
       {nrm({4, 5}, 1)}},
      {"sub_symbolic_neg_step",
       u([](Var a) { return a[Slice{a.shape()[0] - 1, std::nullopt, i64(0) - 1}]; }), {nrm({4, 2}, 1)}},
      {"sub_symbolic_int", u([](Var a) { return a[a.shape()[0] - 2]; }), {nrm(m, 1)}},
      // ---- take ----
      {"take_axis0_repeated", u([](Var a) { return take(a, ivec({0, 2, 0, 1, 2, 2}), 0); }), {nrm(m, 1)}},
      {"take_axis1_negative", u([](Var a) { return take(a, ivec({-1, 0, -1}), 1) * 2.0; }), {nrm(m, 1)}},
      {"take_matrix_indices",
       u([](Var a) { return take(a, constant(Array::from_vector<int64_t>({1, 1, 0, 2}, Shape{2, 2})), 0); }),
       {nrm(m, 1)}},
      {"take_vector", u([](Var a) { return take(a * a, ivec({3, 3, 3, 0})); }), {nrm({4}, 1)}},
      {"index_array", u([](Var a) { return a[ivec({2, 0, 2})]; }), {nrm(m, 1)}},
      {"index_nested", u([](Var a) { return a[{Slice{1, std::nullopt}, ivec({3, 1, 3})}]; }), {nrm(m, 1)}},
      // ---- set_subtensor / inc_subtensor ----
      {"set_slice", b([](Var a, Var c) { return set_subtensor(a[Slice{1, 3}], c) * a; }), {nrm(m, 1), nrm({2, 4}, 2)}},
      {"set_broadcast_row", b([](Var a, Var c) { return set_subtensor(a[Slice{0, 2}], c); }), {nrm(m, 1), nrm({4}, 2)}},
      {"set_broadcast_size1", b([](Var a, Var c) { return set_subtensor(a[{Slice{}, Slice{1, 4}}], c); }),
       {nrm(m, 1), nrm({3, 1}, 2)}},
      {"set_scalar_region", b([](Var a, Var c) { return set_subtensor(a[{1, 2}], c); }), {nrm(m, 1), nrm({}, 2)}},
      {"inc_reverse", b([](Var a, Var c) { return inc_subtensor(a[{Slice{std::nullopt, std::nullopt, -1}, 1}], c); }),
       {nrm(m, 1), nrm({3}, 2)}},
      {"inc_broadcast_scalar", b([](Var a, Var c) { return tensor::tanh(inc_subtensor(a[Slice{1, std::nullopt}], c)); }),
       {nrm(m, 1), nrm({}, 2)}},
      {"set_symbolic_bounds",
       b([](Var a, Var c) { return set_subtensor(a[{Slice{a.shape()[0] - 2, std::nullopt}, Slice{i64(0) + 1, 3}}], c); }),
       {nrm(m, 1), nrm({2, 2}, 2)}},
      {"inc_take_repeated", b([](Var a, Var c) { return inc_subtensor(take(a, ivec({0, 2, 0, 0}), 0), c); }),
       {nrm(m, 1), nrm({4, 4}, 2)}},
      {"inc_take_broadcast", b([](Var a, Var c) { return inc_subtensor(take(a, ivec({1, 1, 3}), 1), c); }),
       {nrm(m, 1), nrm({3, 1}, 2)}},
      {"set_take_unique", b([](Var a, Var c) { return set_subtensor(take(a, ivec({2, 0}), 0), c) * 2.0; }),
       {nrm(m, 1), nrm({2, 4}, 2)}},
      {"set_take_scalar", b([](Var a, Var c) { return set_subtensor(a[ivec({-1, 1})], c); }), {nrm({5}, 1), nrm({}, 2)}},
      {"set_nested", b([](Var a, Var c) { return set_subtensor(a[{Slice{1, std::nullopt}, ivec({0, 3})}], c); }),
       {nrm(m, 1), nrm({2, 2}, 2)}},
      {"inc_nested_repeated", b([](Var a, Var c) { return inc_subtensor(a[{Slice{1, std::nullopt}, ivec({2, 2})}], c); }),
       {nrm(m, 1), nrm({2, 2}, 2)}},
      // ---- second derivatives through the family ----
      {"grad_of_grad_reshape_subtensor",
       u([](Var a) {
         Var r = reshape(a, std::vector<int64_t>{2, -1});
         Var s = r[{Slice{std::nullopt, std::nullopt, -1}, Slice{1, std::nullopt}}];
         return grad(sum(tensor::tanh(s) * s), a);
       }),
       {nrm({2, 3}, 1)}},
      {"grad_of_grad_take_join",
       u([](Var a) {
         Var j = concatenate({a, take(a, ivec({1, 1, 0}), 0)}, 0);
         return grad(sum(tensor::exp(j) * 0.3) + sum(sqr(stack({a, a * a}, 0))), a);
       }),
       {nrm({2, 3}, 1)}},
      {"grad_of_grad_set_inc",
       b([](Var a, Var c) {
         Var s = set_subtensor(a[Slice{0, 2}], c * c);
         Var q = inc_subtensor(take(s, ivec({0, 0, 2}), 1), c[{Slice{0, 1}, Slice{0, 3}}]);
         Var cost = sum(tensor::tanh(q) * q) + sum(broadcast_to(c, {3, 2, 4}) * flatten(a, 1)[0]);
         return grad(cost, c) + grad(cost, a)[Slice{0, 2}];
       }),
       {nrm(m, 1), nrm({2, 4}, 2)}},
  };
}

INSTANTIATE_TEST_SUITE_P(ShapeOps, ShapeGradTest, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param.name; });

std::vector<double> eval_grad(const Var& cost, const Var& wrt, const Array& value) {
  return function({wrt}, {grad(cost, wrt)})({value})[0].to_vector<double>();
}

TEST(ShapeGrad, RepeatedIndicesAccumulate) {
  Var x = tensor::dvector("x");
  Var cost = tensor::sum(tensor::take(x, ivec({0, 2, 0, 0, -1})));
  EXPECT_EQ(eval_grad(cost, x, Array::zeros({4}, DType::Float64)), (std::vector<double>{3, 0, 1, 1}));
  // inc_subtensor at repeated indices: y's rows each reach x[1]; x passes gz through.
  Var y = tensor::dvector("y");
  Var w = constant(Array::from_vector<double>({1, 2, 3, 4}));
  Var c2 = tensor::sum(tensor::inc_subtensor(tensor::take(x, ivec({1, 1})), y) * w);
  auto r = function({x, y}, grad(c2, std::vector<Var>{x, y}))(
      {Array::zeros({4}, DType::Float64), Array::zeros({2}, DType::Float64)});
  EXPECT_EQ(r[0].to_vector<double>(), (std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ(r[1].to_vector<double>(), (std::vector<double>{2, 2}));
}

TEST(ShapeGrad, SetSubtensorValues) {
  Var x = tensor::dvector("x"), y = tensor::dscalar("y");
  Var w = constant(Array::from_vector<double>({1, 2, 3, 4, 5}));
  Var cost = tensor::sum(tensor::set_subtensor(x[Slice{1, 4, 2}], y) * w);
  Function f = function({x, y}, grad(cost, std::vector<Var>{x, y}));
  auto r = f({Array::zeros({5}, DType::Float64), Array::scalar(1, DType::Float64)});
  EXPECT_EQ(r[0].to_vector<double>(), (std::vector<double>{1, 0, 3, 0, 5}));
  EXPECT_EQ(r[1].item(), 2.0 + 4.0);
  Var cost_inc = tensor::sum(tensor::inc_subtensor(x[Slice{1, 4, 2}], y) * w);
  auto ri = function({x, y}, grad(cost_inc, std::vector<Var>{x, y}))(
      {Array::zeros({5}, DType::Float64), Array::scalar(1, DType::Float64)});
  EXPECT_EQ(ri[0].to_vector<double>(), (std::vector<double>{1, 2, 3, 4, 5}));
  EXPECT_EQ(ri[1].item(), 6.0);
}

TEST(ShapeGrad, StaticShapesKeepStaticGradients) {
  // Static input dims: the gradients keep them (no run-time Shape needed).
  Var x = tensor::tensor(DType::Float64, {2, 3}, "x");
  Var y = tensor::tensor(DType::Float64, {4, 3}, "y");
  Var cost = tensor::sum(tensor::concatenate({x, y}, 0).reshape({-1}) * constant(Array::arange(18, DType::Float64)));
  std::vector<Var> g = grad(cost, std::vector<Var>{x, y});
  EXPECT_EQ(g[0].static_shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(g[1].static_shape(), (std::vector<int64_t>{4, 3}));
  auto r = function({x, y}, g)({Array::zeros({2, 3}, DType::Float64), Array::zeros({4, 3}, DType::Float64)});
  EXPECT_EQ(r[0].to_vector<double>(), (std::vector<double>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(r[1].to_vector<double>(), (std::vector<double>{6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17}));
}

TEST(ShapeGrad, BroadcastAtRunTimeIsSummed) {
  // alloc's value has dim 0 of size 1 only at run time: its gradient is summed there.
  Var v = tensor::dmatrix("v");
  Var cost = tensor::sum(tensor::alloc(v, std::vector<int64_t>{2, 3, 2}));
  auto g = function({v}, {grad(cost, v)})({Array::ones({1, 2}, DType::Float64)})[0];
  EXPECT_EQ(g.shape(), (Shape{1, 2}));
  EXPECT_EQ(g.to_vector<double>(), (std::vector<double>{6, 6}));
}

TEST(ShapeGrad, IntegerInputsGetNoGradient) {
  // Bounds, sizes and indices are integers: grad w.r.t. the float input only, no errors.
  Var x = tensor::dmatrix("x"), i = tensor::lvector("i"), s = tensor::lscalar("s");
  Var cost = tensor::sum(tensor::take(x, i, 1)) + tensor::sum(x[Slice{s, std::nullopt}]) +
             tensor::sum(tensor::alloc(x[{0, 0}], std::vector<Var>{s + 1}));
  Function f = function({x, i, s}, {grad(cost, x)});
  auto g = f({Array::zeros({2, 3}, DType::Float64), Array::from_vector<int64_t>({2, 2}),
              Array::scalar(1, DType::Int64)})[0];
  EXPECT_EQ(g.to_vector<double>(), (std::vector<double>{2, 0, 2, 1, 1, 3}));
  try {  // an index has no gradient (Theano: disconnected)
    grad(cost, i);
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("only through operations that have no gradient"), std::string::npos)
        << e.what();
  }
}

TEST(ShapeGrad, Float32GradientsKeepTheirDtype) {
  Var x = tensor::fvector("x"), y = tensor::dvector("y");
  Var j = tensor::concatenate({x, y}, 0);  // promoted to float64; x's gradient comes back float32
  Var cost = tensor::sum(tensor::take(j, ivec({0, 0, 3})) * 2.0) +
             tensor::sum(tensor::set_subtensor(x[Slice{1, std::nullopt}], literal(0, false)) * x) +
             tensor::sum(tensor::reshape(tensor::stack({x, x}, 1), {-1}));
  std::vector<Var> g = grad(cost, std::vector<Var>{x, y});
  EXPECT_EQ(g[0].dtype(), DType::Float32);
  EXPECT_EQ(g[1].dtype(), DType::Float64);
  auto r = function({x, y}, g)({Array::from_vector<float>({1, 2}), Array::from_vector<double>({5, 6})});
  // x0: take twice (4) + set keeps x0 (2 * x0 = 2) + stack twice (2); x1: zeroed region, stack (2).
  EXPECT_EQ(r[0].to_vector<float>(), (std::vector<float>{8, 2}));
  EXPECT_EQ(r[1].to_vector<double>(), (std::vector<double>{0, 2}));
}

TEST(ShapeGrad, JacobianOfIndexedVector) {
  Var x = tensor::tensor(DType::Float64, {3}, "x");
  Var y = x[Slice{std::nullopt, std::nullopt, -1}] * x;  // y_i = x_{2-i} x_i
  Array j = function({x}, {jacobian(y, x)})({Array::from_vector<double>({1, 2, 3})})[0];
  EXPECT_EQ(j.shape(), (Shape{3, 3}));
  EXPECT_EQ(j.to_vector<double>(), (std::vector<double>{3, 0, 1, 0, 4, 0, 3, 0, 1}));
  Var c = tensor::sum(tensor::reshape(x, {3, 1}) * tensor::reshape(x, {1, 3}));  // (sum x)^2
  Array h = function({x}, {hessian(c, x)})({Array::from_vector<double>({1, 2, 3})})[0];
  EXPECT_EQ(h.to_vector<double>(), (std::vector<double>(9, 2.0)));
}

}  // namespace
}  // namespace theon
