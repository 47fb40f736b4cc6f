// DeviceStreams: the streams and events of a device library, registered by it when it is
// loaded (libtheon_cuda registers its CudaRuntime from theon_cuda_probe). The runtime layer's
// Stream and Event (runtime/streams.hpp) reach the device only through it. The memory and
// copy operations of the same library are util's detail::DeviceOps (util/device_ops.hpp):
// Array copies and the Transfer op use those below the runtime layer, where streams and
// events are not known.
#pragma once
#include <theon/device.hpp>

#include <cstdint>

namespace theon::runtime {

/// Each context has two streams: Compute (every kernel of the context; on the device's own
/// context also the copies and frees DeviceOps issues without a stream) and Copy (transfers
/// that may overlap the compute stream, ordered by events).
enum class StreamKind : uint8_t { Compute, Copy };

class DeviceStreams {
 public:
  virtual ~DeviceStreams() = default;
  /// A stream of the device, as an opaque handle (a cudaStream_t for CUDA), created on first
  /// use; it lives as long as the process. Each `lane` of a device is a pair of streams (one
  /// per kind): lane 0 is the device's own context's ("cuda0"), today's streams, on which
  /// DeviceOps' copy(), zero(), synchronize() and allocate() work; streams_of gives every
  /// other context name mapped to the device a lane of its own (runtime/streams.cpp numbers
  /// them).
  virtual void* stream_handle(Device device, StreamKind kind, int lane) = 0;
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

/// The registered device library's streams and events, or nullptr when none is loaded.
DeviceStreams* device_streams();
void set_device_streams(DeviceStreams* streams);
/// device_streams(), or a DeviceError naming `what` when no device library is loaded.
DeviceStreams& require_device_streams(const char* what);

}  // namespace theon::runtime
