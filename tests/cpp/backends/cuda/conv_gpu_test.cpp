// Convolutions on the GPU (cuDNN) where an operand is empty: cuDNN takes no empty tensors, so
// the kernel answers zeros itself (act(bias) with an epilogue). Found by the graph fuzzer: an
// input with 0 rows and a "full" border (every tap in the padding) made cuDNN refuse the
// descriptor. Skips itself without a usable GPU.
#include "backends/cuda/gpu_test_support.hpp"

#include <theon/theon.hpp>

#include <gtest/gtest.h>

#include <vector>

namespace theon {
namespace {

using ConvGpu = theon::testing::Cuda0Test;

std::vector<double> values(const Array& a) { return a.to_vector<double>(); }

TEST_F(ConvGpu, EmptyRowsOrColumnsGiveZeros) {
  Var x = tensor::tensor4("x"), w = tensor::tensor4("w"), b = tensor::vector("b");
  const Array filters = Array::ones({2, 1, 2, 2}, DType::Float32);
  const Array bias = Array::from_vector<float>({-1, 2});
  // (1, 1, 0, 2) with a full border: (1, 2, 1, 3); (1, 1, 3, 0) with a border of 1: (1, 2, 4, 1).
  for (const auto& [shape, border, out_shape] :
       {std::tuple{Shape{1, 1, 0, 2}, tensor::BorderMode("full"), Shape{1, 2, 1, 3}},
        std::tuple{Shape{1, 1, 3, 0}, tensor::BorderMode(1), Shape{1, 2, 4, 1}}}) {
    const Array input = Array::zeros(shape, DType::Float32);
    Var y = tensor::conv2d(x, w, {.border_mode = border});
    Function f = function({x, w}, {y});
    const Array got = f({input, filters})[0];
    EXPECT_EQ(got.shape(), out_shape);
    EXPECT_EQ(values(got), std::vector<double>(static_cast<size_t>(shape_size(out_shape)), 0.0));

    // With the bias and relu epilogue (conv_epilogue folds them into the node): relu(bias).
    Function g = function({x, w, b}, {tensor::relu(y + b.dimshuffle({-1, 0, -1, -1}))});
    ASSERT_NE(g.explain().find("epilogue=bias+relu"), std::string::npos) << g.explain();
    const std::vector<double> relu_bias = values(g({input, filters, bias})[0]);
    const size_t per_channel = relu_bias.size() / 2;
    for (size_t i = 0; i < relu_bias.size(); ++i) EXPECT_EQ(relu_bias[i], i < per_channel ? 0.0 : 2.0) << i;
  }
}

}  // namespace
}  // namespace theon
