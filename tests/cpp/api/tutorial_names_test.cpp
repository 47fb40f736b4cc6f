// The names of Theano's tutorial that Theon's C++ API builds from other ops or adds: arange
// (its dtype rule and errors; its values are the op harness's), Theano's dot of N-d tensors,
// tensordot, batched_dot, outer and the shape_pad* helpers, against plain loops, with their
// gradients against finite differences.
#include <theon/theon.hpp>

#include "../error_of.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace theon {
namespace {

using testing_util::error_of;

Array run1(const std::vector<Var>& in, const Var& out, const std::vector<Array>& values) {
  return function(in, {out})(values)[0];
}

// numpy.tensordot over a's axes `sa` against b's `sb`, row-major float64 loops.
Array tensordot_ref(const Array& a, const Array& b, const std::vector<int>& sa, const std::vector<int>& sb) {
  const Shape &as = a.shape(), &bs = b.shape();
  std::vector<int> fa, fb;
  for (int d = 0; d < a.ndim(); ++d)
    if (std::find(sa.begin(), sa.end(), d) == sa.end()) fa.push_back(d);
  for (int d = 0; d < b.ndim(); ++d)
    if (std::find(sb.begin(), sb.end(), d) == sb.end()) fb.push_back(d);
  Shape out_shape, sum_shape;
  for (int d : fa) out_shape.push_back(as[d]);
  for (int d : fb) out_shape.push_back(bs[d]);
  for (int d : sa) sum_shape.push_back(as[d]);
  const std::vector<double> av = a.to_vector<double>(), bv = b.to_vector<double>();
  auto flat = [](const Shape& s, const std::vector<int64_t>& idx) {
    int64_t f = 0;
    for (size_t d = 0; d < s.size(); ++d) f = f * s[d] + idx[d];
    return f;
  };
  auto unflat = [](const Shape& s, int64_t f) {
    std::vector<int64_t> idx(s.size());
    for (int d = static_cast<int>(s.size()) - 1; d >= 0; --d) {
      idx[d] = f % s[d];
      f /= s[d];
    }
    return idx;
  };
  std::vector<double> out(static_cast<size_t>(shape_size(out_shape)), 0.0);
  for (int64_t o = 0; o < shape_size(out_shape); ++o) {
    const std::vector<int64_t> oi = unflat(out_shape, o);
    for (int64_t k = 0; k < shape_size(sum_shape); ++k) {
      const std::vector<int64_t> ki = unflat(sum_shape, k);
      std::vector<int64_t> ia(as.size()), ib(bs.size());
      for (size_t i = 0; i < fa.size(); ++i) ia[fa[i]] = oi[i];
      for (size_t i = 0; i < fb.size(); ++i) ib[fb[i]] = oi[fa.size() + i];
      for (size_t i = 0; i < sa.size(); ++i) ia[sa[i]] = ib[sb[i]] = ki[i];
      out[o] += av[flat(as, ia)] * bv[flat(bs, ib)];
    }
  }
  return Array::from_vector<double>(out, out_shape);
}

Array rnd(const Shape& shape) {
  static uint64_t seed = 7;
  return Array::randn(shape, seed++, DType::Float64);
}

void expect_close(const Array& got, const Array& want) {
  ASSERT_EQ(got.shape(), want.shape());
  const std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], w[i], 1e-10 * (1 + std::abs(w[i]))) << "element " << i;
}

Var dynamic(int ndim, const std::string& name) { return tensor::tensor(DType::Float64, std::vector<int64_t>(ndim, -1), name); }

TEST(TutorialNames, DotOfNdTensorsSumsLastAxisOfAAgainstSecondToLastOfB) {
  const Array av = rnd({2, 3, 4}), bv = rnd({5, 4, 6});
  const Var a = dynamic(3, "a"), b = dynamic(3, "b");
  const Var y = tensor::dot(a, b);
  EXPECT_EQ(y.ndim(), 4);
  expect_close(run1({a, b}, y, {av, bv}), tensordot_ref(av, bv, {2}, {1}));
  // a 3-d tensor against a matrix and a vector (b's only axis)
  const Array mv = rnd({4, 2}), vv = rnd({4});
  const Var m = dynamic(2, "m"), v = dynamic(1, "v");
  expect_close(run1({a, m}, tensor::dot(a, m), {av, mv}), tensordot_ref(av, mv, {2}, {0}));
  expect_close(run1({a, v}, tensor::dot(a, v), {av, vv}), tensordot_ref(av, vv, {2}, {0}));
  // a scalar scales
  const Var s = tensor::dscalar("s");
  expect_close(run1({s, m}, tensor::dot(s, m), {Array::scalar(2, DType::Float64), mv}),
               run1({m}, m * 2.0, {mv}));
}

TEST(TutorialNames, TensordotWithAnIntOrAxisLists) {
  const Array av = rnd({2, 3, 4}), bv = rnd({3, 4, 5});
  const Var a = dynamic(3, "a"), b = dynamic(3, "b");
  expect_close(run1({a, b}, tensor::tensordot(a, b, 2), {av, bv}), tensordot_ref(av, bv, {1, 2}, {0, 1}));
  expect_close(run1({a, b}, tensor::tensordot(a, b, 0), {av, bv}), tensordot_ref(av, bv, {}, {}));
  const Array cv = rnd({4, 2, 6});
  const Var c = dynamic(3, "c");
  expect_close(run1({a, c}, tensor::tensordot(a, c, {0, -1}, {1, 0}), {av, cv}), tensordot_ref(av, cv, {0, 2}, {1, 0}));
  // static shapes take the static reshape path
  const Var sa = tensor::tensor(DType::Float64, {2, 3, 4}, "sa"), sb = tensor::tensor(DType::Float64, {3, 4, 5}, "sb");
  const Var st = tensor::tensordot(sa, sb, 2);
  EXPECT_EQ(st.static_shape(), (std::vector<int64_t>{2, 5}));
  expect_close(run1({sa, sb}, st, {av, bv}), tensordot_ref(av, bv, {1, 2}, {0, 1}));
}

TEST(TutorialNames, TensordotErrorsNameTheOperandsAndAxes) {
  const Var a = tensor::tensor(DType::Float64, {2, 3}, "a"), b = tensor::tensor(DType::Float64, {4, 5}, "b");
  EXPECT_EQ(error_of<ShapeError>([&] { tensor::tensordot(a, b, {1}, {0}); }),
            "tensordot(a, b, [[1], [0]]): axis 1 of a (float64 (2, 3)) has 3 elements, axis 0 of b (float64 (4, 5)) has 4");
  EXPECT_NE(error_of<ShapeError>([&] { tensor::tensordot(a, b, {2}, {0}); }).find("axis 2 is out of range for a"),
            std::string::npos);
  EXPECT_NE(error_of<ShapeError>([&] { tensor::tensordot(a, b, {0, 1}, {0}); }).find("are not as many"), std::string::npos);
  EXPECT_NE(error_of<ShapeError>([&] { tensor::tensordot(a, b, 3); }).find("cannot sum over 3 axes"), std::string::npos);
}

TEST(TutorialNames, BatchedDotPairsTheLeadingAxis) {
  const Array av = rnd({3, 2, 4}), bv = rnd({3, 4, 5});
  const Var a = dynamic(3, "a"), b = dynamic(3, "b");
  const Array got = run1({a, b}, tensor::batched_dot(a, b), {av, bv});
  ASSERT_EQ(got.shape(), (Shape{3, 2, 5}));
  const std::vector<double> x = av.to_vector<double>(), y = bv.to_vector<double>(), g = got.to_vector<double>();
  for (int bt = 0; bt < 3; ++bt)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 5; ++j) {
        double want = 0;
        for (int k = 0; k < 4; ++k) want += x[(bt * 2 + i) * 4 + k] * y[(bt * 4 + k) * 5 + j];
        EXPECT_NEAR(g[(bt * 2 + i) * 5 + j], want, 1e-12) << bt << ", " << i << ", " << j;
      }
  // (B, k) operands act as vectors; a (B,) operand scales rows
  const Array mv = rnd({3, 4}), vv = rnd({3});
  const Var m = dynamic(2, "m"), n = dynamic(2, "n"), v = dynamic(1, "v");
  const Array dots = run1({m, n}, tensor::batched_dot(m, n), {mv, mv});
  ASSERT_EQ(dots.shape(), (Shape{3}));
  const std::vector<double> mrow = mv.to_vector<double>();
  EXPECT_NEAR(dots.to_vector<double>()[1], mrow[4] * mrow[4] + mrow[5] * mrow[5] + mrow[6] * mrow[6] + mrow[7] * mrow[7], 1e-12);
  const Array scaled = run1({v, m}, tensor::batched_dot(v, m), {vv, mv});
  EXPECT_NEAR(scaled.to_vector<double>()[5], vv.to_vector<double>()[1] * mv.to_vector<double>()[5], 1e-12);
  EXPECT_THROW(tensor::batched_dot(tensor::dscalar("s"), m), ShapeError);
}

TEST(TutorialNames, OuterFlattensBoth) {
  const Var x = dynamic(1, "x"), y = dynamic(2, "y");
  const Array xv = Array::from_vector<double>({1, 2, 3}), yv = Array::from_vector<double>({1, 10, 100, 1000}, {2, 2});
  const Array got = run1({x, y}, tensor::outer(x, y), {xv, yv});
  EXPECT_EQ(got.shape(), (Shape{3, 4}));
  EXPECT_EQ(got.to_vector<double>()[4 + 3], 2000.0);
}

TEST(TutorialNames, ShapePadHelpersAddBroadcastableDims) {
  const Var x = dynamic(2, "x");
  EXPECT_EQ(tensor::shape_padleft(x).broadcastable(), (std::vector<bool>{true, false, false}));
  EXPECT_EQ(tensor::shape_padright(x, 2).broadcastable(), (std::vector<bool>{false, false, true, true}));
  EXPECT_EQ(tensor::shape_padaxis(x, 1).broadcastable(), (std::vector<bool>{false, true, false}));
  EXPECT_EQ(tensor::shape_padaxis(x, -1).broadcastable(), (std::vector<bool>{false, false, true}));
  EXPECT_EQ(tensor::shape_padaxis(x, 0).broadcastable(), (std::vector<bool>{true, false, false}));
  EXPECT_THROW(tensor::shape_padaxis(x, 3), ShapeError);
  EXPECT_THROW(tensor::shape_padaxis(x, -4), ShapeError);
}

TEST(TutorialNames, ContractionGradientsMatchFiniteDifferences) {
  verify_grad([](const std::vector<Var>& v) { return tensor::dot(v[0], v[1]); },
              {rnd({2, 3, 4}), rnd({4, 2})});
  verify_grad([](const std::vector<Var>& v) { return tensor::tensordot(v[0], v[1], {0, 2}, {1, 0}); },
              {rnd({2, 3, 4}), rnd({4, 2, 5})});
  verify_grad([](const std::vector<Var>& v) { return tensor::batched_dot(v[0], v[1]); },
              {rnd({3, 2, 4}), rnd({3, 4})});
  verify_grad([](const std::vector<Var>& v) { return tensor::outer(v[0], v[1]); },
              {rnd({3}), rnd({2, 2})});
}

// ---- arange ----

TEST(TutorialNames, ArangeDtypeFollowsTheano) {
  EXPECT_EQ(tensor::arange(5).dtype(), DType::Int64);
  EXPECT_EQ(tensor::arange(tensor::iscalar("n")).dtype(), DType::Int64);
  EXPECT_EQ(tensor::arange(tensor::bscalar("a"), tensor::iscalar("b")).dtype(), DType::Int64);
  EXPECT_EQ(tensor::arange(0.5, tensor::fscalar("x")).dtype(), DType::Float32);
  EXPECT_EQ(tensor::arange(tensor::iscalar("n"), tensor::dscalar("x")).dtype(), DType::Float64);
  EXPECT_EQ(tensor::arange(0.0, 1.0, 0.25).dtype(), DType(config().floatX));
  EXPECT_EQ(tensor::arange(0, 10, 1, DType::Float64).dtype(), DType::Float64);
  EXPECT_EQ(tensor::arange(0, 10, 3).static_shape(), (std::vector<int64_t>{4}));  // constant bounds: static
  EXPECT_EQ(tensor::arange(tensor::lscalar("n")).static_shape(), (std::vector<int64_t>{-1}));
  EXPECT_THROW(tensor::arange(tensor::dvector("v")), TypeError);
}

TEST(TutorialNames, ArangeStepOfZeroNamesTheOpAndValues) {
  const std::string at_build = error_of<ValueError>([] { tensor::arange(0, 5, 0); });
  EXPECT_NE(at_build.find("arange("), std::string::npos) << at_build;
  EXPECT_NE(at_build.find("the step is 0"), std::string::npos) << at_build;
  const Var n = tensor::lscalar("n"), s = tensor::lscalar("s");
  Function f = function({n, s}, {tensor::arange(1, n, s)});
  EXPECT_EQ(f({Array::scalar(4, DType::Int64), Array::scalar(2, DType::Int64)})[0].to_vector<int64_t>(),
            (std::vector<int64_t>{1, 3}));
  const std::string e = error_of<ValueError>([&] { f({Array::scalar(4, DType::Int64), Array::scalar(0, DType::Int64)}); });
  EXPECT_NE(e.find("ARange{dtype=int64}(1, n, s)"), std::string::npos) << e;
  EXPECT_NE(e.find("the step is 0 (start=1, stop=4, step=0)"), std::string::npos) << e;
}

TEST(TutorialNames, ArangeLengthIsExactForExtremeIntegers) {
  const Var a = tensor::lscalar("a"), b = tensor::lscalar("b"), s = tensor::lscalar("s");
  Function f = function({a, b, s}, {tensor::size(tensor::arange(a, b, s))});
  auto length = [&](int64_t x, int64_t y, int64_t z) {
    return f({Array::from_vector<int64_t>({x}, Shape{}), Array::from_vector<int64_t>({y}, Shape{}),
              Array::from_vector<int64_t>({z}, Shape{})})[0]
        .to_vector<int64_t>()[0];
  };
  const int64_t big = std::numeric_limits<int64_t>::max(), small = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(length(small, big, big), 3);  // min, -1, max - 1 (a distance of 2^64 - 1 does not overflow)
  EXPECT_EQ(length(big, small, small), 2);  // max, -1
  EXPECT_EQ(length(big - 3, big, 1), 3);
  EXPECT_EQ(length(3, -4, -3), 3);
}

}  // namespace
}  // namespace theon
