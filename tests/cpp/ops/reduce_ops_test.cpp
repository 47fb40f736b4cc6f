// Reductions at the edges of the float range, in both modes (unfused and FusedReduce).
#include <theon/theon.hpp>

#include "graph/node.hpp"
#include "graph/op.hpp"
#include "ops/reduce.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace theon {
namespace {

TEST(ReduceOps, MaxAndMinOfInfiniteRowsAreInfinite) {
  const double inf = std::numeric_limits<double>::infinity();
  Var x = tensor::matrix("x", DType::Float64);
  for (const char* mode : {"none", "fast_run"}) {
    Function f = function({x}, {tensor::max(x, std::vector<int>{1}), tensor::min(x, std::vector<int>{1}),
                                tensor::max(tensor::exp(x), std::vector<int>{1})},
                          {.mode = mode});
    auto out = f({Array::from_vector<double>({-inf, -inf, inf, inf}, Shape{2, 2})});
    EXPECT_EQ(out[0].to_vector<double>(), (std::vector<double>{-inf, inf})) << mode;
    EXPECT_EQ(out[1].to_vector<double>(), (std::vector<double>{-inf, inf})) << mode;
    EXPECT_EQ(out[2].to_vector<double>(), (std::vector<double>{0.0, inf})) << mode;
  }
}

}  // namespace
}  // namespace theon

namespace theon {
namespace {

TEST(ReduceOps, CountHasNoGradientEvenWithAFloatResult) {
  // Mean's gradient builds a float Count; its own L_op (second derivatives) gives nothing,
  // rather than failing to shape a gradient for its scalar result.
  const graph::VarPtr x = graph::Variable::make_input(graph::TensorType{DType::Float64, {-1, -1}, ""}, "x");
  const graph::VarPtr n = ops::reduce_count(x, {1}, DType::Float64);
  const graph::VarPtr g = graph::Variable::make_input(n->type, "g");
  const std::vector<graph::VarPtr> grads = n->owner->op().L_op(*n->owner, {g});
  ASSERT_EQ(grads.size(), 1u);
  EXPECT_EQ(grads[0], nullptr);
}

}  // namespace
}  // namespace theon
