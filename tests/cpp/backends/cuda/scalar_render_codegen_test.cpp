// The CUDA code generators paste the shared scalar-program renderer's text
// (backends/scalar_program_render): a Composite's elementwise kernel and a FusedReduce's
// region compute their values with exactly the lines render_values gives in the CUDA dialect.
#include <theon/theon.hpp>

#include "backends/cuda/cuda_backend.hpp"
#include "backends/scalar_program_render.hpp"
#include "ops/composite.hpp"
#include "ops/fused_reduce.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace theon::backends::cuda {
namespace {

using S = ops::ScalarOpId;

Array placeholder(DType dtype, const Shape& shape) { return Array(nullptr, dtype, shape, contiguous_strides(shape)); }

// exp(x - m) * cast<f32>(k), k an int16 input.
std::shared_ptr<ops::Composite> region() {
  return std::make_shared<ops::Composite>(
      std::vector<DType>{DType::Float32, DType::Float32, DType::Int16},
      std::vector<ops::CompositeInstr>{{S::Sub, DType::Float32, {0, 1}},
                                       {S::Exp, DType::Float32, {3}},
                                       {S::Cast, DType::Float32, {2}},
                                       {S::Mul, DType::Float32, {4, 5}}},
      std::vector<int>{6});
}

graph::TensorType matrix_type(DType t) {
  graph::TensorType type;
  type.dtype = t;
  type.dims = {-1, -1};
  return type;
}

TEST(ScalarRenderCodegen, CompositeKernelPastesTheRenderedProgram) {
  Var x = tensor::matrix("x"), m = tensor::matrix("m");
  Var k = tensor::tensor(DType::Int16, {-1, -1}, "k");
  auto op = region();
  graph::VarPtr y = graph::make_output(op, {x.node(), m.node(), k.node()}, matrix_type(DType::Float32));
  const CudaKernel* kernel = backend().find(*y->owner);
  ASSERT_NE(kernel, nullptr);
  auto srcs = kernel->sources(*y->owner, {placeholder(DType::Float32, {3, 4}), placeholder(DType::Float32, {3, 4}),
                                          placeholder(DType::Int16, {3, 4})});
  ASSERT_EQ(srcs.size(), 1u);
  const ScalarProgram p = ScalarProgram::of(*op);
  // The scalar tail loop reads flat inputs as p<i>[i].
  const std::string body =
      render_values(p, p.needed({0}), Dialect::Cuda, [](int i) { return "p" + std::to_string(i) + "[i]"; }, "    ");
  EXPECT_NE(srcs[0].code.find(body), std::string::npos) << "expected:\n" << body << "in:\n" << srcs[0].code;
  EXPECT_NE(srcs[0].code.find("const short v2 = "), std::string::npos);
  EXPECT_NE(srcs[0].code.find("const float v4 = (float)Exp{}(v3);"), std::string::npos);
}

TEST(ScalarRenderCodegen, FusedReduceRegionPastesTheRenderedProgram) {
  Var x = tensor::matrix("x"), m = tensor::matrix("m");
  Var k = tensor::tensor(DType::Int16, {-1, -1}, "k");
  auto op = region();
  graph::TensorType type;
  type.dtype = DType::Float32;
  type.dims = {-1};
  graph::VarPtr y = graph::make_output(std::make_shared<ops::FusedReduce>(op, ops::ReduceKind::Sum, std::vector<int>{1},
                                                                          DType::Float32),
                                       {x.node(), m.node(), k.node()}, type);
  const CudaKernel* kernel = backend().find(*y->owner);
  ASSERT_NE(kernel, nullptr);
  auto srcs = kernel->sources(*y->owner, {placeholder(DType::Float32, {3, 4}), placeholder(DType::Float32, {3, 4}),
                                          placeholder(DType::Int16, {3, 4})});
  ASSERT_EQ(srcs.size(), 1u);
  const ScalarProgram p = ScalarProgram::of(*op);
  const std::string body = render_values(
      p, p.needed({0}), Dialect::Cuda,
      [&](int i) {
        const std::string t = scalar_type(p.input_dtypes[i], Dialect::Cuda);
        return "((const " + t + "*)a.p[" + std::to_string(i) + "])[off[" + std::to_string(i) + "]]";
      },
      "  ");
  EXPECT_NE(srcs[0].code.find(body), std::string::npos) << "expected:\n" << body << "in:\n" << srcs[0].code;
  EXPECT_NE(srcs[0].code.find("return (TI)v6;"), std::string::npos);
}

}  // namespace
}  // namespace theon::backends::cuda
