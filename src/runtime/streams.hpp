// Streams and events, device-neutral. Each context has its own compute stream (its kernels)
// and copy stream (transfers that may overlap it), also when several context names map to one
// device; events order work between streams and tell the host when work is done:
//
//   runtime::ContextStreams s = runtime::streams_of(context);
//   runtime::Event written(context.device);
//   written.record(s.compute);   // after the kernel that writes a buffer
//   s.copy.wait(written);        // the copy stream waits on the device; the host goes on
//   ... issue the copy on s.copy.handle (DeviceOps::copy_on), record_use its buffers ...
//   runtime::Event copied(context.device);
//   copied.record(s.copy);
//   copied.synchronize();        // the host waits for the copy
//
// Which streams a context gets: the device's own context ("cuda0", the name equal to the
// device's) has the device's streams (Stream::of; DeviceOps' stream-less copy, zero,
// synchronize and allocate work on its compute stream, as before contexts existed); every
// other name mapped to the device ("dev0", "dev1") gets a pair of its own, created when first
// asked for and kept for the process (a process-wide table (device, name) -> lane). So two
// contexts on one device run on different streams and are ordered only by the events the
// executor places. On the CPU work is synchronous: streams have no handle, record and wait do
// nothing and an event is always done. A CUDA device's streams and events come from the device
// library (runtime::DeviceStreams, device_streams.hpp); streams live as long as the process.
//
// The caching allocator reuses a freed block in its home stream's order (the stream it was
// allocated for, DeviceOps::allocate_on; the device's own compute stream for allocate): a
// buffer used on any other stream (a copy stream, another context's compute stream) must be
// told with DeviceOps::record_use after that use is issued and before the buffer is released.
// Streams and events may be used from several threads; one Event is not to be recorded by
// one thread while another uses it.
#pragma once
#include "runtime/contexts.hpp"
#include "runtime/device_streams.hpp"

namespace theon::runtime {

const char* stream_kind_name(StreamKind kind);  // "compute" or "copy"

class Event;

struct Stream {
  Device device;
  StreamKind kind = StreamKind::Compute;
  void* handle = nullptr;  // cudaStream_t on a CUDA device; null on the CPU

  /// The device's own context's stream of that kind (a DeviceError when the device does not
  /// exist).
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
/// The context's own compute and copy streams: the device's (Stream::of) for the device's own
/// context, a pair of its own for any other name (made on first use, the same pair on every
/// later call); no handles on the CPU. A DeviceError when the device does not exist.
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
