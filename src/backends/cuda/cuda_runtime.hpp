// The CUDA runtime layer: per device, lanes of streams (lane 0: the device's own context's
// compute stream, on which DeviceOps' stream-less copies and frees are ordered, and its copy
// stream; each other context mapped to the device gets a lane of its own, runtime/streams.cpp),
// a pool of idle events, a caching allocator (freed blocks are kept, bucketed by size per home
// stream, and reused in that stream's order, so a steady-state call allocates nothing from the
// driver; uses on other streams are recorded and waited for on the device when the block is
// freed), and a caching pool of page-locked host blocks for staging and host outputs.
#pragma once
#include "runtime/device_streams.hpp"
#include "util/device_ops.hpp"

#include <cuda_runtime.h>

#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace theon::backends::cuda {

class CudaRuntime final : public detail::DeviceOps, public runtime::DeviceStreams {
 public:
  static CudaRuntime& instance();

  std::shared_ptr<Buffer> allocate(Device device, size_t bytes) override;
  std::shared_ptr<Buffer> allocate_on(Device device, size_t bytes, void* stream) override;
  void record_use(const Buffer& buffer, void* stream) override;
  std::shared_ptr<Buffer> allocate_pinned(size_t bytes) override;
  void copy(void* dst, Device dst_device, const void* src, Device src_device, size_t bytes) override;
  void copy_on(void* dst, Device dst_device, const void* src, Device src_device, size_t bytes, void* stream) override;
  void zero(void* dst, Device device, size_t bytes) override;
  void zero_on(void* dst, Device device, size_t bytes, void* stream) override;
  void synchronize(Device device) override;
  void synchronize_on(Device device, void* stream) override;
  void external_stream_wait(Device device, int64_t stream) override;
  void wait_for_external_stream(Device device, int64_t stream) override;
  DeviceMemoryStats stats(Device device) override;
  void empty_cache(Device device) override;
  detail::DeviceProperties properties(Device device) override;
  void* stream_handle(Device device, runtime::StreamKind kind, int lane) override;
  void* acquire_event(Device device) override;
  void release_event(Device device, void* event) override;
  void record_event(void* event, void* stream) override;
  void stream_wait_event(void* stream, void* event) override;
  void synchronize_event(void* event) override;
  bool event_done(void* event) override;

  /// The device's own compute stream, lane 0 (created on first use; also makes the device
  /// current).
  cudaStream_t stream(int device);
  /// The device's own copy stream (likewise).
  cudaStream_t copy_stream(int device);
  /// The stream of that kind of the device's `lane` (likewise).
  cudaStream_t lane_stream(int device, runtime::StreamKind kind, int lane);
  /// Makes `waiter` wait, on the device, for the work issued so far to `signaller` (both
  /// streams of this runtime's lanes, of any devices).
  void wait_for_stream(cudaStream_t waiter, cudaStream_t signaller);
  /// The device of one of these streams; -1 for any other stream (the legacy default stream,
  /// another library's).
  int device_of_stream(cudaStream_t stream);
  int device_count() const { return device_count_; }

 private:
  CudaRuntime();
  struct Block {
    size_t size;  // rounded size
    int device;
    bool cached;  // returns to the free lists when released (gpu_memory_cache)
    cudaStream_t home = nullptr;         // the stream it was allocated for
    std::vector<cudaStream_t> used_on;   // other streams that used it since (record_use)
  };
  struct Lane {
    cudaStream_t compute = nullptr;
    cudaStream_t copy = nullptr;
  };
  using FreeList = std::multimap<size_t, void*>;  // rounded size -> block
  struct PerDevice {
    std::vector<Lane> lanes;                  // [0]: the device's own context's streams
    std::map<cudaStream_t, FreeList> free;    // per home stream
    DeviceMemoryStats stats;
    std::vector<cudaEvent_t> events;    // idle events of this device (cross-stream waits)
    std::vector<signed char> peer;      // per other device: -1 not asked yet, 0 no peer access, 1 enabled
  };
  // A copy between two devices, ordered after the source's pending work and before the
  // source's later work (its block may be reused on the source stream once freed).
  void copy_between_devices(void* dst, int dst_device, const void* src, int src_device, size_t bytes);
  // The same on a caller's stream (of `given_device`, one of the two), ordered by the caller.
  void copy_between_devices_on(void* dst, int dst_device, const void* src, int src_device, size_t bytes,
                               cudaStream_t given, int given_device);
  bool peer_access(int dst_device, int src_device);
  // Makes `waiter`'s stream wait for the work issued so far to `signaller`'s stream.
  void stream_wait(int waiter, int signaller);
  // The same between any two streams of one device; the event is of `event_device`.
  void stream_wait(cudaStream_t waiter, cudaStream_t signaller, int event_device);
  cudaEvent_t take_event(int device);
  void give_event(int device, cudaEvent_t e);
  static void free_device_block(void* p);
  static void free_pinned_block(void* p);
  void release(void* p);
  void release_pinned(void* p);
  PerDevice& per_device(int device);
  // Counts a wait of the host for `device`'s stream (DeviceMemoryStats::host_waits).
  void count_host_wait(int device);
  // Creates the stream in `slot` of `device` once; the caller holds mu_.
  cudaStream_t stream_once(int device, cudaStream_t& slot);
  // The lane's stream of that kind, made on first use; the caller holds mu_.
  cudaStream_t lane_stream_locked(int device, runtime::StreamKind kind, int lane);

  int device_count_ = 0;
  std::mutex mu_;
  std::vector<PerDevice> devices_;
  std::unordered_map<void*, Block> blocks_;        // live and cached device blocks
  std::unordered_map<cudaStream_t, int> stream_devices_;  // every lane stream -> its device
  std::multimap<size_t, void*> pinned_free_;       // rounded size -> pinned block
  std::unordered_map<void*, size_t> pinned_sizes_;
  size_t pinned_cached_ = 0;
};

}  // namespace theon::backends::cuda
