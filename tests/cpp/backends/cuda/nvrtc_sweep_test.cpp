// The NVRTC compile sweep: every kernel the CUDA backend generates for the op tests (the
// op harness cases, each dtype, shape set and layout, in modes none and fast_run) is
// compiled for sm_90 with NVRTC. NVRTC needs no driver, so this runs in CI: a generated
// kernel that does not compile fails here, not on a user's GPU. It also fails for any
// node of those graphs the CUDA backend cannot run (there is no silent CPU fallback).
#include "op_harness/harness.hpp"

#include "backends/cuda/cuda_backend.hpp"
#include "compile/program.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cctype>
#include <sstream>
#include <cstdlib>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <thread>

namespace theon::testing {
namespace {

namespace cuda = backends::cuda;

struct Sweep {
  std::map<std::string, cuda::KernelSource> sources;  // code -> source (deduplicated)
  std::map<std::string, std::string> unsupported;     // node -> reason
  std::map<std::string, std::string> errors;          // case -> error while collecting
  int nodes = 0;
};

// Placeholder arrays (no data) with the layout of `a`: sources() may read only metadata.
Array placeholder(const Array& a) { return Array(nullptr, a.dtype(), a.shape(), a.strides(), a.offset()); }

// Runs `program` on the CPU (its own kernels) and asks the CUDA backend, node by node,
// for the sources it would compile for those inputs.
void collect(const compile::Program& program, const std::vector<Array>& inputs, Sweep& sweep) {
  std::vector<Array> slots(program.num_slots);
  for (size_t i = 0; i < program.input_slots.size(); ++i) slots[program.input_slots[i]] = inputs[i];
  for (auto& [slot, var] : program.leaves)
    slots[slot] = var->kind == graph::VarKind::Constant ? var->constant : var->storage->get();
  for (auto& th : program.thunks) {
    const graph::Apply& node = *th.node;
    std::vector<Array> ins;
    for (int s : th.inputs) ins.push_back(slots[s]);
    if (th.is_transfer) {  // planned only: the value stays where it is
      slots[th.outputs[0]] = ins[0];
      continue;
    }
    ++sweep.nodes;
    if (th.dev.is_cuda()) {
      auto* k = dynamic_cast<const cuda::CudaKernel*>(th.kernel);
      if (!k) throw std::runtime_error(node.describe() + ": placed on the GPU without a CUDA kernel");
      std::vector<Array> ph;
      for (auto& a : ins) ph.push_back(placeholder(a));
      for (auto& src : k->sources(node, ph)) sweep.sources.emplace(src.code, src);
    } else if (th.reason.rfind("fallback: ", 0) == 0 && th.reason.find("no cuDNN") == std::string::npos) {
      // (Convolutions need cuDNN, opened at run time and optional: on a machine without it
      // they stay on the CPU by design; they have no NVRTC source to sweep either way.)
      sweep.unsupported.emplace(node.op().display(), th.reason);
    }
    std::vector<Shape> shapes = node.op().infer_shape(node, ins);
    std::vector<Array> outs(th.outputs.size());
    for (size_t o = 0; o < outs.size(); ++o)
      if (!th.output_is_view[o]) outs[o] = Array::empty(shapes[o], node.output_raw(static_cast<int>(o))->type.dtype);
    backends::cpu_backend().kernel(node).run(nullptr, node, ins, outs);
    for (size_t o = 0; o < outs.size(); ++o) slots[th.outputs[o]] = outs[o];
  }
}

Sweep sweep_op_tests() {
  Sweep sweep;
  for (const Case& c : all_cases()) {
    uint64_t seed = 1;
    for (DType dtype : c.dtypes) {
      for (const auto& shapes : c.shapes) {
        std::vector<Array> inputs = c.make_inputs ? c.make_inputs(dtype, shapes, seed++) : std::vector<Array>{};
        if (!c.make_inputs)
          for (size_t k = 0; k < shapes.size(); ++k) inputs.push_back(random_array(dtype, shapes[k], c.domain, seed++));
        std::vector<Var> vars;
        for (size_t k = 0; k < inputs.size(); ++k)
          vars.push_back(tensor::tensor(inputs[k].dtype(), std::vector<int64_t>(inputs[k].ndim(), -1),
                                        "in" + std::to_string(k)));
        Var out = c.build(vars);
        std::vector<graph::VarPtr> in_nodes;
        for (auto& v : vars) in_nodes.push_back(v.node());
        for (const char* mode : {"none", "fast_run"}) {
          try {
            auto fgraph = std::make_shared<graph::FunctionGraph>(in_nodes, std::vector<graph::VarPtr>{out.node()});
            compile::LowerOptions lo;
            lo.mode = mode;
            lo.device = "cuda0";
            lo.plan_only = true;
            auto program = compile::lower(fgraph, lo);
            collect(*program, inputs, sweep);
            if (c.vary_layout)
              for (int variant = 1; variant <= 2; ++variant) {
                std::vector<Array> nc;
                for (auto& a : inputs) nc.push_back(non_contiguous(a, variant));
                collect(*program, nc, sweep);
              }
          } catch (const std::exception& e) {
            sweep.errors.emplace(c.op + " " + c.label + " " + std::string(dtype_name(dtype)) + " " + mode, e.what());
          }
        }
      }
    }
  }
  return sweep;
}

constexpr size_t kBatch = 40;

// Several sources as one NVRTC program, each as it is but inside its own namespace, with
// its kernels renamed (extern "C" names must differ), its #includes hoisted to the top
// (the headers are include-guarded) and its macros undefined after it.
cuda::KernelSource batch_source(const std::vector<const cuda::KernelSource*>& sources, size_t index) {
  std::string includes, bodies;
  for (size_t k = 0; k < sources.size(); ++k) {
    std::istringstream in(sources[k]->code);
    std::string line, body, undefs;
    while (std::getline(in, line)) {
      if (line.rfind("#include", 0) == 0) {
        if (includes.find(line + "\n") == std::string::npos) includes += line + "\n";
        continue;
      }
      if (line.rfind("#define ", 0) == 0) {
        std::string name = line.substr(8);
        name = name.substr(0, name.find_first_of(" (\t"));
        undefs += "#undef " + name + "\n";
      }
      body += line + "\n";
    }
    for (auto& kernel : sources[k]->kernels) {
      const std::string renamed = kernel + "__sweep" + std::to_string(k);
      for (size_t at = body.find(kernel); at != std::string::npos; at = body.find(kernel, at + renamed.size())) {
        const bool word_end = at + kernel.size() >= body.size() ||
                              !(std::isalnum(static_cast<unsigned char>(body[at + kernel.size()])) ||
                                body[at + kernel.size()] == '_');
        const bool word_start = at == 0 || !(std::isalnum(static_cast<unsigned char>(body[at - 1])) || body[at - 1] == '_');
        if (word_start && word_end) body.replace(at, kernel.size(), renamed);
      }
    }
    bodies += "namespace theon_sweep_" + std::to_string(k) + " {\n" + body + "}\n" + undefs;
  }
  return {"sweep_batch_" + std::to_string(index), includes + bodies, {}};
}

TEST(NvrtcSweep, EveryKernelOfTheOpTestsCompilesForSm90) {
  const auto t0 = std::chrono::steady_clock::now();
  Sweep sweep = sweep_op_tests();
  for (auto& [what, err] : sweep.errors) ADD_FAILURE() << "collecting kernels of " << what << ": " << err;
  for (auto& [node, reason] : sweep.unsupported)
    ADD_FAILURE() << "the CUDA backend cannot run " << node << ": " << reason;

  std::vector<const cuda::KernelSource*> todo;
  std::map<std::string, int> by_kernel;  // kernel name -> distinct sources
  for (auto& [code, src] : sweep.sources) {
    todo.push_back(&src);
    ++by_kernel[src.name];
  }
  if (std::getenv("THEON_SWEEP_LIST_ONLY")) {  // where the sources come from, not compiled
    for (auto& [name, n] : by_kernel) std::printf("  %-40s %4d source(s)\n", name.c_str(), n);
    GTEST_SKIP() << todo.size() << " sources (listed, not compiled)";
  }
  // Batches of sources share one NVRTC run (its start-up costs more than a small kernel);
  // a batch that fails is compiled source by source, so a failure names its own source.
  std::vector<std::vector<const cuda::KernelSource*>> batches;
  for (size_t i = 0; i < todo.size(); i += kBatch)
    batches.emplace_back(todo.begin() + static_cast<long>(i), todo.begin() + static_cast<long>(std::min(todo.size(), i + kBatch)));
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::vector<std::string> failures;
  auto worker = [&] {
    for (size_t b; (b = next++) < batches.size();) {
      try {
        cuda::compile_cubin(batch_source(batches[b], b), cuda::kDefaultArch);
        continue;
      } catch (const std::exception&) {
      }
      for (auto* src : batches[b]) {
        try {
          cuda::compile_cubin(*src, cuda::kDefaultArch);
        } catch (const std::exception& e) {
          std::lock_guard<std::mutex> lock(mu);
          failures.push_back(e.what());
        }
      }
    }
  };
  const unsigned n_threads = std::max(1u, std::min(4u, std::thread::hardware_concurrency()));
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < n_threads; ++t) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  for (auto& f : failures) ADD_FAILURE() << f;
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto stats = cuda::nvrtc_stats();
  std::printf("NVRTC sweep: %d nodes, %zu distinct kernel sources, %lld compiled, %lld from the disk cache, %.1f s\n",
              sweep.nodes, todo.size(), static_cast<long long>(stats.compiled),
              static_cast<long long>(stats.disk_hits), secs);
  EXPECT_GT(todo.size(), 0u);
}

}  // namespace
}  // namespace theon::testing
