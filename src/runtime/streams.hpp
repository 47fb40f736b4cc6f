// Streams and events, device-neutral. Each context has a compute stream (kernels, and the
// copies and frees DeviceOps issues) and a copy stream (transfers that may overlap it);
// events order work between them and tell the host when work is done:
//
//   runtime::ContextStreams s = runtime::streams_of(context);
//   runtime::Event written(context.device);
//   written.record(s.compute);   // after the kernel that writes a buffer
//   s.copy.wait(written);        // the copy stream waits on the device; the host goes on
//   ... issue the copy on s.copy.handle ...
//   runtime::Event copied(context.device);
//   copied.record(s.copy);
//   copied.synchronize();        // the host waits for the copy
//
// On the CPU work is synchronous: streams have no handle, record and wait do nothing and an
// event is always done. A CUDA device's streams and events come from the device library
// (DeviceOps); its streams are made on first use and live as long as the process.
//
// The caching allocator reuses a freed block in compute-stream order: a buffer used on the
// copy stream must have the compute stream wait for that use before the buffer is released.
// Streams and events may be used from several threads; one Event is not to be recorded by
// one thread while another uses it.
#pragma once
#include "runtime/contexts.hpp"
#include "util/device_ops.hpp"

namespace theon::runtime {

using detail::StreamKind;
const char* stream_kind_name(StreamKind kind);  // "compute" or "copy"

class Event;

struct Stream {
  Device device;
  StreamKind kind = StreamKind::Compute;
  void* handle = nullptr;  // cudaStream_t on a CUDA device; null on the CPU

  /// The device's stream of that kind (a DeviceError when the device does not exist).
  static Stream of(Device device, StreamKind kind);
  /// Makes this stream wait, on the device, for the event's last record (the host does
  /// not wait). The event may be of another device.
  void wait(const Event& event) const;
  /// The host waits for the work issued to this stream so far.
  void synchronize() const;
};

struct ContextStreams {
  Stream compute;
  Stream copy;
};
ContextStreams streams_of(const Context& context);

/// An event of one device, owned (move-only; its CUDA event goes back to the device's pool).
class Event {
 public:
  explicit Event(Device device);
  ~Event();
  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  Device device() const { return device_; }
  /// Captures the work issued so far to `stream`, a stream of this event's device.
  void record(const Stream& stream);
  /// The host waits for the last record (returns at once if never recorded).
  void synchronize() const;
  /// Whether the last record's work has finished; true if never recorded. Never blocks.
  bool done() const;
  void* handle() const { return handle_; }  // cudaEvent_t on a CUDA device; null on the CPU

 private:
  void release();
  Device device_;
  void* handle_ = nullptr;
};

}  // namespace theon::runtime
