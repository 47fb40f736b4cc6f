// The executor (VM): runs a Program's thunks in order on bound inputs, allocating outputs
// from a buffer pool and recycling each intermediate as soon as its last reader has run.
#pragma once
#include "compile/program.hpp"

#include <theon/array.hpp>

#include <map>
#include <memory>
#include <unordered_set>
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
  Array allocate(const Shape& shape, DType dtype);
  /// Gives `a`'s buffer back if this call made it and nothing else holds it.
  void recycle(Array& a);
  /// Did this call allocate the buffer?
  bool owned(const Array& a) const { return a.buffer() && owned_.count(a.buffer().get()); }
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
  std::multimap<size_t, std::shared_ptr<Buffer>> free_;
  std::unordered_set<const Buffer*> owned_;
  size_t free_bytes_ = 0;
  size_t live_bytes_ = 0;
  MemoryStats stats_;
};

/// Per-call scratch: slots and the pool. One per concurrent call of a Program.
struct ExecState {
  std::vector<Array> slots;
  BufferPool pool;
};

/// Runs `program`; returns the values of its output slots (user outputs, then updates).
/// Errors from a node get the node, its inputs' names and shapes, and `function_label`.
std::vector<Array> execute(const compile::Program& program, ExecState& state, const std::vector<Array>& inputs,
                           const std::string& function_label);

}  // namespace theon::detail
