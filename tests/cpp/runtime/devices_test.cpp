// The device registry without a GPU: the CPU comes first, CUDA devices (if any) follow in
// order, and asking for a device that does not exist names the ones that do.
#include "runtime/devices.hpp"

#include "error_of.hpp"

#include <theon/error.hpp>

#include <gtest/gtest.h>

namespace theon::runtime {
namespace {

using testing_util::error_of;

TEST(RuntimeDevices, TheCpuComesFirstThenCudaDevicesInOrder) {
  const std::vector<DeviceInfo>& list = devices();
  ASSERT_FALSE(list.empty());
  EXPECT_EQ(list[0].device, Device::cpu());
  EXPECT_FALSE(list[0].name.empty());
  EXPECT_GT(list[0].total_memory, 0u);
  EXPECT_GE(list[0].multiprocessors, 1);
  EXPECT_EQ(list[0].compute_capability, 0);
  EXPECT_TRUE(list[0].pci_bus_id.empty());
  for (size_t i = 1; i < list.size(); ++i) EXPECT_EQ(list[i].device, Device::cuda(static_cast<int>(i) - 1));
  EXPECT_EQ(static_cast<int>(list.size()) - 1, cuda_status().device_count);
  EXPECT_EQ(&devices(), &list);  // queried once
}

TEST(RuntimeDevices, DeviceInfoOfTheCpu) {
  EXPECT_EQ(device_info(Device::cpu()).describe(), devices()[0].describe());
  EXPECT_EQ(device_info(Device::cpu()).multiprocessors, devices()[0].multiprocessors);
  EXPECT_EQ(device_info(Device::cpu()).describe().rfind("cpu: ", 0), 0u);
}

TEST(RuntimeDevices, AMissingDeviceIsAnErrorNamingTheDevicesThatExist) {
  const Device missing = Device::cuda(static_cast<int>(devices().size()) - 1);
  const std::string e = error_of<DeviceError>([&] { device_info(missing); });
  EXPECT_NE(e.find(missing.str() + " does not exist"), std::string::npos) << e;
  EXPECT_NE(e.find("the devices are cpu"), std::string::npos) << e;
  EXPECT_NE(e.find(std::to_string(devices().size() - 1) + " CUDA device(s)"), std::string::npos) << e;
  if (!cuda_status().ok) {
    EXPECT_NE(e.find(cuda_status().reason), std::string::npos) << e;
  }
}

}  // namespace
}  // namespace theon::runtime
