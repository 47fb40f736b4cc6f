// Program: a FunctionGraph lowered for execution. Every variable gets a slot; each node
// (Transfers included: they are graph nodes) becomes a thunk with its backend kernel and
// prepared plan, its context (name, device, stream, thread budget) and the slots it reads and
// writes; each thunk lists the slots whose last reader it is, so the executor can recycle
// their buffers as soon as they are dead (the memory plan). lower() is the recipe; each step
// has its own file (lower.cpp).
//
// Contexts (DESIGN.md "Multi-GPU contexts"): one Program may span several. Each thunk runs in
// one context (Thunk::exec.context, Thunk::context_index into Program::contexts). A value read
// in another context than the one that wrote it crosses: lowering inserts a Transfer there
// (placement.hpp, transfers.hpp) and plans the ordering (dependencies.hpp): the reader lists
// the writer in `after`, the writer `signals`. Between two devices a Transfer copies. Between
// two contexts of ONE device (dev0->cuda0;dev1->cuda0, or two cpu contexts) it is a handover:
// the same memory, no copy (the thunk passes its input through), ordered like any crossing —
// on a GPU by an event recorded after the writer on its stream and waited on by the reader's
// stream; on the CPU the reader's worker waits for the writer to have finished.
#pragma once
#include "backends/backend.hpp"
#include "graph/function_graph.hpp"
#include "rewrite/pipeline.hpp"
#include "runtime/contexts.hpp"
#include "runtime/observer.hpp"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace theon::compile {

struct Program;
struct LoweringTarget;

struct Thunk {
  graph::ApplyPtr node;
  const backends::Backend* backend = nullptr;  // whose kernel it is
  const backends::Kernel* kernel = nullptr;
  std::shared_ptr<backends::KernelPlan> plan;  // from kernel->prepare() when the program was built
  Device dev;          // where it runs (exec.context.device); its outputs are allocated there
  std::string device;  // dev.str(): "cpu", "cuda0", ...
  /// Its context (name, device), the stream of that context its kernel issues on and the
  /// context's thread budget: what Kernel::run receives.
  backends::ExecContext exec;
  int context_index = 0;  // into Program::contexts
  /// Thunks of other contexts whose outputs this one reads (directly): it runs after them —
  /// on a GPU stream by an event wait, on a CPU context by a host wait for a GPU producer.
  std::vector<int> after;
  /// A thunk of another context or stream runs after this one: the executor records an event
  /// after it.
  bool signals = false;
  /// A copy between devices into a GPU context (a Transfer that is not a handover): issued on
  /// the context's copy stream, so it overlaps the context's kernels; its readers on the
  /// compute stream, and the writer of its source, are ordered with it by events (`after`).
  bool on_copy_stream = false;
  /// A nested Program this thunk runs (a branch, or a loop body per step); empty until ops
  /// that own an inner graph run one (the scan issue).
  std::shared_ptr<const Program> nested;
  bool is_transfer = false;  // a Transfer node (inserted by lowering, or explicit)
  std::string reason;  // why it was placed there (explain())
  std::string op;           // the op as printed, for the observer
  std::string kernel_name;  // kernel->name(), made once
  runtime::Provenance provenance;  // the user's names of its outputs, the ops it fuses
  std::vector<int> inputs;
  std::vector<int> outputs;
  std::vector<bool> output_is_view;  // from the op's view_map: the kernel sets these itself
  std::vector<int> release;          // slots dead after this thunk
  /// Per output: the input position whose buffer it may overwrite (the op's destroy_map,
  /// kept only where that input's slot is dead after this thunk), else -1. The executor
  /// re-checks at run time (buffer made by this call, not shared, same shape and dtype,
  /// contiguous) and allocates otherwise.
  std::vector<int> destroy;
  /// Per output: the input position it is whenever their run-time shapes agree (the op's
  /// pass_through_map), else -1. The executor then hands that input over (no buffer, and no
  /// kernel run when every output is handed over).
  std::vector<int> pass_through;
};

struct Program {
  std::shared_ptr<graph::FunctionGraph> fgraph;
  int num_slots = 0;
  std::vector<int> input_slots;                         // one per function input
  std::vector<std::pair<int, graph::VarPtr>> leaves;    // constants and shared variables to load
  std::vector<int> output_slots;                        // user outputs, then update values
  std::vector<Thunk> thunks;
  std::vector<rewrite::PassRecord> passes;              // what the optimizer did
  backends::KernelOptions options;                      // frozen when the function was compiled
  std::string device;                                   // the default context's device ("cpu", "cuda0")
  /// The contexts its thunks run on, the default one (the device flag's) first (listed even
  /// when no thunk runs there). One Function may span several.
  std::vector<runtime::Context> contexts;
  /// Per context: how many thunks run there.
  std::vector<int> context_thunks;
  /// Contexts on the CPU with at least one thunk: with two or more, the executor runs each on
  /// its own worker thread (executor.hpp).
  int cpu_contexts = 0;
  std::vector<Device> slot_device;                      // where each slot's value lives
  /// Per leaf (same order as `leaves`): the device its value is expected on. A shared
  /// variable moved elsewhere since compilation is copied per call (correct, not free).
  std::vector<Device> leaf_device;
  /// Per leaf: a constant's value already copied to its device (undefined otherwise).
  std::vector<Array> leaf_values;
  bool device_work = false;  // some thunk runs on a GPU
  std::vector<std::string> fallback_notes;              // nodes that could not run where asked, and why
  int num_fallbacks = 0;                                // nodes that asked for the GPU and run on the CPU
  int num_inplace = 0;                                  // thunks with a destroy entry
};

struct LowerOptions {
  std::string mode = "fast_run";
  std::string device = "cpu";
  std::string on_fallback = "warn";
  /// Set by function() when the requested device is unavailable (it already warned or
  /// raised): lowering places everything on the CPU and records this reason.
  std::string fallback_reason;
  std::string optimizer_including;
  std::string optimizer_excluding;
  std::string optimizer_requiring;
  std::string function_name;
  /// Devices of the function's inputs (host when empty): inputs may already be device arrays.
  std::vector<Device> input_devices;
  /// Shapes of the inputs the program is compiled for (placeholders when empty): kernels are
  /// prepared for their layouts (size-1 dims broadcast), never for their sizes.
  std::vector<Shape> input_shapes;
  /// The options kernels run with (read from config() once, by function()).
  backends::KernelOptions kernel_options;
  /// Place on the requested GPU even without a usable device, copying nothing (the NVRTC
  /// sweep: kernels are chosen and compiled, never run).
  bool plan_only = false;
  /// The `contexts` flag, resolved (runtime::active_contexts): the user's names. Pinned names
  /// (TensorType::context) are resolved through it; a device's own name always resolves.
  runtime::ContextMap contexts;
  /// The thread budget of CPU contexts, by context name: the OpenMP threads a worker running
  /// that context's thunks uses (omp_set_num_threads; ExecContext::threads). A context not
  /// listed, or listed with 0, gets the default: the machine's cores (omp_get_max_threads of
  /// the process) divided by the number of CPU contexts the Program uses, at least 1. A Program
  /// with one CPU context runs it on the caller's thread with the process's count unless
  /// listed. (function() fills it from the `context_threads` flag, "dev0=1;dev1=3".)
  std::map<std::string, int> context_threads;
  /// The device flag, parsed and checked once by function() (resolve_target); lower() resolves
  /// the options itself when it is null (tests, tools).
  std::shared_ptr<const LoweringTarget> target;
};

/// Optimizes (per mode) and lowers a FunctionGraph: placement, transfers, thunks, kernels
/// prepared, memory plan.
std::shared_ptr<Program> lower(std::shared_ptr<graph::FunctionGraph> fgraph, const LowerOptions& options);

}  // namespace theon::compile
