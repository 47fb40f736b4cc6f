// The executor (VM): runs a Program's thunks in order on bound inputs, allocating outputs
// from a buffer pool and recycling each intermediate as soon as its last reader has run.
//
// Per-call cost matters (DESIGN.md: binding and dispatch in the low microseconds), so a
// call of a warm ExecState allocates no scratch: the slots and the per-thunk argument
// vectors keep their Arrays between calls and are emptied by dropping only the buffer
// reference, so their shape/stride vectors' storage is reused by the next call's
// copy-assignments.
#pragma once
#include "compile/program.hpp"

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
  /// The same, written into `dst` (reusing its shape/stride storage), on `device`.
  void allocate_into(Array& dst, const Shape& shape, DType dtype, Device device = Device::cpu());
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
  std::shared_ptr<Buffer> take(size_t bytes, Device device);

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
  std::vector<int> overwritten;               // slots consumed by inplace outputs of one thunk
  std::vector<size_t> transfer_bytes;         // per thunk: bytes a Transfer moved in this call
  BufferPool pool;
};

/// Called around each thunk of a call with its values (Theano's MonitorMode; the observer
/// reports no values). `before` sees the inputs; `after` the inputs (an inplace output may
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
