// Contexts on a CUDA device (issue 28): each context has its own streams, a kernel issues its
// work on the stream of the ExecContext it is given, library handles are per (device, stream),
// the caching allocator stays correct when a block is used on another stream, and copies run
// on a context's copy stream ordered by events. Label gpu; the gpu-sim label runs it in every
// stream mode, where a missing wait shows as stale data (SIM_STREAMS=deferred) or as wrong data
// for some seed (random). The deferred-only checks say what a missing wait would look like.
#include "backends/backend.hpp"
#include "backends/cuda/cublas_handles.hpp"
#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/cuda_runtime.hpp"
#include "backends/cuda/gpu_test_support.hpp"
#include "backends/cuda/sim_counters.hpp"
#include "runtime/streams.hpp"

#include <theon/theon.hpp>

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace theon::backends::cuda {
namespace {

using runtime::Context;
using runtime::ContextStreams;
using runtime::Event;
using runtime::Stream;
using runtime::streams_of;

const Device kGpu0 = Device::cuda(0);

cudaStream_t cu(const Stream& s) { return static_cast<cudaStream_t>(s.handle); }

ExecContext on(const Context& c) { return {c, streams_of(c).compute, 0}; }

bool deferred() { return ::theon::testing::under_gpu_sim() && ::theon::testing::sim_streams_are("deferred"); }

// `a` on cuda0 (the copy ends before this returns).
Array upload(const Array& a) {
  Array d = to_device(a, kGpu0);
  synchronize(kGpu0);
  return d;
}

// A float32 array on cuda0 whose home is `s`, zeroed there, the zeros waited for.
Array zeros_on(const Shape& shape, const Stream& s) {
  const size_t bytes = static_cast<size_t>(shape_size(shape)) * sizeof(float);
  Array a(CudaRuntime::instance().allocate_on(kGpu0, bytes, s.handle), DType::Float32, shape, contiguous_strides(shape));
  EXPECT_EQ(cudaMemsetAsync(a.data(), 0, bytes, cu(s)), cudaSuccess);
  s.synchronize();
  return a;
}

// The values of the float32 device array `a` read on stream `s` alone: a copy into pinned
// memory issued on `s`, then only `s` is waited for. Work of other streams is not waited for.
std::vector<float> read_on(const Array& a, const Stream& s) {
  std::shared_ptr<Buffer> host = CudaRuntime::instance().allocate_pinned(a.nbytes());
  std::memset(host->data(), 0, a.nbytes());
  EXPECT_EQ(cudaMemcpyAsync(host->data(), a.data(), a.nbytes(), cudaMemcpyDeviceToHost, cu(s)), cudaSuccess);
  s.synchronize();
  const auto* p = static_cast<const float*>(host->data());
  return std::vector<float>(p, p + a.size());
}

std::vector<float> values(const Array& host) { return host.astype(DType::Float32).contiguous().to_vector<float>(); }

TEST(ContextStreamsGpu, AKernelRunsOnItsContextsStreamAndOnNoOther) {
  THEON_REQUIRE_CUDA_DEVICES(1);
  const Context a{"kernels_a", kGpu0}, b{"kernels_b", kGpu0};
  const ContextStreams sa = streams_of(a), sb = streams_of(b);
  const Stream own = Stream::of(kGpu0, runtime::StreamKind::Compute);
  Var x = tensor::matrix("x", DType::Float32);
  Var y = x + x;
  const graph::Apply& node = *y.node()->owner;
  const Array host = Array::arange(12, DType::Float32).reshape({3, 4});
  const Array dx = upload(host);
  std::vector<Array> out = {zeros_on({3, 4}, sa.compute)};
  ::theon::testing::SimCounters sim;
  if (::theon::testing::under_gpu_sim()) {
    EXPECT_TRUE(sim.available());
  }
  sim.reset();
  backend().kernel(node).run(nullptr, on(a), node, {dx, dx}, out);
  if (deferred()) {
    // Queued on a's stream: b's stream and the device's own stream do not run it.
    EXPECT_EQ(read_on(out[0], sb.compute), std::vector<float>(12, 0.f));
    EXPECT_EQ(read_on(out[0], own), std::vector<float>(12, 0.f));
  }
  sim.reset();
  sa.compute.synchronize();
  const theon_gpu_sim_counters c = sim.read();
  if (deferred()) {
    EXPECT_EQ(c.host_waits, 1u);
    EXPECT_GE(sim.pending_at(0, sa.compute.handle), 1u);  // the launch was queued there
    EXPECT_EQ(sim.pending_at(0, sb.compute.handle), 0u);
    EXPECT_EQ(sim.pending_at(0, own.handle), 0u);
  }
  std::vector<float> want = values(host);
  for (float& v : want) v *= 2;
  EXPECT_EQ(read_on(out[0], sb.compute), want);
}

// The pattern the executor follows for a call spanning two contexts: each context's kernels
// are enqueued on its own stream, b's stream waits for a's event (no host wait), and the host
// waits once, at the end. The simulator's counters see one host synchronisation with work of
// both contexts still queued (deferred), and the results are right in every mode.
TEST(ContextStreamsGpu, TwoContextsWorkIsAllEnqueuedBeforeOneHostWait) {
  THEON_REQUIRE_CUDA_DEVICES(1);
  const Device other = cuda_status().device_count >= 2 ? Device::cuda(1) : kGpu0;
  const Context a{"enqueue_a", kGpu0}, b{"enqueue_b", other};
  const ContextStreams sa = streams_of(a), sb = streams_of(b);
  Var x = tensor::vector("x", DType::Float32);
  Var y = x + x;
  const graph::Apply& node = *y.node()->owner;
  const Array host = Array::arange(64, DType::Float32);
  const Array dx = upload(host);
  Array mid(CudaRuntime::instance().allocate_on(kGpu0, host.nbytes(), sa.compute.handle), DType::Float32, {64},
            contiguous_strides({64}));
  Array on_b = other == kGpu0 ? Array() : to_device(Array::zeros({64}, DType::Float32), other);
  synchronize(other);
  ::theon::testing::SimCounters sim;
  sim.reset();
  std::vector<Array> out_a = {mid};
  backend().kernel(node).run(nullptr, on(a), node, {dx, dx}, out_a);  // a: mid = 2x
  Event done_a(kGpu0);
  done_a.record(sa.compute);
  sb.compute.wait(done_a);
  Array src = mid;
  if (on_b.defined()) {  // b reads a's output from its own device: a copy on b's stream
    CudaRuntime::instance().copy_on(on_b.data(), other, mid.data(), kGpu0, mid.nbytes(), sb.compute.handle);
    CudaRuntime::instance().record_use(*mid.buffer(), sb.compute.handle);
    src = on_b;
  } else {
    CudaRuntime::instance().record_use(*mid.buffer(), sb.compute.handle);  // read in place on b's stream
  }
  Array out(CudaRuntime::instance().allocate_on(other, host.nbytes(), sb.compute.handle), DType::Float32, {64},
            contiguous_strides({64}));
  std::vector<Array> out_b = {out};
  backend().kernel(node).run(nullptr, on(b), node, {src, src}, out_b);  // b: out = 2 * mid
  std::shared_ptr<Buffer> pinned = CudaRuntime::instance().allocate_pinned(host.nbytes());
  ASSERT_EQ(cudaMemcpyAsync(pinned->data(), out.data(), host.nbytes(), cudaMemcpyDeviceToHost, cu(sb.compute)),
            cudaSuccess);
  Event done_b(other);
  done_b.record(sb.compute);
  done_b.synchronize();  // the single host wait
  const theon_gpu_sim_counters c = sim.read();
  int peer = 0;
  if (on_b.defined()) {
    ASSERT_EQ(cudaDeviceCanAccessPeer(&peer, other.index, 0), cudaSuccess);
  }
  const bool staged = on_b.defined() && !peer;  // a cross-device copy through host memory waits for itself
  if (sim.available()) {
    EXPECT_EQ(c.host_syncs, staged ? 2u : 1u);
    EXPECT_EQ(sim.call_at(c.host_syncs - 1), "cudaEventSynchronize");
    EXPECT_GE(c.launches, 2u);
    if (deferred()) {
      EXPECT_EQ(c.host_waits, c.host_syncs);
      const uint64_t last = c.host_syncs - 1;
      if (!staged) {
        EXPECT_GE(sim.pending_at(last, sa.compute.handle), 1u) << "a's kernel ran before the wait";
      }
      EXPECT_GE(sim.pending_at(last, sb.compute.handle), staged ? 1u : 2u) << "b's work ran before the wait";
    }
  }
  const auto* p = static_cast<const float*>(pinned->data());
  for (int i = 0; i < 64; ++i) ASSERT_EQ(p[i], 4.f * static_cast<float>(i)) << "element " << i;
}

TEST(ContextStreamsGpu, AKernelGivenAnotherDevicesStreamOrNoneIsAnInternalError) {
  THEON_REQUIRE_CUDA_DEVICES(1);
  Var x = tensor::vector("x", DType::Float32);
  Var y = x + x;
  const graph::Apply& node = *y.node()->owner;
  const Array dx = upload(Array::from_vector<float>({1, 2, 3}, Shape{3}));
  std::vector<Array> out = {to_device(Array::zeros({3}, DType::Float32), kGpu0)};
  const ExecContext none{{"nowhere", kGpu0}, {kGpu0, runtime::StreamKind::Compute, nullptr}, 0};
  try {
    backend().kernel(node).run(nullptr, none, node, {dx, dx}, out);
    ADD_FAILURE() << "no error without a stream";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("no stream (context 'nowhere')"), std::string::npos) << e.what();
  }
  if (cuda_status().device_count < 2) return;
  try {
    backend().kernel(node).run(nullptr, on({"elsewhere", Device::cuda(1)}), node, {dx, dx}, out);
    ADD_FAILURE() << "no error for a stream of cuda1";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("arrays on cuda0 was given a stream of cuda1"), std::string::npos) << e.what();
  }
}

// Two contexts' GEMMs on one device: each through a cuBLAS handle bound to its own stream
// (with its own workspace); each result is read on its context's stream alone.
TEST(ContextStreamsGpu, TwoContextsGemmsUseHandlesOfTheirOwnStreams) {
  THEON_REQUIRE_CUDA_DEVICES(1);
  const Context a{"gemm_a", kGpu0}, b{"gemm_b", kGpu0};
  const ContextStreams sa = streams_of(a), sb = streams_of(b);
  Var x = tensor::matrix("x", DType::Float32), w = tensor::matrix("w", DType::Float32);
  Var y = tensor::dot(x, w);
  const graph::Apply& node = *y.node()->owner;
  const Array ha = Array::rand({8, 16}, 1, DType::Float32), hb = Array::rand({8, 16}, 2, DType::Float32);
  const Array hw = Array::rand({16, 4}, 3, DType::Float32);
  const Array da = upload(ha), db = upload(hb), dw = upload(hw);
  std::vector<Array> out_a = {zeros_on({8, 4}, sa.compute)}, out_b = {zeros_on({8, 4}, sb.compute)};
  const Kernel& k = backend().kernel(node);
  k.run(nullptr, on(a), node, {da, dw}, out_a);
  k.run(nullptr, on(b), node, {db, dw}, out_b);
  EXPECT_NE(cublas_handle(0, cu(sa.compute)), cublas_handle(0, cu(sb.compute)));
  EXPECT_NE(cublas_handle(0, cu(sa.compute)), cublas_handle(0, CudaRuntime::instance().stream(0)));
  EXPECT_NE(cublaslt_handle(0, cu(sa.compute)).workspace, cublaslt_handle(0, cu(sb.compute)).workspace);
  std::vector<Array> want_a = {Array::empty({8, 4}, DType::Float32)}, want_b = {Array::empty({8, 4}, DType::Float32)};
  cpu_backend().kernel(node).run(nullptr, node, {ha, hw}, want_a);
  cpu_backend().kernel(node).run(nullptr, node, {hb, hw}, want_b);
  const std::vector<float> got_a = read_on(out_a[0], sa.compute), got_b = read_on(out_b[0], sb.compute);
  const std::vector<float> ref_a = values(want_a[0]), ref_b = values(want_b[0]);
  for (size_t i = 0; i < ref_a.size(); ++i) {
    EXPECT_NEAR(got_a[i], ref_a[i], 1e-4f * (1 + std::abs(ref_a[i]))) << "a, element " << i;
    EXPECT_NEAR(got_b[i], ref_b[i], 1e-4f * (1 + std::abs(ref_b[i]))) << "b, element " << i;
  }
}

constexpr size_t kBytes = size_t(1) << 16;
constexpr unsigned char kOld = 0x11, kNew = 0x5a;

bool all_bytes_are(const Buffer& host, unsigned char value) {
  const auto* p = static_cast<const unsigned char*>(host.data());
  return std::all_of(p, p + kBytes, [value](unsigned char v) { return v == value; });
}

// A block homed on a's stream is read on b's stream, freed, and reused on a's stream, whose
// next owner overwrites it. With record_use the overwrite waits for b's read; without it
// (deferred streams, a's queue run first) b reads the new owner's bytes.
void reuse_after_a_use_on_another_stream(bool record, std::shared_ptr<Buffer>& host_out) {
  CudaRuntime& rt = CudaRuntime::instance();
  const Stream sa = streams_of({record ? "reuse_a" : "reuse_a_unrecorded", kGpu0}).compute;
  const Stream sb = streams_of({record ? "reuse_b" : "reuse_b_unrecorded", kGpu0}).compute;
  std::shared_ptr<Buffer> block = rt.allocate_on(kGpu0, kBytes, sa.handle);
  void* const p = block->data();
  ASSERT_EQ(cudaMemsetAsync(p, kOld, kBytes, cu(sa)), cudaSuccess);
  Event written(kGpu0);
  written.record(sa);
  sb.wait(written);
  host_out = rt.allocate_pinned(kBytes);
  std::memset(host_out->data(), 0, kBytes);
  ASSERT_EQ(cudaMemcpyAsync(host_out->data(), p, kBytes, cudaMemcpyDeviceToHost, cu(sb)), cudaSuccess);
  if (record) rt.record_use(*block, sb.handle);
  block.reset();
  std::shared_ptr<Buffer> again = rt.allocate_on(kGpu0, kBytes, sa.handle);
  if (config().gpu_memory_cache) {
    EXPECT_EQ(again->data(), p);  // reused in a's order
    EXPECT_NE(rt.allocate_on(kGpu0, kBytes, sb.handle)->data(), p) << "a block of a's list served b's stream";
  }
  ASSERT_EQ(cudaMemsetAsync(again->data(), kNew, kBytes, cu(sa)), cudaSuccess);
  sa.synchronize();
  sb.synchronize();
}

TEST(ContextStreamsGpu, AReusedBlockIsNotOverwrittenBeforeAUseOnAnotherStreamRan) {
  THEON_REQUIRE_CUDA_DEVICES(1);
  std::shared_ptr<Buffer> host;
  reuse_after_a_use_on_another_stream(true, host);
  EXPECT_TRUE(all_bytes_are(*host, kOld)) << "the copy on b's stream read the next owner's bytes";
}

TEST(ContextStreamsGpu, WithoutRecordUseTheNextOwnerOverwritesTheBlockFirstUnderDeferredStreams) {
  THEON_REQUIRE_CUDA_DEVICES(1);
  if (!deferred() || !config().gpu_memory_cache) return;  // shows only where work stays queued
  std::shared_ptr<Buffer> host;
  reuse_after_a_use_on_another_stream(false, host);
  EXPECT_TRUE(all_bytes_are(*host, kNew));  // what record_use prevents
}

// A context's compute stream writes a buffer; its copy stream, after an event, copies it to
// another device (peer or staged, per SIM_P2P) and to pinned host memory; the readers wait on
// an event recorded after the copy.
TEST(ContextStreamsGpu, ACopyOnAContextsCopyStreamIsOrderedByEvents) {
  THEON_REQUIRE_CUDA_DEVICES(1);
  CudaRuntime& rt = CudaRuntime::instance();
  const ContextStreams s = streams_of({"copier", kGpu0});
  std::shared_ptr<Buffer> src = rt.allocate_on(kGpu0, kBytes, s.compute.handle);
  ASSERT_EQ(cudaMemsetAsync(src->data(), kOld, kBytes, cu(s.compute)), cudaSuccess);
  s.compute.synchronize();
  ASSERT_EQ(cudaMemsetAsync(src->data(), kNew, kBytes, cu(s.compute)), cudaSuccess);  // the "kernel"
  Event written(kGpu0);
  written.record(s.compute);
  s.copy.wait(written);
  std::shared_ptr<Buffer> pinned = rt.allocate_pinned(kBytes);
  std::memset(pinned->data(), 0, kBytes);
  rt.copy_on(pinned->data(), Device::cpu(), src->data(), kGpu0, kBytes, s.copy.handle);
  rt.record_use(*src, s.copy.handle);
  Event copied(kGpu0);
  copied.record(s.copy);
  copied.synchronize();
  EXPECT_TRUE(all_bytes_are(*pinned, kNew));
  // Into pageable memory the copy has ended on return.
  std::vector<unsigned char> pageable(kBytes, 0);
  rt.copy_on(pageable.data(), Device::cpu(), src->data(), kGpu0, kBytes, s.copy.handle);
  EXPECT_TRUE(std::all_of(pageable.begin(), pageable.end(), [](unsigned char v) { return v == kNew; }));
  if (cuda_status().device_count < 2) return;
  const Device gpu1 = Device::cuda(1);
  std::shared_ptr<Buffer> dst = rt.allocate(gpu1, kBytes);  // home: cuda1's own stream
  rt.copy_on(dst->data(), gpu1, src->data(), kGpu0, kBytes, s.copy.handle);
  rt.record_use(*src, s.copy.handle);
  rt.record_use(*dst, s.copy.handle);
  Event across(kGpu0);
  across.record(s.copy);
  const Stream reader = Stream::of(gpu1, runtime::StreamKind::Compute);
  reader.wait(across);
  std::shared_ptr<Buffer> back = rt.allocate_pinned(kBytes);
  std::memset(back->data(), 0, kBytes);
  ASSERT_EQ(cudaMemcpyAsync(back->data(), dst->data(), kBytes, cudaMemcpyDeviceToHost, cu(reader)), cudaSuccess);
  reader.synchronize();
  EXPECT_TRUE(all_bytes_are(*back, kNew));
}

TEST(ContextStreamsGpu, CopyOnRefusesAStreamOfNeitherSide) {
  THEON_REQUIRE_CUDA_DEVICES(2);
  CudaRuntime& rt = CudaRuntime::instance();
  std::shared_ptr<Buffer> src = rt.allocate(kGpu0, 64);
  std::vector<unsigned char> host(64);
  const Stream other = streams_of({"copier", Device::cuda(1)}).copy;
  EXPECT_THROW(rt.copy_on(host.data(), Device::cpu(), src->data(), kGpu0, 64, other.handle), InternalError);
  EXPECT_THROW(rt.allocate_on(kGpu0, 64, other.handle), InternalError);
}

}  // namespace
}  // namespace theon::backends::cuda
