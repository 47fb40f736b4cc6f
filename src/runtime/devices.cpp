#include "runtime/devices.hpp"

#include "runtime/cuda_library.hpp"
#include "util/device_ops.hpp"

#include <theon/error.hpp>

#include <unistd.h>

#include <algorithm>
#include <fstream>

namespace theon::runtime {
namespace {

std::string cpu_model_name() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) != 0) continue;
    const size_t colon = line.find(':');
    const size_t start = colon == std::string::npos ? std::string::npos : line.find_first_not_of(' ', colon + 1);
    if (start != std::string::npos) return line.substr(start);
  }
  return "host CPU";  // no /proc, or an architecture that names its model differently
}

DeviceInfo cpu_info() {
  DeviceInfo cpu;
  cpu.device = Device::cpu();
  cpu.name = cpu_model_name();
  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page_size > 0) cpu.total_memory = static_cast<size_t>(pages) * static_cast<size_t>(page_size);
  cpu.multiprocessors = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  return cpu;
}

std::vector<DeviceInfo> query_devices() {
  std::vector<DeviceInfo> list{cpu_info()};
  const CudaLibrary& cuda = cuda_library();
  if (!cuda.ok) return list;
  detail::DeviceOps& ops = detail::require_device_ops("listing CUDA devices");
  for (int i = 0; i < cuda.device_count; ++i) {
    const Device device = Device::cuda(i);
    detail::DeviceProperties p = ops.properties(device);
    list.push_back({device, std::move(p.name), std::move(p.pci_bus_id), p.total_memory, p.compute_capability,
                    p.multiprocessors});
  }
  return list;
}

std::string device_names(const std::vector<DeviceInfo>& list) {
  std::string names;
  for (const DeviceInfo& d : list) names += (names.empty() ? "" : ", ") + d.device.str();
  return names;
}

}  // namespace

std::string DeviceInfo::describe() const {
  return device.str() + ": " + name + (pci_bus_id.empty() ? "" : " (" + pci_bus_id + ")");
}

const std::vector<DeviceInfo>& devices() {
  // A query that throws leaves the static uninitialised: the next call asks again.
  static const std::vector<DeviceInfo> list = query_devices();
  return list;
}

const DeviceInfo& device_info(Device device) {
  if (device.is_cpu()) {  // the CPU's entry without listing CUDA devices (loads no device library)
    static const DeviceInfo cpu = cpu_info();
    return cpu;
  }
  const std::vector<DeviceInfo>& list = devices();
  for (const DeviceInfo& d : list)
    if (d.device == device) return d;
  std::string why = device.str() + " does not exist: the devices are " + device_names(list) + " (" +
                    std::to_string(list.size() - 1) + " CUDA device(s))";
  if (const CudaLibrary& cuda = cuda_library(); !cuda.ok) why += "; no CUDA device can be used: " + cuda.reason;
  throw DeviceError(why);
}

}  // namespace theon::runtime
