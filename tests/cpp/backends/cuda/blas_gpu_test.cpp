// The CUDA matrix products against the CPU backend on a real device: Dot, Gemm and
// BatchedMatmul for float32/float64 (cuBLAS) and the integer dtypes (the NVRTC tiled kernel,
// which must match the CPU bit for bit, wrap-around included), with transposed, strided and
// broadcast operands, size-0 dims, strict FP32 (no TF32 unless allowed) and determinism.
// Skips itself without a usable GPU.
#include "backends/cuda/gpu_test_support.hpp"

#include <theon/device.hpp>
#include <theon/theon.hpp>

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cmath>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

namespace theon {
namespace {

class BlasGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    THEON_REQUIRE_CUDA_DEVICES(1);
    saved_ = config();
  }
  void TearDown() override {
    if (cuda_status().ok) config() = saved_;
  }
  Config saved_;
};

Function compile_on(const std::string& device, const std::vector<Var>& ins, const std::vector<Var>& outs) {
  const std::string prev = config().device, prev_fallback = config().on_fallback;
  config().device = device;
  config().on_fallback = "raise";  // a matrix product that falls back to the CPU fails the test
  Function f = function(ins, outs, {.on_unused_input = "ignore"});
  config().device = prev;
  config().on_fallback = prev_fallback;
  return f;
}

// Every node of `op` in the GPU program runs on cuda0.
void expect_on_gpu(const Function& f, const std::string& op) {
  bool found = false;
  for (const NodeInfo& n : f.nodes())
    if (n.op.rfind(op, 0) == 0) {
      found = true;
      EXPECT_EQ(n.device, "cuda0") << n.op << " runs on " << n.device << ": " << n.reason;
    }
  EXPECT_TRUE(found) << op << " not in the program:\n" << f.explain();
}

// Compiles the graph for the CPU and the GPU, runs both on `values` and compares: integers
// exactly, floats within rtol/atol.
void compare(const std::vector<Var>& ins, const Var& out, const std::vector<Array>& values, const std::string& op,
             double rtol = 1e-5, double atol = 1e-6) {
  Function cpu = compile_on("cpu", ins, {out});
  Function gpu = compile_on("cuda", ins, {out});
  expect_on_gpu(gpu, op);
  Array want = cpu(values)[0];
  Array got = gpu(values)[0].to_host();
  ASSERT_EQ(dtype_name(got.dtype()), dtype_name(want.dtype()));
  ASSERT_EQ(shape_str(got.shape()), shape_str(want.shape()));
  if (is_float(want.dtype())) {
    EXPECT_TRUE(allclose(got, want, rtol, atol)) << op << " " << shape_str(want.shape()) << "\ngot  " << got
                                                 << "\nwant " << want;
  } else {
    EXPECT_EQ(got.to_vector<int64_t>(), want.to_vector<int64_t>()) << op << " " << shape_str(want.shape());
  }
}

Array uniform(const Shape& shape, DType t, uint64_t seed) {
  Array r = Array::rand(shape, seed, DType::Float64);
  std::vector<double> v = r.to_vector<double>();
  for (double& x : v) x = 2 * x - 1;
  return Array::from_vector<double>(v, shape).astype(t);
}

// Integers spanning the dtype's range, so sums of products wrap.
Array big_ints(const Shape& shape, DType t, uint64_t seed) {
  Array r = Array::rand(shape, seed, DType::Float64);
  std::vector<double> v = r.to_vector<double>();
  const double span = t == DType::Int8 ? 127 : t == DType::UInt8 ? 255 : t == DType::Int16 ? 32000 : 2e9;
  for (double& x : v) x = std::floor((t == DType::UInt8 ? x : 2 * x - 1) * span);
  Array a = Array::from_vector<double>(v, shape).astype(DType::Int64);
  if (t == DType::Int64) {  // products beyond 2^63: exercise the 64-bit wrap
    std::vector<int64_t> w = a.to_vector<int64_t>();
    for (auto& x : w) x *= 4000000001LL;
    return Array::from_vector<int64_t>(w, shape);
  }
  return a.astype(t);
}

Var var_of(DType t, int ndim, const std::string& name) { return tensor::tensor(t, std::vector<int64_t>(ndim, -1), name); }

const std::vector<std::pair<Shape, Shape>> kDotShapes = {
    {{3, 4}, {4, 5}},     {{3, 4}, {4}},     {{4}, {4, 5}},  {{4}, {4}},       {{0, 4}, {4, 5}}, {{3, 0}, {0, 5}},
    {{3, 4}, {4, 0}},     {{1, 1}, {1, 1}},  {{17, 33}, {33, 9}}, {{129, 257}, {257, 65}}, {{1, 300}, {300, 1}},
    {{1000}, {1000, 3}}, {{70, 1000}, {1000}}};

TEST_F(BlasGpu, DotMatchesCpuForEveryDtypeAndShape) {
  for (DType t : {DType::Float32, DType::Float64, DType::Int8, DType::Int16, DType::Int32, DType::Int64, DType::UInt8}) {
    for (const auto& [sa, sb] : kDotShapes) {
      SCOPED_TRACE(std::string(dtype_name(t)) + " " + shape_str(sa) + " . " + shape_str(sb));
      Var a = var_of(t, static_cast<int>(sa.size()), "a"), b = var_of(t, static_cast<int>(sb.size()), "b");
      const bool fp = is_float(t);
      std::vector<Array> v = {fp ? uniform(sa, t, 1) : big_ints(sa, t, 1), fp ? uniform(sb, t, 2) : big_ints(sb, t, 2)};
      compare({a, b}, tensor::dot(a, b), v, "Dot", t == DType::Float32 ? 1e-4 : 1e-12, t == DType::Float32 ? 1e-4 : 1e-12);
    }
  }
}

TEST_F(BlasGpu, DotReadsTransposedStridedAndBroadcastViews) {
  for (DType t : {DType::Float32, DType::Float64, DType::Int32}) {
    SCOPED_TRACE(dtype_name(t));
    const double tol = t == DType::Float32 ? 1e-4 : 1e-12;
    Var x = var_of(t, 2, "x"), w = var_of(t, 2, "w");
    Array xv = is_float(t) ? uniform({40, 30}, t, 3) : big_ints({40, 30}, t, 3);
    Array wv = is_float(t) ? uniform({40, 50}, t, 4) : big_ints({40, 50}, t, 4);
    compare({x, w}, tensor::dot(x.T(), w), {xv, wv}, "Dot", tol, tol);                   // column-major lhs
    compare({x, w}, tensor::dot(w.T(), x), {xv, wv}, "Dot", tol, tol);                   // (50, 40) . (40, 30)
    compare({x, w}, tensor::dot(x.T(), w.T().T()), {xv, wv}, "Dot", tol, tol);
    Var every2 = x[{Slice{{}, {}, 2}, Slice{{}, {}, 3}}];                                // (20, 10), both strides non-unit
    Var w2 = w[{Slice{{}, 10}, Slice{{}, {}, 5}}];                                       // (10, 10)
    compare({x, w}, tensor::dot(every2, w2), {xv, wv}, "Dot", tol, tol);
    compare({x, w}, tensor::dot(every2.T(), every2), {xv, wv}, "Dot", tol, tol);
    compare({x, w}, tensor::dot(x[{Slice{{}, {}, -1}}].T(), w), {xv, wv}, "Dot", tol, tol);  // negative stride
  }
}

TEST_F(BlasGpu, MatmulBatchesBroadcastsAndVectors) {
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{4, 6, 5}, {4, 5, 7}},       {{4, 6, 5}, {5, 7}},          {{6, 5}, {4, 5, 7}},       {{2, 3, 6, 5}, {3, 5, 7}},
      {{2, 1, 6, 5}, {1, 3, 5, 7}}, {{2, 3, 6, 5}, {2, 1, 5, 7}}, {{4, 6, 5}, {5}},          {{5}, {4, 5, 7}},
      {{2, 3, 4, 0}, {3, 0, 7}},    {{0, 6, 5}, {5, 7}},          {{3, 64, 65}, {3, 65, 66}}, {{2, 2, 2, 2, 3, 4}, {4, 2}}};
  for (DType t : {DType::Float32, DType::Float64, DType::Int8, DType::Int32, DType::Int64}) {
    for (const auto& [sa, sb] : shapes) {
      SCOPED_TRACE(std::string(dtype_name(t)) + " " + shape_str(sa) + " @ " + shape_str(sb));
      Var a = var_of(t, static_cast<int>(sa.size()), "a"), b = var_of(t, static_cast<int>(sb.size()), "b");
      const bool fp = is_float(t);
      std::vector<Array> v = {fp ? uniform(sa, t, 5) : big_ints(sa, t, 5), fp ? uniform(sb, t, 6) : big_ints(sb, t, 6)};
      compare({a, b}, tensor::matmul(a, b), v, "BatchedMatmul", t == DType::Float32 ? 1e-4 : 1e-12,
              t == DType::Float32 ? 1e-4 : 1e-12);
    }
  }
  // Transposed matrices inside a batch, and a batch-transposed operand (non-collapsing batch).
  for (DType t : {DType::Float32, DType::Int16}) {
    Var a = var_of(t, 3, "a"), b = var_of(t, 3, "b");
    Array av = is_float(t) ? uniform({5, 6, 4}, t, 7) : big_ints({5, 6, 4}, t, 7);
    Array bv = is_float(t) ? uniform({6, 5, 3}, t, 8) : big_ints({6, 5, 3}, t, 8);
    const double tol = t == DType::Float32 ? 1e-4 : 0;
    compare({a, b}, tensor::matmul(a.transpose({1, 2, 0}), b.transpose({0, 2, 1}).transpose({0, 2, 1})), {av, bv},
            "BatchedMatmul", tol, tol);  // (6, 4, 5) @ (6, 5, 3)
    compare({a, b}, tensor::matmul(a.transpose({1, 0, 2}), b.transpose({0, 1, 2})[{Slice{}, Slice{{}, 4}}]), {av, bv},
            "BatchedMatmul", tol, tol);  // (6, 5, 4) @ (6, 4, 3)
  }
}

TEST_F(BlasGpu, GemmFromDotPlusBiasAndScaledSums) {
  for (DType t : {DType::Float32, DType::Float64}) {
    SCOPED_TRACE(dtype_name(t));
    const double tol = t == DType::Float32 ? 1e-4 : 1e-12;
    Var x = var_of(t, 2, "x"), w = var_of(t, 2, "w"), c = var_of(t, 2, "c");
    Var bvec = var_of(t, 1, "b");
    Array xv = uniform({33, 20}, t, 9), wv = uniform({20, 17}, t, 10), cv = uniform({33, 17}, t, 11),
          bv = uniform({17}, t, 12);
    compare({x, w, bvec}, tensor::dot(x, w) + bvec, {xv, wv, bv}, "Gemm", tol, tol);     // bias row: c is (1, n)
    compare({x, w, c}, tensor::dot(x, w) + c, {xv, wv, cv}, "Gemm", tol, tol);
    compare({x, w, c}, c - tensor::dot(x, w), {xv, wv, cv}, "Gemm", tol, tol);           // alpha = -1
    compare({x, w, c}, 2.0 * tensor::dot(x, w) + 0.5 * c, {xv, wv, cv}, "Gemm", tol, tol);
    compare({x, w, c}, tensor::dot(x.T().T(), w) + c.T().T(), {xv, wv, cv}, "Gemm", tol, tol);
    // The product broadcast against a larger c: one row of x, 33 rows of c.
    compare({x, w, c}, tensor::dot(x, w) + c, {uniform({1, 20}, t, 13), wv, cv}, "Gemm", tol, tol);
    // k == 0: beta * c.
    compare({x, w, c}, 3.0 * tensor::dot(x, w) - c, {uniform({33, 0}, t, 14), uniform({0, 17}, t, 15), cv}, "Gemm", tol,
            tol);
    // A transposed c (copied into the output by the copy kernel).
    compare({x, w, c}, tensor::dot(x, w) + c.T(), {xv, uniform({20, 33}, t, 16), uniform({33, 33}, t, 17)}, "Gemm", tol,
            tol);
  }
  for (DType t : {DType::Int32, DType::Int64, DType::Int8}) {
    SCOPED_TRACE(dtype_name(t));
    Var x = var_of(t, 2, "x"), w = var_of(t, 2, "w"), c = var_of(t, 2, "c");
    Array xv = big_ints({70, 33}, t, 18), wv = big_ints({33, 130}, t, 19), cv = big_ints({70, 130}, t, 20);
    compare({x, w, c}, tensor::dot(x, w) + c, {xv, wv, cv}, "Gemm");
    compare({x, w, c}, c - tensor::dot(x, w), {xv, wv, cv}, "Gemm");
    compare({x, w, c}, tensor::dot(x, w) + c, {big_ints({1, 33}, t, 21), wv, cv}, "Gemm");
  }
}

// Gemm epilogues (bias vector, relu; the gemm_epilogue pass) on the device, never falling
// back: row and col bias with and without relu, a matrix addend with relu, integer relu.
TEST_F(BlasGpu, GemmEpiloguesBiasAndRelu) {
  for (DType t : {DType::Float32, DType::Float64}) {
    SCOPED_TRACE(dtype_name(t));
    const double tol = t == DType::Float32 ? 1e-4 : 1e-12;
    Var x = var_of(t, 2, "x"), w = var_of(t, 2, "w"), c = var_of(t, 2, "c"), bvec = var_of(t, 1, "b");
    Array xv = uniform({33, 20}, t, 31), wv = uniform({20, 17}, t, 32), cv = uniform({33, 17}, t, 33),
          bv = uniform({17}, t, 34), colv = uniform({33}, t, 35);
    compare({x, w, bvec}, tensor::relu(tensor::dot(x, w) + bvec), {xv, wv, bv}, "Gemm", tol, tol);
    compare({x, w, bvec}, tensor::relu(2.0 * tensor::dot(x, w) - 0.5 * bvec), {xv, wv, bv}, "Gemm", tol, tol);
    compare({x, w, bvec}, tensor::relu(tensor::dot(x, w) + bvec.dimshuffle({0, -1})), {xv, uniform({20, 33}, t, 36), colv},
            "Gemm", tol, tol);
    compare({x, w, c}, tensor::relu(tensor::dot(x, w) + c), {xv, wv, cv}, "Gemm", tol, tol);
    // Size-0 rows and k == 0.
    compare({x, w, bvec}, tensor::relu(tensor::dot(x, w) + bvec), {uniform({0, 20}, t, 37), wv, bv}, "Gemm", tol, tol);
    compare({x, w, bvec}, tensor::relu(tensor::dot(x, w) + bvec), {uniform({33, 0}, t, 38), uniform({0, 17}, t, 39), bv},
            "Gemm", tol, tol);
  }
  const DType t = DType::Int32;
  Var x = var_of(t, 2, "x"), w = var_of(t, 2, "w"), bvec = var_of(t, 1, "b");
  compare({x, w, bvec}, tensor::relu(tensor::dot(x, w) + bvec), {big_ints({70, 33}, t, 40), big_ints({33, 13}, t, 41),
                                                                  big_ints({13}, t, 42)}, "Gemm");
}

// relu(dot(x, w)): a Gemm without an addend (bias=none) on the device, never falling back:
// the epilogue kernel with no c, size-1 and size-0 dims, k == 0, transposed operands, a NaN
// kept by the relu, and the integer kernel.
TEST_F(BlasGpu, GemmWithoutAddendIsReluOfTheProduct) {
  auto expect_no_addend = [](const std::vector<Var>& ins, const Var& out) {
    Function f = compile_on("cuda", ins, {out});
    bool found = false;
    for (const NodeInfo& n : f.nodes()) found = found || n.op.find("bias=none, act=relu") != std::string::npos;
    EXPECT_TRUE(found) << f.explain();
  };
  for (DType t : {DType::Float32, DType::Float64}) {
    SCOPED_TRACE(dtype_name(t));
    const double tol = t == DType::Float32 ? 1e-4 : 1e-12;
    Var x = var_of(t, 2, "x"), w = var_of(t, 2, "w");
    const Var y = tensor::relu(tensor::dot(x, w));
    expect_no_addend({x, w}, y);
    for (auto [m, k, n] : {std::tuple<int64_t, int64_t, int64_t>{33, 20, 17}, {1, 1, 1}, {1, 20, 17}, {33, 20, 1},
                           {0, 20, 17}, {33, 0, 17}, {129, 64, 70}})
      compare({x, w}, y, {uniform({m, k}, t, 51), uniform({k, n}, t, 52)}, "Gemm", tol, tol);
    compare({x, w}, tensor::relu(tensor::dot(x.T(), w)), {uniform({20, 33}, t, 53), uniform({20, 17}, t, 54)}, "Gemm",
            tol, tol);
    compare({x, w}, tensor::maximum(tensor::dot(x, w), literal(0.0, false)), {uniform({33, 20}, t, 55),
            uniform({20, 17}, t, 56)}, "Gemm", tol, tol);
    // A NaN in row 2 of x: row 2 of the output stays NaN (allclose compares NaN as equal),
    // and it is NaN on the device itself.
    std::vector<double> xs = uniform({33, 20}, DType::Float64, 57).to_vector<double>();
    xs[2 * 20 + 3] = std::nan("");
    const Array xn = Array::from_vector<double>(xs, {33, 20}).astype(t);
    compare({x, w}, y, {xn, uniform({20, 17}, t, 58)}, "Gemm", tol, tol);
    Function gpu = compile_on("cuda", {x, w}, {y});
    const Array got = gpu({xn, uniform({20, 17}, t, 58)})[0].to_host();
    for (int64_t j = 0; j < 17; ++j) EXPECT_TRUE(std::isnan(got.item(2 * 17 + j))) << j;
    for (int64_t j = 0; j < 17; ++j) EXPECT_GE(got.item(17 + j), 0.0) << j;
  }
  const DType t = DType::Int32;
  Var x = var_of(t, 2, "x"), w = var_of(t, 2, "w");
  expect_no_addend({x, w}, tensor::relu(tensor::dot(x, w)));
  compare({x, w}, tensor::relu(tensor::dot(x, w)), {big_ints({70, 33}, t, 59), big_ints({33, 13}, t, 60)}, "Gemm");
  compare({x, w}, tensor::relu(tensor::dot(x, w)), {big_ints({1, 1}, t, 61), big_ints({1, 1}, t, 62)}, "Gemm");
}

// cuBLASLt matmuls so far on the simulated device (its stand-in counts them), -1 on a real
// one (its libcublasLt has no such count).
long long lt_matmuls() {
  void* lib = dlopen("libcublasLt.so.13", RTLD_LAZY | RTLD_NOLOAD);
  if (!lib) return -1;
  auto* count = reinterpret_cast<long long (*)()>(dlsym(lib, "theon_gpu_sim_cublaslt_matmuls"));
  dlclose(lib);
  return count ? count() : -1;
}

// A row bias without relu (beta 1) is one cuBLASLt matmul with the bias epilogue (cuBLASLt's
// bias is one element per row of its column-major D = per column of Theon's row-major
// output); relu, a col bias, a scaled or strided bias take the cuBLAS + copy / NVRTC paths.
// Every case against the CPU, with size-1 dims and a NaN. On the simulator the count of Lt
// matmuls shows which path ran.
TEST_F(BlasGpu, GemmRowBiasRunsAsOneCublasLtMatmul) {
  const bool sim = lt_matmuls() >= 0;
  for (DType t : {DType::Float32, DType::Float64}) {
    SCOPED_TRACE(dtype_name(t));
    const double tol = t == DType::Float32 ? 1e-4 : 1e-12;
    Var x = var_of(t, 2, "x"), w = var_of(t, 2, "w"), bvec = var_of(t, 1, "b");
    // expect_lt: whether the Gemm should have run through cuBLASLt.
    auto check = [&](const Var& y, const std::vector<Array>& vals, bool expect_lt) {
      const long long before = lt_matmuls();
      compare({x, w, bvec}, y, vals, "Gemm", tol, tol);
      if (sim) {
        EXPECT_EQ(lt_matmuls() > before, expect_lt) << "cuBLASLt " << (expect_lt ? "not used" : "used");
      }
    };
    for (auto [m, k, n] : {std::tuple<int64_t, int64_t, int64_t>{33, 20, 17}, {1, 1, 1}, {1, 20, 17}, {33, 20, 1},
                           {33, 1, 17}, {130, 70, 65}}) {
      const std::vector<Array> vals = {uniform({m, k}, t, 71), uniform({k, n}, t, 72), uniform({n}, t, 73)};
      check(tensor::dot(x, w) + bvec, vals, true);
      check(tensor::dot(x, w) - bvec, vals, false);                // beta -1: Lt's bias is unscaled
      check(tensor::relu(tensor::dot(x, w) + bvec), vals, false);  // relu keeps NaN: NVRTC
      check(2.0 * tensor::dot(x, w) + bvec, vals, true);           // alpha is Lt's
    }
    // Transposed operands (Lt's ops), a col bias, a NaN in the bias and in x.
    check(tensor::dot(x.T(), w.T()) + bvec, {uniform({20, 33}, t, 74), uniform({17, 20}, t, 75), uniform({17}, t, 76)},
          true);
    check(tensor::dot(x, w) + bvec.dimshuffle({0, -1}),
          {uniform({33, 20}, t, 77), uniform({20, 17}, t, 78), uniform({33}, t, 79)}, false);
    std::vector<double> bs = uniform({17}, DType::Float64, 80).to_vector<double>();
    bs[4] = std::nan("");
    std::vector<double> xs = uniform({33, 20}, DType::Float64, 81).to_vector<double>();
    xs[5 * 20 + 2] = std::nan("");
    const std::vector<Array> nan_vals = {Array::from_vector<double>(xs, {33, 20}).astype(t), uniform({20, 17}, t, 82),
                                         Array::from_vector<double>(bs, {17}).astype(t)};
    check(tensor::dot(x, w) + bvec, nan_vals, true);
    check(tensor::relu(tensor::dot(x, w) + bvec), nan_vals, false);
    Function gpu = compile_on("cuda", {x, w, bvec}, {tensor::dot(x, w) + bvec});
    const Array got = gpu(nan_vals)[0].to_host();
    for (int64_t i = 0; i < 33; ++i) EXPECT_TRUE(std::isnan(got.item(i * 17 + 4))) << i;  // the NaN bias column
    for (int64_t j = 0; j < 17; ++j) EXPECT_TRUE(std::isnan(got.item(5 * 17 + j))) << j;  // the NaN row of x
    // A strided bias (every other element of a longer vector) is not packed: the copy path.
    Var bl = var_of(t, 1, "bl");
    const long long before = lt_matmuls();
    compare({x, w, bl}, tensor::dot(x, w) + bl[{Slice(0, 34, 2)}],
            {uniform({33, 20}, t, 83), uniform({20, 17}, t, 84), uniform({34}, t, 85)}, "Gemm", tol, tol);
    if (sim) {
      EXPECT_EQ(lt_matmuls(), before);
    }
    // When cuBLASLt's heuristic finds no algorithm the cuBLAS + copy path gives the same
    // result (the simulator's SIM_CUBLASLT_NO_ALGO; a no-op on a real device).
    if (sim) {
      setenv("SIM_CUBLASLT_NO_ALGO", "1", 1);
      const long long start = lt_matmuls();
      compare({x, w, bvec}, tensor::dot(x, w) + bvec, nan_vals, "Gemm", tol, tol);
      EXPECT_EQ(lt_matmuls(), start);
      unsetenv("SIM_CUBLASLT_NO_ALGO");
    }
  }
}

// float32 stays IEEE FP32 unless allow_tf32. On a k = 1024 product of values in (-1, 1)
// (sums ~10), FP32 rounding leaves ~1e-5 (worst ~1e-4) against a float64 reference; TF32's
// 10-bit mantissa inputs leave ~5e-3.
TEST_F(BlasGpu, Float32IsStrictUnlessTf32IsAllowed) {
  Var a = var_of(DType::Float32, 2, "a"), b = var_of(DType::Float32, 2, "b");
  Array av = uniform({256, 1024}, DType::Float32, 22), bv = uniform({1024, 256}, DType::Float32, 23);
  Var a64 = var_of(DType::Float64, 2, "a"), b64 = var_of(DType::Float64, 2, "b");
  Array want = compile_on("cpu", {a64, b64}, {tensor::dot(a64, b64)})({av.astype(DType::Float64), bv.astype(DType::Float64)})[0];
  config().allow_tf32 = false;
  Function f = compile_on("cuda", {a, b}, {tensor::dot(a, b)});
  Array got = f({av, bv})[0].to_host().astype(DType::Float64);
  std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  double worst = 0;
  for (size_t i = 0; i < g.size(); ++i) worst = std::max(worst, std::abs(g[i] - w[i]));
  EXPECT_LT(worst, 1e-3) << "FP32 GEMM error " << worst << ": TF32 tensor cores in use?";
  config().allow_tf32 = true;  // allowed: still close, just not IEEE
  Array tf = f({av, bv})[0].to_host();
  EXPECT_TRUE(allclose(tf.astype(DType::Float64), want, 0, 0.5));
}

TEST_F(BlasGpu, ResultsAreDeterministic) {
  Var a = var_of(DType::Float32, 3, "a"), b = var_of(DType::Float32, 3, "b");
  Var ia = var_of(DType::Int64, 2, "ia"), ib = var_of(DType::Int64, 2, "ib");
  Function f = compile_on("cuda", {a, b, ia, ib}, {tensor::matmul(a, b), tensor::dot(ia, ib)});
  std::vector<Array> v = {uniform({8, 300, 700}, DType::Float32, 24), uniform({8, 700, 200}, DType::Float32, 25),
                          big_ints({300, 200}, DType::Int64, 26), big_ints({200, 100}, DType::Int64, 27)};
  std::vector<Array> first = f(v);
  for (int rep = 0; rep < 3; ++rep) {
    std::vector<Array> again = f(v);
    for (size_t i = 0; i < first.size(); ++i)
      EXPECT_EQ(std::memcmp(first[i].to_host().data(), again[i].to_host().data(), first[i].nbytes()), 0) << "output " << i;
  }
}

}  // namespace
}  // namespace theon
