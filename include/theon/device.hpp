// Devices: where an Array's memory lives and where a node runs.
//
//   theon::config().device = "cuda";             // functions compiled from now on use the GPU
//   auto st = theon::cuda_status();              // {ok, reason, device_count}
//   Array d = theon::to_device(a, Device::cuda(0));  // async copy on cuda0's stream
//   Array h = d.to_host();                       // waits for the copy, then a host array
//   theon::memory_stats(Device::cuda(0));        // in use / cached / peak bytes
//
// The CUDA backend is a separate library (libtheon_cuda.so) opened on first use, so a
// machine without CUDA (or without a driver) runs every CPU path, and the reason a GPU
// cannot be used is a value (cuda_status().reason), not a link error.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace theon {

class Array;

struct Device {
  enum class Kind : uint8_t { CPU, CUDA };
  Kind kind = Kind::CPU;
  int index = 0;

  static Device cpu() { return {}; }
  static Device cuda(int index = 0) { return {Kind::CUDA, index}; }
  /// "cpu", "cuda" (= cuda0), "cuda0", "cuda1", ...; throws ConfigError quoting the text otherwise.
  static Device parse(const std::string& text);
  bool is_cpu() const { return kind == Kind::CPU; }
  bool is_cuda() const { return kind == Kind::CUDA; }
  /// "cpu" or "cuda<N>".
  std::string str() const;
  friend bool operator==(const Device&, const Device&) = default;
};

/// Whether CUDA devices can be used, and why not.
struct CudaStatus {
  bool ok = false;
  std::string reason;     // empty when ok
  int device_count = 0;
};
/// Opens libtheon_cuda on the first call (later calls are free).
CudaStatus cuda_status();

/// The caching device allocator's counters for one device (all zero for the CPU).
struct DeviceMemoryStats {
  size_t in_use = 0;    // bytes held by live arrays
  size_t cached = 0;    // bytes freed by arrays and kept for reuse
  size_t peak = 0;      // most bytes in use at once
  int64_t allocations = 0;  // blocks taken from the driver
  int64_t reuses = 0;       // blocks served from the cache
  int64_t to_host_copies = 0;  // copies from the device to the host (outputs, to_host(), transfers)
  size_t to_host_bytes = 0;    // and their bytes
  int64_t host_waits = 0;      // times the host waited for the device's stream (synchronize, a pageable copy)
};
DeviceMemoryStats memory_stats(Device device = Device::cuda(0));
/// Returns cached (unused) device blocks to the driver.
void empty_cache(Device device = Device::cuda(0));

/// Waits on the host for all work issued so far to the device's stream (nothing for the
/// CPU, or when no device library is loaded).
void synchronize(Device device);

/// Streams of other libraries (DLPack consumers and producers), named as DLPack does: 1 the
/// legacy default stream, 2 the per-thread default stream, any other value a cudaStream_t of
/// `device`; -1 an unknown stream. Nothing happens for the CPU or when no device library is
/// loaded.
/// Makes `stream` wait (on the device, without blocking the host) for the work issued so far
/// to the device's own stream; -1: the host waits for the device's stream instead.
void external_stream_wait(Device device, int64_t stream);
/// Makes the device's stream wait for the work issued so far to `stream` (so memory freed now
/// is reused, in stream order, only after that work); -1: the host waits for the device.
void wait_for_external_stream(Device device, int64_t stream);

/// A contiguous copy of `a` on `device` (`a` itself when it is already there). Host to
/// device copies are issued on the device's stream; reading the result on the host waits.
Array to_device(const Array& a, Device device);

}  // namespace theon
