// Device names, the device-ops registry and copies between devices (util level: device
// memory is reached only through the DeviceOps a device library registers).
#include "util/device_ops.hpp"

#include <theon/error.hpp>

#include "util/dispatch.hpp"

#include <atomic>
#include <cstring>

namespace theon {

Device Device::parse(const std::string& text) {
  if (text == "cpu") return cpu();
  if (text == "cuda" || text == "gpu") return cuda(0);
  if (text.rfind("cuda", 0) == 0 && text.size() > 4 && text.size() < 8) {
    int index = 0;
    for (size_t i = 4; i < text.size(); ++i) {
      if (text[i] < '0' || text[i] > '9') index = -1;
      if (index < 0) break;
      index = index * 10 + (text[i] - '0');
    }
    if (index >= 0) return cuda(index);
  }
  throw ConfigError("unknown device '" + text + "' (expected cpu, cuda, cuda0, cuda1, ...)");
}

std::string Device::str() const { return is_cpu() ? "cpu" : "cuda" + std::to_string(index); }

namespace detail {
namespace {
std::atomic<DeviceOps*> registered_ops{nullptr};
}  // namespace

DeviceOps* device_ops() { return registered_ops.load(std::memory_order_acquire); }
void set_device_ops(DeviceOps* ops) { registered_ops.store(ops, std::memory_order_release); }

DeviceOps& require_device_ops(const char* what) {
  DeviceOps* ops = device_ops();
  if (!ops) throw DeviceError(std::string(what) + ": no device library is loaded (device arrays need the CUDA backend)");
  return *ops;
}

namespace {

// Smallest [first, last) element range of the buffer that a view touches.
std::pair<int64_t, int64_t> element_span(const Array& a) {
  int64_t lo = a.offset(), hi = a.offset();
  for (int d = 0; d < a.ndim(); ++d) {
    if (a.shape()[d] == 0) return {a.offset(), a.offset()};
    const int64_t reach = (a.shape()[d] - 1) * a.strides()[d];
    (reach < 0 ? lo : hi) += reach;
  }
  return {lo, hi + 1};
}

}  // namespace

void copy_array(const Array& src, Array& dst) { copy_array_on(src, dst, nullptr); }

void copy_array_on(const Array& src, Array& dst, void* stream) {
  if (src.shape() != dst.shape() || src.dtype() != dst.dtype() || !dst.is_contiguous())
    throw InternalError("copy_array: destination " + shape_str(dst.shape()) + " does not match source " +
                        shape_str(src.shape()) + " or is not contiguous");
  if (src.size() == 0) return;
  const size_t bytes = src.nbytes();
  if (src.on_host() && dst.on_host()) {
    Array c = src.contiguous();
    std::memcpy(dst.data(), c.data(), bytes);
    return;
  }
  DeviceOps& ops = require_device_ops("copy between devices");
  if (src.is_contiguous()) {
    ops.copy_on(dst.data(), dst.device(), src.data(), src.device(), bytes, stream);
  } else if (src.on_host()) {
    Array c = src.contiguous();
    ops.copy_on(dst.data(), dst.device(), c.data(), c.device(), bytes, stream);
    // `c` dies here; the copy must not read freed memory
    ops.synchronize_on(dst.device(), stream);
  } else {
    // A device view: bring the span it covers to the host, then gather on the host.
    auto [lo, hi] = element_span(src);
    const size_t item = itemsize(src.dtype());
    auto staging = Buffer::allocate_host(static_cast<size_t>(hi - lo) * item);
    ops.copy_on(staging->data(), Device::cpu(), static_cast<const char*>(src.buffer()->data()) + lo * item,
                src.device(), static_cast<size_t>(hi - lo) * item, stream);
    Array host_view(staging, src.dtype(), src.shape(), src.strides(), src.offset() - lo);
    Array c = host_view.contiguous();
    if (dst.on_host()) {
      std::memcpy(dst.data(), c.data(), bytes);
    } else {
      ops.copy_on(dst.data(), dst.device(), c.data(), Device::cpu(), bytes, stream);
      ops.synchronize_on(dst.device(), stream);
    }
  }
  if (stream) {
    if (src.device().is_cuda()) ops.record_use(*src.buffer(), stream);
    if (dst.device().is_cuda()) ops.record_use(*dst.buffer(), stream);
  }
}

}  // namespace detail

Array Array::to_host() const {
  if (on_host()) return *this;
  Array out = Array::empty(shape_, dtype_);
  detail::copy_array(*this, out);
  return out;
}

}  // namespace theon
