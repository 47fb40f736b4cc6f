#include "runtime/observer.hpp"

namespace theon::runtime {

namespace observer_registry {
std::atomic<Observer*> current{nullptr};
}

Observer* set_observer(Observer* o) { return observer_registry::current.exchange(o, std::memory_order_acq_rel); }

TransferDirection transfer_direction(Device from, Device to) {
  if (from.is_cpu()) return TransferDirection::HostToDevice;
  return to.is_cpu() ? TransferDirection::DeviceToHost : TransferDirection::DeviceToDevice;
}

const char* transfer_direction_name(TransferDirection direction) {
  switch (direction) {
    case TransferDirection::HostToDevice: return "host to device";
    case TransferDirection::DeviceToHost: return "device to host";
    case TransferDirection::DeviceToDevice: return "device to device";
  }
  return "?";
}

}  // namespace theon::runtime
