// DeviceOps: the memory and copy operations of a device library, registered by it when it
// is loaded (libtheon_cuda calls set_device_ops). Util-level code (Array::to_host, copies
// between devices, the Transfer op) reaches device memory only through this interface, so
// nothing below the runtime layer depends on CUDA. Streams appear here only as opaque
// handles (void*, a cudaStream_t) that callers got from runtime::streams_of; the streams and
// events themselves are the runtime layer's (runtime/device_streams.hpp, registered by the
// same library).
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

class DeviceOps {
 public:
  virtual ~DeviceOps() = default;
  /// Uninitialised device memory from the device's caching allocator, for use on the device's
  /// own compute stream (its home stream: allocate_on(device, bytes, that stream)).
  virtual std::shared_ptr<Buffer> allocate(Device device, size_t bytes) = 0;
  /// The same for use on `stream` (a stream handle of `device` from runtime::streams_of), its
  /// home stream: a freed block goes back to its home stream's free list and is reused only by
  /// allocations for that stream, in that stream's order (a later user's work is issued after
  /// the last use's). Null: the device's own compute stream. A use of the block on any other
  /// stream must be told with record_use before the block is released.
  virtual std::shared_ptr<Buffer> allocate_on(Device device, size_t bytes, void* stream) = 0;
  /// Tells the caching allocator that work reading or writing `buffer` was issued on `stream`
  /// (a stream handle of any device, from runtime::streams_of), which may not be its home
  /// stream (PyTorch's record_stream). Call it after issuing that work and before the last
  /// reference to the buffer goes; when the block is released, its home stream is made to
  /// wait (on the device, enqueued: the host does not wait) for the work issued to `stream`
  /// up to the release, so the block's next user cannot overwrite it before that work ran.
  /// A no-op for the home stream itself, for host buffers and for memory the allocator did
  /// not make (DLPack imports). Thread-safe.
  virtual void record_use(const Buffer& buffer, void* stream) = 0;
  /// Page-locked host memory from a caching pool (for staging and host outputs).
  virtual std::shared_ptr<Buffer> allocate_pinned(size_t bytes) = 0;
  /// Copies `bytes` between host and device memory (either direction, or device to
  /// device), ordered on the device's own compute stream (its own context's, lane 0). Copies
  /// into pageable host memory return when the data is there; others may still be in flight
  /// (see synchronize).
  virtual void copy(void* dst, Device dst_device, const void* src, Device src_device, size_t bytes) = 0;
  /// The same copy issued on `stream` (a stream handle of the destination's or the source's
  /// device from runtime::streams_of, e.g. a context's copy stream); null: exactly copy().
  /// The copy is ordered after the work issued so far to `stream` and nothing else, so the
  /// caller:
  ///   1. before: makes `stream` wait (runtime::Stream::wait on an Event recorded after it)
  ///      for the work of other streams that writes `src` or still reads or writes `dst`;
  ///   2. after: calls record_use(buffer, stream) for the device buffers of `src` and `dst`
  ///      (a no-op where `stream` is their home stream), so the allocator does not reuse them
  ///      before the copy ran;
  ///   3. makes the readers of `dst` wait for an Event recorded on `stream` after the copy
  ///      (another stream: Stream::wait; the host: Event::synchronize).
  /// Into pageable host memory the copy has ended when this returns (the host waited, counted
  /// in DeviceMemoryStats::host_waits); into pinned memory step 3 is the host's wait.
  /// Between two devices: a peer copy on `stream` where the devices allow it; otherwise it is
  /// staged through pinned host memory (the source half on `stream` if it is of the source
  /// device, else on the source device's compute stream after `stream`'s work so far; the
  /// other half likewise on the destination's side), and the host waits for it (counted).
  virtual void copy_on(void* dst, Device dst_device, const void* src, Device src_device, size_t bytes,
                       void* stream) = 0;
  /// Fills `bytes` of device memory with zeros, on the device's own compute stream.
  virtual void zero(void* dst, Device device, size_t bytes) = 0;
  /// The same on `stream` (a stream handle of `device`; null: zero()); the caller orders and
  /// records it as for copy_on.
  virtual void zero_on(void* dst, Device device, size_t bytes, void* stream) = 0;
  /// Waits for all work issued to the device's own compute stream (not for other contexts'
  /// streams of the device: wait for those with runtime::Event).
  virtual void synchronize(Device device) = 0;
  /// The host waits for the work issued so far to `stream`, a stream handle of `device`
  /// (null: synchronize(device)); counted in DeviceMemoryStats::host_waits.
  virtual void synchronize_on(Device device, void* stream) = 0;
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
};

/// The registered device library's operations, or nullptr when none is loaded.
DeviceOps* device_ops();
void set_device_ops(DeviceOps* ops);
/// device_ops(), or a DeviceError naming `what` when no device library is loaded.
DeviceOps& require_device_ops(const char* what);

/// Copies `src` into `dst` (same shape and dtype, `dst` contiguous), across devices as
/// needed: a non-contiguous source is made contiguous on its own device first.
void copy_array(const Array& src, Array& dst);
/// The same with the device copy issued on `stream` (DeviceOps::copy_on; null: copy_array),
/// and the device buffers of `src` and `dst` recorded as used on it (record_use). The caller
/// orders `stream` after the writers of `src` and the readers of `dst` after it.
void copy_array_on(const Array& src, Array& dst, void* stream);

}  // namespace theon::detail
