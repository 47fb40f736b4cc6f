// argmax/argmin, matmul, softmax/log_softmax, categorical_crossentropy and one_hot: error
// paths (type and message), tie and NaN rules, numerical stability, and the CPU matmul kernel.
#include <theon/theon.hpp>

#include "backends/backend.hpp"
#include "graph/node.hpp"
#include "graph/op.hpp"
#include "ops/nnet_fused.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace theon {
namespace {

// Runs `fn`, expecting it to throw E; returns the message (empty when nothing was thrown).
template <class E, class F>
std::string error_of(F&& fn) {
  try {
    fn();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw another exception type: " << e.what();
    return "";
  }
  ADD_FAILURE() << "did not throw";
  return "";
}

// Expects `message` to contain every one of `parts`.
void expect_names(const std::string& message, std::initializer_list<std::string> parts) {
  for (const auto& p : parts) EXPECT_NE(message.find(p), std::string::npos) << "'" << p << "' missing in: " << message;
}

Array eval(const std::vector<Var>& ins, const Var& out, const std::vector<Array>& values) {
  return function(ins, {out}, {.on_unused_input = "ignore"})(values)[0];
}

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// ---- argmax / argmin ----

TEST(ArgMaxOps, TiesGiveTheFirstOccurrence) {
  Var x = tensor::dvector("x");
  Array v = Array::from_vector<double>({3, 1, 3, 0, 0});
  EXPECT_EQ(eval({x}, tensor::argmax(x), {v}).item(), 0);
  EXPECT_EQ(eval({x}, tensor::argmin(x), {v}).item(), 3);
  Var m = tensor::imatrix("m");
  Array mv = Array::from_vector<int32_t>({5, 5, 1, 2, 7, 7}, Shape{2, 3});
  EXPECT_EQ(eval({m}, tensor::argmax(m, 1), {mv}).to_vector<int64_t>(), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(eval({m}, tensor::argmin(m, 0), {mv}).to_vector<int64_t>(), (std::vector<int64_t>{1, 0, 0}));
}

TEST(ArgMaxOps, NaNCountsAsTheExtremeLikeNumpy) {
  Var x = tensor::dvector("x");
  Array v = Array::from_vector<double>({1, kNaN, 9, kNaN, -4});
  EXPECT_EQ(eval({x}, tensor::argmax(x), {v}).item(), 1);
  EXPECT_EQ(eval({x}, tensor::argmin(x), {v}).item(), 1);
}

TEST(ArgMaxOps, ResultIsInt64WithKeepdims) {
  Var x = tensor::ftensor3("x");
  Var r = tensor::argmax(x, 1, /*keepdims=*/true);
  EXPECT_EQ(r.dtype(), DType::Int64);
  Array out = eval({x}, r, {Array::randn({2, 3, 4}, 1, DType::Float32)});
  EXPECT_EQ(out.shape(), (Shape{2, 1, 4}));
  Array flat = eval({x}, tensor::argmin(x, std::nullopt, true), {Array::randn({2, 3, 4}, 1, DType::Float32)});
  EXPECT_EQ(flat.shape(), (Shape{1, 1, 1}));
  EXPECT_EQ(tensor::argmax(x).ndim(), 0);
}

TEST(ArgMaxOps, AxisOutOfRangeIsAShapeError) {
  Var x = tensor::matrix("scores");
  std::string msg = error_of<ShapeError>([&] { tensor::argmax(x, 2); });
  expect_names(msg, {"argmax", "scores", "axis 2", "rank 2"});
}

TEST(ArgMaxOps, StaticallyEmptyAxisFailsAtBuildTime) {
  Var x = tensor::tensor(DType::Float32, {0, 3}, "x");
  std::string msg = error_of<ValueError>([&] { tensor::argmax(x, 0); });
  expect_names(msg, {"attempt to get argmax of an empty sequence", "x", "(0, 3)"});
  EXPECT_NO_THROW(tensor::argmax(x, 1));  // lanes of length 3; there are just none of them
}

TEST(ArgMaxOps, EmptyAxisAtRunTimeIsAValueError) {
  Var x = tensor::matrix("x");
  Function f = function({x}, {tensor::argmin(x, 0)});
  std::string msg = error_of<ValueError>([&] { f({Array::zeros({0, 3}, config().floatX)}); });
  expect_names(msg, {"attempt to get argmin of an empty sequence", "x", "(0, 3)"});
  Function flat = function({x}, {tensor::argmax(x)});
  msg = error_of<ValueError>([&] { flat({Array::zeros({2, 0}, config().floatX)}); });
  expect_names(msg, {"attempt to get argmax of an empty sequence", "x", "(2, 0)"});
  EXPECT_EQ(function({x}, {tensor::argmax(x, 1)})({Array::zeros({0, 3}, config().floatX)})[0].shape(), (Shape{0}));
}

TEST(ArgMaxOps, UndefinedVarIsAValueError) {
  EXPECT_THROW(tensor::argmax(Var()), ValueError);
}

// ---- matmul ----

TEST(MatmulOps, ScalarOperandIsAShapeError) {
  Var a = tensor::scalar("a"), b = tensor::matrix("b");
  std::string msg = error_of<ShapeError>([&] { tensor::matmul(a, b); });
  expect_names(msg, {"matmul", "a", "b", "rank >= 1"});
}

TEST(MatmulOps, StaticInnerMismatchNamesBothOperands) {
  Var a = tensor::tensor(DType::Float32, {3, 4}, "a"), b = tensor::tensor(DType::Float32, {5, 2}, "b");
  std::string msg = error_of<ShapeError>([&] { tensor::matmul(a, b); });
  expect_names(msg, {"matmul(a, b)", "inner dimensions", "float32 (3, 4)", "float32 (5, 2)"});
}

TEST(MatmulOps, StaticBatchMismatchIsAShapeError) {
  Var a = tensor::tensor(DType::Float64, {2, 3, 4}, "a"), b = tensor::tensor(DType::Float64, {3, 4, 5}, "b");
  std::string msg = error_of<ShapeError>([&] { tensor::matmul(a, b); });
  expect_names(msg, {"batch dimensions", "a", "b", "(2, 3, 4)", "(3, 4, 5)"});
}

TEST(MatmulOps, RunTimeMismatchesNameBothShapes) {
  Var a = tensor::ftensor3("a"), b = tensor::ftensor3("b");
  Function f = function({a, b}, {tensor::matmul(a, b)});
  std::string msg = error_of<ShapeError>(
      [&] { f({Array::zeros({2, 3, 4}, DType::Float32), Array::zeros({2, 5, 2}, DType::Float32)}); });
  expect_names(msg, {"inner dimensions", "a has shape (2, 3, 4)", "b has shape (2, 5, 2)"});
  msg = error_of<ShapeError>(
      [&] { f({Array::zeros({2, 3, 4}, DType::Float32), Array::zeros({3, 4, 5}, DType::Float32)}); });
  expect_names(msg, {"batch dimensions", "a has shape (2, 3, 4)", "b has shape (3, 4, 5)"});
  // Operands cast for promotion are still named by the user's names.
  Var i = tensor::imatrix("i"), x = tensor::fmatrix("x");
  Function mixed = function({i, x}, {tensor::matmul(i, x)});
  msg = error_of<ShapeError>(
      [&] { mixed({Array::zeros({2, 3}, DType::Int32), Array::zeros({4, 2}, DType::Float32)}); });
  expect_names(msg, {"matmul(i, x)", "i has shape (2, 3)", "x has shape (4, 2)"});
}

TEST(MatmulOps, DtypesPromoteAndVectorsDropTheirDim) {
  EXPECT_EQ(tensor::matmul(tensor::imatrix("a"), tensor::fmatrix("b")).dtype(), DType::Float64);
  EXPECT_EQ(tensor::matmul(tensor::bmatrix("a"), tensor::fmatrix("b")).dtype(), DType::Float32);
  EXPECT_EQ(tensor::matmul(tensor::tensor(DType::Bool, {-1, -1}), tensor::tensor(DType::Bool, {-1, -1})).dtype(),
            DType::Int64);
  EXPECT_EQ(tensor::matmul(tensor::fvector("a"), tensor::fvector("b")).ndim(), 0);
  Var r = tensor::matmul(tensor::tensor(DType::Float32, {-1, 1, 3, 4}), tensor::tensor(DType::Float32, {5, 4, 2}));
  EXPECT_EQ(r.static_shape(), (std::vector<int64_t>{-1, 5, 3, 2}));
}

// A float matmul through the backend kernel against plain loops, with batch strides that
// are neither contiguous nor positive (a reversed, sliced batch).
TEST(MatmulOps, KernelHandlesStridedAndReversedBatches) {
  Var a = tensor::ftensor3("a"), b = tensor::fmatrix("b");
  Var d = tensor::dtensor3("d"), e = tensor::dmatrix("e");
  Function f = function({a, b}, {tensor::matmul(a, b)});
  Function g = function({d, e}, {tensor::matmul(d, e)});
  Array big = Array::randn({6, 33, 17}, 3, DType::Float64);
  Array b_rows = Array::randn({9, 17}, 4, DType::Float64);
  // Batches 5, 3, 1 (batch stride -2 matrices); b is (17, 9) stored column-major.
  Array a64 = big.slice(0, 5, -7, -2), b64 = b_rows.transpose();
  Array a32 = big.astype(DType::Float32).slice(0, 5, -7, -2), b32 = b_rows.astype(DType::Float32).transpose();
  ASSERT_EQ(a64.shape(), (Shape{3, 33, 17}));
  ASSERT_EQ(a32.strides()[0], -2 * 33 * 17);
  std::vector<double> A = a64.to_vector<double>(), B = b64.to_vector<double>();
  Array r32 = f({a32, b32})[0];
  Array r64 = g({a64, b64})[0];
  ASSERT_EQ(r32.shape(), (Shape{3, 33, 9}));
  std::vector<double> got32 = r32.to_vector<double>(), got64 = r64.to_vector<double>();
  for (int64_t bi = 0; bi < 3; ++bi)
    for (int64_t i = 0; i < 33; ++i)
      for (int64_t j = 0; j < 9; ++j) {
        double s = 0;
        for (int64_t p = 0; p < 17; ++p) s += A[(bi * 33 + i) * 17 + p] * B[p * 9 + j];
        const int64_t o = (bi * 33 + i) * 9 + j;
        EXPECT_NEAR(got64[o], s, 1e-12 * (1 + std::abs(s)));
        EXPECT_NEAR(got32[o], s, 5e-5 * (1 + std::abs(s)));
      }
}

TEST(MatmulOps, FloatNodesUseTheBlasKernel) {
  Var a = tensor::ftensor3("a"), b = tensor::fmatrix("b");
  Var r = tensor::matmul(a, b);
  const graph::Apply& node = *r.node()->owner;
  EXPECT_EQ(node.op().name(), "BatchedMatmul");
  EXPECT_NE(backends::cpu_backend().kernel(node).name(), "reference");
  std::string plan = function({a, b}, {r}).explain();
  EXPECT_NE(plan.find("BatchedMatmul"), std::string::npos) << plan;
  EXPECT_EQ(plan.find("kernel reference"), std::string::npos) << plan;
}

// ---- softmax / log_softmax ----

TEST(NnetOps, SoftmaxOfLargeValuesStaysFinite) {
  Var x = tensor::fmatrix("x");
  Array v = Array::from_vector<float>({1000, 1000, 999, -1000, 0, 1000}, Shape{2, 3});
  std::vector<double> p = eval({x}, tensor::softmax(x), {v}).to_vector<double>();
  std::vector<double> lp = eval({x}, tensor::log_softmax(x), {v}).to_vector<double>();
  for (double y : p) EXPECT_TRUE(std::isfinite(y));
  for (double y : lp) EXPECT_TRUE(std::isfinite(y));
  const double z = 2 + std::exp(-1.0);
  EXPECT_NEAR(p[0], 1 / z, 1e-6);
  EXPECT_NEAR(p[2], std::exp(-1.0) / z, 1e-6);
  EXPECT_NEAR(p[5], 1.0, 1e-6);
  EXPECT_NEAR(lp[2], -1 - std::log(z), 1e-5);
  EXPECT_NEAR(lp[3], -2000.0, 1e-3);  // log_softmax keeps what softmax rounds to 0
}

TEST(NnetOps, SoftmaxRowsSumToOneAndHandleMinusInfinity) {
  Var x = tensor::dmatrix("x");
  Array v = Array::from_vector<double>({-kInf, 0, 1, 2, 3, 4}, Shape{2, 3});
  std::vector<double> p = eval({x}, tensor::softmax(x, 1), {v}).to_vector<double>();
  EXPECT_EQ(p[0], 0.0);
  EXPECT_NEAR(p[0] + p[1] + p[2], 1.0, 1e-15);
  EXPECT_NEAR(p[3] + p[4] + p[5], 1.0, 1e-15);
  EXPECT_EQ(eval({x}, tensor::log_softmax(x), {v}).to_vector<double>()[0], -kInf);
}

TEST(NnetOps, SoftmaxOfIntegersIsComputedInFloat) {
  EXPECT_EQ(tensor::softmax(tensor::ivector("i")).dtype(), DType::Float64);
  EXPECT_EQ(tensor::log_softmax(tensor::bvector("b")).dtype(), upcast_to_float(DType::Int8));
  EXPECT_EQ(tensor::softmax(tensor::fmatrix("f")).node()->owner->op().name(), "Softmax");
  EXPECT_EQ(tensor::log_softmax(tensor::fmatrix("f")).node()->owner->op().name(), "LogSoftmax");
}

TEST(NnetOps, SoftmaxShapeErrorsNameTheVariable) {
  std::string msg = error_of<ShapeError>([&] { tensor::softmax(tensor::scalar("logits")); });
  expect_names(msg, {"softmax(logits)", "rank >= 1"});
  msg = error_of<ShapeError>([&] { tensor::log_softmax(tensor::matrix("logits"), 2); });
  expect_names(msg, {"log_softmax(logits)", "axis 2", "rank 2"});
}

// ---- categorical_crossentropy ----

TEST(NnetOps, CrossentropyWithIndicesAndOneHotAgree) {
  Var logits = tensor::fmatrix("logits"), idx = tensor::ivector("idx"), onehot = tensor::fmatrix("onehot");
  Var p = tensor::softmax(logits);
  Array lv = Array::randn({5, 4}, 7, DType::Float32);
  Array iv = Array::from_vector<int32_t>({0, 3, 1, 1, 2});
  Array ov = Array::zeros({5, 4}, DType::Float32);
  for (int i = 0; i < 5; ++i) ov.data<float>()[i * 4 + iv.data<int32_t>()[i]] = 1;
  Array by_index = eval({logits, idx}, tensor::categorical_crossentropy(p, idx), {lv, iv});
  Array by_matrix = eval({logits, onehot}, tensor::categorical_crossentropy(p, onehot), {lv, ov});
  ASSERT_EQ(by_index.shape(), (Shape{5}));
  EXPECT_EQ(by_index.dtype(), DType::Float32);
  EXPECT_EQ(by_matrix.dtype(), DType::Float32);
  EXPECT_TRUE(allclose(by_index, by_matrix, 1e-6, 1e-6)) << by_index << "\n" << by_matrix;
  // An integer one-hot matrix takes the probabilities' dtype.
  Var ionehot = tensor::imatrix("ionehot");
  EXPECT_EQ(tensor::categorical_crossentropy(p, ionehot).dtype(), DType::Float32);
  EXPECT_EQ(tensor::categorical_crossentropy(p, idx).node()->owner->op().name(), "CategoricalCrossentropy");
}

TEST(NnetOps, CrossentropyIndexOutOfRangeIsAnIndexError) {
  Var p = tensor::dmatrix("probs"), t = tensor::lvector("labels");
  Function f = function({p, t}, {tensor::categorical_crossentropy(p, t)});
  Array pv = Array::full({3, 5}, 0.2, DType::Float64);
  std::string msg = error_of<IndexError>([&] { f({pv, Array::from_vector<int64_t>({0, 5, 1})}); });
  expect_names(msg, {"class index 5", "row 1", "labels", "5 classes", "probs", "(3, 5)"});
  msg = error_of<IndexError>([&] { f({pv, Array::from_vector<int64_t>({0, 1, -1})}); });
  expect_names(msg, {"class index -1", "row 2"});
}

TEST(NnetOps, CrossentropyRejectsBadOperands) {
  Var p = tensor::matrix("probs");
  std::string msg = error_of<ShapeError>([&] { tensor::categorical_crossentropy(tensor::tensor3("p3"), p); });
  expect_names(msg, {"categorical_crossentropy(p3, probs)", "matrix", "p3"});
  msg = error_of<TypeError>([&] { tensor::categorical_crossentropy(p, tensor::fvector("labels")); });
  expect_names(msg, {"labels", "integer", "float32"});
  msg = error_of<ShapeError>([&] { tensor::categorical_crossentropy(p, tensor::itensor3("labels")); });
  expect_names(msg, {"labels", "int32"});
  Var p34 = tensor::tensor(DType::Float32, {3, 4}, "p34");
  msg = error_of<ShapeError>(
      [&] { tensor::categorical_crossentropy(p34, tensor::tensor(DType::Int32, {2}, "labels")); });
  expect_names(msg, {"3 rows", "2 targets", "p34", "labels"});
  msg = error_of<ShapeError>(
      [&] { tensor::categorical_crossentropy(p34, tensor::tensor(DType::Float32, {3, 5}, "onehot")); });
  expect_names(msg, {"p34", "onehot", "(3, 4)", "(3, 5)"});
}

TEST(NnetOps, CrossentropyRowMismatchAtRunTimeIsAShapeError) {
  Var p = tensor::dmatrix("probs"), t = tensor::ivector("labels");
  Function f = function({p, t}, {tensor::categorical_crossentropy(p, t)});
  std::string msg = error_of<ShapeError>(
      [&] { f({Array::full({3, 2}, 0.5, DType::Float64), Array::from_vector<int32_t>({0, 1})}); });
  expect_names(msg, {"probs has shape (3, 2)", "labels has shape (2,)"});
}

// ---- the fused softmax + crossentropy (internal ops made by specialize) ----

Var fused_loss(const Var& x, const Var& labels, int output = 0) {
  return Var(ops::softmax_crossentropy(x.node(), labels.node())[output]);
}

TEST(NnetOps, FusedCrossentropyStaysFiniteWhereTheProbabilityUnderflows) {
  // Row 0's label has probability e^-205, 0 in float32: -log(softmax) is inf unfused, while
  // the fused op's m + log(sum) - x[label] keeps the exact loss.
  Var x = tensor::fmatrix("x"), y = tensor::ivector("y");
  Var loss = tensor::categorical_crossentropy(tensor::softmax(x), y);
  const std::vector<Array> v = {Array::from_vector<float>({0, -200, 5, 1, 2, 3}, Shape{2, 3}),
                                Array::from_vector<int32_t>({1, 2})};
  std::vector<float> fast = function({x, y}, {loss}, {.mode = "fast_run"})(v)[0].to_vector<float>();
  std::vector<float> none = function({x, y}, {loss}, {.mode = "none"})(v)[0].to_vector<float>();
  EXPECT_TRUE(std::isinf(none[0]));
  const double lse0 = 5 + std::log(1 + std::exp(-5.0) + std::exp(-205.0));
  EXPECT_NEAR(fast[0], lse0 + 200, 1e-4);
  EXPECT_NEAR(fast[1], none[1], 1e-6);
}

TEST(NnetOps, FusedCrossentropyValuesNaNAndLargeInputs) {
  Var x = tensor::dmatrix("x"), y = tensor::lvector("y");
  Function f = function({x, y}, {fused_loss(x, y, 0), fused_loss(x, y, 1)}, {.mode = "none"});
  // Row 0: large values (no overflow); row 1: a NaN makes the whole row NaN, as softmax;
  // row 2: -inf at a class that is not the label has probability 0.
  auto out = f({Array::from_vector<double>({1000, 1001, 999, 0, kNaN, 1, -kInf, 2, 2}, Shape{3, 3}),
                Array::from_vector<int64_t>({0, 2, 1})});
  std::vector<double> loss = out[0].to_vector<double>(), sm = out[1].to_vector<double>();
  const double z = 1 + std::exp(-1.0) + std::exp(-2.0);
  EXPECT_NEAR(loss[0], 1 + std::log(z), 1e-12);
  EXPECT_NEAR(sm[1], 1 / z, 1e-12);
  EXPECT_TRUE(std::isnan(loss[1]));
  for (int j = 3; j < 6; ++j) EXPECT_TRUE(std::isnan(sm[j])) << j;
  EXPECT_NEAR(loss[2], std::log(2.0), 1e-12);
  EXPECT_EQ(sm[6], 0.0);
  EXPECT_NEAR(sm[7] + sm[8], 1.0, 1e-15);
}

TEST(NnetOps, FusedCrossentropyBuildersCheckTheirOperands) {
  Var x = tensor::matrix("logits"), y = tensor::ivector("labels");
  std::string msg = error_of<TypeError>([&] { fused_loss(x, tensor::fvector("soft")); });
  expect_names(msg, {"softmax_crossentropy(logits, soft)", "integer vector", "float32"});
  msg = error_of<TypeError>([&] { fused_loss(tensor::imatrix("ints"), y); });
  expect_names(msg, {"float matrix", "ints", "int32"});
  Var x3 = tensor::tensor(DType::Float32, {3, 4}, "x3");
  msg = error_of<ShapeError>([&] { fused_loss(x3, tensor::tensor(DType::Int32, {2}, "two")); });
  expect_names(msg, {"3 rows", "2 labels", "x3", "two"});
  // The gradient op: a vector dy; its dtype follows the softmax.
  msg = error_of<ShapeError>(
      [&] { ops::softmax_crossentropy_grad(tensor::matrix("dy").node(), tensor::matrix("sm").node(), y.node()); });
  expect_names(msg, {"softmax_crossentropy_grad(sm, labels)", "gradient vector", "dy"});
  EXPECT_EQ(ops::softmax_crossentropy_grad(tensor::dvector("dy").node(), tensor::fmatrix("sm").node(), y.node())
                ->type.dtype,
            DType::Float32);
}

TEST(NnetOps, FusedCrossentropyOpContract) {
  Var x = tensor::tensor(DType::Float32, {-1, 10}, "x"), y = tensor::ivector("y");
  std::vector<graph::VarPtr> outs = ops::softmax_crossentropy(x.node(), y.node());
  const graph::Apply& node = *outs[0]->owner;
  EXPECT_EQ(node.op().display(), "SoftmaxCrossentropy");
  EXPECT_EQ(outs[0]->type.dims, (std::vector<int64_t>{-1}));
  EXPECT_EQ(outs[1]->type, x.node()->type);
  const graph::Cost c = node.op().cost(node, {{64, 10}, {64}});
  EXPECT_GT(c.flops, 4 * 640.0 - 1);
  EXPECT_EQ(c.bytes, 2 * 640 * 4.0 + 64 * 8.0);
  EXPECT_EQ(node.op().infer_shape(node, {Array::zeros({64, 10}, DType::Float32), Array::zeros({64}, DType::Int32)}),
            (std::vector<Shape>{{64}, {64, 10}}));
}

// ---- one_hot ----

TEST(NnetOps, OneHotValuesAndDefaultDtype) {
  Var i = tensor::ivector("i");
  Array out = eval({i}, tensor::one_hot(i, 3), {Array::from_vector<int32_t>({2, 0, 2})});
  EXPECT_EQ(out.dtype(), config().floatX);
  EXPECT_EQ(out.shape(), (Shape{3, 3}));
  EXPECT_EQ(out.to_vector<double>(), (std::vector<double>{0, 0, 1, 1, 0, 0, 0, 0, 1}));
  EXPECT_EQ(tensor::one_hot(i, 3, DType::Int64).dtype(), DType::Int64);
  EXPECT_EQ(tensor::one_hot(i, 3).static_shape(), (std::vector<int64_t>{-1, 3}));
}

TEST(NnetOps, OneHotErrors) {
  Var i = tensor::lvector("labels");
  std::string msg = error_of<ShapeError>([&] { tensor::one_hot(tensor::imatrix("m"), 3); });
  expect_names(msg, {"one_hot(m, 3)", "vector", "int32"});
  msg = error_of<TypeError>([&] { tensor::one_hot(tensor::fvector("f"), 3); });
  expect_names(msg, {"one_hot(f, 3)", "integer", "float32"});
  msg = error_of<ValueError>([&] { tensor::one_hot(i, -2); });
  expect_names(msg, {"labels", "-2"});
  Function f = function({i}, {tensor::one_hot(i, 4)});
  msg = error_of<IndexError>([&] { f({Array::from_vector<int64_t>({1, 3, 4})}); });
  expect_names(msg, {"index 4", "position 2", "labels", "4 classes"});
  msg = error_of<IndexError>([&] { f({Array::from_vector<int64_t>({-1})}); });
  expect_names(msg, {"index -1", "position 0"});
}

}  // namespace
}  // namespace theon
