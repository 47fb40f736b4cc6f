// shape_of: the shape of an expression read from its input where the op's shape rule says
// they agree, so the expression is not computed (Theano's shape_info tutorial: the compiled
// `(x ** 2).shape` holds no power).
#include <theon/theon.hpp>

#include "rewrite/passes/passes.hpp"

#include "pass_run.hpp"
#include "text_count.hpp"

#include <gtest/gtest.h>

namespace theon {
namespace {

using theon::testing::count;

testing::PassRun shape_of(const std::vector<Var>& inputs, const Var& output) {
  return testing::run_pass(inputs, {output}, rewrite::shape_of_pass, /*fixed_point=*/true);
}

TEST(ShapeOf, ShapeOfAnElemwiseOfOneInputIsTheInputsShape) {
  Var x = tensor::matrix("x");
  for (Var y : {tensor::shape(tensor::pow(x, as_var(2))), tensor::shape(tensor::tanh(tensor::exp(x * 2.0) + 1.0)),
                tensor::size(x * constant(Array::ones({1, 1}, DType::Float32)))}) {
    testing::PassRun r = shape_of({x}, y);
    EXPECT_TRUE(r.changed) << r.why();
    EXPECT_EQ(r.nodes, 1u) << r.why();  // the Shape node, over x
    EXPECT_EQ(count(r.after, "Elemwise"), 0u) << r.why();
    EXPECT_EQ(r.out->owner->input(0), r.in0) << r.why();
  }
}

TEST(ShapeOf, ShapeOfSoftmaxIsItsInputsShape) {
  Var x = tensor::matrix("x");
  testing::PassRun r = shape_of({x}, tensor::shape(tensor::softmax(x * 3.0)));
  EXPECT_TRUE(r.changed) << r.why();
  EXPECT_EQ(count(r.after, "softmax"), 0u) << r.why();
  EXPECT_EQ(r.nodes, 1u) << r.why();
}

TEST(ShapeOf, NotWhenTheShapeIsABroadcastOfSeveralInputs) {
  // x + y broadcasts at run time ((3, 1) + (1, 4) is (3, 4)): neither input's shape is it.
  Var x = tensor::matrix("x"), y = tensor::matrix("y");
  EXPECT_FALSE(shape_of({x, y}, tensor::shape(x + y)).changed);
  // A constant of size 3 in dim 1 broadcasts x's dim of size 1: not x's shape either.
  EXPECT_FALSE(shape_of({x}, tensor::shape(x * constant(Array::ones({1, 3}, DType::Float32)))).changed);
}

TEST(ShapeOf, TheCompiledFunctionComputesOnlyTheShape) {
  // shape_info.txt: theano.function([x], (x ** 2).shape) prints MakeVector(Shape_i{0}(x),
  // Shape_i{1}(x)); Theon's Shape node over x is its counterpart.
  Var x = tensor::matrix("x");
  Function f = function({x}, {tensor::shape(tensor::pow(x, as_var(2)))}, {.mode = "fast_run"});
  const std::string text = f.debugprint();
  EXPECT_EQ(count(text, "pow"), 0u) << text;
  EXPECT_EQ(count(text, "Shape"), 1u) << text;
  EXPECT_EQ(f({Array::zeros({3, 5}, DType::Float32)})[0].to_vector<int64_t>(), (std::vector<int64_t>{3, 5}));
}

}  // namespace
}  // namespace theon
