#include "backends/cuda/cuda_runtime.hpp"

#include "backends/cuda/cuda_check.hpp"
#include "util/checked_size.hpp"

#include <theon/config.hpp>

#include <algorithm>
#include <cstdio>

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

cudaStream_t CudaRuntime::stream_once(int device, cudaStream_t& slot) {
  THEON_CUDA_CHECK(cudaSetDevice(device));
  // A blocking stream: ordered after the legacy default stream, which is where DLPack
  // producers (torch, CuPy) are asked to order their pending writes to arrays Theon reads.
  // The copy stream is made alike, so its ordering with that stream is the compute stream's.
  if (!slot) {
    THEON_CUDA_CHECK(cudaStreamCreateWithFlags(&slot, cudaStreamDefault));
    stream_devices_[slot] = device;
  }
  return slot;
}

cudaStream_t CudaRuntime::lane_stream_locked(int device, runtime::StreamKind kind, int lane) {
  PerDevice& d = per_device(device);
  if (lane < 0 || lane > (1 << 20)) throw InternalError("CudaRuntime: stream lane " + std::to_string(lane) + " out of range");
  if (d.lanes.size() <= static_cast<size_t>(lane)) d.lanes.resize(static_cast<size_t>(lane) + 1);
  Lane& l = d.lanes[static_cast<size_t>(lane)];
  return stream_once(device, kind == runtime::StreamKind::Copy ? l.copy : l.compute);
}

cudaStream_t CudaRuntime::lane_stream(int device, runtime::StreamKind kind, int lane) {
  std::lock_guard<std::mutex> lock(mu_);
  return lane_stream_locked(device, kind, lane);
}

cudaStream_t CudaRuntime::stream(int device) { return lane_stream(device, runtime::StreamKind::Compute, 0); }

cudaStream_t CudaRuntime::copy_stream(int device) { return lane_stream(device, runtime::StreamKind::Copy, 0); }

int CudaRuntime::device_of_stream(cudaStream_t stream) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = stream_devices_.find(stream);
  return it == stream_devices_.end() ? -1 : it->second;
}

void CudaRuntime::wait_for_stream(cudaStream_t waiter, cudaStream_t signaller) {
  if (waiter == signaller) return;
  const int device = device_of_stream(signaller);
  if (device < 0 || device_of_stream(waiter) < 0)
    throw InternalError("CudaRuntime::wait_for_stream: not a stream of Theon's");
  stream_wait(waiter, signaller, device);
}

std::shared_ptr<Buffer> CudaRuntime::allocate(Device device, size_t bytes) { return allocate_on(device, bytes, nullptr); }

std::shared_ptr<Buffer> CudaRuntime::allocate_on(Device device, size_t bytes, void* stream_handle) {
  if (!device.is_cuda()) throw InternalError("CudaRuntime::allocate: not a CUDA device: " + device.str());
  auto home = static_cast<cudaStream_t>(stream_handle);
  if (!home) {
    home = stream(device.index);
  } else if (const int owner = device_of_stream(home); owner != device.index) {
    throw InternalError("CudaRuntime::allocate_on: the home stream is " +
                        (owner < 0 ? std::string("not a stream of Theon's") : "a stream of cuda" + std::to_string(owner)) +
                        ", not of " + device.str());
  }
  // Without the cache (gpu_memory_cache=False, for compute-sanitizer) a block is its exact
  // size and goes back to the driver when freed, so an overrun past a tensor is reported.
  const bool caching = config().gpu_memory_cache;
  const size_t size = caching ? round_size(bytes) : std::max<size_t>(bytes, 1);
  void* p = nullptr;
  if (caching) {
    std::lock_guard<std::mutex> lock(mu_);
    PerDevice& d = per_device(device.index);
    if (auto list = d.free.find(home); list != d.free.end()) {
      auto it = list->second.lower_bound(size);
      if (it != list->second.end() && fits(it->first, size)) {
        // Stream-ordered reuse: the block's last uses were issued on its home stream (or
        // the home stream was made to wait for them when it was freed), and so will every
        // use of the new owner be.
        p = it->second;
        d.stats.cached -= it->first;
        list->second.erase(it);
        ++d.stats.reuses;
      }
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
    blocks_[p] = {size, device.index, caching, home, {}};
    ++per_device(device.index).stats.allocations;
  }
  std::lock_guard<std::mutex> lock(mu_);
  PerDevice& d = per_device(device.index);
  Block& b = blocks_[p];
  b.home = home;
  b.used_on.clear();
  d.stats.in_use += b.size;
  d.stats.peak = std::max(d.stats.peak, d.stats.in_use);
  return std::make_shared<Buffer>(p, bytes, &CudaRuntime::free_device_block, device);
}

void CudaRuntime::record_use(const Buffer& buffer, void* stream_handle) {
  auto s = static_cast<cudaStream_t>(stream_handle);
  if (!s || !buffer.device().is_cuda()) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = blocks_.find(buffer.data());
  if (it == blocks_.end()) return;  // not the allocator's (a DLPack import): never reused by it
  Block& b = it->second;
  if (s == b.home || std::find(b.used_on.begin(), b.used_on.end(), s) != b.used_on.end()) return;
  if (stream_devices_.find(s) == stream_devices_.end())
    throw InternalError("CudaRuntime::record_use: not a stream of Theon's (use runtime::streams_of)");
  b.used_on.push_back(s);
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
  if (!it->second.used_on.empty()) {
    // Uses on other streams (record_use): the home stream waits, on the device, for the work
    // issued to them so far, so the block's next owner (ordered on the home stream) comes
    // after them. Enqueued: the host does not wait.
    const cudaStream_t home = it->second.home;
    std::vector<std::pair<cudaStream_t, int>> others;
    for (cudaStream_t s : it->second.used_on) others.emplace_back(s, stream_devices_.at(s));
    it->second.used_on.clear();
    lock.unlock();
    for (auto& [s, device] : others) {
      try {
        stream_wait(home, s, device);
      } catch (...) {  // a deleter must not throw: wait on the host instead
        cudaGetLastError();
        cudaStreamSynchronize(s);
      }
    }
    lock.lock();
    it = blocks_.find(p);
  }
  d.stats.cached += it->second.size;
  d.free[it->second.home].emplace(it->second.size, p);
}

void CudaRuntime::empty_cache(Device device) {
  std::lock_guard<std::mutex> lock(mu_);
  PerDevice& d = per_device(device.index);
  cudaSetDevice(device.index);
  for (Lane& l : d.lanes)  // a cached block may still be used by work on its home stream
    for (cudaStream_t s : {l.compute, l.copy})
      if (s) cudaStreamSynchronize(s);
  for (auto& [home, list] : d.free)
    for (auto& [size, p] : list) {
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
  copy_on(dst, dst_device, src, src_device, bytes, nullptr);
}

void CudaRuntime::copy_on(void* dst, Device dst_device, const void* src, Device src_device, size_t bytes,
                          void* stream_handle) {
  if (bytes == 0) return;
  if (dst_device.is_cpu() && src_device.is_cpu()) throw InternalError("CudaRuntime::copy: host to host");
  const int dev = dst_device.is_cuda() ? dst_device.index : src_device.index;
  auto given = static_cast<cudaStream_t>(stream_handle);
  int owner = dev;
  if (given) {
    owner = device_of_stream(given);
    const bool of_a_side = (dst_device.is_cuda() && owner == dst_device.index) ||
                           (src_device.is_cuda() && owner == src_device.index);
    if (!of_a_side)
      throw InternalError("CudaRuntime::copy_on: the stream is not one of Theon's streams of " + dst_device.str() +
                          " or " + src_device.str());
  }
  cudaStream_t s = given ? given : stream(dev);
  cudaMemcpyKind kind = src_device.is_cpu() ? cudaMemcpyHostToDevice
                        : dst_device.is_cpu() ? cudaMemcpyDeviceToHost
                                              : cudaMemcpyDeviceToDevice;
  if (kind == cudaMemcpyDeviceToDevice && src_device.index != dst_device.index) {
    if (given) copy_between_devices_on(dst, dst_device.index, src, src_device.index, bytes, given, owner);
    else copy_between_devices(dst, dst_device.index, src, src_device.index, bytes);
    return;
  }
  THEON_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, s));
  if (kind == cudaMemcpyDeviceToHost) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      DeviceMemoryStats& st = per_device(src_device.index).stats;
      ++st.to_host_copies;
      st.to_host_bytes += bytes;
    }
    // Pageable destinations are not safe to read until the copy ends; pinned ones are
    // waited for by the caller (synchronize, or an event) so several copies overlap.
    cudaPointerAttributes attr{};
    if (cudaPointerGetAttributes(&attr, dst) != cudaSuccess || attr.type != cudaMemoryTypeHost) {
      cudaGetLastError();
      count_host_wait(src_device.index);
      THEON_CUDA_CHECK(cudaStreamSynchronize(s));
    }
  }
}

cudaEvent_t CudaRuntime::take_event(int device) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    PerDevice& d = per_device(device);
    if (!d.events.empty()) {
      cudaEvent_t e = d.events.back();
      d.events.pop_back();
      return e;
    }
  }
  cudaEvent_t e = nullptr;
  THEON_CUDA_CHECK(cudaSetDevice(device));  // an event belongs to the device current at its creation
  THEON_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  return e;
}

void CudaRuntime::give_event(int device, cudaEvent_t e) {
  std::lock_guard<std::mutex> lock(mu_);
  per_device(device).events.push_back(e);
}

void CudaRuntime::stream_wait(int waiter, int signaller) {
  stream_wait(stream(waiter), stream(signaller), signaller);
}

void CudaRuntime::stream_wait(cudaStream_t waiter, cudaStream_t signaller, int event_device) {
  cudaEvent_t e = take_event(event_device);
  // cudaStreamWaitEvent waits for the event's record as it is when called: the event can be
  // recorded again (taken by another wait) as soon as the wait is enqueued.
  cudaError_t r = cudaEventRecord(e, signaller);
  if (r == cudaSuccess) r = cudaStreamWaitEvent(waiter, e, 0);
  give_event(event_device, e);
  check(r, "cudaEventRecord/cudaStreamWaitEvent");
}

namespace {

// A DLPack stream value as a cudaStream_t (1 and 2 are CUDA's own cudaStreamLegacy and
// cudaStreamPerThread handles).
cudaStream_t external_stream(int64_t stream) {
  if (stream == 1) return cudaStreamLegacy;
  if (stream == 2) return cudaStreamPerThread;
  if (stream <= 0) throw ValueError("a CUDA stream for DLPack must be -1, 1, 2 or a stream handle, got " +
                                    std::to_string(stream) + " (0 is ambiguous and not allowed)");
  return reinterpret_cast<cudaStream_t>(static_cast<intptr_t>(stream));
}

}  // namespace

void CudaRuntime::external_stream_wait(Device device, int64_t s) {
  if (!device.is_cuda()) return;
  if (s == -1) {
    synchronize(device);
    return;
  }
  stream_wait(external_stream(s), stream(device.index), device.index);
}

void CudaRuntime::wait_for_external_stream(Device device, int64_t s) {
  if (!device.is_cuda()) return;
  if (s == -1) {  // the consumer's stream is not known: wait for all work on the device
    THEON_CUDA_CHECK(cudaSetDevice(device.index));
    THEON_CUDA_CHECK(cudaDeviceSynchronize());
    return;
  }
  stream_wait(stream(device.index), external_stream(s), device.index);
}

bool CudaRuntime::peer_access(int dst_device, int src_device) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    PerDevice& d = per_device(dst_device);
    per_device(src_device);
    if (d.peer.empty()) d.peer.assign(static_cast<size_t>(device_count_), -1);
    if (const signed char known = d.peer[static_cast<size_t>(src_device)]; known >= 0) return known == 1;
  }
  // Asked once per (destination, source) pair; the destination device reads the source's memory.
  int can = 0;
  if (cudaDeviceCanAccessPeer(&can, dst_device, src_device) != cudaSuccess) {
    cudaGetLastError();
    can = 0;
  }
  if (can) {
    THEON_CUDA_CHECK(cudaSetDevice(dst_device));
    const cudaError_t e = cudaDeviceEnablePeerAccess(src_device, 0);
    if (e == cudaErrorPeerAccessAlreadyEnabled) cudaGetLastError();  // enabled before (by us or the user): fine
    else if (e != cudaSuccess) {
      cudaGetLastError();
      can = 0;  // not usable after all: copies are staged through the host
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  per_device(dst_device).peer[static_cast<size_t>(src_device)] = can ? 1 : 0;
  return can != 0;
}

void CudaRuntime::copy_between_devices(void* dst, int dst_device, const void* src, int src_device, size_t bytes) {
  cudaStream_t ds = stream(dst_device);
  if (peer_access(dst_device, src_device)) {
    // The source's pending writes, then the copy on the destination's stream, then the
    // source's stream waits for the copy: a block freed by the source (back to its cache,
    // reused in its stream order) is not overwritten while the copy still reads it.
    stream_wait(dst_device, src_device);
    THEON_CUDA_CHECK(cudaMemcpyPeerAsync(dst, dst_device, src, src_device, bytes, ds));
    stream_wait(src_device, dst_device);
    return;
  }
  // No peer access: through a pinned host block, device to host on the source's stream, then
  // host to device on the destination's. The block goes back to the pinned pool only when the
  // second copy has read it.
  std::shared_ptr<Buffer> staging = allocate_pinned(bytes);
  cudaStream_t ss = stream(src_device);
  THEON_CUDA_CHECK(cudaMemcpyAsync(staging->data(), src, bytes, cudaMemcpyDeviceToHost, ss));
  try {
    stream_wait(dst_device, src_device);
    THEON_CUDA_CHECK(cudaMemcpyAsync(dst, staging->data(), bytes, cudaMemcpyHostToDevice, ds));
    cudaEvent_t done = take_event(dst_device);
    cudaError_t r = cudaEventRecord(done, ds);
    if (r == cudaSuccess) r = cudaEventSynchronize(done);
    give_event(dst_device, done);
    check(r, "cudaEventRecord/cudaEventSynchronize (staged cross-device copy)");
  } catch (...) {
    cudaStreamSynchronize(ss);  // the staging block must not be reused while a copy may still use it
    cudaStreamSynchronize(ds);
    throw;
  }
  // The source was read by the first copy, ordered on its own stream: nothing more to wait for.
}

void CudaRuntime::copy_between_devices_on(void* dst, int dst_device, const void* src, int src_device, size_t bytes,
                                          cudaStream_t given, int given_device) {
  if (peer_access(dst_device, src_device)) {
    // The caller ordered `given` after the source's writers and records the buffers' use on it.
    THEON_CUDA_CHECK(cudaMemcpyPeerAsync(dst, dst_device, src, src_device, bytes, given));
    return;
  }
  // Staged through a pinned host block: each half on a stream of its own device (`given` on
  // its side), each after the work issued before it; the host waits for the second half so
  // the staging block can go back to its pool, and with it for the whole copy.
  cudaStream_t ss = given_device == src_device ? given : stream(src_device);
  cudaStream_t ds = given_device == dst_device ? given : stream(dst_device);
  std::shared_ptr<Buffer> staging = allocate_pinned(bytes);
  try {
    if (ss != given) stream_wait(ss, given, given_device);
    THEON_CUDA_CHECK(cudaMemcpyAsync(staging->data(), src, bytes, cudaMemcpyDeviceToHost, ss));
    stream_wait(ds, ss, src_device);
    THEON_CUDA_CHECK(cudaMemcpyAsync(dst, staging->data(), bytes, cudaMemcpyHostToDevice, ds));
    count_host_wait(dst_device);
    THEON_CUDA_CHECK(cudaStreamSynchronize(ds));
  } catch (...) {
    cudaStreamSynchronize(ss);  // the staging block must not be reused while a copy may still use it
    cudaStreamSynchronize(ds);
    throw;
  }
}

void CudaRuntime::zero(void* dst, Device device, size_t bytes) { zero_on(dst, device, bytes, nullptr); }

void CudaRuntime::zero_on(void* dst, Device device, size_t bytes, void* stream_handle) {
  if (bytes == 0) return;
  auto s = static_cast<cudaStream_t>(stream_handle);
  if (!s) s = stream(device.index);
  else if (device_of_stream(s) != device.index)
    throw InternalError("CudaRuntime::zero_on: the stream is not one of Theon's streams of " + device.str());
  THEON_CUDA_CHECK(cudaMemsetAsync(dst, 0, bytes, s));
}

void CudaRuntime::count_host_wait(int device) {
  std::lock_guard<std::mutex> lock(mu_);
  ++per_device(device).stats.host_waits;
}

void CudaRuntime::synchronize(Device device) {
  if (!device.is_cuda()) return;
  count_host_wait(device.index);
  THEON_CUDA_CHECK(cudaStreamSynchronize(stream(device.index)));
}

void CudaRuntime::synchronize_on(Device device, void* stream) {
  if (!device.is_cuda()) return;
  if (!stream) return synchronize(device);
  count_host_wait(device.index);
  THEON_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
}

detail::DeviceProperties CudaRuntime::properties(Device device) {
  if (!device.is_cuda()) throw InternalError("CudaRuntime::properties: not a CUDA device: " + device.str());
  per_device(device.index);  // a DeviceError naming the device count for one that does not exist
  cudaDeviceProp prop{};
  THEON_CUDA_CHECK(cudaGetDeviceProperties(&prop, device.index));
  char bus_id[32];
  std::snprintf(bus_id, sizeof bus_id, "%04x:%02x:%02x.0", static_cast<unsigned>(prop.pciDomainID),
                static_cast<unsigned>(prop.pciBusID), static_cast<unsigned>(prop.pciDeviceID));
  return {prop.name, bus_id, prop.totalGlobalMem, prop.major * 10 + prop.minor, prop.multiProcessorCount};
}

void* CudaRuntime::stream_handle(Device device, runtime::StreamKind kind, int lane) {
  if (!device.is_cuda()) throw InternalError("CudaRuntime::stream_handle: not a CUDA device: " + device.str());
  return lane_stream(device.index, kind, lane);
}

void* CudaRuntime::acquire_event(Device device) {
  if (!device.is_cuda()) throw InternalError("CudaRuntime::acquire_event: not a CUDA device: " + device.str());
  return take_event(device.index);
}

void CudaRuntime::release_event(Device device, void* event) {
  // Back to the pool even while its record is pending: every use records it again first.
  give_event(device.index, static_cast<cudaEvent_t>(event));
}

void CudaRuntime::record_event(void* event, void* stream) {
  THEON_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(event), static_cast<cudaStream_t>(stream)));
}

void CudaRuntime::stream_wait_event(void* stream, void* event) {
  THEON_CUDA_CHECK(cudaStreamWaitEvent(static_cast<cudaStream_t>(stream), static_cast<cudaEvent_t>(event), 0));
}

void CudaRuntime::synchronize_event(void* event) {
  THEON_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(event)));
}

bool CudaRuntime::event_done(void* event) {
  const cudaError_t e = cudaEventQuery(static_cast<cudaEvent_t>(event));
  if (e == cudaErrorNotReady) {
    cudaGetLastError();  // not an error: the work is still running
    return false;
  }
  THEON_CUDA_CHECK(e);
  return true;
}

DeviceMemoryStats CudaRuntime::stats(Device device) {
  std::lock_guard<std::mutex> lock(mu_);
  return per_device(device.index).stats;
}

}  // namespace theon::backends::cuda
