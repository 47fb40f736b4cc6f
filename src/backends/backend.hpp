// Backend: what a device offers the compiler. Placement asks supports(node) and gets a
// reason when the answer is no, so on_fallback and explain() report facts, not guesses.
// Kernels run in two steps: prepare(node, info) is called once per thunk when a function is
// compiled (it may compile code: NVRTC, the CPU's generated modules) and returns the plan the
// thunk keeps; run(plan, ...) executes it. The options a kernel depends on (KernelOptions)
// are frozen into the plan, so no kernel reads config() when it runs.
#pragma once
#include "graph/op.hpp"
#include "runtime/contexts.hpp"
#include "runtime/streams.hpp"

#include <theon/array.hpp>
#include <theon/device.hpp>

#include <memory>
#include <string>
#include <vector>

namespace theon::backends {

struct Support {
  bool ok = true;
  std::string reason;  // why not (or which implementation, when ok)
};

/// The options kernels depend on, read from config() once, when a function is compiled,
/// and frozen into its Program (a later config() change affects functions compiled later).
struct KernelOptions {
  std::string cxx;             // the C++ compiler of generated CPU kernels ("" = interpreter)
  bool allow_tf32 = false;     // cuBLAS may use TF32 tensor cores for float32
  bool deterministic = false;  // no atomics whose order changes float results
  bool fmad = false;           // NVRTC may contract a*b+c into FMA
  int64_t openmp_elemwise_minsize = 200000;  // from how many elements a CPU loop splits (parallel.hpp)
  /// The values config() holds now.
  static KernelOptions from_config();
  bool operator==(const KernelOptions&) const = default;
};

/// What prepare() knows about a thunk when the function is compiled.
struct PrepareInfo {
  KernelOptions options;
  Device device;  // where the thunk runs
  /// Placeholder inputs (no data): dtypes, and the shapes and strides the inputs are expected
  /// to have (static dims; size 1 where broadcastable; 2 where unknown; contiguous).
  std::vector<Array> inputs;
  /// Per input: whether its layout is known (false for the output of a view op, whose
  /// strides are only known when it runs). Kernels compile code only for known layouts.
  std::vector<bool> layout_known;
};

/// What a thunk keeps between calls: the frozen options, and whatever a kernel adds
/// (library plans, workspace sizes) in a subclass.
class KernelPlan {
 public:
  explicit KernelPlan(KernelOptions options) : options_(std::move(options)) {}
  virtual ~KernelPlan() = default;
  const KernelOptions& options() const { return options_; }

 private:
  KernelOptions options_;
};

/// The options a kernel runs with: its plan's; without a plan (a kernel called directly,
/// outside any Program: unit tests), the values config() holds now.
const KernelOptions& options_of(const KernelPlan* plan);

/// Where one kernel run happens (DESIGN.md "Execution model": run(plan, buffers, stream)):
/// the thunk's context, the stream of that context the kernel issues its work on (a CUDA
/// kernel launches on `stream.handle` and binds its library handles to it; never to a
/// stream looked up by device), and the CPU thread budget of the context. The executor
/// hands each thunk the one lowering made for its context.
struct ExecContext {
  runtime::Context context;  // name and device
  runtime::Stream stream;    // the context's compute stream (no handle on the CPU)
  /// OpenMP threads a CPU kernel may use (the context's budget); 0: the process's count.
  int threads = 0;
  /// The device's own context ("cpu", "cuda0"), its compute stream, no budget: for kernels
  /// run outside any Program (constant folding, unit tests).
  static ExecContext of(Device device);
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  /// A short name for explain() and the profiler ("reference", "onednn", "cblas").
  virtual std::string name() const = 0;
  /// Called once per thunk when the function is compiled; compiles what run() will need for
  /// the layouts `info` predicts (a layout seen only at run time is compiled when first run).
  /// The default keeps the options and compiles nothing.
  virtual std::shared_ptr<KernelPlan> prepare(const graph::Apply&, const PrepareInfo& info) const {
    return std::make_shared<KernelPlan>(info.options);
  }
  /// Outputs arrive allocated (contiguous, infer_shape's shapes) except outputs in the op's
  /// view_map, which the kernel sets.
  virtual void run(const KernelPlan* plan, const ExecContext& where, const graph::Apply& node,
                   const std::vector<Array>& inputs, std::vector<Array>& outputs) const = 0;
  /// The same on the outputs' device's own context (ExecContext::of): kernels run outside a
  /// Program (unit tests).
  void run(const KernelPlan* plan, const graph::Apply& node, const std::vector<Array>& inputs,
           std::vector<Array>& outputs) const;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  /// Whether the device can be used at all, and why not.
  virtual Support available() const = 0;
  virtual Support supports(const graph::Apply& node) const = 0;
  /// The kernel for a supported node.
  virtual const Kernel& kernel(const graph::Apply& node) const = 0;
  /// Inputs the kernel reads on the host although it runs on this device (shape vectors,
  /// index scalars: values that decide output shapes). Placement keeps them on the host.
  virtual bool host_input(const graph::Apply&, int /*input*/) const { return false; }
  /// Compiles in one go what the kernels of `nodes` (all placed on this backend) will need,
  /// before their prepare() calls (the CPU compiles its generated kernels as one module).
  virtual void prepare_batch(const std::vector<const graph::Apply*>& /*nodes*/, const KernelOptions&) const {}
};

/// The CPU backend (always available).
Backend& cpu_backend();
/// The CUDA backend's availability: ok=false with the reason on machines without it
/// (libtheon_cuda missing, no driver, no device).
Support cuda_available();
/// The CUDA backend (libtheon_cuda, opened on first use), or nullptr when the library is
/// missing. It is returned even without a device when `even_without_device` is set, so
/// the NVRTC sweep can place and compile kernels on a machine with no GPU.
Backend* cuda_backend(bool even_without_device = false);

}  // namespace theon::backends
