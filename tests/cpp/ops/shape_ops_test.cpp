// Shape and indexing ops: every error path (type and message), static shapes, symbolic
// slice bounds, negative steps, the givens minibatch idiom, set/inc_subtensor semantics.
#include <theon/theon.hpp>

#include "ops/shape.hpp"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

namespace theon {
namespace {

using D = DType;
using tensor::lscalar;

template <class E, class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "<no " + std::string(typeid(E).name()) + " thrown>";
}

// The statement throws E, and its message names every fragment (variables, shapes).
#define EXPECT_ERROR(E, stmt, ...)                                                                     \
  do {                                                                                                 \
    EXPECT_THROW(stmt, E);                                                                             \
    const std::string msg_ = message_of<E>([&] { stmt; });                                            \
    for (const char* part_ : {__VA_ARGS__})                                                            \
      EXPECT_NE(msg_.find(part_), std::string::npos) << "missing '" << part_ << "' in: " << msg_;     \
  } while (0)

Array f64(std::vector<double> v, Shape s) { return Array::from_vector(v, s); }
Array i64(std::vector<int64_t> v) { return Array::from_vector(v); }
Array arange(int64_t n, Shape s) { return Array::arange(n, D::Float64).reshape(s); }
std::vector<double> run1(const Function& f, const std::vector<Array>& in) { return f(in)[0].to_vector<double>(); }

// ---- reshape / flatten / broadcast_to ----

TEST(Reshape, StaticErrorsNameTheVariableAndShapes) {
  Var xs = tensor::tensor(D::Float32, {2, 3}, "xs");
  EXPECT_ERROR(ShapeError, tensor::reshape(xs, {4, 2}), "xs", "(2, 3)", "(4, 2)");
  EXPECT_ERROR(ShapeError, tensor::reshape(xs, {-1, -1}), "xs", "(-1, -1)", "one unknown");
  EXPECT_ERROR(ShapeError, tensor::reshape(xs, {-3, 2}), "xs", "-3");
  EXPECT_ERROR(ShapeError, tensor::reshape(xs, {0, -1}), "xs", "(2, 3)", "(0, -1)");
  EXPECT_EQ(tensor::reshape(xs, {-1, 2}).static_shape(), (std::vector<int64_t>{3, 2}));
}

TEST(Reshape, RunTimeMismatchNamesShapes) {
  Var xm = tensor::matrix("xm", D::Float64);
  Function f = function({xm}, {tensor::reshape(xm, {5})});
  EXPECT_ERROR(ShapeError, f({arange(6, {2, 3})}), "xm", "(2, 3)", "(5,)");
}

TEST(Reshape, SymbolicShape) {
  Var x = tensor::matrix("x", D::Float64);
  Var s = tensor::tensor(D::Int64, {3}, "s");
  Function f = function({x, s}, {tensor::reshape(x, s)});
  Array out = f({arange(12, {3, 4}).transpose(), i64({2, -1, 3})})[0];  // a non-contiguous input: copied
  EXPECT_EQ(out.shape(), (Shape{2, 2, 3}));
  EXPECT_EQ(out.to_vector<double>(), (std::vector<double>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
  EXPECT_ERROR(ShapeError, f({arange(12, {3, 4}), i64({5, -1, 1})}), "x", "(3, 4)", "(5, -1, 1)");
  Var lv = tensor::lvector("lv");
  EXPECT_ERROR(ShapeError, tensor::reshape(x, lv), "lv", "static");
  EXPECT_ERROR(TypeError, tensor::reshape(x, tensor::tensor(D::Float32, {2}, "fs")), "fs", "integer vector");
  // reshape(y, shape(x)): the shape vector of a known rank.
  Var y = tensor::vector("y", D::Float64);
  Function g = function({x, y}, {tensor::reshape(y, x.shape())});
  EXPECT_EQ(g({arange(6, {2, 3}), arange(6, {6})})[0].shape(), (Shape{2, 3}));
}

TEST(Flatten, BadNdim) {
  Var x = tensor::tensor3("x3");
  EXPECT_ERROR(ShapeError, tensor::flatten(x, 0), "x3", "ndim");
  EXPECT_ERROR(ShapeError, tensor::flatten(x, 4), "x3", "float32 (?, ?, ?)");
  EXPECT_EQ(tensor::flatten(tensor::tensor(D::Int8, {2, 3, 4}), 2).static_shape(), (std::vector<int64_t>{2, 12}));
}

TEST(BroadcastTo, Errors) {
  Var xb = tensor::tensor(D::Float32, {3}, "xb");
  EXPECT_ERROR(ShapeError, tensor::broadcast_to(xb, {2, 4}), "xb", "(3,)", "(2, 4)");
  EXPECT_ERROR(ShapeError, tensor::broadcast_to(xb, {-2, 3}), "xb", "negative");
  EXPECT_ERROR(ShapeError, tensor::broadcast_to(tensor::matrix("m2"), {5}), "m2", "(5,)");
  Var xv = tensor::vector("xv", D::Float64);
  Function f = function({xv}, {tensor::broadcast_to(xv, {2, 4})});
  EXPECT_ERROR(ShapeError, f({arange(3, {3})}), "xv", "(3,)", "(2, 4)");
  EXPECT_EQ(run1(f, {arange(1, {1})}), std::vector<double>(8, 0.0));
}

// ---- Join ----

TEST(Join, StaticMismatchNamesEachInput) {
  Var a = tensor::tensor(D::Float32, {2, 3}, "a"), b = tensor::tensor(D::Float32, {3, 3}, "b");
  EXPECT_ERROR(ShapeError, tensor::concatenate({a, b}, 1), "a (float32 (2, 3))", "b (float32 (3, 3))", "dim 0");
  EXPECT_EQ(tensor::concatenate({a, b}, 0).static_shape(), (std::vector<int64_t>{5, 3}));
  EXPECT_ERROR(ShapeError, tensor::stack({a, b}), "a (float32 (2, 3))", "b (float32 (3, 3))");
  EXPECT_ERROR(ShapeError, tensor::concatenate({a, tensor::vector("v")}), "a", "v", "same rank");
  EXPECT_ERROR(ShapeError, tensor::concatenate({a, b}, 2), "axis 2", "a", "b");
  EXPECT_ERROR(ShapeError, tensor::concatenate({tensor::scalar("s0"), tensor::scalar("s1")}), "s0", "s1",
               "zero-dimensional");
  EXPECT_THROW(tensor::concatenate({}), ValueError);
}

TEST(Join, RunTimeMismatchNamesEachInput) {
  Var a = tensor::imatrix("a"), b = tensor::fmatrix("b");  // int32 + float32 -> float64 (casts inserted)
  Var c = tensor::concatenate({a, b}, 1);
  EXPECT_EQ(c.dtype(), D::Float64);
  Function f = function({a, b}, {c});
  EXPECT_ERROR(ShapeError, f({Array::zeros({2, 3}, D::Int32), Array::zeros({3, 3}, D::Float32)}), "a (2, 3)",
               "b (3, 3)");
  Function g = function({a, b}, {tensor::stack({a, b}, 1)});
  EXPECT_ERROR(ShapeError, g({Array::zeros({2, 3}, D::Int32), Array::zeros({2, 2}, D::Float32)}), "a (2, 3)",
               "b (2, 2)", "new axis");
  Array out = g({Array::ones({2, 3}, D::Int32), Array::zeros({2, 3}, D::Float32)})[0];
  EXPECT_EQ(out.shape(), (Shape{2, 2, 3}));
}

// ---- Shape / Alloc ----

TEST(ShapeOps, StaticTypes) {
  Var x = tensor::tensor(D::Float32, {4, -1, 2}, "x");
  EXPECT_EQ(x.shape().static_shape(), (std::vector<int64_t>{3}));
  EXPECT_EQ(x.shape().dtype(), D::Int64);
  EXPECT_EQ(tensor::size(x).ndim(), 0);
  EXPECT_EQ(tensor::zeros_like(x).static_shape(), (std::vector<int64_t>{4, -1, 2}));
  Function f = function({x}, {tensor::zeros_like(x, D::Int16), tensor::ones_like(x)});
  auto out = f({Array::ones({4, 5, 2}, D::Float32)});
  EXPECT_EQ(out[0].dtype(), D::Int16);
  EXPECT_EQ(out[0].shape(), (Shape{4, 5, 2}));
  EXPECT_EQ(out[1].to_vector<double>(), std::vector<double>(40, 1.0));
}

TEST(Alloc, Errors) {
  Var v = tensor::scalar("v");
  EXPECT_ERROR(ShapeError, tensor::alloc(v, std::vector<int64_t>{2, -1}), "alloc", "v", "-1");
  EXPECT_ERROR(TypeError, tensor::alloc(v, {tensor::scalar("fsize")}), "fsize", "integer scalar");
  EXPECT_ERROR(ShapeError, tensor::alloc(tensor::matrix("big"), std::vector<int64_t>{3}), "big", "(3,)");
  EXPECT_ERROR(ShapeError, tensor::alloc(tensor::tensor(D::Float32, {3}, "row"), std::vector<int64_t>{2, 4}), "row",
               "(3,)", "(2, 4)");
  Var n = lscalar("n");
  Function f = function({v, n}, {tensor::alloc(v, {n, n})});
  EXPECT_ERROR(ShapeError, f({Array::scalar(1, D::Float32), Array::scalar(-2, D::Int64)}), "n", "-2");
  EXPECT_EQ(run1(f, {Array::scalar(7, D::Float32), Array::scalar(2, D::Int64)}), std::vector<double>(4, 7.0));
  EXPECT_EQ(tensor::alloc(as_var(0.5), std::vector<int64_t>{2}).dtype(), config().floatX);
}

// ---- Subtensor ----

TEST(Subtensor, BuildErrors) {
  Var xs = tensor::tensor(D::Float32, {3, 4}, "xs");
  EXPECT_ERROR(IndexError, (xs[std::vector<Index>{0, 1, 2}]), "xs", "too many indices", "(3, 4)");
  EXPECT_ERROR(IndexError, xs[3], "xs", "index 3", "size 3");
  EXPECT_ERROR(IndexError, (xs[{Slice{}, -5}]), "xs", "index -5", "size 4");
  EXPECT_ERROR(ValueError, xs[(Slice{0, 2, 0})], "step cannot be zero");
  Var fb = tensor::scalar("fb");
  EXPECT_ERROR(TypeError, xs[(Slice{fb, 2, {}})], "fb", "integer scalar");
  Var i3 = tensor::tensor(D::Int64, {3}, "i3"), i2 = tensor::tensor(D::Int64, {2}, "i2");
  EXPECT_ERROR(ShapeError, (xs[{i3, i2}]), "xs", "i3", "i2", "broadcast");
  EXPECT_ERROR(TypeError, xs[tensor::tensor(D::Bool, {-1}, "mask")], "mask", "boolean");
}

TEST(Subtensor, StaticShapes) {
  Var x = tensor::tensor(D::Float32, {4, 6, -1}, "x");
  EXPECT_EQ((x[{Slice{1, 3, {}}, Slice{std::nullopt, std::nullopt, -2}}].static_shape()),
            (std::vector<int64_t>{2, 3, -1}));
  EXPECT_EQ((x[{-1, Slice{lscalar("i"), std::nullopt, {}}}].static_shape()), (std::vector<int64_t>{-1, -1}));
  EXPECT_EQ((x[Slice{10, 20, {}}].static_shape()[0]), 0);
}

// x[i, j]: integer arrays broadcast together (NumPy), one take over the dims they index.
TEST(Subtensor, SeveralIntegerArrays) {
  Var x = tensor::tensor(D::Float64, {4, 5, -1}, "x");
  Var i = tensor::lvector("i"), j = tensor::lmatrix("j");
  EXPECT_EQ((x[{i, j}].static_shape()), (std::vector<int64_t>{-1, -1, -1}));
  EXPECT_EQ((x[{i, Slice{}, j}].ndim()), 3);  // separated: the indexed dims first
  Function f = function({x, i, j}, {x[{i, j}], x[{i, Slice{}, j}]});
  const Array xv = arange(4 * 5 * 2, {4, 5, 2}).astype(D::Float64);
  const Array iv = Array::from_vector<int64_t>({3, -4}), jv = Array::from_vector<int64_t>({1, -1}, Shape{2, 1});
  auto out = f({xv, iv, jv});
  EXPECT_EQ(out[0].shape(), (Shape{2, 2, 2}));
  // out[a, b] = x[i[b], j[a]]: x[3, 1], x[0, 1], x[3, 4], x[0, 4]
  EXPECT_EQ(out[0].to_vector<double>(), (std::vector<double>{32, 33, 2, 3, 38, 39, 8, 9}));
  EXPECT_EQ(out[1].shape(), (Shape{2, 2, 5}));  // x[i, :, j]: (i, j) broadcast to (2, 2), then x's dim 1
  EXPECT_ERROR(IndexError, f({xv, Array::from_vector<int64_t>({4}), jv}), "x", "index 4", "axis 0", "size 4", "i");
  EXPECT_ERROR(IndexError, f({xv, iv, Array::from_vector<int64_t>({5}, Shape{1, 1})}), "x", "index 5", "axis 1",
               "size 5", "j");
  EXPECT_ERROR(ShapeError, f({xv, Array::from_vector<int64_t>({0, 1, 2}), Array::from_vector<int64_t>({0, 1}, Shape{1, 2})}),
               "i", "j", "broadcast");
}

TEST(Subtensor, IntegerIndexOutOfRangeAtCallTime) {
  Var xv = tensor::vector("xv", D::Float64);
  Function f = function({xv}, {xv[5]});
  EXPECT_ERROR(IndexError, f({arange(3, {3})}), "Subtensor", "xv", "index 5", "axis 0", "size 3");
  Var i = lscalar("i");
  Function g = function({xv, i}, {xv[i]});
  EXPECT_ERROR(IndexError, g({arange(3, {3}), Array::scalar(-4, D::Int64)}), "xv", "index -4", "size 3");
  EXPECT_EQ(run1(g, {arange(3, {3}), Array::scalar(-3, D::Int64)}), (std::vector<double>{0}));
}

TEST(Subtensor, SymbolicBoundsAndNegativeSteps) {
  Var x = tensor::vector("x", D::Float64);
  Var a = lscalar("a"), b = tensor::iscalar("b"), s = lscalar("s");
  Function f = function({x, a, b, s}, {x[Slice{a, b, s}]});
  Array v = arange(10, {10});
  auto call = [&](int64_t i, int64_t j, int64_t k) {
    return run1(f, {v, Array::scalar(double(i), D::Int64), Array::scalar(double(j), D::Int32),
                    Array::scalar(double(k), D::Int64)});
  };
  EXPECT_EQ(call(2, 7, 2), (std::vector<double>{2, 4, 6}));
  EXPECT_EQ(call(-3, 100, 1), (std::vector<double>{7, 8, 9}));
  EXPECT_EQ(call(8, 1, -3), (std::vector<double>{8, 5, 2}));
  EXPECT_EQ(call(-1, -11, -4), (std::vector<double>{9, 5, 1}));
  EXPECT_EQ(call(5, 5, 1), (std::vector<double>{}));
  EXPECT_ERROR(ValueError, call(0, 5, 0), "step cannot be zero");

  Function r = function({x}, {x[Slice{std::nullopt, std::nullopt, -1}], x[Slice{std::nullopt, 2, -3}]});
  auto out = r({v});
  EXPECT_EQ(out[0].to_vector<double>(), (std::vector<double>{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(out[1].to_vector<double>(), (std::vector<double>{9, 6, 3}));
}

TEST(Subtensor, GivensMinibatchIdiom) {
  SharedVar X = shared(arange(30, {10, 3}), "X");
  const int64_t B = 3;
  for (bool int32_index : {false, true}) {
    Var i = int32_index ? tensor::iscalar("i") : lscalar("i");
    Var x = tensor::matrix("x", D::Float64);
    Function f = function({i}, {tensor::sum(x)}, {.givens = {{x, X[Slice{i * B, (i + 1) * B, {}}]}}});
    for (int64_t k = 0; k < 4; ++k) {
      double want = 0;
      for (int64_t e = 3 * B * k; e < std::min<int64_t>(30, 3 * B * (k + 1)); ++e) want += double(e);
      EXPECT_EQ(run1(f, {Array::scalar(double(k), int32_index ? D::Int32 : D::Int64)})[0], want) << "batch " << k;
    }
  }
}

TEST(Subtensor, ArrayIndexFollowsNumPyDimOrder) {
  Var x = tensor::tensor3("x", D::Float64);
  Var idx = tensor::lvector("idx");
  Function f = function({x, idx}, {x[{0, Slice{}, idx}], x[{Slice{}, 1, idx}]});
  auto out = f({arange(60, {3, 4, 5}), i64({4, 0})});
  EXPECT_EQ(out[0].shape(), (Shape{2, 4}));  // separated by a slice: the indexed dim first
  EXPECT_EQ(out[0].to_vector<double>(), (std::vector<double>{4, 9, 14, 19, 0, 5, 10, 15}));
  EXPECT_EQ(out[1].shape(), (Shape{3, 2}));  // adjacent: in place
  EXPECT_EQ(out[1].to_vector<double>(), (std::vector<double>{9, 5, 29, 25, 49, 45}));
}

// ---- take ----

TEST(Take, Errors) {
  Var X = tensor::matrix("X", D::Float64);
  Var idx = tensor::lvector("idx");
  Function f = function({X, idx}, {tensor::take(X, idx, 0)});
  EXPECT_ERROR(IndexError, f({arange(15, {5, 3}), i64({0, 7})}), "X", "idx", "index 7", "axis 0", "size 5");
  EXPECT_ERROR(IndexError, f({arange(15, {5, 3}), i64({-6})}), "index -6", "axis 0", "size 5");
  EXPECT_ERROR(IndexError, f({arange(0, {0, 3}), i64({0})}), "index 0", "size 0");
  EXPECT_EQ(run1(f, {arange(15, {5, 3}), i64({-1, 0})}), (std::vector<double>{12, 13, 14, 0, 1, 2}));
  EXPECT_ERROR(TypeError, tensor::take(X, tensor::vector("fi")), "fi", "integers");
  EXPECT_ERROR(ShapeError, tensor::take(X, idx, 2), "X", "axis 2");
}

// ---- set_subtensor / inc_subtensor ----

TEST(IncSubtensor, Errors) {
  Var x = tensor::matrix("x", D::Float64), y = tensor::vector("y", D::Float64);
  EXPECT_ERROR(TypeError, tensor::set_subtensor(x, y), "x", "result of indexing", "an input variable");
  EXPECT_ERROR(TypeError, tensor::inc_subtensor(x + 1, y), "Elemwise", "result of indexing");
  Var xs = tensor::tensor(D::Float64, {4, 3}, "xs"), y4 = tensor::tensor(D::Float64, {4}, "y4");
  EXPECT_ERROR(ShapeError, tensor::set_subtensor(xs[Slice{0, 2, {}}], y4), "y4", "(4,)", "(2, 3)");
  Var xi = tensor::imatrix("xi");
  EXPECT_ERROR(TypeError, tensor::set_subtensor(xi[0], y), "xi", "y", "float64", "int32");
  Function f = function({x, y}, {tensor::inc_subtensor(x[Slice{1, std::nullopt, {}}], y)});
  EXPECT_ERROR(ShapeError, f({arange(6, {3, 2}), arange(3, {3})}), "y", "(3,)", "(2, 2)");
  Var idx = tensor::lvector("idx");
  Function g = function({x, y, idx}, {tensor::set_subtensor(tensor::take(x, idx), y)});
  EXPECT_ERROR(IndexError, g({arange(6, {3, 2}), arange(2, {2}), i64({3})}), "index 3", "size 3");
  EXPECT_ERROR(ShapeError, g({arange(6, {3, 2}), arange(3, {3}), i64({0})}), "y", "(3,)", "(1, 2)");
}

TEST(IncSubtensor, RepeatedIndicesAccumulateForInc) {
  Var x = tensor::vector("x", D::Float64), y = tensor::vector("y", D::Float64);
  Var idx = tensor::lvector("idx");
  Function inc = function({x, y, idx}, {tensor::inc_subtensor(x[idx], y)});
  Function set = function({x, y, idx}, {tensor::set_subtensor(tensor::take(x, idx), y)});
  Array xv = f64({1, 2, 3, 4}, {4}), yv = f64({10, 20, 30, 40}, {4});
  EXPECT_EQ(run1(inc, {xv, yv, i64({0, 0, -1, 0})}), (std::vector<double>{71, 2, 3, 34}));
  EXPECT_EQ(run1(set, {xv, yv, i64({0, 0, -1, 0})}), (std::vector<double>{40, 2, 3, 30}));
  EXPECT_EQ(xv.to_vector<double>(), (std::vector<double>{1, 2, 3, 4}));  // the input is not modified
  // Integer inc wraps like NumPy.
  Var b = tensor::bvector("b");
  Function wrap = function({b, idx}, {tensor::inc_subtensor(b[idx], as_var(100))});
  Array bv = Array::from_vector<int8_t>({100, 0});
  EXPECT_EQ(run1(wrap, {bv, i64({0, 0})}), (std::vector<double>{44, 0}));
}

TEST(IncSubtensor, BasicWithSymbolicBoundsAndNegativeStep) {
  Var x = tensor::matrix("x", D::Float64);
  Var i = lscalar("i");
  Function f = function({x, i}, {tensor::inc_subtensor(x[{Slice{i, std::nullopt, {}}, Slice{std::nullopt, std::nullopt, -1}}],
                                                       constant(f64({1, 2}, {2})))});
  EXPECT_EQ(run1(f, {arange(6, {3, 2}), Array::scalar(1, D::Int64)}), (std::vector<double>{0, 1, 4, 4, 6, 6}));
  Function g = function({x}, {tensor::set_subtensor(x[{Slice{}, 0}], as_var(9.0))});
  EXPECT_EQ(run1(g, {arange(4, {2, 2})}), (std::vector<double>{9, 1, 9, 3}));
}

TEST(ShapeOps, PropsMergeAndPrint) {
  Var x = tensor::matrix("x");
  std::string printed = debugprint(x[{Slice{1, 3, {}}, 0}]);
  EXPECT_NE(printed.find("Subtensor{1:3, 0}"), std::string::npos) << printed;
  EXPECT_NE(debugprint(tensor::concatenate({x, x}, 1)).find("Join{axis=1}"), std::string::npos);
  EXPECT_NE(debugprint(x.reshape({-1})).find("Reshape{ndim=1}"), std::string::npos);
}

// copy_strided's broadcast paths (a bias row doubled into place, a column filled per row)
// against element-by-element NumPy semantics, for several row counts and dtypes.
TEST(CopyStrided, RowAndColumnBroadcastsAndPlainCopies) {
  for (D dt : {D::Float32, D::Float64, D::Int8, D::Bool})
    for (int64_t rows : {1, 2, 3, 7, 64, 1000})
      for (int64_t n : {1, 5, 17}) {
        const Array row = arange(n, {1, n}).astype(dt);
        const Array col = arange(rows * 3, {rows, 3}).astype(dt).slice(1, 1, 2);  // (rows, 1), strided
        for (const Array& src : {row, col, arange(rows * n, {n, rows}).astype(dt).transpose()}) {
          Array out = Array::empty({rows, n}, dt);
          ops::copy_strided(src, out);
          const Array want = src.broadcast_to({rows, n});
          for (int64_t i = 0; i < rows * n; ++i)
            ASSERT_EQ(out.item(i), want.item(i)) << dtype_name(dt) << " rows " << rows << " n " << n << " at " << i;
        }
      }
}

}  // namespace
}  // namespace theon
