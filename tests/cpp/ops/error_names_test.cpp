// Errors name what the user wrote (issue 11): builders and rewrites add values the user never
// wrote (casts, broadcasting DimShuffles, flatten, fused regions), and broadcast, take and
// reshape errors used to name those ("<float32 matrix #11> (1, 4)") where the user wrote y of
// shape (4,). They now name the user's variables with their own shapes, or the expression
// that made an unnamed value ("mul(y, 2.0)").
#include <theon/theon.hpp>

#include <gtest/gtest.h>

#include "error_of.hpp"

#include <string>

namespace theon {
namespace {

using testing_util::error_of;

bool has(const std::string& msg, const std::string& part) { return msg.find(part) != std::string::npos; }
// A generated label ("<float32 matrix #11>") anywhere in the message.
bool names_internal_values(const std::string& msg) { return has(msg, " #") || has(msg, "<float") || has(msg, "<int"); }

const Array m35 = Array::ones({3, 5}, DType::Float32), v4 = Array::ones({4}, DType::Float32);

TEST(ErrorNames, BroadcastNamesTheUsersVariablesAndShapes) {
  Var x = tensor::matrix("x"), y = tensor::vector("y");
  for (const char* mode : {"none", "fast_run"}) {
    Function f = function({x, y}, {x + y}, {.mode = mode});
    const std::string msg = error_of<ShapeError>([&] { f({m35, v4}); });
    EXPECT_TRUE(has(msg, "shapes cannot be broadcast together: x (3, 5), y (4,) (last dimension: 5 vs 4)")) << msg;
    EXPECT_TRUE(has(msg, "Elemwise{add}(x, y)")) << msg;
    EXPECT_TRUE(has(msg, "input shapes: x (3, 5), y (4,) as (1, 4)")) << msg;  // what the node saw
    EXPECT_FALSE(names_internal_values(msg)) << msg;
  }
}

TEST(ErrorNames, BroadcastInAFusedRegionNamesTheUsersVariables) {
  Var x = tensor::matrix("x"), y = tensor::vector("y");
  Function f = function({x, y}, {tensor::exp(x) * y + 1.0});
  ASSERT_TRUE(has(f.debugprint(), "Composite{")) << f.debugprint();
  const std::string msg = error_of<ShapeError>([&] { f({m35, v4}); });
  EXPECT_TRUE(has(msg, "shapes cannot be broadcast together: x (3, 5), y (4,)")) << msg;
  EXPECT_FALSE(names_internal_values(msg)) << msg;
}

TEST(ErrorNames, BroadcastThroughAPromotingCastNamesTheVariable) {
  Var x = tensor::matrix("x", DType::Float64), y = tensor::vector("y");  // y is cast to float64
  Function f = function({x, y}, {x * y}, {.mode = "none"});
  const std::string msg = error_of<ShapeError>([&] { f({Array::ones({3, 5}, DType::Float64), v4}); });
  EXPECT_TRUE(has(msg, "x (3, 5), y (4,)")) << msg;
  EXPECT_FALSE(names_internal_values(msg)) << msg;
}

TEST(ErrorNames, TakeNamesTheIndexedExpression) {
  Var x = tensor::matrix("x"), i = tensor::lvector("i");
  const Array seven = Array::from_vector<int64_t>({7});
  // take of a flattened x: the value indexed is flatten(x).
  Function flat = function({x, i}, {tensor::take(tensor::flatten(x), i)});
  std::string msg = error_of<IndexError>([&] { flat({Array::ones({2, 2}, DType::Float32), seven}); });
  EXPECT_TRUE(has(msg, "index 7 is out of bounds for axis 0 of flatten(x) with size 4")) << msg;
  EXPECT_TRUE(has(msg, "indices i")) << msg;
  EXPECT_FALSE(names_internal_values(msg)) << msg;
  // x[1:, i]: the slice is taken first, then the indices.
  Function nested = function({x, i}, {x[{Slice{Bound{1}}, i}]});
  msg = error_of<IndexError>([&] { nested({Array::ones({2, 2}, DType::Float32), seven}); });
  EXPECT_TRUE(has(msg, "of x[1:, :] with size 2")) << msg;
  EXPECT_FALSE(names_internal_values(msg)) << msg;
  // int32 indices (cast to int64 inside): still "i".
  Var j = tensor::ivector("j");
  Function cast = function({x, j}, {tensor::take(x * 2.0, j)});
  msg = error_of<IndexError>(
      [&] { cast({Array::ones({2, 2}, DType::Float32), Array::from_vector<int32_t>({7})}); });
  EXPECT_TRUE(has(msg, "of mul(x, 2.0) with size 2")) << msg;
  EXPECT_FALSE(names_internal_values(msg)) << msg;
}

TEST(ErrorNames, ReshapeNamesTheReshapedExpression) {
  Var y = tensor::vector("y");
  Function f = function({y}, {tensor::reshape(y * 2.0, {3, 3})}, {.mode = "none"});
  const std::string msg = error_of<ShapeError>([&] { f({v4}); });
  EXPECT_TRUE(has(msg, "Reshape{ndim=2}(mul(y, 2.0), [3, 3]): cannot reshape an array of shape (4,) (size 4) into "
                       "shape (3, 3)"))
      << msg;
  EXPECT_FALSE(names_internal_values(msg)) << msg;
}

TEST(ErrorNames, AssignmentNamesTheAssignedValue) {
  // y is cast to x's float64 before it is written.
  Var x = tensor::matrix("x", DType::Float64), y = tensor::vector("y"), i = tensor::lvector("i");
  Function f = function({x, i, y}, {tensor::inc_subtensor(x[{i}], y)}, {.mode = "none"});
  const std::string msg = error_of<ShapeError>(
      [&] { f({Array::ones({2, 2}, DType::Float64), Array::from_vector<int64_t>({0}), Array::ones({3}, DType::Float32)}); });
  EXPECT_TRUE(has(msg, "cannot broadcast y of shape (3,) to the indexed region of shape (1, 2)")) << msg;
  EXPECT_FALSE(names_internal_values(msg)) << msg;
}

TEST(ErrorNames, ABFloat16InputNamesTheFunctionAndTheInput) {
  Var x = tensor::vector("x");
  Function f = function({x}, {x * 2.0}, {.name = "double"});
  const Array h(Buffer::allocate_host(6), DType::BFloat16, {3}, {1});
  const std::string msg = error_of<TypeError>([&] { f({h}); });
  EXPECT_TRUE(has(msg, "function 'double', input 0 ('x', float32 (?,)): got a bfloat16 array")) << msg;
  EXPECT_TRUE(has(msg, "bfloat16 is not supported yet")) << msg;
}

TEST(ErrorNames, AFloat16InputOfAFloat32FunctionIsConvertedLosslessly) {
  Var x = tensor::vector("x");
  Function f = function({x}, {x * 2.0}, {.name = "double"});
  const Array h = Array::from_vector<half>({half(1.5f), half(0.1f), half(-3)});
  EXPECT_EQ(f({h})[0].to_vector<float>(), (std::vector<float>{3.0f, 0.199951171875f, -6.0f}));
}

}  // namespace
}  // namespace theon
