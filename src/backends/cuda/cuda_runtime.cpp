#include "backends/cuda/cuda_runtime.hpp"

#include "backends/cuda/cuda_check.hpp"
#include "util/checked_size.hpp"

#include <theon/config.hpp>

#include <algorithm>

namespace theon::backends::cuda {

namespace {

// Round to a multiple of 512 bytes below 1 MiB and of 2 MiB above, so blocks of nearby
// sizes (a new batch size) are served from the cache.
size_t round_size(size_t bytes) {
  bytes = std::max<size_t>(bytes, 1);
  if (bytes > (size_t{1} << 62)) return bytes;  // no device has that much: cudaMalloc fails (no wrap-around)
  if (bytes < (1u << 20)) return (bytes + 511) / 512 * 512;
  return (bytes + (2u << 20) - 1) / (2u << 20) * (2u << 20);
}

// A cached block is reused only for requests it does not waste more than half of.
bool fits(size_t block, size_t want) { return block >= want && block <= want * 2; }

constexpr size_t kPinnedCacheLimit = size_t(1) << 30;  // bytes of unused pinned blocks kept

}  // namespace

CudaRuntime& CudaRuntime::instance() {
  static CudaRuntime* rt = new CudaRuntime();  // never destroyed: buffers may outlive statics
  return *rt;
}

CudaRuntime::CudaRuntime() {
  if (cudaGetDeviceCount(&device_count_) != cudaSuccess) device_count_ = 0;
  devices_.resize(static_cast<size_t>(std::max(device_count_, 0)));
}

CudaRuntime::PerDevice& CudaRuntime::per_device(int device) {
  if (device < 0 || device >= device_count_)
    throw DeviceError("cuda" + std::to_string(device) + " does not exist (" + std::to_string(device_count_) +
                      " CUDA device(s) present)");
  return devices_[static_cast<size_t>(device)];
}

cudaStream_t CudaRuntime::stream(int device) {
  std::lock_guard<std::mutex> lock(mu_);
  PerDevice& d = per_device(device);
  THEON_CUDA_CHECK(cudaSetDevice(device));
  // A blocking stream: ordered after the legacy default stream, which is where DLPack
  // producers (torch, CuPy) are asked to order their pending writes to arrays Theon reads.
  if (!d.stream) THEON_CUDA_CHECK(cudaStreamCreateWithFlags(&d.stream, cudaStreamDefault));
  return d.stream;
}

std::shared_ptr<Buffer> CudaRuntime::allocate(Device device, size_t bytes) {
  if (!device.is_cuda()) throw InternalError("CudaRuntime::allocate: not a CUDA device: " + device.str());
  // Without the cache (gpu_memory_cache=False, for compute-sanitizer) a block is its exact
  // size and goes back to the driver when freed, so an overrun past a tensor is reported.
  const bool caching = config().gpu_memory_cache;
  const size_t size = caching ? round_size(bytes) : std::max<size_t>(bytes, 1);
  void* p = nullptr;
  if (caching) {
    std::lock_guard<std::mutex> lock(mu_);
    PerDevice& d = per_device(device.index);
    auto it = d.free.lower_bound(size);
    if (it != d.free.end() && fits(it->first, size)) {
      // Stream-ordered reuse: the block's last use was issued on this device's stream,
      // and so will every use of the new owner be.
      p = it->second;
      d.stats.cached -= it->first;
      d.free.erase(it);
      ++d.stats.reuses;
    }
  }
  if (!p) {
    THEON_CUDA_CHECK(cudaSetDevice(device.index));
    cudaError_t e = cudaMalloc(&p, size);
    if (e == cudaErrorMemoryAllocation) {
      cudaGetLastError();  // clear it, give the cache back, and try once more
      empty_cache(device);
      e = cudaMalloc(&p, size);
    }
    if (e == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      theon::detail::throw_out_of_memory(bytes, device, std::string(" (") + cudaGetErrorString(e) + "; in use " +
                                                     std::to_string(stats(device).in_use) + " bytes)");
    }
    if (e != cudaSuccess)
      throw DeviceError("allocating " + std::to_string(bytes) + " bytes on " + device.str() + " failed: " +
                        cudaGetErrorString(e));
    std::lock_guard<std::mutex> lock(mu_);
    blocks_[p] = {size, device.index, caching};
    ++per_device(device.index).stats.allocations;
  }
  std::lock_guard<std::mutex> lock(mu_);
  PerDevice& d = per_device(device.index);
  d.stats.in_use += blocks_[p].size;
  d.stats.peak = std::max(d.stats.peak, d.stats.in_use);
  return std::make_shared<Buffer>(p, bytes, &CudaRuntime::free_device_block, device);
}

void CudaRuntime::free_device_block(void* p) { instance().release(p); }

void CudaRuntime::release(void* p) {
  std::unique_lock<std::mutex> lock(mu_);
  auto it = blocks_.find(p);
  if (it == blocks_.end()) return;
  PerDevice& d = devices_[static_cast<size_t>(it->second.device)];
  d.stats.in_use -= it->second.size;
  if (!it->second.cached) {
    const int device = it->second.device;
    blocks_.erase(it);
    lock.unlock();
    // cudaFree waits for the device, so the block's pending work is done before it goes.
    cudaSetDevice(device);
    cudaFree(p);
    return;
  }
  d.stats.cached += it->second.size;
  d.free.emplace(it->second.size, p);
}

void CudaRuntime::empty_cache(Device device) {
  std::lock_guard<std::mutex> lock(mu_);
  PerDevice& d = per_device(device.index);
  cudaSetDevice(device.index);
  if (d.stream) cudaStreamSynchronize(d.stream);
  for (auto& [size, p] : d.free) {
    cudaFree(p);
    blocks_.erase(p);
  }
  d.free.clear();
  d.stats.cached = 0;
}

std::shared_ptr<Buffer> CudaRuntime::allocate_pinned(size_t bytes) {
  const size_t size = round_size(bytes);
  void* p = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = pinned_free_.lower_bound(size);
    if (it != pinned_free_.end() && fits(it->first, size)) {
      p = it->second;
      pinned_cached_ -= it->first;
      pinned_free_.erase(it);
    }
  }
  if (!p) {
    if (const cudaError_t e = cudaHostAlloc(&p, size, cudaHostAllocPortable); e != cudaSuccess) {
      cudaGetLastError();
      if (e == cudaErrorMemoryAllocation)
        theon::detail::throw_out_of_memory(bytes, Device::cpu(), " (pinned host memory for a device copy)");
      check(e, "cudaHostAlloc");
    }
    std::lock_guard<std::mutex> lock(mu_);
    pinned_sizes_[p] = size;
  }
  return std::make_shared<Buffer>(p, bytes, &CudaRuntime::free_pinned_block, Device::cpu());
}

void CudaRuntime::free_pinned_block(void* p) { instance().release_pinned(p); }

void CudaRuntime::release_pinned(void* p) {
  std::unique_lock<std::mutex> lock(mu_);
  const size_t size = pinned_sizes_.at(p);
  if (pinned_cached_ + size > kPinnedCacheLimit) {
    pinned_sizes_.erase(p);
    lock.unlock();
    cudaFreeHost(p);
    return;
  }
  pinned_cached_ += size;
  pinned_free_.emplace(size, p);
}

void CudaRuntime::copy(void* dst, Device dst_device, const void* src, Device src_device, size_t bytes) {
  if (bytes == 0) return;
  if (dst_device.is_cpu() && src_device.is_cpu()) throw InternalError("CudaRuntime::copy: host to host");
  const int dev = dst_device.is_cuda() ? dst_device.index : src_device.index;
  cudaStream_t s = stream(dev);
  cudaMemcpyKind kind = src_device.is_cpu() ? cudaMemcpyHostToDevice
                        : dst_device.is_cpu() ? cudaMemcpyDeviceToHost
                                              : cudaMemcpyDeviceToDevice;
  if (kind == cudaMemcpyDeviceToDevice && src_device.index != dst_device.index) {
    THEON_CUDA_CHECK(cudaMemcpyPeerAsync(dst, dst_device.index, src, src_device.index, bytes, s));
    THEON_CUDA_CHECK(cudaStreamSynchronize(stream(src_device.index)));  // the source's pending writes
    return;
  }
  THEON_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, s));
  if (kind == cudaMemcpyDeviceToHost) {
    // Pageable destinations are not safe to read until the copy ends; pinned ones are
    // waited for by the caller (synchronize) so several copies overlap.
    cudaPointerAttributes attr{};
    if (cudaPointerGetAttributes(&attr, dst) != cudaSuccess || attr.type != cudaMemoryTypeHost) {
      cudaGetLastError();
      THEON_CUDA_CHECK(cudaStreamSynchronize(s));
    }
  }
}

void CudaRuntime::zero(void* dst, Device device, size_t bytes) {
  if (bytes == 0) return;
  THEON_CUDA_CHECK(cudaMemsetAsync(dst, 0, bytes, stream(device.index)));
}

void CudaRuntime::synchronize(Device device) {
  if (!device.is_cuda()) return;
  THEON_CUDA_CHECK(cudaStreamSynchronize(stream(device.index)));
}

DeviceMemoryStats CudaRuntime::stats(Device device) {
  std::lock_guard<std::mutex> lock(mu_);
  return per_device(device.index).stats;
}

}  // namespace theon::backends::cuda
