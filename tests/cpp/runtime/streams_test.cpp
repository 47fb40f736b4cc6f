// Streams and events on the CPU: work is synchronous, so they order nothing and are always
// done. (The CUDA side: tests/cpp/backends/cuda/runtime_streams_gpu_test.cpp.)
#include "runtime/devices.hpp"
#include "runtime/streams.hpp"

#include "error_of.hpp"

#include <theon/error.hpp>

#include <gtest/gtest.h>

namespace theon::runtime {
namespace {

using testing_util::error_of;

TEST(RuntimeStreamsCpu, ACpuContextHasTrivialComputeAndCopyStreams) {
  const ContextStreams s = streams_of(ContextMap::parse("host->cpu").resolve("host"));
  EXPECT_EQ(s.compute.device, Device::cpu());
  EXPECT_EQ(s.compute.kind, StreamKind::Compute);
  EXPECT_EQ(s.copy.kind, StreamKind::Copy);
  EXPECT_EQ(s.compute.handle, nullptr);
  EXPECT_EQ(s.copy.handle, nullptr);
  EXPECT_STREQ(stream_kind_name(s.copy.kind), "copy");
  EXPECT_STREQ(stream_kind_name(s.compute.kind), "compute");
}

TEST(RuntimeStreamsCpu, CpuEventsAreAlwaysDone) {
  const ContextStreams s = streams_of({"cpu", Device::cpu()});
  Event e(Device::cpu());
  EXPECT_TRUE(e.done());  // never recorded
  e.record(s.compute);
  s.copy.wait(e);
  e.synchronize();
  s.copy.synchronize();
  EXPECT_TRUE(e.done());
  Event moved = std::move(e);
  EXPECT_TRUE(moved.done());
  EXPECT_EQ(moved.device(), Device::cpu());
}

TEST(RuntimeStreamsCpu, AnEventRecordsOnlyStreamsOfItsDevice) {
  Event e(Device::cpu());
  const Stream elsewhere{Device::cuda(0), StreamKind::Compute, nullptr};
  const std::string m = error_of<InternalError>([&] { e.record(elsewhere); });
  EXPECT_NE(m.find("an event of cpu cannot record a stream of cuda0"), std::string::npos) << m;
}

TEST(RuntimeStreamsCpu, StreamsAndEventsOfAMissingDeviceAreErrors) {
  const Device missing = Device::cuda(static_cast<int>(devices().size()) - 1);
  EXPECT_NE(error_of<DeviceError>([&] { Stream::of(missing, StreamKind::Copy); }).find(missing.str() + " does not exist"),
            std::string::npos);
  EXPECT_NE(error_of<DeviceError>([&] { Event e(missing); }).find(missing.str() + " does not exist"), std::string::npos);
  // A user name of a missing device: the same error, before any stream lane is handed out.
  EXPECT_NE(error_of<DeviceError>([&] { streams_of({"dev9", missing}); }).find(missing.str() + " does not exist"),
            std::string::npos);
}

}  // namespace
}  // namespace theon::runtime
