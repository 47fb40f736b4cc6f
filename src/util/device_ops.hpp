// DeviceOps: the memory operations of a device library, registered by it when it is
// loaded (libtheon_cuda calls set_device_ops). Util-level code (Array::to_host, copies
// between devices) reaches device memory only through this interface, so nothing below
// the runtime layer depends on CUDA. The runtime layer's devices, streams and events
// (src/runtime) reach the device through it too.
#pragma once
#include <theon/array.hpp>
#include <theon/device.hpp>

#include <cstdint>
#include <memory>
#include <string>

namespace theon::detail {

/// What a device library says about one of its devices (runtime::DeviceInfo shows it).
struct DeviceProperties {
  std::string name;           // the driver's product name
  std::string pci_bus_id;     // "domain:bus:device.function" in hex, as lspci prints it
  size_t total_memory = 0;    // bytes
  int compute_capability = 0; // major * 10 + minor (90 for sm_90)
  int multiprocessors = 0;
};

/// Each device has two streams: Compute (every kernel, and the copies and frees DeviceOps
/// issues) and Copy (transfers that may overlap the compute stream, ordered by events).
enum class StreamKind : uint8_t { Compute, Copy };

class DeviceOps {
 public:
  virtual ~DeviceOps() = default;
  /// Uninitialised device memory from the device's caching allocator.
  virtual std::shared_ptr<Buffer> allocate(Device device, size_t bytes) = 0;
  /// Page-locked host memory from a caching pool (for staging and host outputs).
  virtual std::shared_ptr<Buffer> allocate_pinned(size_t bytes) = 0;
  /// Copies `bytes` between host and device memory (either direction, or device to
  /// device), ordered on the device's stream. Copies into pageable host memory return
  /// when the data is there; others may still be in flight (see synchronize).
  virtual void copy(void* dst, Device dst_device, const void* src, Device src_device, size_t bytes) = 0;
  /// Fills `bytes` of device memory with zeros, on the device's stream.
  virtual void zero(void* dst, Device device, size_t bytes) = 0;
  /// Waits for all work issued to the device's stream.
  virtual void synchronize(Device device) = 0;
  /// Streams of other libraries (DLPack consumers and producers), named as DLPack does:
  /// 1 the legacy default stream, 2 the per-thread default stream, any other value a
  /// cudaStream_t of `device`; -1 an unknown stream.
  /// Makes `stream` wait (on the device, without blocking the host) for the work issued so
  /// far to the device's own stream. -1: the host waits for the device's stream instead.
  virtual void external_stream_wait(Device device, int64_t stream) = 0;
  /// Makes the device's stream wait for the work issued so far to `stream` (so a block freed
  /// now is reused, in stream order, only after that work). -1: the host waits for the device.
  virtual void wait_for_external_stream(Device device, int64_t stream) = 0;
  virtual DeviceMemoryStats stats(Device device) = 0;
  virtual void empty_cache(Device device) = 0;

  /// Properties of an existing device of this library (DeviceError for another).
  virtual DeviceProperties properties(Device device) = 0;
  /// The device's stream of that kind, as an opaque handle (a cudaStream_t for CUDA),
  /// created on first use; it lives as long as the process.
  virtual void* stream_handle(Device device, StreamKind kind) = 0;
  /// Events: opaque handles of `device`, taken from and given back to its pool of idle
  /// events. An event never recorded counts as done.
  virtual void* acquire_event(Device device) = 0;
  virtual void release_event(Device device, void* event) = 0;
  /// Captures the work issued so far to `stream` (a stream of the event's device).
  virtual void record_event(void* event, void* stream) = 0;
  /// Makes `stream` wait, on the device, for the event's last record; the host goes on.
  virtual void stream_wait_event(void* stream, void* event) = 0;
  /// The host waits for the event's last record.
  virtual void synchronize_event(void* event) = 0;
  /// Whether the work the event's last record captured has finished (never blocks).
  virtual bool event_done(void* event) = 0;
};

/// The registered device library's operations, or nullptr when none is loaded.
DeviceOps* device_ops();
void set_device_ops(DeviceOps* ops);
/// device_ops(), or a DeviceError naming `what` when no device library is loaded.
DeviceOps& require_device_ops(const char* what);

/// Copies `src` into `dst` (same shape and dtype, `dst` contiguous), across devices as
/// needed: a non-contiguous source is made contiguous on its own device first.
void copy_array(const Array& src, Array& dst);

}  // namespace theon::detail
