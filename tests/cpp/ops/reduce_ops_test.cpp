// Reductions at the edges of the float range, in both modes (unfused and FusedReduce).
#include <theon/theon.hpp>

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
