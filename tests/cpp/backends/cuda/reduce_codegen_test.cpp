// The CUDA reduction kernels without a GPU: how shapes and strides are split and collapsed,
// which launch strategy a geometry gets, and that every generated variant compiles with
// NVRTC for sm_90 (the sources of real Reduce, SumTo, ArgMax and Count nodes included).
#include <theon/theon.hpp>

#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/reduce_codegen.hpp"
#include "ops/argmax.hpp"
#include "ops/composite.hpp"
#include "ops/fused_reduce.hpp"
#include "ops/reduce.hpp"
#include "ops/sum_to.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

namespace theon::backends::cuda {
namespace {

using D = DType;

// A private compiledir, so the sweep really runs NVRTC (no cubin from an earlier run).
struct PrivateCompiledir {
  std::string saved;
  std::filesystem::path dir;
  explicit PrivateCompiledir(const std::string& tag) : saved(config().compiledir) {
    dir = std::filesystem::temp_directory_path() / ("theon-" + tag + "-" + std::to_string(getpid()));
    config().compiledir = dir.string();
  }
  ~PrivateCompiledir() {
    config().compiledir = saved;
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

// An Array with no buffer: what sources() may look at (dtype, shape, strides).
Array placeholder(DType dtype, const Shape& shape, std::optional<Strides> strides = std::nullopt) {
  return Array(nullptr, dtype, shape, strides.value_or(contiguous_strides(shape)));
}

TEST(ReduceCodegen, PlanLanesMovesReducedAxesInnermostAndCollapses) {
  // (2, 3, 4) contiguous, reducing axis 1: kept (2, 4) strides (12, 1), reduced (3) stride 4.
  LanePlan p = plan_lanes({2, 3, 4}, {{12, 4, 1}}, {false, true, false});
  EXPECT_EQ(p.kept.shape, (Shape{2, 4}));
  EXPECT_EQ(p.kept.strides[0], (Strides{12, 1}));
  EXPECT_EQ(p.reduced.shape, (Shape{3}));
  EXPECT_EQ(p.reduced.strides[0], (Strides{4}));
  // Reducing axes 1 and 2 of a contiguous tensor: one reduced dim of 12.
  p = plan_lanes({2, 3, 4}, {{12, 4, 1}}, {false, true, true});
  EXPECT_EQ(p.kept.shape, (Shape{2}));
  EXPECT_EQ(p.reduced.shape, (Shape{12}));
  EXPECT_EQ(p.reduced.strides[0], (Strides{1}));
  // A transposed matrix (3, 2) with strides (1, 3), everything reduced: no merge, row-major
  // order kept (the flat index of argmax depends on it).
  p = plan_lanes({3, 2}, {{1, 3}}, {true, true});
  EXPECT_EQ(p.kept.rank(), 0);
  EXPECT_EQ(p.reduced.shape, (Shape{3, 2}));
  EXPECT_EQ(p.reduced.strides[0], (Strides{1, 3}));
  // Size-1 dims vanish; broadcast (stride 0) dims merge with each other.
  p = plan_lanes({1, 5, 1, 4, 3}, {{0, 0, 7, 0, 1}}, {false, true, false, true, false});
  EXPECT_EQ(p.kept.shape, (Shape{3}));
  EXPECT_EQ(p.reduced.shape, (Shape{20}));
  EXPECT_EQ(p.reduced.strides[0], (Strides{0}));
  // Two operands merge only where both are contiguous across the pair.
  p = plan_lanes({4, 5, 6}, {{30, 6, 1}, {6, 24, 1}}, {false, false, true});
  EXPECT_EQ(p.kept.shape, (Shape{4, 5}));
  EXPECT_EQ(p.kept.strides[1], (Strides{6, 24}));
}

TEST(ReduceCodegen, LaunchStrategyFollowsTheLayout) {
  // Rows (reduced axis contiguous): a warp per output for short rows, a block for long ones.
  auto g = plan_reduce(RKind::Sum, D::Float32, D::Float32, {1000, 100}, {100, 1}, {false, true});
  EXPECT_EQ(choose_launch(g).strategy, ReduceLaunch::InnerWarp);
  g = plan_reduce(RKind::Sum, D::Float32, D::Float32, {1000, 5000}, {5000, 1}, {false, true});
  EXPECT_EQ(choose_launch(g).strategy, ReduceLaunch::InnerBlock);
  EXPECT_EQ(choose_launch(g).segments, 1);
  // Columns (axis 0 of a contiguous matrix): threads walk coalesced outputs.
  g = plan_reduce(RKind::Max, D::Float32, D::Float32, {5000, 1000}, {1000, 1}, {true, false});
  ReduceLaunch l = choose_launch(g);
  EXPECT_EQ(l.strategy, ReduceLaunch::Outer);
  EXPECT_EQ(l.block_y, 8);
  // A whole large tensor: split into segments (two passes), every segment non-empty.
  g = plan_reduce(RKind::Sum, D::Float32, D::Float32, {1 << 24}, {1}, {true});
  l = choose_launch(g);
  EXPECT_EQ(l.strategy, ReduceLaunch::InnerBlock);
  EXPECT_GT(l.segments, 100);
  EXPECT_LE(l.segments, 1024);
  EXPECT_LT((l.segments - 1) * l.segment_len, g.n_red);
  EXPECT_GE(l.segments * l.segment_len, g.n_red);
  // Tall, narrow columns: outer with segments.
  g = plan_reduce(RKind::Sum, D::Float64, D::Float64, {1 << 20, 16}, {16, 1}, {true, false});
  l = choose_launch(g);
  EXPECT_EQ(l.strategy, ReduceLaunch::Outer);
  EXPECT_GT(l.segments, 1);
  // Empty reductions read nothing: rank 0, n_red 0.
  g = plan_reduce(RKind::Sum, D::Int32, D::Int64, {3, 0}, {0, 1}, {false, true});
  EXPECT_EQ(g.n_red, 0);
  EXPECT_EQ(g.reduced.rank(), 0);
  EXPECT_EQ(g.n_out, 3);
}

TEST(ReduceCodegen, SpecNamesDistinguishVariants) {
  std::set<std::string> names;
  for (RKind k : {RKind::Sum, RKind::Prod, RKind::Max, RKind::Min, RKind::Any, RKind::All, RKind::Mean,
                  RKind::ArgMax, RKind::ArgMin})
    for (int kr = 0; kr < 3; ++kr) names.insert(ReduceSpec{k, D::Float32, D::Float32, kr, 1}.name());
  EXPECT_EQ(names.size(), 27u);
  EXPECT_EQ(accumulator_bytes({RKind::Sum, D::Float32, D::Float32, 1, 1}), 8u);   // double
  EXPECT_EQ(accumulator_bytes({RKind::Sum, D::Int8, D::Int64, 1, 1}), 8u);        // int64
  EXPECT_EQ(accumulator_bytes({RKind::Max, D::Int16, D::Int16, 1, 1}), 2u);       // the input type
  EXPECT_EQ(accumulator_bytes({RKind::Any, D::Bool, D::Bool, 1, 1}), 1u);
  EXPECT_EQ(accumulator_bytes({RKind::ArgMax, D::UInt8, D::Int64, 1, 1}), 16u);  // (value, index)
}

// Compiles sources on a few threads (NVRTC is thread-safe); returns the failures.
std::vector<std::string> compile_all(const std::vector<KernelSource>& sources) {
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::vector<std::string> failures;
  auto worker = [&] {
    for (size_t i; (i = next++) < sources.size();) {
      try {
        compile_cubin(sources[i], kDefaultArch);
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(mu);
        failures.push_back(sources[i].name + ": " + e.what());
      }
    }
  };
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < std::max(1u, std::min(4u, std::thread::hardware_concurrency())); ++t)
    threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  return failures;
}

// The variants the op harness sweep (nvrtc_sweep_test.cpp) does not reach: the other
// dtypes of each kind (their accumulator, shuffle and identity code differ) and the
// collapsed-rank variants. Each must compile for the H100.
TEST(ReduceCodegen, EveryVariantCompiles) {
  PrivateCompiledir dir("reduce-sweep");
  using K = RKind;
  const std::vector<ReduceSpec> specs = {
      {K::Sum, D::Bool, D::Int64, 1, 1},     {K::Sum, D::Int16, D::Int64, 1, 1},    {K::Sum, D::Int64, D::Int64, 1, 1},
      {K::Sum, D::Float64, D::Float64, 1, 1}, {K::Sum, D::Bool, D::Bool, 1, 1},      {K::Sum, D::Int8, D::Int8, 1, 1},
      {K::Prod, D::Int16, D::Int64, 1, 1},   {K::Prod, D::Float64, D::Float64, 1, 1},
      {K::Mean, D::Int8, D::Float64, 1, 1},  {K::Mean, D::UInt8, D::Float64, 1, 1},
      {K::Max, D::Int8, D::Int8, 1, 1},      {K::Max, D::Int16, D::Int16, 1, 1},    {K::Max, D::Int64, D::Int64, 1, 1},
      {K::Min, D::Bool, D::Bool, 1, 1},      {K::Min, D::UInt8, D::UInt8, 1, 1},    {K::Min, D::Int16, D::Int16, 1, 1},
      {K::Min, D::Int64, D::Int64, 1, 1},
      {K::ArgMax, D::Bool, D::Int64, 1, 1},  {K::ArgMax, D::Int8, D::Int64, 1, 1},  {K::ArgMax, D::Int16, D::Int64, 1, 1},
      {K::ArgMax, D::Int64, D::Int64, 1, 1}, {K::ArgMax, D::UInt8, D::Int64, 1, 1}, {K::ArgMax, D::Float64, D::Int64, 1, 1},
      {K::ArgMin, D::Bool, D::Int64, 1, 1},  {K::ArgMin, D::UInt8, D::Int64, 1, 1}, {K::ArgMin, D::Float64, D::Int64, 1, 1},
      {K::Sum, D::Float32, D::Float32, 0, 0}, {K::Sum, D::Float32, D::Float32, 0, 3}, {K::Sum, D::Float32, D::Float32, 3, 1},
      {K::Sum, D::Float32, D::Float32, 4, 4}, {K::ArgMax, D::Float32, D::Int64, 0, 3}, {K::ArgMax, D::Float32, D::Int64, 2, 2},
  };
  std::set<std::string> seen;
  std::vector<KernelSource> sources;
  for (const ReduceSpec& s : specs) {
    ASSERT_TRUE(seen.insert(s.name()).second) << s.name();
    sources.push_back(reduce_source(s));
    ASSERT_EQ(sources.back().name, s.name());
  }
  const auto t0 = std::chrono::steady_clock::now();
  for (const std::string& f : compile_all(sources)) ADD_FAILURE() << f;
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("[reduce sweep] %zu NVRTC modules compiled for sm_90 in %.1f s\n", sources.size(), secs);
}

// The sources real nodes ask for (through the backend's registry), compiled.
TEST(ReduceCodegen, NodeSourcesCompile) {
  PrivateCompiledir dir("reduce-nodes");
  CudaBackend& b = backend();
  Var x = tensor::tensor(D::Float32, {-1, -1, -1}, "x");
  Var xi = tensor::tensor(D::Int8, {-1, -1}, "xi");
  std::vector<std::pair<graph::VarPtr, std::vector<Array>>> nodes;  // outputs keep their graphs alive
  auto node_of = [](const Var& v) { return v.node(); };
  const Array x3 = placeholder(D::Float32, {4, 5, 6});
  const Array x3t = placeholder(D::Float32, {4, 5, 6}, Strides{1, 4, 20});  // a transposed view
  nodes.push_back({node_of(tensor::sum(x, std::vector<int>{1})), {x3}});
  nodes.push_back({node_of(tensor::max(x, std::vector<int>{0, 2})), {x3t}});
  nodes.push_back({node_of(tensor::mean(x)), {x3}});
  nodes.push_back({node_of(tensor::prod(xi, std::vector<int>{0})), {placeholder(D::Int8, {3, 7})}});
  nodes.push_back({node_of(tensor::argmax(x, 2)), {x3t}});
  nodes.push_back({node_of(tensor::argmax(x)), {x3}});
  nodes.push_back({ops::argmax(xi.node(), 1, false, /*is_max=*/false), {placeholder(D::Int8, {3, 7})}});
  nodes.push_back({ops::reduce_count(x.node(), {0, 1}, D::Float32), {x3}});
  Var like = tensor::tensor(D::Float32, {-1, -1, -1}, "like");
  nodes.push_back({ops::sum_to(x.node(), like.node()), {x3, placeholder(D::Float32, {1, 5, 1})}});
  std::vector<KernelSource> sources;
  for (auto& [out, inputs] : nodes) {
    const graph::Apply* node = out->owner;
    ASSERT_TRUE(node);
    const CudaKernel* k = b.find(*node);
    ASSERT_NE(k, nullptr) << node->op().name();
    EXPECT_TRUE(k->supports(*node).ok) << node->op().name() << ": " << k->supports(*node).reason;
    for (const KernelSource& src : k->sources(*node, inputs)) sources.push_back(src);
  }
  EXPECT_EQ(sources.size(), nodes.size());
  for (const std::string& f : compile_all(sources)) ADD_FAILURE() << f;
}

// sum(exp(x - m), axis) as the fusion pass builds it: a FusedReduce over a Composite region.
graph::VarPtr fused_reduce(ops::ReduceKind kind, const graph::VarPtr& x, const graph::VarPtr& m, std::vector<int> axes,
                           DType out) {
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

TEST(ReduceCodegen, FusedReduceSourcesCompile) {
  PrivateCompiledir dir("reduce-fused");
  Var x = tensor::tensor(D::Float32, {-1, -1}, "x"), m = tensor::tensor(D::Float32, {-1, 1}, "m");
  std::vector<KernelSource> sources;
  for (auto kind : {ops::ReduceKind::Sum, ops::ReduceKind::Max, ops::ReduceKind::Mean}) {
    graph::VarPtr y = fused_reduce(kind, x.node(), m.node(), {1}, D::Float32);
    const CudaKernel* k = backend().find(*y->owner);
    ASSERT_NE(k, nullptr);
    EXPECT_TRUE(k->supports(*y->owner).ok) << k->supports(*y->owner).reason;
    auto srcs = k->sources(*y->owner, {placeholder(D::Float32, {5, 7}), placeholder(D::Float32, {5, 1})});
    ASSERT_EQ(srcs.size(), 1u);
    EXPECT_NE(srcs[0].code.find("theon_region_value"), std::string::npos);
    EXPECT_NE(srcs[0].code.find("Exp{}"), std::string::npos);
    sources.push_back(srcs[0]);
  }
  for (const std::string& f : compile_all(sources)) ADD_FAILURE() << f;
}

TEST(ReduceCodegen, EveryFamilyIsRegistered) {
  CudaBackend& b = backend();
  Var x = tensor::matrix("x");
  for (Var y : {tensor::sum(x), tensor::prod(x), tensor::max(x), tensor::min(x), tensor::mean(x), tensor::any(x),
                tensor::all(x), tensor::argmax(x)}) {
    const graph::Apply& node = *y.node()->owner;
    EXPECT_NE(b.find(node), nullptr) << node.op().name();
    EXPECT_TRUE(b.supports(node).ok) << node.op().name();
  }
}

}  // namespace
}  // namespace theon::backends::cuda
