// Sizes computed from user values (issue 29): negative sizes and sizes that leave int64 are
// errors naming the call and the values, when the graph is built for constants and when the
// function runs otherwise (eye, repeat, conv2d's dilated filter and padding, pooling), and the
// Assert op that carries the run-time checks shows the values at fault.
#include "error_of.hpp"
#include "ops/assert.hpp"
#include "ops/make_op.hpp"

#include <theon/theon.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

namespace theon {
namespace {

using testing_util::error_of;

constexpr int64_t kBig = int64_t{1} << 62;

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

// ---- eye ----

TEST(SizeChecks, EyeRefusesNegativeDimensions) {
  std::string e = error_of<ShapeError>([] { tensor::eye(-1); });
  EXPECT_HAS(e, "eye(-1, -1, k=0): negative dimensions are not allowed, got -1");
  e = error_of<ShapeError>([] { tensor::eye(3, -2); });
  EXPECT_HAS(e, "eye(3, -2, k=0): negative dimensions are not allowed, got -2");

  const Var n = tensor::lscalar("n"), m = tensor::lscalar("m");
  Function f = function({n, m}, {tensor::eye(n, m, 0, DType::Float64)});
  EXPECT_EQ(f({Array::scalar(2, DType::Int64), Array::scalar(3, DType::Int64)})[0].to_vector<double>(),
            (std::vector<double>{1, 0, 0, 0, 1, 0}));
  EXPECT_EQ(f({Array::scalar(0, DType::Int64), Array::scalar(3, DType::Int64)})[0].shape(), (Shape{0, 3}));
  e = error_of<ShapeError>([&] { f({Array::scalar(-1, DType::Int64), Array::scalar(3, DType::Int64)}); });
  EXPECT_HAS(e, "eye(n, m, k=0): negative dimensions are not allowed, got n = -1");
  e = error_of<ShapeError>([&] { f({Array::scalar(3, DType::Int64), Array::scalar(-2, DType::Int64)}); });
  EXPECT_HAS(e, "got m = -2");
}

// ---- repeat ----

TEST(SizeChecks, RepeatCountsMustSumInsideInt64) {
  const Var x = tensor::dvector("x");
  const Var r = tensor::lvector("r");
  Function f = function({x, r}, {tensor::repeat(x, r)});
  const Array xv = Array::from_vector<double>({1, 2});
  EXPECT_EQ(f({xv, Array::from_vector<int64_t>({2, 1})})[0].to_vector<double>(), (std::vector<double>{1, 1, 2}));
  // 2**62 + 2**62 wraps to -2**63 in int64: the result was an empty array.
  std::string e = error_of<ShapeError>([&] { f({xv, Array::from_vector<int64_t>({kBig, kBig})}); });
  EXPECT_HAS(e, "repeat(x, r): the counts sum past the largest possible array");
  EXPECT_HAS(e, "got sum(r) = 9223372036854775808");
  e = error_of<ValueError>([&] { f({xv, Array::from_vector<int64_t>({1, -1})}); });
  EXPECT_HAS(e, "repeat(x, r): repeats may not contain negative values, got min(r) = -1");
  e = error_of<ShapeError>([&] { f({xv, Array::from_vector<int64_t>({1, 2, 3})}); });
  EXPECT_HAS(e, "repeat(x, r): repeats must have one count per element along axis 0, got len(r) = 3");
  // Constant counts: checked when the graph is built.
  const Var big = constant(Array::from_vector<int64_t>({kBig, kBig}));
  e = error_of<ShapeError>([&] { tensor::repeat(x, big); });
  EXPECT_HAS(e, "repeat(x, ");
  EXPECT_HAS(e, "the counts sum past the largest possible array");
  e = error_of<ValueError>([&] { tensor::repeat(x, constant(Array::from_vector<int64_t>({2, -1}))); });
  EXPECT_HAS(e, "repeats may not contain negative values, got -1");
  e = error_of<ShapeError>([&] {
    tensor::repeat(tensor::tensor(DType::Float64, {2}, "x2"), constant(Array::from_vector<int64_t>({1, 2, 3})));
  });
  EXPECT_HAS(e, "got 3 counts for 2 elements");
  // No counts at all (x empty): the checks' shown values (min, sum) need no element.
  EXPECT_EQ(f({Array::from_vector<double>({}), Array::from_vector<int64_t>({})})[0].shape(), (Shape{0}));
}

// ---- conv2d ----

tensor::Conv2dOptions dilated(int64_t dh) {
  tensor::Conv2dOptions o;
  o.filter_dilation = {dh, 1};
  return o;
}

TEST(SizeChecks, Conv2dDilatedFilterThatOverflowsIsAnError) {
  // (3 - 1) * 2**62 + 1 wraps to a negative span: the result was an empty array.
  const Array xv = Array::zeros({1, 1, 5, 5}, DType::Float32), wv = Array::zeros({1, 1, 3, 3}, DType::Float32);
  const Var x = tensor::tensor4("x", DType::Float32), w = tensor::tensor4("w", DType::Float32);
  Function f = function({x, w}, {tensor::conv2d(x, w, dilated(kBig))});
  std::string e = error_of<ShapeError>([&] { f({xv, wv}); });
  EXPECT_HAS(e, "conv2d(x, w");
  EXPECT_HAS(e, "the dilated filter along the rows, (3 - 1) * 4611686018427387904 + 1, is too big");
  // Static shapes: refused when the graph is built.
  const Var xs = tensor::tensor(DType::Float32, {1, 1, 5, 5}, "xs"), ws = tensor::tensor(DType::Float32, {1, 1, 3, 3}, "ws");
  e = error_of<ShapeError>([&] { tensor::conv2d(xs, ws, dilated(kBig)); });
  EXPECT_HAS(e, "conv2d(xs, ws)");
  EXPECT_HAS(e, "the dilated filter along the rows");
  // Only the rows static: still refused now.
  const Var xr = tensor::tensor(DType::Float32, {-1, -1, 5, -1}, "xr"), wr = tensor::tensor(DType::Float32, {-1, -1, 3, -1}, "wr");
  EXPECT_THROW(tensor::conv2d(xr, wr, dilated(kBig)), ShapeError);
  // Full border mode pads by the dilated size: an overflow there too.
  tensor::Conv2dOptions full = dilated(kBig / 2);
  full.border_mode = "full";
  Function g = function({x, w}, {tensor::conv2d(x, w, full)});
  e = error_of<ShapeError>([&] { g({xv, wv}); });
  EXPECT_HAS(e, "the padded input along the rows, 5 + 2 * 4611686018427387904 with border_mode=full, is too big");
  // Explicit pads whose padded input leaves int64.
  tensor::Conv2dOptions padded;
  padded.border_mode = tensor::BorderMode(kBig, 0);
  Function h = function({x, w}, {tensor::conv2d(x, w, padded)});
  e = error_of<ShapeError>([&] { h({xv, wv}); });
  EXPECT_HAS(e, "the padded input along the rows, 5 + 2 * 4611686018427387904");
  // Sizes that fit still work, dilated or not.
  Function ok = function({x, w}, {tensor::conv2d(x, w, dilated(2))});
  EXPECT_EQ(ok({xv, wv})[0].shape(), (Shape{1, 1, 1, 3}));
}

// ---- pooling ----

TEST(SizeChecks, PoolStaticPaddedSizeAndRebuiltParamsAreChecked) {
  const int64_t huge = std::numeric_limits<int64_t>::max() - 1;
  const Var x = tensor::tensor(DType::Float32, {1, 1, huge, 4}, "x");
  const std::string e = error_of<ShapeError>([&] { tensor::pool_2d(x, {2, 2}, true, {1, 1}, {1, 1}); });
  EXPECT_HAS(e, "pool_2d(x, ws=(2, 2)");
  EXPECT_HAS(e, "the padded size 9223372036854775806 + 2 * 1 of pooled dim 0 is too big");
  // make_op validates a pool's numbers as the builder does (a zero stride divided by zero).
  const graph::OpProps props = {{"nd", "2"},       {"ws", "(2, 2)"},          {"stride", "(0, 1)"},
                                {"pad", "(0, 0)"}, {"ignore_border", "True"}, {"mode", "max"}};
  const std::string m = error_of<ValueError>([&] { ops::make_op(graph::OpKind::Pool, props); });
  EXPECT_HAS(m, "stride must be >= 1");
}

// ---- output sizes the shape rules compute (one_hot, dot, take, ...) ----

TEST(SizeChecks, OutputSizesNameTheOp) {
  // 8 rows of 2**60 classes: 2**63 elements, refused by one_hot's own rule (static length now,
  // run-time length when called), not at the allocation.
  constexpr int64_t classes = int64_t{1} << 60;
  std::string e = error_of<ShapeError>([&] { tensor::one_hot(tensor::tensor(DType::Int64, {8}, "labels"), classes); });
  EXPECT_HAS(e, "one_hot(labels, 1152921504606846976): shape (8, 1152921504606846976) is too big");
  const Var i = tensor::lvector("i");
  Function f = function({i}, {tensor::one_hot(i, classes, DType::Float32)});
  e = error_of<ShapeError>([&] { f({Array::zeros({8}, DType::Int64)}); });
  EXPECT_HAS(e, "OneHot");
  EXPECT_HAS(e, "(i): shape (8, 1152921504606846976) is too big");
  EXPECT_EQ(e.find("allocating an output"), std::string::npos) << e;
}

// ---- Assert shows the values at fault ----

TEST(SizeChecks, AssertShowsTheValuesAtFaultAndRoundTrips) {
  const Var n = tensor::lscalar("n");
  const Var checked(ops::assert_op(n.node(), {tensor::ge(n, as_var(int64_t{0})).node()}, "f(n): n must be >= 0",
                                   {{"n", n.node()}, {"2n", (n * 2.5).node()}}, ops::AssertError::Shape));
  Function f = function({n}, {checked});
  EXPECT_EQ(f({Array::scalar(4, DType::Int64)})[0].item(), 4);
  const std::string e = error_of<ShapeError>([&] { f({Array::scalar(-3, DType::Int64)}); });
  EXPECT_HAS(e, "f(n): n must be >= 0, got n = -3, 2n = -7.5");
  const auto& op = checked.node()->owner->op();
  const auto rebuilt = ops::make_op(graph::OpKind::Assert, op.props());
  const auto& a = static_cast<const ops::Assert&>(*rebuilt);
  EXPECT_EQ(a.message(), "f(n): n must be >= 0");
  EXPECT_EQ(a.shown(), (std::vector<std::string>{"n", "2n"}));
  EXPECT_EQ(a.error(), ops::AssertError::Shape);
  EXPECT_THROW(ops::make_op(graph::OpKind::Assert, {{"message", "m"}, {"error", "Oops"}}), ValueError);
}

}  // namespace
}  // namespace theon
