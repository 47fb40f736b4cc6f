// The CUDA runtime layer: one stream per device (every kernel, copy and free of a device
// is ordered on it), a caching allocator per device (freed blocks are kept, bucketed by
// size, and reused in stream order, so a steady-state call allocates nothing from the
// driver), and a caching pool of page-locked host blocks for staging and host outputs.
#pragma once
#include "util/device_ops.hpp"

#include <cuda_runtime.h>

#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace theon::backends::cuda {

class CudaRuntime final : public detail::DeviceOps {
 public:
  static CudaRuntime& instance();

  std::shared_ptr<Buffer> allocate(Device device, size_t bytes) override;
  std::shared_ptr<Buffer> allocate_pinned(size_t bytes) override;
  void copy(void* dst, Device dst_device, const void* src, Device src_device, size_t bytes) override;
  void zero(void* dst, Device device, size_t bytes) override;
  void synchronize(Device device) override;
  DeviceMemoryStats stats(Device device) override;
  void empty_cache(Device device) override;

  /// The device's stream (created on first use; also makes the device current).
  cudaStream_t stream(int device);
  int device_count() const { return device_count_; }

 private:
  CudaRuntime();
  struct Block {
    size_t size;  // rounded size
    int device;
    bool cached;  // returns to the free lists when released (gpu_memory_cache)
  };
  struct PerDevice {
    cudaStream_t stream = nullptr;
    std::multimap<size_t, void*> free;  // rounded size -> block
    DeviceMemoryStats stats;
  };
  static void free_device_block(void* p);
  static void free_pinned_block(void* p);
  void release(void* p);
  void release_pinned(void* p);
  PerDevice& per_device(int device);

  int device_count_ = 0;
  std::mutex mu_;
  std::vector<PerDevice> devices_;
  std::unordered_map<void*, Block> blocks_;        // live and cached device blocks
  std::multimap<size_t, void*> pinned_free_;       // rounded size -> pinned block
  std::unordered_map<void*, size_t> pinned_sizes_;
  size_t pinned_cached_ = 0;
};

}  // namespace theon::backends::cuda
