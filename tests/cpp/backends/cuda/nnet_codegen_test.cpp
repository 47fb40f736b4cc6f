// The CUDA nnet kernels without a GPU: every op family is registered and supported, and
// the NVRTC source of every variant the ops can ask for compiles for sm_90 (dtypes of the
// values and of the labels, softmax over axes that leave 0 to 3 kept dims).
#include <theon/theon.hpp>

#include "backends/cuda/cuda_backend.hpp"
#include "ops/nnet.hpp"
#include "ops/nnet_fused.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <thread>

namespace theon::backends::cuda {
namespace {

using D = DType;
using graph::VarPtr;

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

Array placeholder(DType dtype, const Shape& shape, std::optional<Strides> strides = std::nullopt) {
  return Array(nullptr, dtype, shape, strides.value_or(contiguous_strides(shape)));
}

VarPtr var(DType t, int ndim, const std::string& name) {
  return tensor::tensor(t, std::vector<int64_t>(static_cast<size_t>(ndim), -1), name).node();
}

// An output variable (it keeps its graph alive) and placeholder inputs for its node.
struct NodeCase {
  VarPtr out;
  std::vector<Array> inputs;
};

// Softmax over axes leaving 0 to 3 kept dims (float32; float64 at rank 1), the label ops
// with every label dtype (float32; float64 with int64 labels), and the dtype-generic
// gather/scatter/one_hot with every value dtype.
std::vector<NodeCase> all_node_cases() {
  std::vector<NodeCase> cases;
  for (bool log : {false, true}) {
    const D t = D::Float32;
    VarPtr x1 = var(t, 1, "x1"), x2 = var(t, 2, "x2"), x3 = var(t, 3, "x3"), x4 = var(t, 4, "x4");
    cases.push_back({ops::softmax(x1, 0, log), {placeholder(t, {7})}});                                // 0 kept dims
    cases.push_back({ops::softmax(x2, 1, log), {placeholder(t, {5, 7})}});                             // rows
    cases.push_back({ops::softmax(x2, 0, log), {placeholder(t, {5, 7}, Strides{1, 5})}});              // transposed
    cases.push_back({ops::softmax(x3, 1, log), {placeholder(t, {2, 5, 7})}});                          // 2 kept dims
    cases.push_back({ops::softmax(x4, 2, log), {placeholder(t, {2, 3, 5, 7}, Strides{1, 2, 6, 30})}});  // 3
    VarPtr d2 = var(D::Float64, 2, "d2");
    cases.push_back({ops::softmax(d2, 1, log), {placeholder(D::Float64, {5, 7})}});
  }
  std::vector<std::pair<D, D>> label_pairs = {{D::Float32, D::Int8},  {D::Float32, D::Int16}, {D::Float32, D::Int32},
                                              {D::Float32, D::Int64}, {D::Float32, D::UInt8}, {D::Float64, D::Int64}};
  for (auto [t, l] : label_pairs) {
    VarPtr x = var(t, 2, "x"), labels = var(l, 1, "labels"), dy = var(t, 1, "dy");
    const std::vector<Array> ml = {placeholder(t, {4, 9}), placeholder(l, {4})};
    const std::vector<Array> gml = {placeholder(t, {4}), placeholder(t, {4, 9}), placeholder(l, {4})};
    cases.push_back({ops::softmax_crossentropy(x, labels)[0], ml});
    cases.push_back({ops::softmax_crossentropy_grad(dy, x, labels), gml});
    cases.push_back({ops::categorical_crossentropy(x, labels), ml});
    cases.push_back({ops::crossentropy_grad(dy, x, labels), gml});
  }
  std::vector<std::pair<D, D>> value_pairs = {{D::Bool, D::Int64},    {D::Int8, D::Int64},  {D::Int16, D::Int64},
                                              {D::Int32, D::Int64},   {D::Int64, D::Int64}, {D::UInt8, D::Int64},
                                              {D::Float32, D::Int32}, {D::Float64, D::Int64}};
  for (auto [t, l] : value_pairs) {
    VarPtr x = var(t, 2, "x"), labels = var(l, 1, "labels"), v = var(t, 1, "v");
    cases.push_back({ops::label_gather(x, labels), {placeholder(t, {4, 9}), placeholder(l, {4})}});
    cases.push_back({ops::label_scatter(v, x, labels), {placeholder(t, {4}), placeholder(t, {4, 9}), placeholder(l, {4})}});
    cases.push_back({ops::one_hot(labels, 9, t), {placeholder(l, {4})}});
  }
  return cases;
}

TEST(NnetCodegen, EveryOpIsRegisteredAndSupported) {
  std::set<std::string> families;
  for (const NodeCase& c : all_node_cases()) {
    const graph::Apply& node = *c.out->owner;
    const CudaKernel* k = backend().find(node);
    ASSERT_NE(k, nullptr) << node.op().name();
    EXPECT_TRUE(k->supports(node).ok) << node.op().name() << ": " << k->supports(node).reason;
    families.insert(node.op().name());
  }
  EXPECT_EQ(families, (std::set<std::string>{"Softmax", "LogSoftmax", "SoftmaxCrossentropy", "SoftmaxCrossentropyGrad",
                                             "CategoricalCrossentropy", "CrossentropyGrad", "LabelGather",
                                             "LabelScatter", "OneHot"}));
}

TEST(NnetCodegen, EveryVariantCompiles) {
  PrivateCompiledir dir("nnet-sweep");
  std::map<std::string, KernelSource> sources;  // by name: one per variant
  for (const NodeCase& c : all_node_cases()) {
    const graph::Apply& node = *c.out->owner;
    const auto srcs = backend().find(node)->sources(node, c.inputs);
    ASSERT_EQ(srcs.size(), 1u) << node.op().name();
    for (const KernelSource& src : srcs) {
      EXPECT_FALSE(src.kernels.empty());
      auto [it, fresh] = sources.emplace(src.name, src);
      EXPECT_TRUE(fresh || it->second.code == src.code) << "two sources named " << src.name;
    }
  }
  std::vector<const KernelSource*> todo;
  for (auto& [name, src] : sources) todo.push_back(&src);
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::vector<std::string> failures;
  const auto t0 = std::chrono::steady_clock::now();
  auto worker = [&] {
    for (size_t i; (i = next++) < todo.size();) {
      try {
        compile_cubin(*todo[i], kDefaultArch);
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(mu);
        failures.push_back(todo[i]->name + ": " + e.what());
      }
    }
  };
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < std::max(1u, std::min(4u, std::thread::hardware_concurrency())); ++t)
    threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  for (auto& f : failures) ADD_FAILURE() << f;
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("[nnet sweep] %zu NVRTC modules compiled for sm_90 in %.1f s\n", todo.size(), secs);
}

// Sources depend on dtypes and the collapsed rank, never on sizes.
TEST(NnetCodegen, SourcesDoNotDependOnSizes) {
  VarPtr x = var(D::Float32, 2, "x");
  VarPtr y = ops::softmax(x, 1, false);
  const graph::Apply& node = *y->owner;
  const CudaKernel* k = backend().find(node);
  const auto a = k->sources(node, {placeholder(D::Float32, {5, 7})});
  const auto b = k->sources(node, {placeholder(D::Float32, {500, 70000})});
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].name, b[0].name);
  EXPECT_EQ(a[0].code, b[0].code);
}

}  // namespace
}  // namespace theon::backends::cuda
