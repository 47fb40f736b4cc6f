// The observer: what the executor and the compiler report as they work, for the profiler
// (and tests) to collect. The runtime knows no graph, so everything is plain values.
//
//   class MyProfiler : public runtime::Observer {
//     void thunk_end(const runtime::ThunkEvent& e) override { ... }
//   };
//   MyProfiler p;
//   runtime::ScopedObserver watching(&p);        // or set_observer(&p) for the process
//   ...
//   if (runtime::Observer* o = runtime::observer()) o->thunk_begin({...});   // a reporter
//
// With no observer a report costs one atomic load and one branch.
//
// Threads: callbacks come from whichever thread does the work, possibly several at once (a
// Function called from several threads, kernels compiled in parallel): an observer guards
// its own state. The string_views and the Provenance an event points to are valid only
// during the callback. An observer must outlive every callback made to it: set_observer
// does not wait for callbacks in flight, so unregister it only when no work is running (or
// keep it for the process). A callback should not throw; an exception it throws reaches the
// code that reported the event.
#pragma once
#include "runtime/streams.hpp"

#include <theon/device.hpp>

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace theon::runtime {

/// Where a thunk's work comes from, in the user's terms.
struct Provenance {
  std::vector<std::string> user_names;     // the user's variable names of its outputs
  std::vector<std::string> fused_members;  // the ops a fused thunk stands for, in order
  std::string created_at;                  // where the user built it ("model.py:42"), or empty
};

struct CallEvent {
  std::string_view function;  // the Function's name (or a generated label)
  uint64_t call_index = 0;    // 0, 1, ... per Function
  bool succeeded = true;      // call_end only: false when the call threw
};

struct ThunkEvent {
  size_t thunk_index = 0;             // position in the Program
  std::string_view op;                // the op as printed ("Elemwise{add}")
  std::string_view kind;              // the kernel or thunk kind ("cuda.elemwise", "transfer")
  std::string_view context;           // the context's name ("dev0", "cuda0", "cpu")
  Device device;
  StreamKind stream = StreamKind::Compute;
  size_t bytes_in = 0;
  size_t bytes_out = 0;
  const Provenance* provenance = nullptr;  // null when unknown
};

enum class TransferDirection : uint8_t { HostToDevice, DeviceToHost, DeviceToDevice };
/// The direction of a transfer between two different devices.
TransferDirection transfer_direction(Device from, Device to);
const char* transfer_direction_name(TransferDirection direction);  // "host to device", ...

struct TransferEvent {
  Device from;
  Device to;
  size_t bytes = 0;
  TransferDirection direction = TransferDirection::HostToDevice;
  std::string_view what;  // what is moved ("input x", "output 0"), or empty
};

struct AllocationEvent {
  Device device;
  size_t bytes = 0;
  bool reused = false;  // served from a cache or pool rather than newly allocated
};

struct CompileEvent {
  std::string_view phase;  // "optimize", "place", "prepare kernels", "nvrtc", ...
  double seconds = 0;
  bool cache_hit = false;  // found compiled (memory or disk) rather than compiled now
  std::string_view what;   // the function, kernel or module concerned
};

/// Every callback does nothing unless overridden.
class Observer {
 public:
  virtual ~Observer() = default;
  virtual void call_begin(const CallEvent&) {}
  virtual void call_end(const CallEvent&) {}
  virtual void thunk_begin(const ThunkEvent&) {}
  virtual void thunk_end(const ThunkEvent&) {}
  virtual void transfer(const TransferEvent&) {}
  virtual void allocation(const AllocationEvent&) {}
  virtual void compile(const CompileEvent&) {}
};

namespace observer_registry {
extern std::atomic<Observer*> current;  // read through observer()
}

/// The process's observer, or nullptr (inline: a reporter pays one load and one branch).
inline Observer* observer() { return observer_registry::current.load(std::memory_order_acquire); }
/// Registers `o` (nullptr: none) for the process; returns the one it replaces.
Observer* set_observer(Observer* o);

/// Registers an observer for a scope and puts the previous one back at its end (tests).
class ScopedObserver {
 public:
  explicit ScopedObserver(Observer* o) : previous_(set_observer(o)) {}
  ~ScopedObserver() { set_observer(previous_); }
  ScopedObserver(const ScopedObserver&) = delete;
  ScopedObserver& operator=(const ScopedObserver&) = delete;

 private:
  Observer* previous_;
};

}  // namespace theon::runtime
