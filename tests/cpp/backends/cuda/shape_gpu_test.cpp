// The shape/indexing family on a GPU: each kernel run directly on device arrays (contiguous,
// transposed and strided views) against the op's CPU perform() on the same values. Skips
// without a device.
#include "backends/backend.hpp"
#include "backends/cuda/copy_codegen.hpp"
#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/cuda_runtime.hpp"
#include "backends/cuda/gpu_test_support.hpp"

#include <theon/theon.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

namespace theon::backends::cuda {
namespace {

// The device's own context's compute stream (where the 4-argument Kernel::run runs).
cudaStream_t own_stream(int device) { return CudaRuntime::instance().stream(device); }

using D = DType;

#define REQUIRE_GPU() THEON_REQUIRE_CUDA_DEVICES(1)

const Device kGpu = Device::cuda(0);

// Small integer-valued data (exact in every dtype); bools about half true.
Array rnd(D dt, const Shape& shape, uint64_t seed) {
  std::vector<double> v = Array::randn(shape, seed, D::Float64).to_vector<double>();
  for (double& x : v) x = dt == D::Bool ? (x > 0) : std::round(x * 4);
  if (dt == D::UInt8)
    for (double& x : v) x = std::abs(x);
  return Array::from_vector<double>(v, shape).astype(dt);
}

// A view of the same values on the host and on the device: 0 contiguous, 1 transposed in
// memory, 2 every other element of a wider array.
std::pair<Array, Array> view_pair(D dt, const Shape& shape, int variant, uint64_t seed) {
  if (variant == 1 && shape.size() >= 2) {
    Shape r(shape.rbegin(), shape.rend());
    Array h = rnd(dt, r, seed);
    return {h.transpose(), to_device(h, kGpu).transpose()};
  }
  if (variant == 2 && !shape.empty()) {
    Shape w = shape;
    w.back() *= 2;
    Array h = rnd(dt, w, seed);
    const int last = static_cast<int>(shape.size()) - 1;
    return {h.slice(last, 0, w.back(), 2), to_device(h, kGpu).slice(last, 0, w.back(), 2)};
  }
  Array h = rnd(dt, shape, seed);
  return {h, to_device(h, kGpu)};
}

void expect_same(const Array& cpu, const Array& gpu, double tol = 0) {
  ASSERT_EQ(cpu.shape(), gpu.shape());
  ASSERT_EQ(cpu.dtype(), gpu.dtype());
  std::vector<double> a = cpu.to_vector<double>(), b = gpu.to_vector<double>();
  for (size_t i = 0; i < a.size(); ++i) {
    if (tol == 0) ASSERT_EQ(a[i], b[i]) << "element " << i;
    else ASSERT_NEAR(a[i], b[i], tol * (1 + std::abs(a[i]))) << "element " << i;
  }
}

// Runs `v`'s node on the CPU (its CPU kernel) and on the GPU (the CUDA kernel) and returns both
// outputs (the GPU's copied to the host). `host[i]` and `dev[i]` hold equal values.
std::pair<Array, Array> run_both(const Var& v, const std::vector<Array>& host, const std::vector<Array>& dev) {
  const graph::Apply& node = *v.node()->owner;
  const DType dt = v.node()->type.dtype;
  const bool view = node.op().view_map().count(0) > 0;
  const Shape shape = node.op().infer_shape(node, host)[0];
  std::vector<Array> cout(1), gout(1);
  if (!view) cout[0] = Array::empty(shape, dt), gout[0] = device_empty(shape, dt, 0, own_stream(0));
  theon::backends::cpu_backend().kernel(node).run(nullptr, node, host, cout);
  const Kernel& k = backend().kernel(node);
  k.run(nullptr, node, dev, gout);
  EXPECT_TRUE(gout[0].device() == kGpu) << node.describe();
  return {cout[0], gout[0].to_host()};
}

void check(const Var& v, const std::vector<Array>& host, const std::vector<Array>& dev, double tol = 0) {
  auto [c, g] = run_both(v, host, dev);
  expect_same(c, g, tol);
}

const std::vector<D> kAll = {D::Bool, D::Int8, D::Int16, D::Int32, D::Int64, D::UInt8, D::Float32, D::Float64};

TEST(ShapeCudaGpu, StridedCopyMatchesTheHost) {
  REQUIRE_GPU();
  for (D dt : kAll)
    for (const Shape& s : std::vector<Shape>{{}, {1}, {0, 3}, {7}, {5, 33}, {3, 4, 5}, {2, 3, 4, 5, 6}})
      for (int variant : {0, 1, 2}) {
        auto [h, d] = view_pair(dt, s, variant, 7);
        Array out = device_empty(s, dt, 0, own_stream(0));
        copy_strided(d, out, 0, own_stream(0));
        expect_same(h.copy(), out.to_host());
      }
  // Broadcast rows/scalars, a negative step, a host source, 16-byte units (aligned rows).
  Array h = rnd(D::Float32, {4, 8}, 3), d = to_device(h, kGpu);
  Array out = device_empty({6, 4, 8}, D::Float32, 0, own_stream(0));
  copy_strided(d, out, 0, own_stream(0));
  expect_same(h.broadcast_to({6, 4, 8}).copy(), out.to_host());
  Array rev = device_empty({4, 8}, D::Float32, 0, own_stream(0));
  copy_strided(d.slice(0, -1, -5, -1), rev, 0, own_stream(0));
  expect_same(h.slice(0, -1, -5, -1).copy(), rev.to_host());
  copy_strided(h.transpose().transpose(), rev, 0, own_stream(0));  // host source: uploaded
  expect_same(h, rev.to_host());
  Array acc = to_device(h, kGpu);
  add_strided(d.slice(1, 0, 1), acc, 0, own_stream(0));  // acc += column 0, broadcast over columns
  Array want = h.copy();
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 8; ++j) want.data<float>()[i * 8 + j] += h.data<float>()[i * 8];
  expect_same(want, acc.to_host());
}

TEST(ShapeCudaGpu, ViewsDimShuffleBroadcastSubtensor) {
  REQUIRE_GPU();
  for (D dt : {D::Float32, D::Int8}) {
    Var x = tensor::tensor(dt, {-1, -1, -1}, "x");
    for (int variant : {0, 1, 2}) {
      auto [h, d] = view_pair(dt, {3, 4, 5}, variant, 11);
      check(x.dimshuffle({2, -1, 0, 1}), {h}, {d});
      check(x[{Slice{1, std::nullopt}, 2, Slice{std::nullopt, std::nullopt, -2}}], {h}, {d});
      Var a = tensor::lscalar("a");
      Array ah = Array::scalar(-3, D::Int64);
      check(x[{Slice{a, std::nullopt}}], {h, ah}, {d, to_device(ah, kGpu)});  // a bound on the device
    }
    Var r = tensor::tensor(dt, {1, -1}, "r");
    auto [h, d] = view_pair(dt, {1, 5}, 0, 2);
    check(tensor::broadcast_to(r, {4, 5}), {h}, {d});
  }
}

TEST(ShapeCudaGpu, ReshapeViewsWhenItCanAndCopiesWhenItMust) {
  REQUIRE_GPU();
  Var x = tensor::tensor(D::Float32, {-1, -1}, "x");
  Array h = rnd(D::Float32, {6, 10}, 5), d = to_device(h, kGpu);
  // Every other column, split rows: a view (no copy) of the strided input.
  Var split = x.reshape({2, 3, -1});
  const graph::Apply& node = *split.node()->owner;
  std::vector<Array> out(1);
  Array dv = d.slice(1, 0, 10, 2);
  backend().kernel(node).run(nullptr, node, {dv, Array::from_vector<int64_t>({2, 3, -1})}, out);
  EXPECT_EQ(out[0].buffer(), d.buffer());
  expect_same(h.slice(1, 0, 10, 2).copy().reshape({2, 3, 5}), out[0].to_host());
  // A transpose flattened: a copy on the device.
  Var flat = x.flatten(1);
  for (int variant : {0, 1, 2}) {
    auto [hv, dvv] = view_pair(D::Float64, {7, 9}, variant, 9);
    check(tensor::tensor(D::Float64, {-1, -1}).flatten(1), {hv}, {dvv});
  }
  (void)flat;
}

TEST(ShapeCudaGpu, ShapeAndSizeOnTheDevice) {
  REQUIRE_GPU();
  Var x = tensor::tensor(D::Float32, {-1, -1, -1}, "x");
  auto [h, d] = view_pair(D::Float32, {2, 3, 4}, 1, 1);
  check(tensor::shape(x), {h}, {d});
  check(tensor::size(x), {h}, {d});
}

TEST(ShapeCudaGpu, AllocFillsAndBroadcasts) {
  REQUIRE_GPU();
  for (D dt : kAll) {
    Var x = tensor::tensor(dt, {-1, -1}, "x");
    auto [h, d] = view_pair(dt, {33, 7}, 0, 3);
    for (Var v : {tensor::zeros_like(x), tensor::ones_like(x)}) {
      const graph::Apply& node = *v.node()->owner;
      std::vector<Array> hin, din;
      for (int i = 0; i < static_cast<int>(node.inputs().size()); ++i) {
        const auto& in = node.input(i);
        Array a = in->kind == graph::VarKind::Constant ? in->constant : Array::scalar(i == 1 ? 33 : 7, D::Int64);
        hin.push_back(a);
        din.push_back(a);  // a constant stays on the host: the fill path
      }
      check(v, hin, din);
    }
    // A device row broadcast over rows (fill value on the device).
    Var row = tensor::tensor(dt, {-1}, "row");
    Var al = tensor::alloc(row, std::vector<int64_t>{5, 7});
    auto [rh, rd] = view_pair(dt, {7}, 2, 4);
    check(al, {rh, Array::scalar(5, D::Int64), Array::scalar(7, D::Int64)},
          {rd, Array::scalar(5, D::Int64), Array::scalar(7, D::Int64)});
  }
  // A non-uniform float fill value (kernel path, 16-byte units) and an odd size.
  Var s = tensor::fscalar("s");
  Var al = tensor::alloc(s, std::vector<int64_t>{3, 5});
  Array v = Array::scalar(1.5, D::Float32);
  check(al, {v, Array::scalar(3, D::Int64), Array::scalar(5, D::Int64)},
        {v, Array::scalar(3, D::Int64), Array::scalar(5, D::Int64)});
}

TEST(ShapeCudaGpu, JoinConcatenatesAndStacks) {
  REQUIRE_GPU();
  for (D dt : {D::Float32, D::Int16, D::Bool, D::Float64}) {
    Var a = tensor::tensor(dt, {-1, -1}, "a"), b = tensor::tensor(dt, {-1, -1}, "b");
    for (int va : {0, 1, 2})
      for (int vb : {0, 1}) {
        auto [ha, da] = view_pair(dt, {4, 40}, va, 1);
        auto [hb, db] = view_pair(dt, {3, 40}, vb, 2);
        check(tensor::concatenate({a, b}, 0), {ha, hb}, {da, db});
        auto [hc, dc] = view_pair(dt, {4, 3}, vb, 3);
        check(tensor::concatenate({a, b}, 1), {ha, hc}, {da, dc});
        auto [hd, dd] = view_pair(dt, {4, 40}, vb, 4);
        check(tensor::stack({a, b}, 1), {ha, hd}, {da, dd});
      }
  }
}

TEST(ShapeCudaGpu, TakeGathersWithNegativeIndices) {
  REQUIRE_GPU();
  for (D dt : {D::Float32, D::Int8, D::Float64, D::Int64}) {
    Var x = tensor::tensor(dt, {-1, -1, -1}, "x");
    for (D it : {D::Int64, D::Int32, D::Int8}) {
      Var i = tensor::tensor(it, {-1}, "i");
      Array ih = Array::from_vector<double>({0, -1, 2, 2, -4}).astype(it);
      for (int axis : {0, 1, 2})
        for (int variant : {0, 1, 2}) {
          auto [h, d] = view_pair(dt, {4, 5, 8}, variant, 6);
          check(tensor::take(x, i, axis), {h, ih}, {d, ih});                    // host indices
          check(tensor::take(x, i, axis), {h, ih}, {d, to_device(ih, kGpu)});  // device indices
        }
    }
    // 2-d indices, embedding-like rows (16-byte units).
    Var w = tensor::tensor(dt, {-1, -1}, "w");
    Array ih = Array::from_vector<int64_t>({3, 1, 0, 3, 2, -2}, Shape{2, 3});
    auto [h, d] = view_pair(dt, {4, 64}, 0, 8);
    check(tensor::take(w, tensor::lmatrix("ij")), {h, ih}, {d, to_device(ih, kGpu)});
  }
}

TEST(ShapeCudaGpu, TakeRaisesIndexErrorForHostAndDeviceIndices) {
  REQUIRE_GPU();
  Var x = tensor::fmatrix("x");
  Var i = tensor::lvector("i");
  Var t = tensor::take(x, i);
  const graph::Apply& node = *t.node()->owner;
  Array d = to_device(rnd(D::Float32, {5, 3}, 1), kGpu);
  Array bad = Array::from_vector<int64_t>({1, 2, -7, 9});
  for (const Array& idx : {bad, to_device(bad, kGpu)}) {
    std::vector<Array> out = {device_empty({4, 3}, D::Float32, 0, own_stream(0))};
    try {
      backend().kernel(node).run(nullptr, node, {d, idx}, out);
      ADD_FAILURE() << "no IndexError";
    } catch (const IndexError& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("index -7 is out of bounds for axis 0"), std::string::npos) << m;
      EXPECT_NE(m.find("size 5"), std::string::npos) << m;
      EXPECT_NE(m.find(i.node()->label()), std::string::npos) << m;
    }
  }
}

TEST(ShapeCudaGpu, AdvancedSetAndIncWithRepeatedIndices) {
  REQUIRE_GPU();
  for (D dt : kAll) {
    Var x = tensor::tensor(dt, {-1, -1}, "x");
    Var y = tensor::tensor(dt, {-1, -1}, "y");
    Var i = tensor::lvector("i");
    Array ih = Array::from_vector<int64_t>({1, -1, 1, 0, 1, 4});
    for (int variant : {0, 1, 2}) {
      auto [h, d] = view_pair(dt, {5, 9}, variant, 3);
      auto [yh, yd] = view_pair(dt, {6, 9}, variant, 4);
      for (bool det : {false, true}) {
        config().deterministic = det;
        // float atomics may sum in any order; integers are exact either way.
        const double tol = (is_float(dt) && !det) ? 1e-6 : 0;
        check(tensor::inc_subtensor(tensor::take(x, i), y), {h, yh, ih}, {d, yd, to_device(ih, kGpu)}, tol);
        check(tensor::set_subtensor(tensor::take(x, i), y), {h, yh, ih}, {d, yd, ih});
      }
      config().deterministic = false;
      // A broadcast row of y, along axis 1.
      Var r = tensor::tensor(dt, {1, -1}, "r");
      auto [rh, rd] = view_pair(dt, {1, 6}, 0, 5);
      Array ic = Array::from_vector<int64_t>({8, 0, 8, -1, 3, 2});
      check(tensor::inc_subtensor(tensor::take(x, i, 1), r), {h, rh, ic}, {d, rd, ic});
    }
  }
}

TEST(ShapeCudaGpu, BasicSetAndIncSubtensor) {
  REQUIRE_GPU();
  for (D dt : kAll) {
    Var x = tensor::tensor(dt, {-1, -1, -1}, "x");
    Var y = tensor::tensor(dt, {-1, -1}, "y");
    Var a = tensor::lscalar("a");
    for (int variant : {0, 1, 2}) {
      auto [h, d] = view_pair(dt, {5, 4, 6}, variant, 12);
      auto [yh, yd] = view_pair(dt, {1, 6}, variant == 1 ? 0 : variant, 13);
      Var sub = x[{Slice{a, std::nullopt, 2}, Slice{std::nullopt, std::nullopt, -1}}];
      Array ah = Array::scalar(1, D::Int64);
      check(tensor::set_subtensor(sub, y), {h, yh, ah}, {d, yd, ah});
      check(tensor::inc_subtensor(sub, y), {h, yh, ah}, {d, yd, to_device(ah, kGpu)});
      Var one = x[{2, 1}];
      Var yv = tensor::tensor(dt, {-1}, "yv");
      auto [vh, vd] = view_pair(dt, {6}, 2, 14);
      check(tensor::inc_subtensor(one, yv), {h, vh}, {d, vd});
    }
  }
}

}  // namespace
}  // namespace theon::backends::cuda
