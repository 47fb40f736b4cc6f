// The reduction and nnet kernels on a GPU, against the ops' CPU perform(): every kind and
// dtype, layouts (contiguous, transposed, strided, broadcast), sizes that pick each launch
// strategy (warp/block/outer, one and two passes), empty and 0-d arrays, NaN semantics,
// determinism, and the device-side label checks. Skipped without a usable device.
#include <theon/theon.hpp>

#include "backends/backend.hpp"
#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/gpu_test_support.hpp"
#include "backends/cuda/reduce_codegen.hpp"
#include "op_harness/harness.hpp"
#include "ops/argmax.hpp"
#include "ops/composite.hpp"
#include "ops/fused_reduce.hpp"
#include "ops/nnet.hpp"
#include "ops/nnet_fused.hpp"
#include "ops/reduce.hpp"
#include "ops/sum_to.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <tuple>
#include <limits>

namespace theon::backends::cuda {
namespace {

using D = DType;
using graph::VarPtr;

class ReduceNnetGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    THEON_REQUIRE_CUDA_DEVICES(1);
  }
};

VarPtr var(DType t, int ndim, const std::string& name = "x") {
  return tensor::tensor(t, std::vector<int64_t>(static_cast<size_t>(ndim), -1), name).node();
}

// `a`'s values as a device array with the same shape and strides (a view into a device
// copy of the host array's whole buffer), so layouts survive the trip.
Array device_view(const Array& a) {
  if (a.is_contiguous()) return to_device(a, Device::cuda(0));
  // Copy the span the view touches, then view it with the same strides.
  int64_t lo = 0, hi = 0;
  for (int d = 0; d < a.ndim(); ++d) {
    if (a.shape()[d] == 0) return to_device(a.contiguous(), Device::cuda(0));
    const int64_t e = (a.shape()[d] - 1) * a.strides()[d];
    (e < 0 ? lo : hi) += e;
  }
  const int64_t span = hi - lo + 1;
  Array flat(a.buffer(), a.dtype(), {span}, {1}, a.offset() + lo);
  Array dev = to_device(flat.contiguous(), Device::cuda(0));
  return Array(dev.buffer(), a.dtype(), a.shape(), a.strides(), dev.offset() - lo);
}

// Runs `out`'s node with the CUDA kernel and with the CPU kernel on the host; returns both.
std::pair<std::vector<Array>, std::vector<Array>> run_both(const VarPtr& out, const std::vector<Array>& host_inputs) {
  const graph::Apply& node = *out->owner;
  const CudaKernel* k = backend().find(node);
  EXPECT_NE(k, nullptr);
  const auto shapes = node.op().infer_shape(node, host_inputs);
  std::vector<Array> cpu_out, gpu_out, gpu_in;
  for (size_t i = 0; i < shapes.size(); ++i) {
    cpu_out.push_back(Array::empty(shapes[i], node.output_raw(static_cast<int>(i))->type.dtype));
    gpu_out.push_back(to_device(Array::zeros(shapes[i], node.output_raw(static_cast<int>(i))->type.dtype), Device::cuda(0)));
  }
  theon::backends::cpu_backend().kernel(node).run(nullptr, node, host_inputs, cpu_out);
  for (const Array& a : host_inputs) gpu_in.push_back(device_view(a));
  k->run(nullptr, node, gpu_in, gpu_out);
  std::vector<Array> back;
  for (const Array& a : gpu_out) back.push_back(a.to_host());
  return {cpu_out, back};
}

// CPU and GPU agree: bit-exactly for integers and bools, to float rounding for floats.
void expect_match(const VarPtr& out, const std::vector<Array>& inputs, double rtol32 = 2e-6, double rtol64 = 1e-12,
                  const std::string& what = "", double atol32 = -1) {
  auto [cpu, gpu] = run_both(out, inputs);
  for (size_t i = 0; i < cpu.size(); ++i) {
    ASSERT_EQ(cpu[i].shape(), gpu[i].shape()) << what;
    ASSERT_EQ(cpu[i].dtype(), gpu[i].dtype()) << what;
    if (is_float(cpu[i].dtype())) {
      const bool f32 = cpu[i].dtype() == D::Float32;
      const double rtol = f32 ? rtol32 : rtol64, atol = f32 && atol32 >= 0 ? atol32 : rtol * 1e-2;
      EXPECT_TRUE(allclose(gpu[i], cpu[i], rtol, atol))
          << what << " " << out->owner->describe() << "\ncpu " << cpu[i] << "\ngpu " << gpu[i];
    } else {
      EXPECT_EQ(cpu[i].to_vector<double>(), gpu[i].to_vector<double>()) << what << " " << out->owner->describe();
    }
  }
}

Array values(DType t, const Shape& shape, uint64_t seed) {
  Array r = Array::randn(shape, seed, D::Float64);
  if (t == D::Bool) {  // half true
    std::vector<double> v = Array::rand(shape, seed, D::Float64).to_vector<double>();
    for (double& x : v) x = x < 0.5 ? 0.0 : 1.0;
    return Array::from_vector<double>(v, shape).astype(D::Bool);
  }
  if (is_float(t)) return r.astype(t);
  // Integers in -9..9 (0..9 unsigned): exact, and products stay small enough to be interesting.
  std::vector<double> v = r.to_vector<double>();
  for (double& x : v) x = std::round(x * 4), x = std::max(-9.0, std::min(9.0, x));
  if (t == D::UInt8)
    for (double& x : v) x = std::abs(x);
  return Array::from_vector<double>(v, shape).astype(t);
}

// The layouts every case runs with.
std::vector<Array> layouts(const Array& a) {
  std::vector<Array> out = {a};
  if (a.ndim() >= 2) out.push_back(a.transpose().copy().transpose());  // same logical values, reversed strides
  if (a.ndim() >= 1 && a.size() > 0) {
    Shape big = a.shape();
    big.back() *= 2;
    Array wide = Array::zeros(big, a.dtype());
    Array view = wide.slice(a.ndim() - 1, 0, big.back(), 2);  // every other element
    // Fill the strided view with a's values through a host copy.
    Array filled = view;
    std::vector<double> v = a.to_vector<double>();
    Array src = Array::from_vector<double>(v, a.shape()).astype(a.dtype());
    const size_t item = itemsize(a.dtype());
    for (int64_t i = 0; i < a.size(); ++i) {
      int64_t off = 0, rem = i;
      for (int d = a.ndim() - 1; d >= 0; --d) {
        off += (rem % a.shape()[d]) * view.strides()[d];
        rem /= a.shape()[d];
      }
      std::memcpy(static_cast<char*>(view.data()) + off * static_cast<int64_t>(item),
                  static_cast<const char*>(src.data()) + i * static_cast<int64_t>(item), item);
    }
    out.push_back(filled);
  }
  return out;
}

struct ReduceCase {
  ops::ReduceKind kind;
  std::vector<D> dtypes;
};

TEST_F(ReduceNnetGpu, ReduceMatchesCpu) {
  using K = ops::ReduceKind;
  const std::vector<D> all = {D::Bool, D::Int8, D::Int16, D::Int32, D::Int64, D::UInt8, D::Float32, D::Float64};
  const std::vector<ReduceCase> kinds = {{K::Sum, all},  {K::Prod, all},        {K::Mean, all},
                                         {K::Max, all},  {K::Min, all},         {K::Any, {D::Bool}},
                                         {K::All, {D::Bool}}};
  // (shape, axes): rows, columns, middle axes, everything, sizes that pick every strategy.
  const std::vector<std::pair<Shape, std::vector<int>>> geoms = {
      {{3, 4}, {1}},         {{3, 4}, {0}},           {{3, 4}, {0, 1}},         {{2, 3, 4}, {0, 2}},
      {{2, 3, 4}, {1}},      {{5}, {0}},              {{1, 5}, {0}},            {{37, 300}, {1}},
      {{300, 37}, {0}},      {{4, 5000}, {1}},        {{70000}, {0}},           {{20000, 3}, {0}},
      {{3, 20000}, {1}},     {{9000, 16}, {0}},       {{2, 1, 3}, {0, 2}},
  };
  uint64_t seed = 1;
  for (const auto& rc : kinds)
    for (D t : rc.dtypes)
      for (const auto& [shape, axes] : geoms) {
        // Products of many numbers overflow floats: keep them to small reductions.
        int64_t n = 1;
        for (int a : axes) n *= shape[a];
        if (rc.kind == K::Prod && n > 40) continue;
        VarPtr x = var(t, static_cast<int>(shape.size()));
        VarPtr y = ops::reduce(rc.kind, x, axes, false);
        ASSERT_TRUE(y->owner && y->owner->op().name() != "Elemwise");
        for (const Array& a : layouts(values(t, shape, seed++)))
          expect_match(y, {a}, 2e-6, 1e-12,
                       std::string(ops::reduce_kind_name(rc.kind)) + " " + std::string(dtype_name(t)) + " " +
                           shape_str(shape));
      }
}

TEST_F(ReduceNnetGpu, ReduceEdgeCases) {
  using K = ops::ReduceKind;
  // Empty reductions (sum 0, prod 1, mean NaN, any false, all true), empty outputs, 0-d.
  for (K k : {K::Sum, K::Prod, K::Mean}) {
    VarPtr x = var(D::Float32, 2);
    expect_match(ops::reduce(k, x, std::vector<int>{1}, false), {Array::zeros({3, 0}, D::Float32)});
    expect_match(ops::reduce(k, x, std::vector<int>{0}, false), {Array::zeros({3, 0}, D::Float32)});
    VarPtr s = var(D::Float64, 0);
    expect_match(ops::reduce(k, s, std::vector<int>{}, false), {Array::scalar(2.5, D::Float64)});
  }
  for (K k : {K::Any, K::All}) {
    VarPtr x = var(D::Bool, 2);
    expect_match(ops::reduce(k, x, std::vector<int>{1}, false), {Array::zeros({3, 0}, D::Bool)});
  }
  // NaN wins in max/min; +-inf are values.
  const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
  Array a = Array::from_vector<double>({1, nan, 3, -inf, -inf, -inf, 2, 5, inf}, Shape{3, 3}).astype(D::Float32);
  for (K k : {K::Max, K::Min, K::Sum}) {
    VarPtr x = var(D::Float32, 2);
    expect_match(ops::reduce(k, x, std::vector<int>{1}, false), {a});
    expect_match(ops::reduce(k, x, std::vector<int>{0}, false), {a});
  }
  // Count (mean's gradient): one number of the requested dtype.
  VarPtr x = var(D::Float32, 3);
  expect_match(ops::reduce_count(x, {0, 2}, D::Float32), {Array::zeros({2, 3, 4}, D::Float32)});
  expect_match(ops::reduce_count(x, {1}, D::Int64), {Array::zeros({2, 3, 4}, D::Float32)});
}

TEST_F(ReduceNnetGpu, ReductionsAreDeterministic) {
  VarPtr x = var(D::Float32, 1);
  VarPtr y = ops::reduce(ops::ReduceKind::Sum, x, std::vector<int>{0}, false);
  Array a = Array::randn({3000001}, 5, D::Float32);
  auto [cpu, g1] = run_both(y, {a});
  auto [cpu2, g2] = run_both(y, {a});
  EXPECT_EQ(g1[0].to_vector<float>(), g2[0].to_vector<float>());
  EXPECT_TRUE(allclose(g1[0], cpu[0], 1e-6, 1e-4));
}

TEST_F(ReduceNnetGpu, SumToMatchesCpu) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{3, 4}, {1, 4}}, {{3, 4}, {3, 1}}, {{3, 4}, {1, 1}}, {{2, 3, 4}, {2, 1, 4}}, {{5000, 7}, {1, 7}},
      {{7, 5000}, {7, 1}}, {{0, 4}, {1, 4}}, {{1, 4}, {1, 4}}};
  for (D t : {D::Float32, D::Float64, D::Int32, D::Int8, D::Bool})
    for (const auto& [gs, ls] : cases) {
      VarPtr g = var(t, static_cast<int>(gs.size()), "g"), like = var(t, static_cast<int>(ls.size()), "like");
      VarPtr y = graph::make_output(std::make_shared<ops::SumTo>(), {g, like}, like->type);
      for (const Array& a : layouts(values(t, gs, 11)))
        // The CPU adds float32 in float32, the GPU in double: allow the CPU's rounding.
        expect_match(y, {a, Array::zeros(ls, t)}, 1e-4, 1e-12, "sum_to " + shape_str(gs) + " -> " + shape_str(ls),
                     /*atol32=*/2e-3);
    }
}

TEST_F(ReduceNnetGpu, ArgMaxMatchesCpu) {
  const double nan = std::nan("");
  for (bool is_max : {true, false})
    for (D t : {D::Float32, D::Float64, D::Int32, D::Int8, D::UInt8, D::Bool, D::Int64})
      for (const auto& [shape, axis] : std::vector<std::pair<Shape, std::optional<int>>>{
               {{3, 4}, 1}, {{3, 4}, 0}, {{3, 4}, std::nullopt}, {{2, 3, 4}, 1}, {{}, std::nullopt},
               {{40000}, std::nullopt}, {{600, 70}, 0}, {{70, 600}, 1}, {{3000, 4}, std::nullopt}}) {
        VarPtr x = var(t, static_cast<int>(shape.size()));
        VarPtr y = ops::argmax(x, axis, false, is_max);
        Array v = values(t, shape, 3);
        for (const Array& a : layouts(v)) expect_match(y, {a}, 0, 0, "argmax " + shape_str(shape));
      }
  // Ties go to the first occurrence, NaN to the first NaN.
  Array a = Array::from_vector<double>({1, 3, 3, 0, nan, 2, nan, 9, 5, 5, 1, 5}, Shape{3, 4}).astype(D::Float32);
  for (bool is_max : {true, false}) {
    VarPtr x = var(D::Float32, 2);
    expect_match(ops::argmax(x, 1, false, is_max), {a});
    expect_match(ops::argmax(x, 0, false, is_max), {a});
    expect_match(ops::argmax(x, std::nullopt, false, is_max), {a});
  }
}

// reduce(exp(x - m)) as the fusion pass builds it (a FusedReduce over a Composite region).
VarPtr fused_reduce(ops::ReduceKind kind, const VarPtr& x, const VarPtr& m, std::vector<int> axes, DType out) {
  using S = ops::ScalarOpId;
  const DType t = x->type.dtype;
  auto region = std::make_shared<ops::Composite>(
      std::vector<DType>{t, t}, std::vector<ops::CompositeInstr>{{S::Sub, t, {0, 1}}, {S::Exp, t, {2}}},
      std::vector<int>{3});
  graph::TensorType type;
  type.dtype = out;
  for (int d = 0; d < x->type.ndim(); ++d)
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) type.dims.push_back(-1);
  return graph::make_output(std::make_shared<ops::FusedReduce>(region, kind, axes, out), {x, m}, type);
}

TEST_F(ReduceNnetGpu, FusedReduceMatchesCpu) {
  using K = ops::ReduceKind;
  for (D t : {D::Float32, D::Float64})
    for (K kind : {K::Sum, K::Max, K::Mean})
      for (const auto& [xs, ms, axes] : std::vector<std::tuple<Shape, Shape, std::vector<int>>>{
               {{4, 10}, {4, 1}, {1}},
               {{4, 10}, {1, 10}, {0}},
               {{300, 70}, {300, 1}, {1}},
               {{70, 3000}, {70, 1}, {1}},
               {{6000, 9}, {1, 9}, {0}},
               {{5, 6}, {1, 1}, {0, 1}},
               {{3, 0}, {3, 1}, {0}}}) {
        VarPtr x = var(t, 2, "x"), m = var(t, 2, "m");
        VarPtr y = fused_reduce(kind, x, m, axes, t);
        Array mv = values(t, ms, 5);
        for (const Array& a : layouts(values(t, xs, 4)))
          expect_match(y, {a, mv}, 2e-6, 1e-12, "fused_reduce " + shape_str(xs));
      }
}

TEST_F(ReduceNnetGpu, SoftmaxMatchesCpu) {
  for (D t : {D::Float32, D::Float64})
    for (bool log : {false, true})
      for (const auto& [shape, axis] : std::vector<std::pair<Shape, int>>{{{4, 10}, 1},
                                                                          {{4, 10}, 0},
                                                                          {{7}, 0},
                                                                          {{3, 100}, 1},
                                                                          {{3, 3000}, 1},
                                                                          {{2, 3, 40}, 1},
                                                                          {{2, 50, 3}, 2},
                                                                          {{0, 5}, 1},
                                                                          {{5, 0}, 1}}) {
        VarPtr x = var(t, static_cast<int>(shape.size()));
        VarPtr y = ops::softmax(x, axis, log);
        Array v = values(t, shape, 7);
        for (const Array& a : layouts(v)) expect_match(y, {a}, 2e-6, 1e-12, "softmax " + shape_str(shape));
        // Large values: the maximum is subtracted first.
        if (shape_size(shape) > 0) {
          Array big = Array::from_vector<double>(std::vector<double>(static_cast<size_t>(shape_size(shape)), 800.0), shape)
                          .astype(t);
          expect_match(y, {big});
        }
      }
}

TEST_F(ReduceNnetGpu, CrossentropyFamilyMatchesCpu) {
  for (D t : {D::Float32, D::Float64})
    for (D l : {D::Int64, D::Int32, D::UInt8})
      for (const Shape& shape : std::vector<Shape>{{5, 10}, {3, 200}, {2, 3000}, {0, 4}, {6, 1}}) {
        const int64_t rows = shape[0], classes = shape[1];
        std::vector<double> lab;
        for (int64_t i = 0; i < rows; ++i) lab.push_back(static_cast<double>((i * 7) % classes));
        Array labels = Array::from_vector<double>(lab, Shape{rows}).astype(l);
        Array x = values(t, shape, 9);
        Array p = Array::rand(shape, 9, D::Float64).astype(t);
        Array dy = values(t, {rows}, 13);
        VarPtr xv = var(t, 2, "x"), lv = var(l, 1, "labels"), dv = var(t, 1, "dy");
        auto sx = ops::softmax_crossentropy(xv, lv);
        for (const Array& a : layouts(x)) expect_match(sx[0], {a, labels}, 4e-6, 1e-12, "softmax_xent");
        for (const Array& a : layouts(p)) {
          expect_match(ops::softmax_crossentropy_grad(dv, xv, lv), {dy, a, labels});
          expect_match(ops::categorical_crossentropy(xv, lv), {a, labels});
          expect_match(ops::crossentropy_grad(dv, xv, lv), {dy, a, labels});
          expect_match(ops::label_gather(xv, lv), {a, labels});
          expect_match(ops::label_scatter(dv, xv, lv), {dy, a, labels});
        }
        expect_match(ops::one_hot(lv, classes, t), {labels});
        expect_match(ops::one_hot(lv, classes, D::Bool), {labels});
      }
}

// Issue 29: rows whose spread exceeds the dtype's range, +-inf, NaN and denormals at every lane
// class (testing::extreme_softmax_rows), at lengths that pick each launch (a thread per row, a
// warp, a block) and in every layout (strided rows: a thread per row): the GPU gives the
// CPU's answers, which the op harness and softmax_rows_test hold to NumPy's. (The block
// rows, slow on the simulator, in float32 at the first, a warp's edges and the last lane.)
TEST_F(ReduceNnetGpu, SoftmaxFamilyOfExtremeSpreadsMatchesCpu) {
  for (D t : {D::Float32, D::Float64})
    for (int64_t n : {5, 37, 1100}) {
      if (n > 1024 && t != D::Float32) continue;
      const auto [x, labels] = testing::extreme_softmax_rows(t, n, n > 1024 ? std::vector<int64_t>{0, 31, 32, n - 1}
                                                                             : std::vector<int64_t>{});
      const std::string what = "extreme rows " + shape_str(x.shape());
      VarPtr xv = var(t, 2, "x"), lv = var(D::Int64, 1, "labels"), dv = var(t, 1, "dy");
      for (bool log : {false, true})
        for (const Array& a : layouts(x)) expect_match(ops::softmax(xv, 1, log), {a}, 2e-6, 1e-12, what);
      const auto sx = ops::softmax_crossentropy(xv, lv);
      for (const Array& a : layouts(x)) expect_match(sx[0], {a, labels}, 4e-6, 1e-12, what);
      // The gradient from the fused op's softmax of these rows (NaN rows, one-hot rows, zeros).
      const Array sm = run_both(sx[0], {x, labels}).first[1];
      const Array dy = Array::from_vector<double>(std::vector<double>(static_cast<size_t>(x.shape()[0]), 1.0)).astype(t);
      expect_match(ops::softmax_crossentropy_grad(dv, xv, lv), {dy, sm, labels}, 2e-6, 1e-12, what);
    }
  // Issue 29's row, against NumPy's answer on both sides.
  VarPtr xv = var(D::Float32, 2);
  auto [cpu, gpu] = run_both(ops::softmax(xv, 1, false), {Array::from_vector<float>({1.8e38f, -1.8e38f, 0.f}, Shape{1, 3})});
  EXPECT_EQ(cpu[0].to_vector<float>(), (std::vector<float>{1, 0, 0}));
  EXPECT_EQ(gpu[0].to_vector<float>(), (std::vector<float>{1, 0, 0}));
}

TEST_F(ReduceNnetGpu, BadLabelsRaiseTheCpuError) {
  Array x = Array::randn({4, 5}, 1, D::Float32);
  Array labels = Array::from_vector<int64_t>({1, 7, 2, -1});  // rows 1 and 3 are bad: row 1 is reported
  VarPtr xv = var(D::Float32, 2, "x"), lv = var(D::Int64, 1, "labels"), dv = var(D::Float32, 1, "dy");
  Array dy = Array::randn({4}, 2, D::Float32);
  const std::vector<std::pair<VarPtr, std::vector<Array>>> cases = {
      {ops::softmax_crossentropy(xv, lv)[0], {x, labels}},
      {ops::softmax_crossentropy_grad(dv, xv, lv), {dy, x, labels}},
      {ops::categorical_crossentropy(xv, lv), {x, labels}},
      {ops::crossentropy_grad(dv, xv, lv), {dy, x, labels}},
      {ops::label_gather(xv, lv), {x, labels}},
      {ops::label_scatter(dv, xv, lv), {dy, x, labels}},
      {ops::one_hot(lv, 5, D::Float32), {labels}},
  };
  for (const auto& [out, inputs] : cases) {
    const graph::Apply& node = *out->owner;
    std::string cpu_msg, gpu_msg;
    const auto shapes = node.op().infer_shape(node, inputs);
    std::vector<Array> host_out, dev_out, dev_in;
    for (size_t i = 0; i < shapes.size(); ++i) {
      host_out.push_back(Array::empty(shapes[i], node.output_raw(static_cast<int>(i))->type.dtype));
      dev_out.push_back(to_device(host_out.back(), Device::cuda(0)));
    }
    for (const Array& a : inputs) dev_in.push_back(to_device(a, Device::cuda(0)));
    try {
      theon::backends::cpu_backend().kernel(node).run(nullptr, node, inputs, host_out);
    } catch (const IndexError& e) {
      cpu_msg = e.what();
    }
    try {
      backend().find(node)->run(nullptr, node, dev_in, dev_out);
    } catch (const IndexError& e) {
      gpu_msg = e.what();
    }
    EXPECT_FALSE(cpu_msg.empty()) << node.describe();
    EXPECT_EQ(gpu_msg, cpu_msg) << node.describe();
  }
}

}  // namespace
}  // namespace theon::backends::cuda
