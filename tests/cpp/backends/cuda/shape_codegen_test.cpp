// The shape/indexing family's CUDA kernels without a GPU: every program their sources()
// report for a matrix of ops, dtypes and layouts compiles with NVRTC for sm_90, and the
// copy planner picks the copy engine or the kernel variant it should.
#include "backends/cuda/copy_codegen.hpp"
#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/nvrtc_compiler.hpp"

#include <theon/theon.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>

namespace theon::backends::cuda {
namespace {

using D = DType;

// A placeholder: dtype and layout only, no buffer (what sources() is given).
Array ph(D dt, const Shape& shape, Strides st = {}, int64_t offset = 0) {
  if (st.empty() && !shape.empty()) st = contiguous_strides(shape);
  return Array(nullptr, dt, shape, st, offset);
}
// The same shape seen transposed in memory (column-major).
Array ph_t(D dt, const Shape& shape) {
  Shape r(shape.rbegin(), shape.rend());
  Strides c = contiguous_strides(r);
  return ph(dt, shape, Strides(c.rbegin(), c.rend()));
}
// Every other element along the last dim.
Array ph_s(D dt, const Shape& shape) {
  Shape wide = shape;
  wide.back() *= 2;
  Strides st = contiguous_strides(wide);
  st.back() = 2;
  return ph(dt, shape, st);
}

std::vector<Array> layouts(D dt, const Shape& s) { return {ph(dt, s), ph_t(dt, s), ph_s(dt, s)}; }

const graph::Apply& node_of(const Var& v) { return *v.node()->owner; }

std::vector<std::string> names(const std::vector<KernelSource>& s) {
  std::vector<std::string> n;
  for (auto& k : s) n.push_back(k.name);
  return n;
}

// Collects sources by name (a name fixes the code: the generators key names by variant).
struct Sweep {
  std::map<std::string, KernelSource> all;
  int nodes = 0;
  void add(const Var& v, const std::vector<Array>& ins) {
    const graph::Apply& n = node_of(v);
    const CudaKernel* k = backend().find(n);
    ASSERT_NE(k, nullptr) << n.describe();
    ASSERT_TRUE(k->supports(n).ok) << n.describe() << ": " << k->supports(n).reason;
    ++nodes;
    for (auto& s : k->sources(n, ins)) {
      auto [it, fresh] = all.emplace(s.name, s);
      if (!fresh) {
        EXPECT_EQ(it->second.code, s.code) << "two programs named " << s.name;
      }
    }
  }
};

const std::vector<D> kAll = {D::Bool, D::Int8, D::Int16, D::Int32, D::Int64, D::UInt8, D::Float32, D::Float64};
const std::vector<D> kIdx = {D::Int8, D::Int16, D::Int32, D::Int64, D::UInt8};

TEST(ShapeCudaCodegen, EveryShapeOpHasAKernel) {
  for (const char* op : {"DimShuffle", "Reshape", "BroadcastTo", "Shape", "Alloc", "Join", "Subtensor",
                         "AdvancedSubtensor1", "IncSubtensor", "AdvancedIncSubtensor1"}) {
    Var x = tensor::tensor(D::Float32, {-1, -1}, "x");
    Var v;
    const std::string o = op;
    if (o == "DimShuffle") v = x.T();
    else if (o == "Reshape") v = x.reshape({-1});
    else if (o == "BroadcastTo") v = tensor::broadcast_to(tensor::tensor(D::Float32, {1, 3}), {4, 3});
    else if (o == "Shape") v = tensor::shape(x);
    else if (o == "Alloc") v = tensor::zeros_like(x);
    else if (o == "Join") v = tensor::concatenate({x, x}, 1);
    else if (o == "Subtensor") v = x[{Slice{1, -1}}];
    else if (o == "AdvancedSubtensor1") v = tensor::take(x, tensor::lvector("i"), 1);
    else if (o == "IncSubtensor") v = tensor::inc_subtensor(x[{Slice{1, -1}}], tensor::fscalar("y"));
    else v = tensor::inc_subtensor(tensor::take(x, tensor::lvector("i")), tensor::fscalar("y"));
    ASSERT_EQ(node_of(v).op().name(), o);
    EXPECT_NE(backend().find(node_of(v)), nullptr) << o;
    EXPECT_TRUE(backend().supports(node_of(v)).ok) << o;
  }
}

TEST(ShapeCudaCodegen, CopyPlannerPicksTheCopyEngineForRuns) {
  // Contiguous to contiguous: one cudaMemcpyAsync, no kernel.
  EXPECT_TRUE(copy_sources(ph(D::Float32, {4, 5}), ph(D::Float32, {4, 5})).empty());
  // A concatenation slice with wide rows: cudaMemcpy2DAsync.
  EXPECT_TRUE(copy_sources(ph(D::Float32, {8, 64}), ph(D::Float32, {8, 64}, {128, 1})).empty());
  // Narrow rows: the kernel, widened to 16-byte units (4 floats a row, aligned).
  EXPECT_EQ(names(copy_sources(ph(D::Float32, {8, 4}), ph(D::Float32, {8, 4}, {8, 1}))),
            std::vector<std::string>{"theon_copy_u16_r2s_i32"});
  // A transpose: the shared-memory tile kernel; a full 3-d reversal: the generic kernel.
  EXPECT_EQ(names(copy_sources(ph_t(D::Float32, {3, 5}), ph(D::Float32, {3, 5}))),
            std::vector<std::string>{"theon_transpose_u4_i32"});
  EXPECT_EQ(names(copy_sources(ph(D::Float32, {2, 3, 5}, {15, 1, 3}), ph(D::Float32, {2, 3, 5}))),
            std::vector<std::string>{"theon_transpose_u4_i32"});
  EXPECT_EQ(names(copy_sources(ph_t(D::Float32, {2, 3, 5}), ph(D::Float32, {2, 3, 5}))),
            std::vector<std::string>{"theon_copy_u4_r3c_i32"});
  // A broadcast row: the source's stride 0 keeps the element size.
  EXPECT_EQ(names(copy_sources(ph(D::Float64, {5}), ph(D::Float64, {3, 5}))),
            std::vector<std::string>{"theon_copy_u8_r2c_i32"});
  // A scalar broadcast collapses to rank 1.
  EXPECT_EQ(names(copy_sources(ph(D::Int8, {}), ph(D::Int8, {3, 5, 7}))),
            std::vector<std::string>{"theon_copy_u1_r1c_i32"});
  // A misaligned offset blocks widening.
  EXPECT_EQ(names(copy_sources(ph(D::Float32, {8, 4}, {}, 1), ph(D::Float32, {8, 4}, {8, 1}))),
            std::vector<std::string>{"theon_copy_u4_r2s_i32"});
  // Sizes past 2^30 elements switch to 64-bit index math (the two dims merge: rank 1).
  EXPECT_EQ(names(copy_sources(ph_s(D::Int8, {1 << 16, 1 << 15}), ph(D::Int8, {1 << 16, 1 << 15}))),
            std::vector<std::string>{"theon_copy_u1_r1c_i64"});
  // Size 0: nothing.
  EXPECT_TRUE(copy_sources(ph_t(D::Float32, {0, 5}), ph(D::Float32, {0, 5})).empty());
  // Accumulation keeps the dtype (its arithmetic) and never widens.
  EXPECT_EQ(names(add_sources(ph(D::Int16, {4, 8}), ph(D::Int16, {4, 8}, {16, 1}))),
            std::vector<std::string>{"theon_add_i16_r2s_i32"});
}

TEST(ShapeCudaCodegen, EveryUnitAndRankOfTheCopyKernelsCompiles) {
  // What other families call copy_strided / fill_value with: every element unit (16 = uint4),
  // every rank, strided and contiguous destinations, both index widths, the transpose tiles.
  std::vector<KernelSource> all;
  for (int unit : {1, 2, 4, 8, 16}) all.push_back(strided_source(false, D::Float32, unit, 3, false, false));
  for (int rank = 1; rank <= 8; ++rank) all.push_back(strided_source(false, D::Float32, 4, rank, rank % 2 == 0, rank > 6));
  for (D dt : {D::Int8, D::Int16, D::Float32, D::Float64}) {
    for (auto& s : copy_sources(ph_t(dt, {3, 5}), ph(dt, {3, 5}))) all.push_back(s);
    for (auto& s : copy_sources(ph_t(dt, {1 << 16, 1 << 15}), ph(dt, {1 << 16, 1 << 15}))) all.push_back(s);
  }
  // Fill units 1, 2, 4, 8 and 16 bytes (the widest unit the size and alignment allow).
  for (auto [dt, n] : std::vector<std::pair<D, int64_t>>{{D::Int8, 1}, {D::Int8, 2}, {D::Float32, 1}, {D::Float32, 2},
                                                         {D::Float32, 4}, {D::Float32, int64_t{1} << 33}})
    for (auto& s : fill_sources(ph(dt, {n}), dt)) all.push_back(s);
  std::vector<std::string> got = names(all);
  for (const char* want : {"theon_transpose_u1_i32", "theon_transpose_u8_i64", "theon_fill_u1_i32", "theon_fill_u2_i32",
                           "theon_fill_u4_i32", "theon_fill_u8_i32", "theon_fill_u16_i32", "theon_fill_u16_i64"})
    EXPECT_NE(std::find(got.begin(), got.end(), want), got.end()) << want;
  for (auto& src : all) {
    SCOPED_TRACE(src.name);
    EXPECT_NO_THROW(compile_cubin(src, kDefaultArch)) << src.code;
  }
}

TEST(ShapeCudaCodegen, AllSourcesCompileForSm90) {
  Sweep sw;
  // Views report no programs, but their kernels must exist and accept the nodes.
  {
    Var x = tensor::tensor(D::Float32, {-1, -1, -1}, "x");
    sw.add(x.dimshuffle({2, -1, 0, 1}), {ph(D::Float32, {2, 3, 4})});
    sw.add(tensor::broadcast_to(tensor::tensor(D::Float32, {1, -1}), {4, 3}), {ph(D::Float32, {1, 3})});
    sw.add(x[{Slice{1, -1}, 0}], {ph(D::Float32, {4, 3, 2})});
    sw.add(tensor::shape(x), {ph(D::Float32, {2, 3, 4})});
    sw.add(tensor::size(x), {ph(D::Float32, {2, 3, 4})});
  }
  for (D dt : kAll) {
    Var x = tensor::tensor(dt, {-1, -1, -1}, "x");
    // Reshape / flatten of every layout.
    for (const Array& a : layouts(dt, {6, 4, 5})) {
      sw.add(x.reshape({-1, 5}), {a, ph(D::Int64, {2})});
      sw.add(x.flatten(2), {a});
    }
    // Join: concatenate along each axis, stack; inputs in several layouts.
    for (int axis : {0, 1, 2}) {
      Var j = tensor::concatenate({x, x, x}, axis);
      Shape s = {3, 4, 6};
      sw.add(j, layouts(dt, s));
    }
    sw.add(tensor::stack({x, x}, 1), {ph(dt, {3, 4, 5}), ph_t(dt, {3, 4, 5})});
    // Alloc: a constant scalar (fill), a vector broadcast over rows.
    sw.add(tensor::zeros_like(x), {ph(dt, {}), ph(D::Int64, {}), ph(D::Int64, {}), ph(D::Int64, {})});
    Var row = tensor::tensor(dt, {-1}, "row");
    sw.add(tensor::alloc(row, {tensor::lscalar("n"), tensor::lscalar("m")}), {ph(dt, {7}), ph(D::Int64, {}),
                                                                             ph(D::Int64, {})});
    // Basic set/inc: slices with steps, an integer index, a broadcast y, strided x.
    Var sub = x[{Slice{1, std::nullopt, 2}, 1}];
    Var y = tensor::tensor(dt, {-1}, "y");
    for (bool set : {true, false}) {
      Var r = set ? tensor::set_subtensor(sub, y) : tensor::inc_subtensor(sub, y);
      sw.add(r, {ph(dt, {5, 3, 4}), ph(dt, {4})});
      sw.add(r, {ph_t(dt, {5, 3, 4}), ph(dt, {1})});
    }
    Var sym = x[{Slice{tensor::lscalar("a"), tensor::lscalar("b")}}];
    sw.add(tensor::inc_subtensor(sym, tensor::tensor(dt, {-1, -1, -1})),
           {ph(dt, {5, 3, 4}), ph_s(dt, {5, 3, 4}), ph(D::Int64, {}), ph(D::Int64, {})});
    // take along axes 0 and 1; contiguous and transposed x; 1-d and 2-d indices.
    for (int axis : {0, 1}) {
      Var t = tensor::take(x, tensor::lvector("i"), axis);
      sw.add(t, {ph(dt, {6, 5, 8}), ph(D::Int64, {7})});
      sw.add(t, {ph_t(dt, {6, 5, 8}), ph_s(D::Int64, {7})});
    }
    // advanced set/inc (atomic, deterministic and set paths).
    Var idx = tensor::lvector("i");
    Var rows = tensor::take(x, idx);
    Var yv = tensor::tensor(dt, {-1, -1, -1}, "yv");
    for (bool det : {false, true}) {
      config().deterministic = det;
      sw.add(tensor::inc_subtensor(rows, yv), {ph(dt, {6, 5, 8}), ph(dt, {7, 5, 8}), ph(D::Int64, {7})});
      sw.add(tensor::inc_subtensor(rows, yv), {ph(dt, {6, 5, 8}), ph(dt, {1, 5, 1}), ph(D::Int64, {7})});
    }
    config().deterministic = false;
    sw.add(tensor::set_subtensor(rows, yv), {ph_t(dt, {6, 5, 8}), ph_t(dt, {7, 5, 8}), ph(D::Int64, {7})});
    Var cols = tensor::take(x, tensor::lmatrix("ij"), 1);
    sw.add(tensor::inc_subtensor(cols, tensor::tensor(dt, {-1, -1, -1, -1})),
           {ph(dt, {6, 5, 8}), ph(dt, {6, 2, 3, 8}), ph(D::Int64, {2, 3})});
  }
  // Every integer index dtype.
  for (D it : kIdx) {
    Var x = tensor::fmatrix("x");
    Var i = tensor::tensor(it, {-1}, "i");
    sw.add(tensor::take(x, i), {ph(D::Float32, {5, 3}), ph(it, {4})});
  }
  EXPECT_GE(sw.nodes, 200);

  const auto t0 = std::chrono::steady_clock::now();
  for (auto& [name, src] : sw.all) {
    SCOPED_TRACE(name);
    std::string cubin;
    ASSERT_NO_THROW(cubin = compile_cubin(src, kDefaultArch)) << src.code;
    EXPECT_FALSE(cubin.empty());
    for (auto& k : src.kernels) EXPECT_NE(src.code.find(k), std::string::npos);
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const NvrtcStats st = nvrtc_stats();
  std::printf("[shape codegen] %d nodes, %zu distinct programs compiled for sm_%d in %.2f s (%lld NVRTC runs, %lld disk hits)\n",
              sw.nodes, sw.all.size(), kDefaultArch, secs, static_cast<long long>(st.compiled),
              static_cast<long long>(st.disk_hits));
  EXPECT_GE(sw.all.size(), 40u);
}

}  // namespace
}  // namespace theon::backends::cuda
