#include "runtime/streams.hpp"

#include "runtime/devices.hpp"

#include <theon/error.hpp>

#include <utility>

namespace theon::runtime {
namespace {

// The device library's operations for an existing CUDA device.
detail::DeviceOps& ops_for(Device device, const char* what) {
  device_info(device);  // a DeviceError naming the devices that exist
  return detail::require_device_ops(what);
}

}  // namespace

const char* stream_kind_name(StreamKind kind) { return kind == StreamKind::Copy ? "copy" : "compute"; }

Stream Stream::of(Device device, StreamKind kind) {
  if (device.is_cpu()) return {device, kind, nullptr};
  return {device, kind, ops_for(device, "a device stream").stream_handle(device, kind)};
}

void Stream::wait(const Event& event) const {
  if (!handle || !event.handle()) return;  // a CPU stream or a CPU event: the work is already done
  detail::require_device_ops("a stream waiting for an event").stream_wait_event(handle, event.handle());
}

void Stream::synchronize() const {
  if (!handle) return;
  Event done(device);
  done.record(*this);
  done.synchronize();
}

ContextStreams streams_of(const Context& context) {
  return {Stream::of(context.device, StreamKind::Compute), Stream::of(context.device, StreamKind::Copy)};
}

Event::Event(Device device) : device_(device) {
  if (device.is_cuda()) handle_ = ops_for(device, "a device event").acquire_event(device);
}

Event::~Event() { release(); }

Event::Event(Event&& other) noexcept : device_(other.device_), handle_(std::exchange(other.handle_, nullptr)) {}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    release();
    device_ = other.device_;
    handle_ = std::exchange(other.handle_, nullptr);
  }
  return *this;
}

void Event::release() {
  if (!handle_) return;
  detail::DeviceOps* ops = detail::device_ops();  // registered, since it made the event
  if (ops) ops->release_event(device_, std::exchange(handle_, nullptr));
}

void Event::record(const Stream& stream) {
  if (!(stream.device == device_))
    throw InternalError("Event::record: an event of " + device_.str() + " cannot record a stream of " +
                        stream.device.str());
  if (!handle_) return;
  detail::require_device_ops("recording an event").record_event(handle_, stream.handle);
}

void Event::synchronize() const {
  if (handle_) detail::require_device_ops("waiting for an event").synchronize_event(handle_);
}

bool Event::done() const { return !handle_ || detail::require_device_ops("querying an event").event_done(handle_); }

}  // namespace theon::runtime
