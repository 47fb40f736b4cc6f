// The executor (VM): runs a Program's thunks in order on bound inputs, allocating outputs
// from a buffer pool and recycling each intermediate as soon as its last reader has run.
//
// Contexts (compile/program.hpp, "Contexts"):
//   - A Program with at most one CPU context (every Program of one context; a GPU program
//     whose host work — fallbacks, shape arithmetic — runs in "cpu") runs on the caller's
//     thread in program order, as before contexts: no hop. GPU thunks are issued by enqueueing
//     on their context's stream; a cross-context edge (Thunk::after) from a GPU producer is an
//     event recorded after it on its stream, which a GPU reader's stream waits on and a CPU
//     reader waits on on the host (each such host wait counted: ExecState::host_waits).
//   - A Program with two or more CPU contexts runs each context's thunks as a lane, in
//     program order: the caller's thread takes the first context's lane, persistent worker
//     threads (one process-wide pool, grown when all are busy, never a thread per call) the
//     others — a GPU context's lane too, which only enqueues. Each CPU lane runs under its
//     context's thread budget (backends/cpu/thread_budget.hpp) and OpenBLAS is pinned to one
//     thread meanwhile. A reader waits for a CPU producer of another lane to have finished,
//     for a GPU producer to have been issued (then the event as above). Metadata readers
//     (Shape) never wait on a device.
//   - A failure in any lane stops every lane (before its next thunk); execute() rethrows the
//     first error, naming the node and its context, after all lanes have stopped: nothing is
//     committed (FunctionImpl commits updates only after a successful call).
//   - Each context has its own buffer pool in the ExecState (a buffer is recycled only in its
//     own context's order, see compile/memory_plan.hpp).
//   - NodeHook and observer calls happen on the thread that runs the thunk (a worker for the
//     lanes of a multi-CPU-context Program), before and after it, in its lane's order;
//     runtime::ThunkEvent::context is the context's name.
//
// Per-call cost matters (DESIGN.md: binding and dispatch in the low microseconds), so a
// call of a warm ExecState allocates no scratch: the slots and the per-thunk argument
// vectors keep their Arrays between calls and are emptied by dropping only the buffer
// reference, so their shape/stride vectors' storage is reused by the next call's
// copy-assignments.
#pragma once
#include "compile/program.hpp"
#include "runtime/streams.hpp"

#include <theon/array.hpp>

#include <memory>
#include <utility>
#include <vector>

namespace theon::detail {

/// What one call did with memory (the memory plan's report).
struct MemoryStats {
  size_t peak_bytes = 0;  // most bytes of this call's buffers live at once
  int reused = 0;         // buffers taken from the free list
  int allocated = 0;      // buffers newly allocated
  int inplace = 0;        // outputs written into a dead input's buffer
};

/// Host buffers recycled between the nodes of a call and across calls.
class BufferPool {
 public:
  /// Starts a call's accounting (peak and counts are per call).
  void begin_call() { stats_ = MemoryStats(); stats_.peak_bytes = live_bytes_ = 0; }
  /// A contiguous array of `shape` and `dtype` in a pooled or new buffer.
  Array allocate(const Shape& shape, DType dtype);
  /// The same, written into `dst` (reusing its shape/stride storage), on `device`; a device
  /// buffer's home is `stream` (the thunk's; null: the device's own compute stream).
  void allocate_into(Array& dst, const Shape& shape, DType dtype, Device device = Device::cpu(),
                     void* stream = nullptr);
  /// Gives `a`'s buffer back if this call made it and nothing else holds it.
  void recycle(Array& a);
  /// Did this call allocate the buffer?
  bool owned(const Array& a) const;
  /// Ends a call: buffers still owned were handed out or dropped; they leave the pool.
  void end_call() {
    owned_.clear();
    live_bytes_ = 0;
  }
  void count_inplace() { ++stats_.inplace; }
  size_t live_bytes() const { return live_bytes_; }
  size_t peak_bytes() const { return stats_.peak_bytes; }
  const MemoryStats& stats() const { return stats_; }

 private:
  std::shared_ptr<Buffer> take(size_t bytes, Device device, void* stream);

  // Sorted by size. Vectors rather than a multimap/set: a call holds few buffers at once
  // and the vectors' storage is reused across calls, so a warm call allocates no nodes.
  std::vector<std::pair<size_t, std::shared_ptr<Buffer>>> free_;
  std::vector<const Buffer*> owned_;  // buffers this call allocated and still live
  size_t free_bytes_ = 0;
  size_t live_bytes_ = 0;
  MemoryStats stats_;
};

/// Per-call scratch: slots, the thunks' argument vectors and the pool. One per concurrent
/// call of a Program (never shared between threads); sized for its Program on first use.
/// What a state last loaded for one shared-variable leaf: the variable, its version then, and
/// the value (its buffer held weakly; `view` is the rest of the Array, without the buffer).
struct SharedLeafCache {
  const graph::SharedStorage* storage = nullptr;
  uint64_t version = 0;
  std::weak_ptr<Buffer> buffer;
  Array view;
};

struct ExecState {
  std::vector<Array> slots;
  std::vector<SharedLeafCache> shared_cache;  // per leaf of the program (used for shared ones)
  std::vector<std::vector<Array>> ins, outs;  // per thunk, exactly its arity (kernels read size())
  std::vector<size_t> transfer_bytes;         // per thunk: bytes a Transfer moved in this call
  /// Per context of the Program (Program::contexts): its pool, and the slots consumed by
  /// inplace outputs of its current thunk.
  std::vector<BufferPool> pools;
  std::vector<std::vector<int>> overwritten;
  /// Per context: its thunks in program order (a lane), and its thread budget.
  std::vector<std::vector<int>> lanes;
  std::vector<int> lane_threads;
  int sequential_threads = 0;  // the budget of a Program run on the caller's thread alone
  /// Per thunk that signals and runs on a GPU: the event recorded after it.
  std::vector<std::unique_ptr<runtime::Event>> events;
  /// Per context on a GPU that is not the device's own: an event recorded after the call's
  /// work there, which the device's own stream waits on before the outputs are copied.
  std::vector<std::unique_ptr<runtime::Event>> context_done;
  /// Per context: an event joining its copy stream's work (copies between devices) into the
  /// device's own compute stream at the end of a call, where the context has such copies.
  std::vector<std::unique_ptr<runtime::Event>> copy_done;
  bool named_gpu_contexts = false;  // some context_done or copy_done entry is set
  /// Host waits on a device event in the last call (GPU producer, CPU reader).
  int host_waits = 0;

  // (Inline, with the one-context case first: they are on every call's path.)
  void begin_call() {
    for (BufferPool& p : pools) p.begin_call();
    host_waits = 0;
  }
  void end_call() {
    for (BufferPool& p : pools) p.end_call();
  }
  /// Did this call allocate the buffer (in any context)?
  bool owned(const Array& a) const {
    if (pools.size() == 1) return pools[0].owned(a);
    for (const BufferPool& p : pools)
      if (p.owned(a)) return true;
    return false;
  }
  /// This call's memory report: the contexts' reports summed.
  MemoryStats stats() const { return pools.size() == 1 ? pools[0].stats() : summed_stats(); }

 private:
  MemoryStats summed_stats() const;
};

/// Called around each thunk of a call with its values (Theano's MonitorMode; the observer
/// reports no values), on the thread that runs the thunk (see above: with several CPU
/// contexts, calls for different contexts come from different threads at once). `before` sees the inputs; `after` the inputs (an inplace output may
/// have overwritten one) and the outputs. Arrays are on the thunk's device and valid only
/// during the callback. An exception it throws fails the call (nothing is committed).
class NodeHook {
 public:
  virtual ~NodeHook() = default;
  virtual void before(size_t thunk, const graph::Apply& node, const std::vector<Array>& ins) = 0;
  virtual void after(size_t thunk, const graph::Apply& node, const std::vector<Array>& ins,
                     const std::vector<Array>& outs) = 0;
};

/// Runs `program`; returns the values of its output slots (user outputs, then updates).
/// Errors from a node get the node, its inputs' names and shapes, and `function_label`.
/// On an error the state may hold references to this call's arrays: discard it.
std::vector<Array> execute(const compile::Program& program, ExecState& state, const std::vector<Array>& inputs,
                           const std::string& function_label, NodeHook* hook = nullptr);

}  // namespace theon::detail
