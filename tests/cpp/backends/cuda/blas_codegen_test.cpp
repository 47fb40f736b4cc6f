// The CUDA matrix-product kernels without a GPU: which NVRTC programs each node needs for
// given dtypes and layouts (cuBLAS reads transposed views in place; only layouts it cannot
// describe get a copy kernel), that every such program compiles for sm_90, and what the
// kernels support.
#include "backends/cuda/copy_codegen.hpp"
#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/nvrtc_compiler.hpp"
#include "graph/node.hpp"
#include "ops/blas.hpp"
#include "ops/gemm.hpp"
#include "ops/matmul.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <set>

namespace theon::backends::cuda {
namespace {

using graph::VarPtr;

VarPtr input(DType t, int ndim) {
  graph::TensorType tt;
  tt.dtype = t;
  tt.dims.assign(ndim, -1);
  return graph::Variable::make_input(tt);
}

// A bufferless array: sources() reads only dtype, shape and strides.
Array placeholder(DType t, const Shape& shape, Strides strides = {}) {
  if (strides.empty()) strides = contiguous_strides(shape);
  return Array(nullptr, t, shape, strides);
}
// The transpose of a contiguous (cols, rows) array: a (rows, cols) column-major view.
Array transposed(DType t, int64_t rows, int64_t cols) { return placeholder(t, {rows, cols}, {1, rows}); }

// The kernels of the shared strided copy that makes `x` contiguous (copy_codegen.hpp).
std::set<std::string> copy_of(const Array& x, const Shape& to = {}) {
  const Shape shape = to.empty() ? x.shape() : to;
  std::set<std::string> out;
  for (auto& s : copy_sources(x, Array(nullptr, x.dtype(), shape, contiguous_strides(shape)))) out.insert(s.name);
  EXPECT_FALSE(out.empty()) << "copying " << shape_str(x.shape()) << " needs no kernel";
  return out;
}

const CudaKernel& kernel_for(const graph::Apply& node) {
  const CudaKernel* k = backend().find(node);
  EXPECT_NE(k, nullptr) << node.op().name();
  return *k;
}

std::set<std::string> names(const std::vector<KernelSource>& s) {
  std::set<std::string> out;
  for (auto& x : s) out.insert(x.name);
  return out;
}

struct Probe {
  VarPtr out;
  std::vector<Array> inputs;
  const graph::Apply& node() const { return *out->owner; }
  std::vector<KernelSource> sources() const { return kernel_for(node()).sources(node(), inputs); }
};

Probe dot_probe(DType t, Array a, Array b) {
  return {ops::dot(input(t, a.ndim()), input(t, b.ndim())), {std::move(a), std::move(b)}};
}
Probe matmul_probe(DType t, Array a, Array b) {
  return {ops::matmul(input(t, a.ndim()), input(t, b.ndim())), {std::move(a), std::move(b)}};
}
Probe gemm_probe(DType t, Array c, Array a, Array b, double alpha = 1, double beta = 1, ops::GemmEpilogue epi = {}) {
  return {ops::gemm(input(t, c.ndim()), input(t, 2), input(t, 2), alpha, beta, epi),
          {std::move(c), std::move(a), std::move(b)}};
}
// A Gemm without an addend (relu(dot(a, b)): inputs (a, b)).
Probe gemm_no_addend_probe(DType t, Array a, Array b, ops::GemmAct act, double alpha = 1) {
  return {ops::gemm(input(t, 2), input(t, 2), alpha, act), {std::move(a), std::move(b)}};
}
const ops::GemmEpilogue kRowBias = {ops::GemmAddend::Row, ops::GemmAct::None};
const ops::GemmEpilogue kRowBiasRelu = {ops::GemmAddend::Row, ops::GemmAct::Relu};

const DType kFloats[] = {DType::Float32, DType::Float64};
const DType kInts[] = {DType::Int8, DType::Int16, DType::Int32, DType::Int64, DType::UInt8};

TEST(BlasCudaCodegen, RegistersEveryMatrixProductOp) {
  for (const char* op : {"Dot", "Gemm", "BatchedMatmul"}) {
    Probe p = op == std::string("Dot")       ? dot_probe(DType::Float32, placeholder(DType::Float32, {2, 3}),
                                                         placeholder(DType::Float32, {3, 4}))
              : op == std::string("Gemm")    ? gemm_probe(DType::Float32, placeholder(DType::Float32, {2, 4}),
                                                          placeholder(DType::Float32, {2, 3}), placeholder(DType::Float32, {3, 4}))
                                             : matmul_probe(DType::Float32, placeholder(DType::Float32, {5, 2, 3}),
                                                            placeholder(DType::Float32, {5, 3, 4}));
    EXPECT_EQ(p.node().op().name(), op);
    Support s = backend().supports(p.node());
    EXPECT_TRUE(s.ok) << op << ": " << s.reason;
    EXPECT_EQ(s.reason, "cublas");
  }
  Probe i = dot_probe(DType::Int32, placeholder(DType::Int32, {2, 3}), placeholder(DType::Int32, {3, 4}));
  EXPECT_TRUE(backend().supports(i.node()).ok);
  EXPECT_NE(backend().supports(i.node()).reason.find("integer"), std::string::npos);
}

TEST(BlasCudaCodegen, CublasReadsContiguousAndTransposedViewsInPlace) {
  for (DType t : kFloats) {
    // Row-major, column-major (transposed), row slices with a larger leading dimension.
    std::vector<Array> lhs = {placeholder(t, {6, 5}), transposed(t, 6, 5), placeholder(t, {6, 5}, {10, 1})};
    std::vector<Array> rhs = {placeholder(t, {5, 7}), transposed(t, 5, 7), placeholder(t, {5, 7}, {1, 9})};
    for (auto& a : lhs)
      for (auto& b : rhs) EXPECT_TRUE(dot_probe(t, a, b).sources().empty());
    // Vectors, strided vectors, and size-1 dims whose strides do not matter.
    EXPECT_TRUE(dot_probe(t, placeholder(t, {5}, {3}), placeholder(t, {5, 7})).sources().empty());
    EXPECT_TRUE(dot_probe(t, placeholder(t, {6, 5}), placeholder(t, {5}, {-1})).sources().size() == 1)
        << "a negative stride needs a copy";
    EXPECT_TRUE(dot_probe(t, placeholder(t, {1, 5}, {0, 1}), placeholder(t, {5, 1}, {1, 0})).sources().empty());
    // A batch with matching layouts: one strided-batched call, no kernels of ours.
    EXPECT_TRUE(matmul_probe(t, placeholder(t, {4, 3, 6, 5}), placeholder(t, {4, 3, 5, 7})).sources().empty());
    // Broadcast batch dims that still collapse to one (stride 0): no kernels either.
    EXPECT_TRUE(matmul_probe(t, placeholder(t, {4, 3, 6, 5}), placeholder(t, {5, 7})).sources().empty());
    EXPECT_TRUE(matmul_probe(t, placeholder(t, {12, 6, 5}), placeholder(t, {1, 5, 7})).sources().empty());
  }
}

TEST(BlasCudaCodegen, CopiesOnlyLayoutsCublasCannotDescribe) {
  const DType t = DType::Float32;
  // Both strides non-unit (a sliced transposed view): one copy kernel of the operand's rank.
  Probe p = dot_probe(t, placeholder(t, {6, 5}, {2, 12}), placeholder(t, {5, 7}));
  EXPECT_EQ(names(p.sources()), copy_of(p.inputs[0]));
  // A matrix broadcast inside (stride 0 on a non-size-1 dim).
  Probe q = dot_probe(DType::Float64, placeholder(DType::Float64, {6, 5}), placeholder(DType::Float64, {5, 7}, {0, 1}));
  EXPECT_EQ(names(q.sources()), copy_of(q.inputs[1]));
  // Batch dims that do not collapse (a broadcast between two real batch dims): pointer arrays.
  Probe r = matmul_probe(t, placeholder(t, {2, 3, 6, 5}), placeholder(t, {3, 5, 7}));
  EXPECT_EQ(names(r.sources()), (std::set<std::string>{"blas_batch_pointers"}));
  // A reversed batch (negative batch stride): pointer arrays too.
  Probe rev = matmul_probe(t, placeholder(t, {4, 6, 5}, {-30, 5, 1}), placeholder(t, {4, 5, 7}));
  EXPECT_EQ(names(rev.sources()), (std::set<std::string>{"blas_batch_pointers"}));
  // A rank-4 operand needing a copy (matrices with two non-unit strides).
  Probe s = matmul_probe(t, placeholder(t, {2, 3, 6, 5}, {180, 60, 2, 12}), placeholder(t, {2, 3, 5, 7}));
  EXPECT_EQ(names(s.sources()), copy_of(s.inputs[0]));
}

TEST(BlasCudaCodegen, GemmPathsFollowTheBroadcastAndScalars) {
  const DType t = DType::Float32;
  const Array a = placeholder(t, {6, 5}), b = placeholder(t, {5, 7});
  // A full c: copied into the output by memcpy, cuBLAS adds the product (no kernels).
  EXPECT_TRUE(gemm_probe(t, placeholder(t, {6, 7}), a, b).sources().empty());
  // The usual bias row: broadcast into the output by the strided copy first.
  EXPECT_EQ(names(gemm_probe(t, placeholder(t, {1, 7}), a, b).sources()), copy_of(placeholder(t, {1, 7}), {6, 7}));
  // The product broadcast against a larger c (m == 1), k == 0, or beta == 0: the epilogue.
  EXPECT_EQ(names(gemm_probe(t, placeholder(t, {6, 7}), placeholder(t, {1, 5}), b).sources()),
            (std::set<std::string>{"gemm_epilogue_f32"}));
  EXPECT_EQ(names(gemm_probe(t, placeholder(t, {6, 7}), placeholder(t, {6, 0}), placeholder(t, {0, 7})).sources()),
            (std::set<std::string>{"gemm_epilogue_f32"}));
  EXPECT_EQ(names(gemm_probe(t, placeholder(t, {6, 7}), a, b, 2.0, 0.0).sources()),
            (std::set<std::string>{"gemm_epilogue_f32"}));
  // A row bias vector without relu: one cuBLASLt matmul with its bias epilogue, no kernel;
  // the broadcast copy (of the vector viewed as a (1, n) matrix) stays listed for the cuBLAS
  // path that runs when cuBLASLt offers no algorithm.
  EXPECT_EQ(names(gemm_probe(t, placeholder(t, {7}), a, b, 1, 1, kRowBias).sources()),
            copy_of(placeholder(t, {1, 7}, {0, 1}), {6, 7}));
  // With relu: cuBLAS into a temporary, then the epilogue kernel (bias + relu) in one pass.
  EXPECT_EQ(names(gemm_probe(t, placeholder(t, {7}), a, b, 1, 1, kRowBiasRelu).sources()),
            (std::set<std::string>{"gemm_epilogue_f32"}));
  EXPECT_EQ(names(gemm_probe(t, placeholder(t, {6, 7}), a, b, 1, 1, {ops::GemmAddend::Matrix, ops::GemmAct::Relu}).sources()),
            (std::set<std::string>{"gemm_epilogue_f32"}));
  // The epilogue never makes placement fall back.
  EXPECT_TRUE(backend().supports(gemm_probe(t, placeholder(t, {7}), a, b, 1, 1, kRowBiasRelu).node()).ok);
  // No addend: relu needs the epilogue kernel (reading no c); without relu cuBLAS writes
  // alpha * a.b into the output (no kernels), unless alpha is 0 or k is.
  EXPECT_EQ(names(gemm_no_addend_probe(t, a, b, ops::GemmAct::Relu).sources()), (std::set<std::string>{"gemm_epilogue_f32"}));
  EXPECT_TRUE(gemm_no_addend_probe(t, a, b, ops::GemmAct::None, 2.0).sources().empty());
  EXPECT_EQ(names(gemm_no_addend_probe(t, a, b, ops::GemmAct::None, 0.0).sources()),
            (std::set<std::string>{"gemm_epilogue_f32"}));
  EXPECT_EQ(names(gemm_no_addend_probe(t, placeholder(t, {6, 0}), placeholder(t, {0, 7}), ops::GemmAct::None).sources()),
            (std::set<std::string>{"gemm_epilogue_f32"}));
  EXPECT_TRUE(backend().supports(gemm_no_addend_probe(t, a, b, ops::GemmAct::Relu).node()).ok);
  EXPECT_EQ(names(gemm_no_addend_probe(DType::Int32, placeholder(DType::Int32, {6, 5}), placeholder(DType::Int32, {5, 7}),
                                       ops::GemmAct::Relu)
                      .sources()),
            (std::set<std::string>{"imatmul_i32"}));
  // Integers: the tiled kernel with its epilogue, whatever the layout.
  EXPECT_EQ(names(gemm_probe(DType::Int64, placeholder(DType::Int64, {1, 7}), placeholder(DType::Int64, {6, 5}),
                             placeholder(DType::Int64, {5, 7}, {1, 5}))
                      .sources()),
            (std::set<std::string>{"imatmul_i64"}));
}

TEST(BlasCudaCodegen, IntegerProductsUseOneTiledKernelPerDtype) {
  for (DType t : kInts) {
    const std::set<std::string> want = {"imatmul_" + std::string(dtype_tag(t))};
    // Any layout (negative strides included) and any batch rank: strides are arguments.
    EXPECT_EQ(names(dot_probe(t, placeholder(t, {6, 5}), placeholder(t, {5}, {-2})).sources()), want);
    EXPECT_EQ(names(matmul_probe(t, placeholder(t, {4, 3, 6, 5}), placeholder(t, {4, 3, 5, 7})).sources()), want);
    EXPECT_EQ(names(matmul_probe(t, placeholder(t, {2, 3, 6, 5}), placeholder(t, {3, 5, 7}, {-35, 1, 5})).sources()), want);
  }
}

TEST(BlasCudaCodegen, UnsupportedDtypesSayWhy) {
  // float16 dots run in float32 (the float16 pass): the CUDA BLAS kernels never see float16.
  graph::TensorType out;
  out.dtype = DType::Float16;
  out.dims = {-1, -1};
  VarPtr v = graph::make_output(std::make_shared<ops::Dot>(), {input(DType::Float16, 2), input(DType::Float16, 2)}, out);
  Support s = backend().supports(*v->owner);
  EXPECT_FALSE(s.ok);
  EXPECT_NE(s.reason.find("float16"), std::string::npos) << s.reason;
}

// Every program any of the above can ask for, for every dtype, compiles for the H100.
TEST(BlasCudaCodegen, EverySourceCompilesForSm90) {
  std::vector<KernelSource> all;
  auto add = [&](const std::vector<KernelSource>& s) {
    for (auto& x : s) {
      bool seen = false;
      for (auto& y : all) seen = seen || y.code == x.code;
      if (!seen) all.push_back(x);
    }
  };
  for (DType t : kFloats) {
    add(dot_probe(t, placeholder(t, {6, 5}, {2, 12}), placeholder(t, {5, 7}, {0, 1})).sources());
    add(matmul_probe(t, placeholder(t, {2, 3, 6, 5}, {180, 60, 2, 12}), placeholder(t, {3, 5, 7})).sources());
    add(matmul_probe(t, placeholder(t, {2, 2, 3, 6, 5}, {360, 180, 60, 2, 12}), placeholder(t, {5, 7}, {1, 10})).sources());
    add(gemm_probe(t, placeholder(t, {1, 7}), placeholder(t, {6, 5}), placeholder(t, {5, 7})).sources());
    add(gemm_probe(t, placeholder(t, {6, 7}), placeholder(t, {1, 5}), placeholder(t, {5, 7})).sources());
    add(gemm_probe(t, placeholder(t, {7}), placeholder(t, {6, 5}), placeholder(t, {5, 7}), 1, 1, kRowBiasRelu).sources());
    add(gemm_no_addend_probe(t, placeholder(t, {6, 5}), placeholder(t, {5, 7}), ops::GemmAct::Relu).sources());
  }
  for (DType t : kInts) {
    add(dot_probe(t, placeholder(t, {6, 5}), placeholder(t, {5, 7})).sources());
    add(gemm_probe(t, placeholder(t, {6, 7}), placeholder(t, {6, 5}), placeholder(t, {5, 7})).sources());
    add(matmul_probe(t, placeholder(t, {2, 1, 6, 5}), placeholder(t, {3, 5, 7})).sources());
  }
  const auto start = std::chrono::steady_clock::now();
  for (auto& s : all) {
    SCOPED_TRACE(s.name);
    EXPECT_NO_THROW({
      const std::string cubin = compile_cubin(s, kDefaultArch);
      EXPECT_FALSE(cubin.empty());
    });
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("[blas codegen] %zu programs compiled (or read from the cache) for sm_%d in %.2f s\n", all.size(),
              kDefaultArch, secs);
  EXPECT_GE(all.size(), 9u);  // copies, pointers, 2 epilogues, 5 integer kernels
}

}  // namespace
}  // namespace theon::backends::cuda
