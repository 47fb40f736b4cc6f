// The C++ API as people first write it (each of these failed to compile, or meant something
// else, before): braced shapes, int or braced reduction axes, a braced wrt list for grad,
// floatX set from a dtype name.
#include <theon/theon.hpp>

#include <gtest/gtest.h>

namespace theon {
namespace {

TEST(FirstUse, BracedShapesCompile) {
  Array a = Array::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});  // array.hpp's own example
  EXPECT_EQ(a.shape(), (Shape{2, 3}));
  EXPECT_EQ(a.dtype(), DType::Float32);
  EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  Array v = Array::from_vector<int32_t>({7, 8});
  EXPECT_EQ(v.shape(), (Shape{2}));
  EXPECT_THROW(Array::from_vector<double>({1, 2, 3}, {2, 2}), ShapeError);
}

TEST(FirstUse, ReductionAxesAsAnIntOrABracedList) {
  Var x = tensor::dmatrix("x");
  Array xv = Array::from_vector<double>({1, 2, 3, 4, 5, 6}, {2, 3});
  auto run = [&](const Var& y) { return function({x}, {y})({xv})[0].to_vector<double>(); };
  EXPECT_EQ(run(tensor::sum(x, 0)), (std::vector<double>{5, 7, 9}));
  EXPECT_EQ(run(tensor::sum(x, 1)), (std::vector<double>{6, 15}));
  EXPECT_EQ(run(tensor::sum(x, -1)), (std::vector<double>{6, 15}));
  EXPECT_EQ(run(tensor::mean(x, {0, 1})), (std::vector<double>{3.5}));
  EXPECT_EQ(run(tensor::max(x, {1})), (std::vector<double>{3, 6}));
  EXPECT_EQ(run(tensor::prod(x, 0, true)), (std::vector<double>{4, 10, 18}));
  EXPECT_EQ(run(tensor::sum(x)), (std::vector<double>{21}));
  EXPECT_EQ(run(tensor::min(x, std::vector<int>{0})), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(tensor::sum(x, 0, true).ndim(), 2);
}

TEST(FirstUse, BracedWrtIsTheListForm) {
  Var v = tensor::dvector("v");
  Var cost = tensor::sum(v * v);
  std::vector<Var> g = grad(cost, {v});  // the list form
  ASSERT_EQ(g.size(), 1u);
  Var whole = grad(cost, {v})[0];  // v's whole gradient, not element 0 of it
  EXPECT_EQ(whole.ndim(), 1);
  Array out = function({v}, {whole})({Array::from_vector<double>({1, 2, 3})})[0];
  EXPECT_EQ(out.to_vector<double>(), (std::vector<double>{2, 4, 6}));
  Var single = grad(cost, v);  // one Var: one gradient
  EXPECT_EQ(single.ndim(), 1);
  Var w = tensor::dscalar("w");
  std::vector<Var> two = grad(tensor::sum(v * w), {v, w});
  EXPECT_EQ(two.size(), 2u);
}

TEST(FirstUse, FloatXFromADtypeName) {
  const DType saved = config().floatX;
  config().floatX = "float64";
  EXPECT_EQ(config().floatX, DType::Float64);
  EXPECT_EQ(tensor::matrix("m").dtype(), DType::Float64);
  config().floatX = std::string("float32");
  EXPECT_EQ(config().floatX, DType::Float32);
  config().floatX = DType::Float64;
  EXPECT_EQ(config().floatX, DType::Float64);
  EXPECT_THROW(config().floatX = "int32", ConfigError);
  EXPECT_THROW(config().floatX = DType::Int8, ConfigError);
  EXPECT_THROW(config().floatX = "float128", ConfigError);
  EXPECT_EQ(config().floatX, DType::Float64) << "a refused value leaves floatX as it was";
  DType as_dtype = config().floatX;  // still usable as a DType
  EXPECT_EQ(as_dtype, DType::Float64);
  config().floatX = saved;
}

}  // namespace
}  // namespace theon
