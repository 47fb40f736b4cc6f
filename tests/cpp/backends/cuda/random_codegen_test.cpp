// The random kernels without a GPU: RandomDraw and Assert are supported, and the RandomDraw
// source of both dtypes (philox.hpp pasted in) compiles for sm_90 with the real NVRTC, always
// without FMA contraction (so its transforms round as the CPU's).
#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/nvrtc_test_support.hpp"

#include "ops/assert.hpp"
#include "ops/random.hpp"

#include <theon/theon.hpp>

#include <gtest/gtest.h>

namespace theon::backends::cuda {
namespace {

using graph::VarPtr;

VarPtr var(DType t, std::vector<int64_t> dims, const std::string& name) {
  return graph::Variable::make_input(graph::TensorType{t, std::move(dims), ""}, name);
}

class RandomCodegen : public nvrtc_testing::PrivateCompiledirTest {};

TEST_F(RandomCodegen, DrawCompilesForSm90InBothDtypesWithoutContraction) {
  for (DType t : {DType::Float32, DType::Float64}) {
    for (random::Distribution d : {random::Distribution::Uniform, random::Distribution::Normal}) {
      const auto [value, next] =
          ops::random_draw(d, var(DType::Int64, {2}, "state"), {var(DType::Int64, {}, "n")}, t, 3, "draw");
      const graph::Apply& node = *value->owner;
      const CudaKernel* k = backend().find(node);
      ASSERT_NE(k, nullptr);
      EXPECT_TRUE(k->supports(node).ok);
      EXPECT_FALSE(k->host_input(node, 0));  // the state stays on the device
      EXPECT_TRUE(k->host_input(node, 1));   // sizes shape the output
      const auto srcs = k->sources(node, {});
      ASSERT_EQ(srcs.size(), 1u);
      EXPECT_FALSE(srcs[0].fmad_applies);
      EXPECT_NO_THROW(compile_cubin(srcs[0], kDefaultArch)) << srcs[0].name;
    }
  }
}

TEST_F(RandomCodegen, AssertIsAViewWithHostConditions) {
  const VarPtr y = ops::assert_op(var(DType::Float32, {-1}, "x"), {var(DType::Bool, {}, "ok")}, "ok must hold");
  const graph::Apply& node = *y->owner;
  const CudaKernel* k = backend().find(node);
  ASSERT_NE(k, nullptr);
  EXPECT_TRUE(k->supports(node).ok);
  EXPECT_TRUE(k->host_input(node, 1));
  EXPECT_TRUE(k->sources(node, {}).empty());
}

}  // namespace
}  // namespace theon::backends::cuda
