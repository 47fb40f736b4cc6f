#include "runtime/streams.hpp"

#include "runtime/devices.hpp"

#include <theon/error.hpp>

#include <string>

#include <atomic>
#include <map>
#include <mutex>
#include <utility>

namespace theon::runtime {
namespace {

std::atomic<DeviceStreams*> registered{nullptr};

// The device library's streams and events for an existing CUDA device.
DeviceStreams& ops_for(Device device, const char* what) {
  device_info(device);  // a DeviceError naming the devices that exist
  return require_device_streams(what);
}

// The process-wide table (device, context name) -> lane: the device's own context is lane 0
// (the device's streams); every other name gets the next lane of its device when first seen,
// kept for the process (a context's streams never change).
int lane_of(const Context& context) {
  if (context.name == context.device.str()) return 0;
  static std::mutex mu;
  static auto* lanes = new std::map<std::pair<int, std::string>, int>();  // never destroyed
  static auto* next = new std::map<int, int>();                            // device -> lanes handed out
  std::lock_guard<std::mutex> lock(mu);
  auto [it, added] = lanes->try_emplace({context.device.index, context.name}, 0);
  if (added) it->second = ++(*next)[context.device.index];
  return it->second;
}

Stream stream_of_lane(Device device, StreamKind kind, int lane) {
  if (device.is_cpu()) return {device, kind, nullptr};
  return {device, kind, ops_for(device, "a device stream").stream_handle(device, kind, lane)};
}

}  // namespace

DeviceStreams* device_streams() { return registered.load(std::memory_order_acquire); }
void set_device_streams(DeviceStreams* streams) { registered.store(streams, std::memory_order_release); }

DeviceStreams& require_device_streams(const char* what) {
  DeviceStreams* s = device_streams();
  if (!s) throw DeviceError(std::string(what) + ": no device library is loaded (device streams need the CUDA backend)");
  return *s;
}

const char* stream_kind_name(StreamKind kind) { return kind == StreamKind::Copy ? "copy" : "compute"; }

Stream Stream::of(Device device, StreamKind kind) { return stream_of_lane(device, kind, 0); }

void Stream::wait(const Event& event) const {
  if (!handle || !event.handle()) return;  // a CPU stream or a CPU event: the work is already done
  require_device_streams("a stream waiting for an event").stream_wait_event(handle, event.handle());
}

void Stream::synchronize() const {
  if (!handle) return;
  Event done(device);
  done.record(*this);
  done.synchronize();
}

ContextStreams streams_of(const Context& context) {
  if (context.device.is_cpu()) return {{context.device, StreamKind::Compute, nullptr}, {context.device, StreamKind::Copy, nullptr}};
  device_info(context.device);  // a DeviceError naming the devices that exist, before a lane is handed out
  const int lane = lane_of(context);
  return {stream_of_lane(context.device, StreamKind::Compute, lane), stream_of_lane(context.device, StreamKind::Copy, lane)};
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
  DeviceStreams* ops = device_streams();  // registered, since it made the event
  if (ops) ops->release_event(device_, std::exchange(handle_, nullptr));
}

void Event::record(const Stream& stream) {
  if (!(stream.device == device_))
    throw InternalError("Event::record: an event of " + device_.str() + " cannot record a stream of " +
                        stream.device.str());
  if (!handle_) return;
  require_device_streams("recording an event").record_event(handle_, stream.handle);
}

void Event::synchronize() const {
  if (handle_) require_device_streams("waiting for an event").synchronize_event(handle_);
}

bool Event::done() const { return !handle_ || require_device_streams("querying an event").event_done(handle_); }

}  // namespace theon::runtime
