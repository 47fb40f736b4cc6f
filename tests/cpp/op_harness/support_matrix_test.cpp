// The op support matrix (issue 13): every OpKind of the registry (src/ops/ops.def) x backend
// (cpu, cuda) x dtype. For each kind a representative node is built per dtype; the backends'
// own answers (Backend::supports, Kernel::name) fill the cells, an unsupported cell carries the
// backend's reason, and the op's L_op says whether it has a gradient. Each kind must be
// tested somewhere: user kinds by an op-harness case whose graph contains the kind (found by
// building every case), internal kinds by a harness graph too or by the test files named in
// notes(). The matrix is rendered as docs/OPS.md; the test fails when the checked-in file
// differs (THEON_UPDATE_OPS_MD=1 rewrites it), so the table users read cannot go stale.
#include "harness.hpp"

#include "autodiff/grad_ops.hpp"
#include "backends/backend.hpp"
#include "backends/cpu/blas_call.hpp"
#include "graph/node.hpp"
#include "graph/op.hpp"
#include "graph/op_kind.hpp"
#include "ops/argmax.hpp"
#include "ops/assert.hpp"
#include "ops/blas.hpp"
#include "ops/composite.hpp"
#include "ops/dimshuffle.hpp"
#include "ops/elemwise.hpp"
#include "ops/float16.hpp"
#include "ops/fused_reduce.hpp"
#include "ops/gemm.hpp"
#include "ops/join.hpp"
#include "ops/make_op.hpp"
#include "ops/matmul.hpp"
#include "ops/nnet.hpp"
#include "ops/nnet_fused.hpp"
#include "ops/pool.hpp"
#include "ops/random.hpp"
#include "ops/reduce.hpp"
#include "ops/registry.hpp"
#include "ops/shape.hpp"
#include "ops/subtensor.hpp"
#include "ops/sum_to.hpp"
#include "ops/transfer.hpp"
#include "runtime/cuda_library.hpp"

#include <theon/error.hpp>
#include <theon/grad.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#ifndef THEON_SOURCE_DIR
#error "THEON_SOURCE_DIR (the repository root) must be defined for this test"
#endif

namespace theon::testing {
namespace {

using graph::OpKind;
using graph::VarPtr;

constexpr const char* kDocPath = "docs/OPS.md";
constexpr const char* kRegenerate =
    "THEON_UPDATE_OPS_MD=1 build/tests/test_op_harness --gtest_filter='SupportMatrix.*'";

// ---- how each kind is tested beyond the op harness, and other notes -------------------------

struct Note {
  std::vector<std::string> tested_by;  // test files (repository paths) that exercise the kind
  std::string text;                    // shown in OPS.md's notes column
};

// Every internal kind that no harness graph contains needs test files here; user kinds may
// carry a note too. The test checks that each file exists.
const std::map<OpKind, Note>& notes() {
  static const std::map<OpKind, Note> n = {
      {OpKind::Elemwise, {{}, "one kind for every scalar op (add, exp, cast, ...); the row is `add`"}},
      {OpKind::Mean, {{}, "sum then divide: integer input gives floatX"}},
      {OpKind::Shape, {{}, "placement keeps it on the host (shape arithmetic)"}},
      {OpKind::Count,
       {{"tests/cpp/backends/cuda/reduce_nnet_gpu_test.cpp", "tests/cpp/ops/nnet_ops_test.cpp"},
        "element count of reduced axes (mean's divisor, built by gradients)"}},
      {OpKind::SumTo,
       {{"tests/cpp/autodiff/grad_test.cpp", "tests/cpp/backends/cuda/reduce_nnet_gpu_test.cpp"},
        "made by elementwise gradients: sums the dims that broadcast at run time"}},
      {OpKind::Gemm,
       {{"tests/cpp/rewrite/specialize_test.cpp", "tests/cpp/rewrite/gemm_epilogue_test.cpp",
         "tests/cpp/backends/cuda/blas_gpu_test.cpp"},
        "made by `specialize` from dot + add; bias vector and relu epilogues by `gemm_epilogue` (harness: dot dense_*)"}},
      {OpKind::Composite,
       {{"tests/cpp/rewrite/fusion_test.cpp", "tests/cpp/backends/fused_cpu_test.cpp"},
        "made by `fusion`; the row is a one-instruction `add` region"}},
      {OpKind::FusedReduce,
       {{"tests/cpp/rewrite/fused_reduce_test.cpp", "tests/cpp/backends/cuda/reduce_nnet_gpu_test.cpp"},
        "made by `fusion` for CPU targets only"}},
      {OpKind::Transfer,
       {{"tests/cpp/ops/transfer_op_test.cpp", "tests/cpp/backends/cuda/runtime_gpu_test.cpp"},
        "inserted after placement and run as the executor's copy thunks (DeviceOps), never placed "
        "on a backend"}},
      {OpKind::SoftmaxCrossentropy,
       {{"tests/cpp/rewrite/specialize_test.cpp", "tests/cpp/autodiff/nnet_grad_test.cpp"},
        "made by `stabilize` (and `specialize`) from categorical_crossentropy(softmax(x), labels)"}},
      {OpKind::SoftmaxCrossentropyGrad,
       {{"tests/cpp/autodiff/nnet_grad_test.cpp", "tests/cpp/backends/cuda/nnet_codegen_test.cpp"},
        "made by softmax's gradient"}},
      {OpKind::CrossentropyGrad,
       {{"tests/cpp/autodiff/nnet_grad_test.cpp", "tests/cpp/backends/cuda/nnet_codegen_test.cpp"},
        "made by categorical_crossentropy's gradient"}},
      {OpKind::LabelGather,
       {{"tests/cpp/backends/cuda/nnet_codegen_test.cpp", "tests/cpp/backends/cuda/reduce_nnet_gpu_test.cpp"},
        "made by second-order crossentropy gradients"}},
      {OpKind::LabelScatter,
       {{"tests/cpp/backends/cuda/nnet_codegen_test.cpp", "tests/cpp/backends/cuda/reduce_nnet_gpu_test.cpp"},
        "made by second-order crossentropy gradients"}},
      {OpKind::ZeroGrad,
       {{"tests/cpp/autodiff/grad_test.cpp", "tests/cpp/backends/cuda/grad_gpu_test.cpp"},
        "`zero_grad(x)`: x forward (a view), zero gradient"}},
      {OpKind::DisconnectedGrad,
       {{"tests/cpp/autodiff/grad_test.cpp", "tests/cpp/backends/cuda/grad_gpu_test.cpp"},
        "`disconnected_grad(x)`: x forward (a view), no gradient"}},
      {OpKind::GradClip,
       {{"tests/cpp/autodiff/grad_test.cpp", "tests/cpp/backends/cuda/grad_gpu_test.cpp"},
        "`grad_clip(x, lower, upper)`: x forward (a view), the gradient clipped"}},
      {OpKind::GradScale,
       {{"tests/cpp/autodiff/grad_test.cpp", "tests/cpp/backends/cuda/grad_gpu_test.cpp"},
        "`grad_scale(x, multiplier)`: x forward (a view), the gradient scaled"}},
      {OpKind::RandomDraw,
       {{"tests/cpp/ops/random_test.cpp", "tests/cpp/backends/cuda/random_gpu_test.cpp"},
        "made by RandomStreams (`theon/random.hpp`): the standard uniform or normal draw and the next state; "
        "the same bits on both backends"}},
      {OpKind::Assert,
       {{"tests/cpp/ops/random_test.cpp", "tests/cpp/backends/cuda/random_gpu_test.cpp"},
        "checks of values known at run time (random parameters); conditions read on the host"}},
  };
  return n;
}

// ---- representative nodes ------------------------------------------------------------------

VarPtr in(DType d, std::vector<int64_t> dims, const std::string& name) {
  return graph::Variable::make_input(graph::TensorType{d, std::move(dims), ""}, name);
}
VarPtr mat(DType d, const std::string& name = "x") { return in(d, {-1, -1}, name); }
VarPtr vec(DType d, const std::string& name) { return in(d, {-1}, name); }
VarPtr labels() { return vec(DType::Int64, "labels"); }

using Builder = std::function<VarPtr(DType)>;

std::shared_ptr<const ops::Composite> add_region(DType d, int inputs) {
  std::vector<int> args = inputs == 2 ? std::vector<int>{0, 1} : std::vector<int>{0, 0};
  return std::make_shared<const ops::Composite>(std::vector<DType>(inputs, d),
                                                std::vector<ops::CompositeInstr>{{ops::ScalarOpId::Add, d, args}},
                                                std::vector<int>{inputs});
}

// A node of each kind, built per dtype the way the builders (or, for internal kinds, the
// rewrites and gradients) build it. The dtype is the node's data dtype (node_dtype below).
const std::map<OpKind, Builder>& representatives() {
  static const std::map<OpKind, Builder> reps = [] {
    using namespace ops;
    std::map<OpKind, Builder> m;
    m[OpKind::Elemwise] = [](DType d) { return elemwise(ScalarOpId::Add, {mat(d), mat(d, "y")}); };
    for (const graph::OpKindInfo& info : graph::op_kinds) {
      const std::optional<ReduceKind> r = reduce_kind_of(info.kind);
      if (!r || *r == ReduceKind::Count) continue;
      m[info.kind] = [r](DType d) { return reduce(*r, mat(d), std::vector<int>{1}, false); };
    }
    m[OpKind::Count] = [](DType d) { return reduce_count(mat(d), {1}, DType::Int64); };
    m[OpKind::Dot] = [](DType d) { return dot(mat(d, "a"), mat(d, "b")); };
    m[OpKind::DimShuffle] = [](DType d) { return dimshuffle(mat(d), {1, 0}); };
    m[OpKind::Reshape] = [](DType d) { return reshape(mat(d), std::vector<int64_t>{-1}); };
    m[OpKind::BroadcastTo] = [](DType d) { return broadcast_to(in(d, {1, 3}, "x"), {2, 3}); };
    m[OpKind::Join] = [](DType d) { return concatenate({mat(d), mat(d, "y")}, 0); };
    m[OpKind::Shape] = [](DType d) { return shape_of(mat(d)); };
    m[OpKind::Subtensor] = [](DType d) { return subtensor(mat(d), {Index(Slice{1, std::nullopt, 2}), Index(0)}); };
    m[OpKind::AdvancedSubtensor1] = [](DType d) { return take(mat(d), vec(DType::Int64, "i"), 0); };
    m[OpKind::IncSubtensor] = [](DType d) {
      return inc_subtensor(subtensor(mat(d), {Index(Slice{1, std::nullopt, std::nullopt})}), mat(d, "y"), false);
    };
    m[OpKind::AdvancedIncSubtensor1] = [](DType d) {
      return inc_subtensor(take(mat(d), vec(DType::Int64, "i"), 0), mat(d, "y"), false);
    };
    m[OpKind::Alloc] = [](DType d) {
      return alloc(in(d, {}, "v"), {in(DType::Int64, {}, "n"), in(DType::Int64, {}, "m")});
    };
    m[OpKind::ArgMax] = [](DType d) { return argmax(mat(d), 1, false, true); };
    m[OpKind::BatchedMatmul] = [](DType d) { return matmul(in(d, {-1, -1, -1}, "a"), in(d, {-1, -1, -1}, "b")); };
    m[OpKind::Softmax] = [](DType d) { return softmax(mat(d), 1, false); };
    m[OpKind::LogSoftmax] = [](DType d) { return softmax(mat(d), 1, true); };
    m[OpKind::CategoricalCrossentropy] = [](DType d) { return categorical_crossentropy(mat(d, "p"), labels()); };
    m[OpKind::OneHot] = [](DType d) { return one_hot(labels(), 5, d); };
    m[OpKind::SumTo] = [](DType d) { return sum_to(mat(d, "g"), in(d, {1, -1}, "like")); };
    m[OpKind::Gemm] = [](DType d) { return gemm(mat(d, "c"), mat(d, "a"), mat(d, "b"), 1.0, 1.0); };
    m[OpKind::Composite] = [](DType d) {
      return graph::make_output(add_region(d, 2), {mat(d), mat(d, "y")}, graph::TensorType{d, {-1, -1}, ""});
    };
    m[OpKind::FusedReduce] = [](DType d) {
      const DType out = is_float(d) ? d : DType::Int64;
      return graph::make_output(std::make_shared<const FusedReduce>(add_region(d, 1), ReduceKind::Sum,
                                                                    std::vector<int>{1}, out),
                                {mat(d)}, graph::TensorType{out, {-1}, ""});
    };
    m[OpKind::Transfer] = [](DType d) { return transfer(mat(d), Device::cuda(0)); };
    m[OpKind::SoftmaxCrossentropy] = [](DType d) { return softmax_crossentropy(mat(d), labels())[0]; };
    m[OpKind::SoftmaxCrossentropyGrad] = [](DType d) {
      return softmax_crossentropy_grad(vec(d, "dy"), mat(d, "sm"), labels());
    };
    m[OpKind::CrossentropyGrad] = [](DType d) { return crossentropy_grad(vec(d, "gz"), mat(d, "p"), labels()); };
    m[OpKind::LabelGather] = [](DType d) { return label_gather(mat(d), labels()); };
    m[OpKind::LabelScatter] = [](DType d) { return label_scatter(vec(d, "v"), mat(d, "like"), labels()); };
    m[OpKind::ZeroGrad] = [](DType d) { return zero_grad(Var(mat(d))).node(); };
    m[OpKind::DisconnectedGrad] = [](DType d) { return disconnected_grad(Var(mat(d))).node(); };
    m[OpKind::GradClip] = [](DType d) { return grad_clip(Var(mat(d)), -1.0, 1.0).node(); };
    m[OpKind::GradScale] = [](DType d) { return grad_scale(Var(mat(d)), 0.5).node(); };
    m[OpKind::RandomDraw] = [](DType d) {
      return random_draw(random::Distribution::Uniform, in(DType::Int64, {2}, "state"), {in(DType::Int64, {}, "n")},
                         d, 0, "uniform")
          .first;
    };
    m[OpKind::Assert] = [](DType d) { return assert_op(mat(d), {in(DType::Bool, {}, "ok")}, "ok must hold"); };
    // The pooling gradients, as Pool's (and MaxPoolGrad's) L_op build them.
    static const PoolParams pool_params{2, {2, 2}, {2, 2}, {0, 0}, true, theon::pool::kMax};
    static const PoolParams avg_params{2, {2, 2}, {2, 2}, {0, 0}, true, theon::pool::kAverageIncPad};
    const auto t4 = [](DType d, const char* name) { return in(d, {-1, -1, -1, -1}, name); };
    m[OpKind::MaxPoolGrad] = [t4](DType d) {
      const VarPtr x = t4(d, "x"), z = ops::pool(x, pool_params);
      return max_pool_grad(x, z, t4(d, "gz"), pool_params);
    };
    m[OpKind::AveragePoolGrad] = [t4](DType d) { return average_pool_grad(t4(d, "x"), t4(d, "gz"), avg_params); };
    m[OpKind::DownsampleFactorMaxGradGrad] = [t4](DType d) {
      const VarPtr x = t4(d, "x"), z = ops::pool(x, pool_params);
      return max_pool_grad_grad(x, z, t4(d, "g"), pool_params);
    };
    return m;
  }();
  return reps;
}

// The dtype a node of `kind` is filed under: its first input's (the data), OneHot's and
// RandomDraw's output's.
DType node_dtype(const graph::Apply& node) {
  const OpKind k = node.op().kind();
  if (k == OpKind::OneHot || k == OpKind::RandomDraw || node.inputs().empty()) return node.output_raw(0)->type.dtype;
  return node.inputs()[0]->type.dtype;
}

// Every node upstream of `out` (outputs' owners), each once.
std::vector<graph::Apply*> nodes_of(const VarPtr& out) {
  std::vector<graph::Apply*> found, stack;
  std::set<graph::Apply*> seen;
  if (out->owner) stack.push_back(out->owner);
  while (!stack.empty()) {
    graph::Apply* a = stack.back();
    stack.pop_back();
    if (!seen.insert(a).second) continue;
    found.push_back(a);
    for (auto& v : a->inputs())
      if (v->owner) stack.push_back(v->owner);
  }
  return found;
}

// For a user kind without an entry above: its first harness case whose graph contains the
// kind, built on inputs of the dtype asked (ranks of the case's first shape set). So a new
// user op needs no line here: its harness row is its representative.
std::optional<Builder> harness_representative(OpKind kind) {
  for (const Case& c : all_cases()) {
    if (c.shapes.empty()) continue;
    const std::vector<Shape> shapes = c.shapes.front();
    // A case whose make_inputs adds inputs beyond its shapes (index arrays, bounds) builds on
    // variables like those inputs: its builder reads them all.
    const bool extra_inputs = c.make_inputs && c.make_inputs(DType::Float64, shapes, 1).size() != shapes.size();
    auto build = [c, shapes, extra_inputs](DType d) {
      std::vector<Var> vars;
      if (extra_inputs) {
        for (const Array& a : c.make_inputs(d, shapes, 1))
          vars.push_back(tensor::tensor(a.dtype(), std::vector<int64_t>(a.ndim(), -1), "in" + std::to_string(vars.size())));
      } else {
        for (size_t k = 0; k < shapes.size(); ++k)
          vars.push_back(tensor::tensor(d, std::vector<int64_t>(shapes[k].size(), -1), "in" + std::to_string(k)));
      }
      return c.build(vars).node();
    };
    try {
      const VarPtr out = build(DType::Float64);  // keeps the graph alive while it is walked
      for (graph::Apply* a : nodes_of(out))
        if (a->op().kind() == kind) return Builder(build);
    } catch (const Error&) {
      // a case that needs other dtypes or inputs: try the next one
    }
  }
  return std::nullopt;
}

// The representative of `kind`: its entry in representatives(), else a harness case's graph
// (user kinds); nullopt when neither exists.
std::optional<Builder> representative(OpKind kind) {
  if (auto it = representatives().find(kind); it != representatives().end()) return it->second;
  if (graph::op_kind_info(kind).visibility == graph::OpVisibility::User) return harness_representative(kind);
  return std::nullopt;
}

// ---- the matrix ----------------------------------------------------------------------------

struct Cell {
  bool ok = false;
  std::string text;  // the kernel's name, or why not
};

struct Entry {
  bool made = false;
  std::string not_made;  // why no node of this kind and dtype exists
  VarPtr out;            // keeps the node alive
  graph::Apply* node = nullptr;
  Cell cpu, cuda;
};

struct KindRow {
  graph::OpKindInfo info;
  std::map<DType, Entry> entries;  // per usable dtype
  std::string gradient;
  std::set<std::string> harness_ops;                 // harness cases whose graphs contain the kind
  std::set<std::string> harness_direct;              // those of them whose builder makes the kind
  std::map<DType, std::set<std::string>> harness_by_dtype;
};

struct Matrix {
  std::vector<KindRow> rows;
  std::vector<DType> dtypes;       // usable dtypes (is_supported)
  std::vector<DType> not_usable;   // named dtypes without storage yet
  bool have_cuda = false;
  std::string cuda_missing;  // why there is no CUDA column
  std::vector<std::string> problems;  // failed checks (filled by check())
};

Cell ask(const backends::Backend& b, const graph::Apply& node) {
  const backends::Support s = b.supports(node);
  if (!s.ok) return {false, s.reason};
  return {true, b.kernel(node).name()};
}

// Builds the representative of `kind` in dtype `d`, or says why none exists.
Entry make_entry(OpKind kind, const Builder& build, DType d) {
  Entry e;
  try {
    e.out = build(d);
  } catch (const TypeError& err) {
    e.not_made = err.what();
    return e;
  } catch (const ValueError& err) {
    e.not_made = err.what();
    return e;
  } catch (const NotImplementedError& err) {
    e.not_made = err.what();
    return e;
  }
  for (graph::Apply* a : nodes_of(e.out))
    if (a->op().kind() == kind) {
      e.node = a;
      break;
    }
  if (!e.node) {
    e.not_made = "the builder made no " + std::string(graph::kind_name(kind)) + " node";
    return e;
  }
  if (node_dtype(*e.node) != d) {
    e.not_made = "the builder casts to " + std::string(dtype_name(node_dtype(*e.node))) + " first";
    e.node = nullptr;
    return e;
  }
  e.made = true;
  return e;
}

// "yes", "yes (inputs 0)", "none (...)" or "not implemented", from L_op on `node`.
std::string gradient_of(const graph::Apply& node) {
  // grad() never calls L_op for integer-valued results (their gradient is zero): neither do we.
  bool float_output = false;
  for (int o = 0; o < node.num_outputs(); ++o) float_output = float_output || is_float(node.output_raw(o)->type.dtype);
  if (!float_output) return "none (integer output)";
  std::vector<VarPtr> gs;
  for (int o = 0; o < node.num_outputs(); ++o)
    gs.push_back(graph::Variable::make_input(node.output_raw(o)->type, "g" + std::to_string(o)));
  std::vector<VarPtr> grads;
  try {
    grads = node.op().L_op(node, gs);
  } catch (const NotImplementedError&) {
    return "not implemented";
  } catch (const Error& e) {
    throw InternalError(node.describe() + ": L_op: " + e.what());
  }
  std::vector<int> with;
  for (size_t i = 0; i < grads.size(); ++i)
    if (grads[i]) with.push_back(static_cast<int>(i));
  if (with.empty()) return "none (disconnected)";
  if (with.size() == node.inputs().size()) return "yes";
  std::string s = "yes (input";
  s += with.size() > 1 ? "s" : "";
  for (size_t i = 0; i < with.size(); ++i) s += (i ? ", " : " ") + std::to_string(with[i]);
  return s + ")";
}

// Whether the registry's builder `op` ("sum", "take") makes nodes of `kind` (its family is the
// kind, or for reductions the kind of that name).
bool builds_kind(const std::string& op, OpKind kind) {
  for (const ops::OpEntry& e : ops::registered_ops()) {
    if (e.name != op) continue;
    if (e.family == graph::kind_name(kind)) return true;
    std::string lower(graph::kind_name(kind));
    for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return e.family == "Reduce" && e.name == lower;
  }
  return false;
}

// Records, per kind and node dtype, which harness cases' graphs contain it.
void add_harness_coverage(std::map<OpKind, KindRow*>& by_kind) {
  for (const Case& c : all_cases()) {
    for (DType dtype : c.dtypes) {
      const std::vector<Shape>& shapes = c.shapes.front();
      std::vector<Array> inputs = c.make_inputs ? c.make_inputs(dtype, shapes, 1) : std::vector<Array>{};
      if (!c.make_inputs)
        for (size_t k = 0; k < shapes.size(); ++k) inputs.push_back(random_array(dtype, shapes[k], c.domain, 1 + k));
      std::vector<Var> vars;
      for (size_t k = 0; k < inputs.size(); ++k)
        vars.push_back(tensor::tensor(inputs[k].dtype(), std::vector<int64_t>(inputs[k].ndim(), -1),
                                      "in" + std::to_string(k)));
      const Var out = c.build(vars);
      for (graph::Apply* a : nodes_of(out.node())) {
        KindRow* row = by_kind.at(a->op().kind());
        row->harness_ops.insert(c.op);
        if (builds_kind(c.op, a->op().kind())) row->harness_direct.insert(c.op);
        row->harness_by_dtype[node_dtype(*a)].insert(c.op);
      }
    }
  }
}

Matrix build_matrix() {
  Matrix m;
  for (DType d : kAllDTypes) (is_supported(d) ? m.dtypes : m.not_usable).push_back(d);
  backends::Backend* cuda = backends::cuda_backend(/*even_without_device=*/true);
  m.have_cuda = cuda != nullptr;
  if (!cuda) m.cuda_missing = "libtheon_cuda could not be opened: " + runtime::cuda_library().reason;
  std::map<OpKind, KindRow*> by_kind;
  m.rows.reserve(graph::op_kinds.size());
  for (const graph::OpKindInfo& info : graph::op_kinds) {
    m.rows.push_back(KindRow{info, {}, "", {}, {}, {}});
    by_kind[info.kind] = &m.rows.back();
  }
  for (KindRow& row : m.rows) {
    const std::optional<Builder> rep = representative(row.info.kind);
    if (!rep) continue;  // check() reports it
    for (DType d : m.dtypes) {
      Entry e = make_entry(row.info.kind, *rep, d);
      if (e.made) {
        e.cpu = ask(backends::cpu_backend(), *e.node);
        e.cuda = cuda ? ask(*cuda, *e.node) : Cell{false, "no CUDA backend in this build"};
      }
      row.entries.emplace(d, std::move(e));
    }
    // A float16 node that computes runs as its float32 twin between casts (the float16 pass,
    // required in every mode): its cells are the float32 node's, saying so.
    auto f16 = row.entries.find(DType::Float16), f32 = row.entries.find(DType::Float32);
    if (f16 != row.entries.end() && f16->second.made && ops::touches_float16(*f16->second.node) &&
        !ops::handles_float16(*f16->second.node) && f32 != row.entries.end() && f32->second.made) {
      for (auto [cell, twin] : {std::pair{&f16->second.cpu, &f32->second.cpu}, std::pair{&f16->second.cuda, &f32->second.cuda}})
        *cell = twin->ok ? *twin : Cell{false, "float16 runs in float32 (float16 pass), and in float32: " + twin->text};
    }
    // The gradient of a float64 node (float32, else the first dtype made, when it has none).
    const graph::Apply* g = nullptr;
    for (DType d : {DType::Float64, DType::Float32})
      if (!g && row.entries.at(d).made) g = row.entries.at(d).node;
    for (DType d : m.dtypes)
      if (!g && row.entries.at(d).made) g = row.entries.at(d).node;
    row.gradient = g ? gradient_of(*g) : "-";
  }
  add_harness_coverage(by_kind);
  return m;
}

const Matrix& matrix() {
  static const Matrix m = build_matrix();
  return m;
}

// ---- checks --------------------------------------------------------------------------------

std::vector<std::string> check(const Matrix& m) {
  autodiff::register_op_factories();  // the gradient ops are rebuilt through make_op as well
  std::vector<std::string> problems;
  auto fail = [&](const KindRow& row, const std::string& what) {
    problems.push_back(std::string(row.info.name) + ": " + what);
  };
  for (const KindRow& row : m.rows) {
    const OpKind kind = row.info.kind;
    if (!row.entries.size()) {
      fail(row, "no representative node: no harness case builds one (user kinds), or add one to "
                "representatives() in support_matrix_test.cpp (internal kinds)");
      continue;
    }
    bool any_made = false;
    for (const auto& [d, e] : row.entries) {
      const std::string where = std::string(dtype_name(d)) + ": ";
      if (!e.made) {
        if (e.not_made.empty()) fail(row, where + "not made, and no reason");
        continue;
      }
      any_made = true;
      // make_op (the kind's factory, beside its class) rebuilds the node's op from its
      // rebuild_props (what pickling records), or says why it cannot.
      try {
        const std::shared_ptr<const graph::Op> again = ops::make_op(kind, ops::rebuild_props(e.node->op()));
        if (!again->equals(e.node->op()))
          fail(row, where + "make_op rebuilt " + again->display() + ", not " + e.node->op().display());
      } catch (const NotImplementedError&) {
        // stated reason: the kind's props do not describe it
      } catch (const Error& err) {
        fail(row, where + "make_op cannot read its own props: " + err.what());
      }
      for (const auto& [backend, cell] : {std::pair{"cpu", &e.cpu}, std::pair{"cuda", &e.cuda}})
        if (cell->text.empty())
          fail(row, where + backend + (cell->ok ? ": supported but its kernel has no name" : ": unsupported, no reason"));
    }
    if (!any_made) fail(row, "no dtype makes a node");
    const auto note = notes().find(kind);
    const bool user = row.info.visibility == graph::OpVisibility::User;
    if (user && row.harness_ops.empty())
      fail(row, "a user kind that no op-harness case exercises: add a case (tests/cpp/op_harness)");
    if (!user && row.harness_ops.empty() && (note == notes().end() || note->second.tested_by.empty()))
      fail(row, "an internal kind that no harness graph contains and notes() in support_matrix_test.cpp names no test for");
    if (note != notes().end())
      for (const std::string& file : note->second.tested_by)
        if (!std::filesystem::exists(std::filesystem::path(THEON_SOURCE_DIR) / file))
          fail(row, "its note names " + file + ", which does not exist");
  }
  return problems;
}

// ---- rendering -----------------------------------------------------------------------------

std::string dtype_list(const std::vector<DType>& ds, const std::vector<DType>& all) {
  if (ds.empty()) return "-";
  if (ds.size() == all.size()) return "all";
  std::string s;
  for (DType d : ds) s += (s.empty() ? "" : ", ") + std::string(dtype_name(d));
  return s;
}

// Markdown table cells cannot hold '|' or newlines.
std::string cell_text(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n') out += ' ';
    else out += c;
  }
  return out;
}

// The kernel column of one backend: "name" when every dtype made agrees, else per-dtype groups;
// unsupported dtypes show as "no (dtypes)" with their reasons in the gaps list.
std::string kernel_column(const KindRow& row, const std::vector<DType>& made, bool cuda) {
  std::vector<std::pair<std::string, std::vector<DType>>> groups;  // in first-seen order
  for (DType d : made) {
    const Cell& c = cuda ? row.entries.at(d).cuda : row.entries.at(d).cpu;
    const std::string key = c.ok ? "`" + c.text + "`" : "no";
    auto it = std::find_if(groups.begin(), groups.end(), [&](auto& g) { return g.first == key; });
    if (it == groups.end()) groups.push_back({key, {d}});
    else it->second.push_back(d);
  }
  if (groups.size() == 1) return groups[0].first;
  std::string s;
  for (auto& [key, ds] : groups) s += (s.empty() ? "" : "; ") + key + " (" + dtype_list(ds, made) + ")";
  return s;
}

// Groups (reason, dtype) pairs by the reason with the dtype's name made generic, so "expected a
// float matrix, got x (int8 ...)" for several dtypes is one line; a group of one keeps its text.
struct ReasonGroups {
  std::vector<std::pair<std::string, std::vector<DType>>> groups;  // generic reason, dtypes
  std::map<std::string, std::string> first_text;                   // generic -> the first actual text
  void add(const std::string& why, DType d) {
    std::string generic = why;
    const std::string name(dtype_name(d));
    for (size_t at = generic.find(name); at != std::string::npos; at = generic.find(name, at + 8))
      generic.replace(at, name.size(), "<dtype>");
    auto it = std::find_if(groups.begin(), groups.end(), [&](auto& g) { return g.first == generic; });
    if (it == groups.end()) {
      groups.push_back({generic, {d}});
      first_text[generic] = why;
    } else {
      it->second.push_back(d);
    }
  }
  std::string text(const std::pair<std::string, std::vector<DType>>& g) const {
    return g.second.size() == 1 ? first_text.at(g.first) : g.first;
  }
};

// cuDNN is opened at run time (optional): whether the CUDA backend found it, from its answer
// for a float32 Conv2d (its cell says "no cuDNN ..." otherwise).
std::string cudnn_state(const Matrix& m) {
  for (const KindRow& row : m.rows) {
    if (row.info.kind != OpKind::Conv2d) continue;
    auto it = row.entries.find(DType::Float32);
    if (it != row.entries.end() && it->second.made) return it->second.cuda.ok ? "`cuDNN` found" : "cuDNN absent";
  }
  return "cuDNN absent";
}

std::string build_line(const Matrix& m) {
  return std::string("Build: CPU BLAS `") + backends::cpu::blas_name() + "`, CUDA backend " +
         (m.have_cuda ? "`libtheon_cuda`, " + cudnn_state(m) : std::string("absent")) + ".";
}

std::string render(const Matrix& m) {
  std::ostringstream o;
  o << "# Op support matrix\n\n"
    << "<!-- Generated by tests/cpp/op_harness/support_matrix_test.cpp: do not edit by hand. -->\n"
    << "Generated by `tests/cpp/op_harness/support_matrix_test.cpp` from the op registry\n"
    << "(`include/theon/ops.def`, `include/theon/scalar_ops.def`) and the backends' own answers (`Backend::supports`, `Kernel::name`);\n"
    << "the test fails when this file is out of date. Regenerate after a build with\n\n"
    << "    " << kRegenerate << "\n\n"
    << build_line(m) << "\n\n"
    << "One row per op kind (`Op::kind()`): *user* kinds are what the `tensor::` builders make,\n"
    << "*internal* ones come from rewrites, gradients and compilation. **dtypes**: the dtypes a\n"
    << "node of the kind is made with (the data input's; one_hot: the output's), \"all\" being\n"
    << dtype_list(m.dtypes, {})
    << (m.not_usable.empty() ? ""
                             : " (" + dtype_list(m.not_usable, {}) + (m.not_usable.size() == 1 ? " is named but has" : " are named but have") +
                                   " no storage yet)")
    << "; a float16 node that computes runs its float32 kernel between casts (the float16 pass, "
       "docs/guide/float16.md), so its cells are the float32 node's"
    << ". **CPU / CUDA kernel**: the\n"
    << "kernel each backend runs (`reference`: the CPU backend's loop for the kind); \"no\" cells are listed\n"
    << "with the backend's reason under [Gaps](#gaps) (under `device=cuda` such a node falls back to\n"
    << "the CPU: `on_fallback`). **gradient**: what the op's `L_op` gives. **tested by**: the\n"
    << "op-harness cases whose graphs contain the kind, or the tests named in the matrix's notes.\n\n";
  o << "| op | kind | dtypes | CPU kernel | CUDA kernel | gradient | tested by | notes |\n"
    << "|---|---|---|---|---|---|---|---|\n";
  for (const KindRow& row : m.rows) {
    std::vector<DType> made;
    for (DType d : m.dtypes)
      if (row.entries.count(d) && row.entries.at(d).made) made.push_back(d);
    const auto note = notes().find(row.info.kind);
    std::string tested;
    if (!row.harness_ops.empty()) {
      // The cases of the builders that make the kind (else all that reach it), a few by name.
      const std::set<std::string>& ops = row.harness_direct.empty() ? row.harness_ops : row.harness_direct;
      tested = "harness: ";
      size_t k = 0;
      for (const std::string& op : ops)
        if (k < 6 || ops.size() <= 7) tested += (k++ ? ", " : "") + op;
      if (ops.size() > 7) tested += ", ... (" + std::to_string(ops.size()) + " ops)";
      if (const size_t more = row.harness_ops.size() - ops.size(); more > 0)
        tested += " (+" + std::to_string(more) + (more > 1 ? " ops" : " op") + " reaching it)";
      std::vector<DType> untested;
      for (DType d : made)
        if (!row.harness_by_dtype.count(d)) untested.push_back(d);
      if (!untested.empty()) tested += "; untested: " + dtype_list(untested, {});
    }
    if (note != notes().end())
      for (const std::string& f : note->second.tested_by)
        tested += (tested.empty() ? "" : "; ") + ("`" + f.substr(f.rfind('/') + 1) + "`");
    o << "| " << row.info.name << " | "
      << (row.info.visibility == graph::OpVisibility::User ? "user" : "internal") << " | "
      << dtype_list(made, m.dtypes) << " | " << cell_text(kernel_column(row, made, false)) << " | "
      << cell_text(m.have_cuda ? kernel_column(row, made, true) : "no CUDA backend in this build") << " | "
      << row.gradient << " | " << cell_text(tested) << " | "
      << cell_text(note != notes().end() ? note->second.text : "") << " |\n";
  }

  // Builders: every registry row users call, with its harness coverage.
  o << "\n## Builders\n\n"
    << "Every `tensor::` builder of the registry (`theon.tensor` has each under the same name, without a\n"
    << "trailing underscore where Python allows), the op kind it makes, its op-harness cases (float64\n"
    << "reference, several dtypes, shapes and layouts, CPU and simulated CUDA) and whether a harness\n"
    << "row checks its gradient against finite differences (others: `tests/cpp/autodiff`).\n\n"
    << "| builder | op kind | harness cases | dtypes | gradient row |\n|---|---|---|---|---|\n";
  for (const ops::OpEntry& e : ops::registered_ops()) {
    int cases = 0;
    bool grad = false;
    std::set<DType> dtypes;
    for (const Case& c : all_cases())
      if (c.op == e.name) {
        ++cases;
        grad = grad || c.check_grad;
        dtypes.insert(c.dtypes.begin(), c.dtypes.end());
      }
    o << "| `" << e.builder << "` | " << e.family << " | " << cases << " | "
      << dtype_list(std::vector<DType>(dtypes.begin(), dtypes.end()), {}) << " | " << (grad ? "yes" : "-") << " |\n";
  }

  // Gaps: unsupported cells, grouped by kind, backend and reason.
  o << "\n## Gaps\n\n"
    << "Kinds and dtypes a backend does not run, with the reason it gives (placement reports the same\n"
    << "reason).\n\n";
  bool any = false;
  for (const KindRow& row : m.rows)
    for (bool cuda : {false, true}) {
      if (cuda && !m.have_cuda) continue;
      ReasonGroups reasons;
      std::vector<DType> made;
      for (DType d : m.dtypes) {
        if (!row.entries.count(d) || !row.entries.at(d).made) continue;
        made.push_back(d);
        const Cell& c = cuda ? row.entries.at(d).cuda : row.entries.at(d).cpu;
        if (!c.ok) reasons.add(c.text, d);
      }
      for (auto& g : reasons.groups) {
        o << "- " << row.info.name << ", " << (cuda ? "CUDA" : "CPU") << ", " << dtype_list(g.second, made) << ": "
          << reasons.text(g) << "\n";
        any = true;
      }
    }
  if (!m.have_cuda) o << "- every kind, CUDA: " << m.cuda_missing << "\n";
  if (!any && m.have_cuda) o << "None.\n";

  // Dtypes no node is made with, and why (the builder refuses, or converts first).
  o << "\n## Dtypes an op is not made with\n\n"
    << "What the builder says for each usable dtype that makes no node of the kind.\n\n";
  for (const KindRow& row : m.rows) {
    ReasonGroups reasons;
    for (DType d : m.dtypes)
      if (row.entries.count(d) && !row.entries.at(d).made) reasons.add(row.entries.at(d).not_made, d);
    for (auto& g : reasons.groups) o << "- " << row.info.name << ", " << dtype_list(g.second, {}) << ": " << reasons.text(g) << "\n";
  }
  return o.str();
}

// ---- tests ---------------------------------------------------------------------------------

class SupportMatrix : public ::testing::Test {
 protected:
  void SetUp() override {
    // The GPU suite runs this binary again with device=cuda: the matrix does not depend on it.
    if (Device::parse(config().device).is_cuda()) GTEST_SKIP() << "the support matrix runs in the CPU suite";
  }
};

TEST_F(SupportMatrix, EveryKindIsCoveredAndEveryGapHasAReason) {
  for (const std::string& p : check(matrix())) ADD_FAILURE() << p;
}

TEST_F(SupportMatrix, DocsOpsMdIsUpToDate) {
  const Matrix& m = matrix();
  const std::string want = render(m);
  const std::filesystem::path path = std::filesystem::path(THEON_SOURCE_DIR) / kDocPath;
  const char* update = std::getenv("THEON_UPDATE_OPS_MD");
  if (update && std::string(update) == "1") {
    std::ofstream(path, std::ios::binary) << want;
    std::cout << "wrote " << path.string() << "\n";
    return;
  }
  std::ifstream f(path, std::ios::binary);
  if (!f) FAIL() << path.string() << " does not exist. Generate it from the repository root with\n  " << kRegenerate;
  std::stringstream have;
  have << f.rdbuf();
  const std::string text = have.str();
  // A build with another configuration (no CUDA backend, another BLAS) renders other cells:
  // it cannot judge the file, which the full build (CI) checks.
  const std::string build = build_line(m);
  if (text.find("\n" + build + "\n") == std::string::npos && text.find("\nBuild: ") != std::string::npos) {
    const size_t b = text.find("\nBuild: ") + 1;
    GTEST_SKIP() << kDocPath << " was generated by a build with another configuration ("
                 << text.substr(b, text.find('\n', b) - b) << "); this one has \"" << build << "\": not compared";
  }
  if (text == want) return;
  // The first differing line, to show what changed.
  std::istringstream a(text), b(want);
  std::string la, lb;
  int line = 0;
  while (true) {
    ++line;
    const bool ga = static_cast<bool>(std::getline(a, la)), gb = static_cast<bool>(std::getline(b, lb));
    if (!ga && !gb) break;
    if (!ga || !gb || la != lb) {
      if (!ga) la = "(end of file)";
      if (!gb) lb = "(end of file)";
      break;
    }
  }
  FAIL() << kDocPath << " is out of date (first difference at line " << line << ":\n  checked in: " << la
         << "\n  generated:  " << lb << ")\nRegenerate it from the repository root with\n  " << kRegenerate
         << "\nand commit the result.";
}

}  // namespace
}  // namespace theon::testing
