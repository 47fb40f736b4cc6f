// The device registry: the CPU and every CUDA device the CUDA library found, with the
// properties placement, messages and the contexts flag need.
//
//   for (const runtime::DeviceInfo& d : runtime::devices()) std::cout << d.describe() << "\n";
//   runtime::device_info(Device::cuda(1)).total_memory;   // DeviceError when there is no cuda1
//
// Listing CUDA devices opens libtheon_cuda (runtime/cuda_library) on first use; without it,
// or without a device, the list is the CPU alone.
#pragma once
#include <theon/device.hpp>

#include <string>
#include <vector>

namespace theon::runtime {

struct DeviceInfo {
  Device device;
  std::string name;           // the CPU's model, or the driver's product name
  std::string pci_bus_id;     // "0000:01:00.0" (empty for the CPU)
  size_t total_memory = 0;    // bytes (the host's physical memory for the CPU)
  int compute_capability = 0; // major * 10 + minor (0 for the CPU)
  int multiprocessors = 0;    // streaming multiprocessors, or the CPU's online cores

  /// "cuda0: <name> (<PCI bus id>)", the form the contexts flag prints a mapping in.
  std::string describe() const;
};

/// The CPU first, then cuda0 .. cudaN-1. Queried once per process.
const std::vector<DeviceInfo>& devices();
/// One device's entry; a DeviceError naming the devices that exist when it is not one of them.
/// The CPU's entry is answered without listing CUDA devices (no device library is opened).
const DeviceInfo& device_info(Device device);

}  // namespace theon::runtime
