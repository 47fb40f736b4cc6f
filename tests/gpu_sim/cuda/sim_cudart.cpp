// The stand-in CUDA runtime of the simulated device (docs/guide/testing.md): built as
// libcudart.so.13 with the real symbol version, over host memory and the kernel emulator.
// Test infrastructure, never installed. Every mode is read once, from the environment:
//   SIM_STREAMS=eager     (default) stream work runs when it is enqueued;
//   SIM_STREAMS=deferred  stream work runs only when the host must wait for it (stream, event
//                         or device synchronize, pageable copies, frees): a missing wait
//                         shows as stale data;
//   SIM_STREAMS=random    (+ SIM_SEED=n) after each enqueue the queues of all devices are
//                         drained partly, in a seeded random order that keeps each stream's
//                         order and its event waits: a missing cross-stream or cross-device
//                         dependency shows as wrong data for some seed;
//   SIM_GUARD=1           device blocks are PROT_NONE except while the simulator runs device
//                         work: a host dereference of a device pointer dies with SIGSEGV;
//   SIM_DEVICES=n         number of devices (default 1);
//   SIM_P2P=0|1           whether peers can access each other (default 1).
// One recursive mutex serialises the whole simulated device.
#include <cuda_runtime_api.h>

#include "../launch_abi.hpp"
#include "sim_internal.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace {

// ---------------------------------------------------------------- configuration
enum class StreamMode { Eager, Deferred, Random };

struct Config {
  StreamMode mode = StreamMode::Eager;
  unsigned seed = 1;
  bool guard = false;
  int devices = 1;
  bool p2p = true;
};

const Config& config() {
  static const Config c = [] {
    Config c;
    auto env = [](const char* n) -> std::string {
      const char* v = std::getenv(n);
      return v ? v : "";
    };
    const std::string s = env("SIM_STREAMS");
    if (s == "deferred") c.mode = StreamMode::Deferred;
    else if (s == "random") c.mode = StreamMode::Random;
    else if (!s.empty() && s != "eager")
      std::fprintf(stderr, "gpu_sim: unknown SIM_STREAMS=%s (eager, deferred, random); using eager\n", s.c_str());
    if (!env("SIM_SEED").empty()) c.seed = static_cast<unsigned>(std::strtoul(env("SIM_SEED").c_str(), nullptr, 10));
    c.guard = env("SIM_GUARD") == "1";
    if (!env("SIM_DEVICES").empty()) c.devices = std::clamp(std::atoi(env("SIM_DEVICES").c_str()), 1, 16);
    c.p2p = env("SIM_P2P") != "0";
    return c;
  }();
  return c;
}

constexpr size_t kTotalMemory = size_t(80) << 30;
constexpr size_t kSharedPerBlock = 48 << 10;
constexpr size_t kSharedPerBlockOptin = 228 << 10;

std::recursive_mutex g_mu;
using Lock = std::lock_guard<std::recursive_mutex>;
thread_local int t_device = 0;
thread_local cudaError_t t_last = cudaSuccess;

cudaError_t fail(cudaError_t e) {  // every error is also the thread's last error
  if (e != cudaSuccess && e != cudaErrorNotReady) t_last = e;
  return e;
}

// ---------------------------------------------------------------- memory
struct Block {
  size_t size, mapped;
  int device;  // owning device; -1 for pinned host memory
  bool pinned;
};
// The simulated device lives as long as the process (as a driver does): its registries are
// never destroyed, so work still queued at exit (or a late free) never meets a dead map.
std::map<uintptr_t, Block>& g_blocks = *new std::map<uintptr_t, Block>;
size_t g_used[16] = {};
int g_running = 0;  // depth of device work being run (SIM_GUARD opens the blocks meanwhile)

const Block* find_block(const void* p, uintptr_t* base = nullptr) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  auto it = g_blocks.upper_bound(a);
  if (it == g_blocks.begin()) return nullptr;
  --it;
  if (a >= it->first + std::max<size_t>(it->second.size, 1)) return nullptr;
  if (base) *base = it->first;
  return &it->second;
}

// [p, p+n) inside one device block (any device when device < 0)?
bool device_range(const void* p, size_t n, int device = -1) {
  uintptr_t base = 0;
  const Block* b = find_block(p, &base);
  if (!b || b->pinned || (device >= 0 && b->device != device)) return false;
  return reinterpret_cast<uintptr_t>(p) - base + n <= b->size;
}

void protect_all(int prot) {
  for (auto& [base, b] : g_blocks)
    if (!b.pinned) mprotect(reinterpret_cast<void*>(base), b.mapped, prot);
}

// Device work (copies, kernels, GEMMs) runs inside one of these.
struct DeviceWork {
  DeviceWork() {
    if (config().guard && g_running++ == 0) protect_all(PROT_READ | PROT_WRITE);
  }
  ~DeviceWork() {
    if (config().guard && --g_running == 0) protect_all(PROT_NONE);
  }
  DeviceWork(const DeviceWork&) = delete;
  DeviceWork& operator=(const DeviceWork&) = delete;
};

struct sigaction g_old_segv;
void on_segv(int sig, siginfo_t* info, void* ctx) {
  char msg[256];
  const uintptr_t a = reinterpret_cast<uintptr_t>(info->si_addr);
  bool device = false;
  if (g_mu.try_lock()) {
    const Block* b = find_block(info->si_addr);
    device = b && !b->pinned;
    g_mu.unlock();
  }
  const int n = std::snprintf(msg, sizeof msg,
                              "gpu_sim: SIGSEGV at %#lx%s (SIM_GUARD=1: device memory is PROT_NONE to host code; "
                              "a host dereference of a device pointer faults)\n",
                              static_cast<unsigned long>(a), device ? ", inside a cudaMalloc'ed block" : "");
  if (n > 0) (void)!write(2, msg, static_cast<size_t>(std::min<int>(n, sizeof msg - 1)));
  sigaction(SIGSEGV, &g_old_segv, nullptr);  // the fault repeats under the previous handler
  (void)sig;
  (void)ctx;
}
void install_segv_hint() {
  static bool done = false;
  if (done || !config().guard) return;
  done = true;
  struct sigaction sa {};
  sa.sa_sigaction = on_segv;
  sa.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, &g_old_segv);
}

void* map_block(size_t size, int device, bool pinned) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t mapped = (std::max<size_t>(size, 1) + page - 1) / page * page;
  const int prot = config().guard && !pinned && g_running == 0 ? PROT_NONE : PROT_READ | PROT_WRITE;
  void* p = mmap(nullptr, mapped, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  g_blocks[reinterpret_cast<uintptr_t>(p)] = {size, mapped, device, pinned};
  if (!pinned) g_used[device] += mapped;
  return p;
}

// ---------------------------------------------------------------- streams and events
struct Stream;
struct Op {
  std::function<void()> fn;       // device work (empty for a pure wait)
  Stream* wait_for = nullptr;     // ... runnable once wait_for has executed wait_seq ops
  uint64_t wait_seq = 0;
};
struct Stream {
  int device = 0;
  bool legacy = false;    // the legacy default stream (0) of `device`
  bool blocking = true;   // cudaStreamDefault: ordered after the legacy stream (and it after us)
  bool destroyed = false;
  std::deque<Op> q;
  uint64_t enqueued = 0, executed = 0;  // counts of ops
  bool pending() const { return executed < enqueued; }
};
struct Event {
  Stream* stream = nullptr;  // null until recorded
  uint64_t seq = 0;          // complete once stream->executed >= seq
};

std::vector<Stream*>& g_streams = *new std::vector<Stream*>;  // every stream ever made (never freed: events may name them)
std::set<const Event*>& g_events = *new std::set<const Event*>;

Stream* legacy_stream(int device) {
  static std::vector<Stream*>& legacy = *new std::vector<Stream*>;
  if (legacy.empty())
    for (int d = 0; d < config().devices; ++d) {
      auto* s = new Stream;
      s->device = d;
      s->legacy = true;
      g_streams.push_back(s);
      legacy.push_back(s);
    }
  return legacy[static_cast<size_t>(device)];
}

bool valid_stream(const Stream* s) { return std::find(g_streams.begin(), g_streams.end(), s) != g_streams.end(); }

Stream* stream_of(cudaStream_t s) {
  if (!s || s == cudaStreamLegacy || s == cudaStreamPerThread) return legacy_stream(t_device);
  auto* st = reinterpret_cast<Stream*>(s);
  return valid_stream(st) && !st->destroyed ? st : nullptr;
}

// ---------------------------------------------------------------- counters (sim_counters_abi.h)
theon_gpu_sim_counters g_counters{};
struct SyncRecord {
  const char* call;
  std::vector<std::pair<const Stream*, uint64_t>> pending;  // streams with work pending then
};
constexpr size_t kSyncRecordsKept = 65536;
std::vector<SyncRecord>& g_syncs = *new std::vector<SyncRecord>;
uint64_t g_syncs_seen = 0;  // since the last reset (records beyond the kept ones are counted only)
int g_sync_depth = 0;       // > 0 inside a synchronising call (its inner copies are not counted again)

// Counts a host synchronisation made by `call`; `waits` says whether the work it waits for is
// pending. Called before the simulator drives that work.
void note_host_sync(const char* call, bool waits) {
  if (g_sync_depth > 0) return;
  ++g_counters.host_syncs;
  if (waits) ++g_counters.host_waits;
  if (g_syncs_seen++ >= kSyncRecordsKept) return;
  SyncRecord r{call, {}};
  for (const Stream* st : g_streams)
    if (st->pending()) r.pending.emplace_back(st, st->enqueued - st->executed);
  g_syncs.push_back(std::move(r));
}

bool device_pending(int device) {
  for (const Stream* st : g_streams)
    if (st->device == device && st->pending()) return true;
  return false;
}
bool any_pending() {
  for (const Stream* st : g_streams)
    if (st->pending()) return true;
  return false;
}

// The synchronising calls that are built on other counted calls count once.
struct SyncScope {
  SyncScope() { ++g_sync_depth; }
  ~SyncScope() { --g_sync_depth; }
  SyncScope(const SyncScope&) = delete;
  SyncScope& operator=(const SyncScope&) = delete;
};

bool run_one(Stream* s);

// Runs `s` until it has executed `seq` ops, running what its waits depend on first (the
// host is waiting, so everything upstream must happen).
void drive(Stream* s, uint64_t seq) {
  while (s->executed < seq) {
    Op& op = s->q.front();
    if (op.wait_for) drive(op.wait_for, op.wait_seq);
    run_one(s);
  }
}
void drain(Stream* s) { drive(s, s->enqueued); }
void drain_device(int device) {
  for (size_t i = 0; i < g_streams.size(); ++i)
    if (g_streams[i]->device == device) drain(g_streams[i]);
}
void drain_all() {
  for (size_t i = 0; i < g_streams.size(); ++i) drain(g_streams[i]);
}

// Runs the front op of `s` if it may run now; false if it waits on another stream.
bool run_one(Stream* s) {
  if (s->q.empty()) return false;
  Op& front = s->q.front();
  if (front.wait_for && front.wait_for->executed < front.wait_seq) return false;
  Op op = std::move(front);
  s->q.pop_front();
  if (op.fn) {
    DeviceWork access;
    op.fn();
  }
  ++s->executed;
  return true;
}

std::mt19937& rng() {
  static std::mt19937 g(config().seed);
  return g;
}

// SIM_STREAMS=random: run a random prefix of every stream's queue, streams in random order.
void random_progress() {
  std::vector<Stream*> order(g_streams);
  std::shuffle(order.begin(), order.end(), rng());
  for (Stream* s : order) {
    const uint64_t pending = s->enqueued - s->executed;
    if (!pending) continue;
    uint64_t steps = std::uniform_int_distribution<uint64_t>(0, pending)(rng());
    while (steps-- && run_one(s)) {
    }
  }
}

void push(Stream* s, Op op) {
  s->q.push_back(std::move(op));
  ++s->enqueued;
}
void push_wait(Stream* s, Stream* on, uint64_t seq) {
  if (on == s || on->executed >= seq) return;
  push(s, Op{{}, on, seq});
}

// The legacy stream's implicit synchronisation: its work waits for earlier work of the
// device's blocking streams, and their work waits for earlier legacy work.
void implicit_waits(Stream* s) {
  if (s->legacy) {
    for (size_t i = 0; i < g_streams.size(); ++i) {
      Stream* o = g_streams[i];
      if (o != s && o->device == s->device && o->blocking && !o->destroyed) push_wait(s, o, o->enqueued);
    }
  } else if (s->blocking) {
    Stream* l = legacy_stream(s->device);
    push_wait(s, l, l->enqueued);
  }
}

void enqueue(Stream* s, std::function<void()> fn) {
  implicit_waits(s);
  push(s, Op{std::move(fn), nullptr, 0});
  ++g_counters.operations;
  switch (config().mode) {
    case StreamMode::Eager: drain(s); break;
    case StreamMode::Deferred: break;
    case StreamMode::Random: random_progress(); break;
  }
}

// ---------------------------------------------------------------- modules
struct SimKernel {
  std::string name;
  void* (*bind)(void**);
  void (*run)(void*, const gpu_sim_launch*);
  void (*release)(void*);
};
struct SimLibrary {
  void* handle = nullptr;
  std::map<std::string, std::unique_ptr<SimKernel>> kernels;
};
std::set<const SimLibrary*>& g_libraries = *new std::set<const SimLibrary*>;
std::set<const SimKernel*>& g_kernels = *new std::set<const SimKernel*>;

const char* tmpdir() {
  const char* t = std::getenv("TMPDIR");
  return t && *t ? t : "/tmp";
}

bool write_all(int fd, const char* p, size_t n) {
  while (n) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// Writes the shared object into a private folder, dlopens it, and removes both.
void* load_object(const char* bytes, size_t n, std::string& error) {
  std::string dir = std::string(tmpdir()) + "/theon_gpu_sim_module_XXXXXX";
  if (!mkdtemp(dir.data())) {
    error = std::string("mkdtemp: ") + std::strerror(errno);
    return nullptr;
  }
  const std::string path = dir + "/kernels.so";
  void* h = nullptr;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    error = std::string("open: ") + std::strerror(errno);
  } else {
    const bool ok = write_all(fd, bytes, n);
    ::close(fd);
    if (!ok) error = "write failed";
    else if (!(h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL))) error = dlerror();
    ::unlink(path.c_str());
  }
  ::rmdir(dir.c_str());
  return h;
}

int current_device() { return t_device; }

}  // namespace

// ---------------------------------------------------------------- simulator-only exports
extern "C" {

const char* theon_gpu_sim_marker(void) {
  static const std::string m = [] {
    const Config& c = config();
    const char* mode = c.mode == StreamMode::Eager ? "eager" : c.mode == StreamMode::Deferred ? "deferred" : "random";
    return "theon gpu_sim cudart 1 (streams=" + std::string(mode) + " seed=" + std::to_string(c.seed) +
           " guard=" + std::to_string(c.guard) + " devices=" + std::to_string(c.devices) +
           " p2p=" + std::to_string(c.p2p) + ")";
  }();
  return m.c_str();
}

int theon_gpu_sim_enqueue(cudaStream_t stream, void (*fn)(void*), void* ctx) {
  Lock lock(g_mu);
  Stream* s = stream_of(stream);
  if (!s) return fail(cudaErrorInvalidResourceHandle);
  enqueue(s, [fn, ctx] { fn(ctx); });
  return cudaSuccess;
}

int theon_gpu_sim_device_range(const void* p, size_t bytes) {
  Lock lock(g_mu);
  uintptr_t base = 0;
  const Block* b = find_block(p, &base);
  if (!b || b->pinned || reinterpret_cast<uintptr_t>(p) - base + bytes > b->size) return -1;
  return b->device;
}

int theon_gpu_sim_current_device(void) { return current_device(); }

void theon_gpu_sim_read_counters(struct theon_gpu_sim_counters* out) {
  Lock lock(g_mu);
  if (out) *out = g_counters;
}

void theon_gpu_sim_reset_counters(void) {
  Lock lock(g_mu);
  g_counters = {};
  g_syncs.clear();
  g_syncs_seen = 0;
}

uint64_t theon_gpu_sim_pending_at_sync(uint64_t sync, const void* stream) {
  Lock lock(g_mu);
  if (sync >= g_syncs.size()) return UINT64_MAX;
  const Stream* st = stream_of(static_cast<cudaStream_t>(const_cast<void*>(stream)));
  for (auto& [s, n] : g_syncs[sync].pending)
    if (s == st) return n;
  return 0;
}

uint64_t theon_gpu_sim_device_pending_at_sync(uint64_t sync, int device) {
  Lock lock(g_mu);
  if (sync >= g_syncs.size()) return UINT64_MAX;
  uint64_t total = 0;
  for (auto& [s, n] : g_syncs[sync].pending)
    if (s->device == device) total += n;
  return total;
}

const char* theon_gpu_sim_sync_call(uint64_t sync) {
  Lock lock(g_mu);
  return sync < g_syncs.size() ? g_syncs[sync].call : "";
}

}  // extern "C"

// ---------------------------------------------------------------- the CUDA runtime API
extern "C" {

// Devices
cudaError_t cudaGetDeviceCount(int* n) {
  if (!n) return fail(cudaErrorInvalidValue);
  *n = config().devices;
  return cudaSuccess;
}
cudaError_t cudaSetDevice(int d) {
  if (d < 0 || d >= config().devices) return fail(cudaErrorInvalidDevice);
  t_device = d;
  return cudaSuccess;
}
cudaError_t cudaGetDevice(int* d) {
  if (!d) return fail(cudaErrorInvalidValue);
  *d = t_device;
  return cudaSuccess;
}
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int d) {
  if (!p) return fail(cudaErrorInvalidValue);
  if (d < 0 || d >= config().devices) return fail(cudaErrorInvalidDevice);
  std::memset(p, 0, sizeof *p);
  std::snprintf(p->name, sizeof p->name, "Theon gpu_sim %d (an H100-like device on the CPU)", d);
  p->totalGlobalMem = kTotalMemory;
  p->sharedMemPerBlock = kSharedPerBlock;
  p->sharedMemPerBlockOptin = kSharedPerBlockOptin;
  p->sharedMemPerMultiprocessor = 228 << 10;
  p->reservedSharedMemPerBlock = 1 << 10;
  p->regsPerBlock = p->regsPerMultiprocessor = 65536;
  p->warpSize = 32;
  p->memPitch = 2147483647;
  p->maxThreadsPerBlock = 1024;
  p->maxThreadsDim[0] = p->maxThreadsDim[1] = 1024;
  p->maxThreadsDim[2] = 64;
  p->maxGridSize[0] = 2147483647;
  p->maxGridSize[1] = p->maxGridSize[2] = 65535;
  p->totalConstMem = 64 << 10;
  p->major = 9;
  p->minor = 0;
  p->textureAlignment = 512;
  p->texturePitchAlignment = 32;
  p->multiProcessorCount = 132;
  p->canMapHostMemory = 1;
  p->concurrentKernels = 1;
  p->pciBusID = d + 1;
  p->asyncEngineCount = 2;
  p->unifiedAddressing = 1;
  p->memoryBusWidth = 5120;
  p->l2CacheSize = 50 << 20;
  p->maxThreadsPerMultiProcessor = 2048;
  p->maxBlocksPerMultiProcessor = 32;
  p->managedMemory = 1;
  p->cooperativeLaunch = 1;
  p->hostRegisterSupported = 1;
  p->memoryPoolsSupported = 1;
  p->clusterLaunch = 1;
  return cudaSuccess;
}
cudaError_t cudaDeviceGetAttribute(int* v, cudaDeviceAttr attr, int d) {
  if (!v) return fail(cudaErrorInvalidValue);
  if (d < 0 || d >= config().devices) return fail(cudaErrorInvalidDevice);
  switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock: *v = 1024; break;
    case cudaDevAttrMaxBlockDimX: case cudaDevAttrMaxBlockDimY: *v = 1024; break;
    case cudaDevAttrMaxBlockDimZ: *v = 64; break;
    case cudaDevAttrMaxGridDimX: *v = 2147483647; break;
    case cudaDevAttrMaxGridDimY: case cudaDevAttrMaxGridDimZ: *v = 65535; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: *v = static_cast<int>(kSharedPerBlock); break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *v = static_cast<int>(kSharedPerBlockOptin); break;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor: *v = 228 << 10; break;
    case cudaDevAttrTotalConstantMemory: *v = 64 << 10; break;
    case cudaDevAttrWarpSize: *v = 32; break;
    case cudaDevAttrMaxRegistersPerBlock: case cudaDevAttrMaxRegistersPerMultiprocessor: *v = 65536; break;
    case cudaDevAttrMultiProcessorCount: *v = 132; break;
    case cudaDevAttrMaxThreadsPerMultiProcessor: *v = 2048; break;
    case cudaDevAttrMaxBlocksPerMultiprocessor: *v = 32; break;
    case cudaDevAttrComputeCapabilityMajor: *v = 9; break;
    case cudaDevAttrComputeCapabilityMinor: *v = 0; break;
    case cudaDevAttrL2CacheSize: *v = 50 << 20; break;
    case cudaDevAttrGlobalMemoryBusWidth: *v = 5120; break;
    case cudaDevAttrUnifiedAddressing: case cudaDevAttrConcurrentKernels: case cudaDevAttrCanMapHostMemory:
      *v = 1; break;
    case cudaDevAttrAsyncEngineCount: *v = 2; break;
    case cudaDevAttrPciBusId: *v = d + 1; break;
    default: *v = 0; break;
  }
  return cudaSuccess;
}
cudaError_t cudaDeviceCanAccessPeer(int* can, int d, int peer) {
  if (!can) return fail(cudaErrorInvalidValue);
  const int n = config().devices;
  if (d < 0 || d >= n || peer < 0 || peer >= n) return fail(cudaErrorInvalidDevice);
  *can = d != peer && config().p2p ? 1 : 0;
  return cudaSuccess;
}
cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned int flags) {
  Lock lock(g_mu);
  static std::set<std::pair<int, int>> enabled;
  if (flags != 0) return fail(cudaErrorInvalidValue);
  if (peer < 0 || peer >= config().devices) return fail(cudaErrorInvalidDevice);
  if (peer == t_device || !config().p2p) return fail(cudaErrorPeerAccessUnsupported);
  if (!enabled.insert({t_device, peer}).second) return fail(cudaErrorPeerAccessAlreadyEnabled);
  return cudaSuccess;
}
cudaError_t cudaDeviceSynchronize(void) {
  Lock lock(g_mu);
  note_host_sync("cudaDeviceSynchronize", device_pending(t_device));
  drain_device(t_device);
  return cudaSuccess;
}
cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total) {
  Lock lock(g_mu);
  if (!free_bytes || !total) return fail(cudaErrorInvalidValue);
  *total = kTotalMemory;
  *free_bytes = kTotalMemory - std::min(kTotalMemory, g_used[t_device]);
  return cudaSuccess;
}
cudaError_t cudaDriverGetVersion(int* v) {
  if (!v) return fail(cudaErrorInvalidValue);
  *v = CUDART_VERSION;
  return cudaSuccess;
}
cudaError_t cudaRuntimeGetVersion(int* v) {
  if (!v) return fail(cudaErrorInvalidValue);
  *v = CUDART_VERSION;
  return cudaSuccess;
}

// Errors
const char* cudaGetErrorName(cudaError_t e) {
  switch (e) {
#define THEON_SIM_NAME(x) \
  case x: return #x;
    THEON_SIM_NAME(cudaSuccess)
    THEON_SIM_NAME(cudaErrorInvalidValue)
    THEON_SIM_NAME(cudaErrorMemoryAllocation)
    THEON_SIM_NAME(cudaErrorInvalidConfiguration)
    THEON_SIM_NAME(cudaErrorInvalidPitchValue)
    THEON_SIM_NAME(cudaErrorInvalidDevice)
    THEON_SIM_NAME(cudaErrorInvalidDeviceFunction)
    THEON_SIM_NAME(cudaErrorInvalidResourceHandle)
    THEON_SIM_NAME(cudaErrorInvalidKernelImage)
    THEON_SIM_NAME(cudaErrorSymbolNotFound)
    THEON_SIM_NAME(cudaErrorNotReady)
    THEON_SIM_NAME(cudaErrorPeerAccessUnsupported)
    THEON_SIM_NAME(cudaErrorPeerAccessAlreadyEnabled)
    THEON_SIM_NAME(cudaErrorInvalidMemcpyDirection)
    THEON_SIM_NAME(cudaErrorNotSupported)
#undef THEON_SIM_NAME
    default: return "cudaErrorUnknown";
  }
}
const char* cudaGetErrorString(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidPitchValue: return "invalid pitch argument";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidDeviceFunction: return "invalid device function";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorInvalidKernelImage: return "device kernel image is invalid";
    case cudaErrorSymbolNotFound: return "named symbol not found";
    case cudaErrorNotReady: return "device not ready";
    case cudaErrorPeerAccessUnsupported: return "peer access is not supported between these two devices";
    case cudaErrorPeerAccessAlreadyEnabled: return "peer access is already enabled";
    case cudaErrorInvalidMemcpyDirection: return "invalid copy direction for memcpy";
    case cudaErrorNotSupported: return "operation not supported";
    default: return "unknown error (gpu_sim)";
  }
}
cudaError_t cudaGetLastError(void) {
  const cudaError_t e = t_last;
  t_last = cudaSuccess;
  return e;
}
cudaError_t cudaPeekAtLastError(void) { return t_last; }

// Memory
cudaError_t cudaMalloc(void** p, size_t size) {
  Lock lock(g_mu);
  if (!p) return fail(cudaErrorInvalidValue);
  install_segv_hint();
  if (size > kTotalMemory - std::min(kTotalMemory, g_used[t_device])) {
    *p = nullptr;
    return fail(cudaErrorMemoryAllocation);
  }
  *p = map_block(size, t_device, false);
  return *p ? cudaSuccess : fail(cudaErrorMemoryAllocation);
}
cudaError_t cudaFree(void* p) {
  Lock lock(g_mu);
  note_host_sync("cudaFree", any_pending());
  drain_all();  // cudaFree synchronises
  if (!p) return cudaSuccess;
  auto it = g_blocks.find(reinterpret_cast<uintptr_t>(p));
  if (it == g_blocks.end() || it->second.pinned) return fail(cudaErrorInvalidValue);
  g_used[it->second.device] -= it->second.mapped;
  munmap(p, it->second.mapped);
  g_blocks.erase(it);
  return cudaSuccess;
}
cudaError_t cudaHostAlloc(void** p, size_t size, unsigned int flags) {
  Lock lock(g_mu);
  if (!p || (flags & ~(cudaHostAllocPortable | cudaHostAllocMapped | cudaHostAllocWriteCombined)))
    return fail(cudaErrorInvalidValue);
  *p = map_block(size, -1, true);
  return *p ? cudaSuccess : fail(cudaErrorMemoryAllocation);
}
cudaError_t cudaFreeHost(void* p) {
  Lock lock(g_mu);
  note_host_sync("cudaFreeHost", any_pending());
  drain_all();
  if (!p) return cudaSuccess;
  auto it = g_blocks.find(reinterpret_cast<uintptr_t>(p));
  if (it == g_blocks.end() || !it->second.pinned) return fail(cudaErrorInvalidValue);
  munmap(p, it->second.mapped);
  g_blocks.erase(it);
  return cudaSuccess;
}
cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* a, const void* p) {
  Lock lock(g_mu);
  if (!a) return fail(cudaErrorInvalidValue);
  std::memset(a, 0, sizeof *a);
  const Block* b = find_block(p);
  if (!b) {
    a->type = cudaMemoryTypeUnregistered;
    a->device = -2;  // as CUDA: no device for unregistered memory
    return cudaSuccess;
  }
  a->type = b->pinned ? cudaMemoryTypeHost : cudaMemoryTypeDevice;
  a->device = b->pinned ? t_device : b->device;
  a->devicePointer = const_cast<void*>(p);  // UVA: the same address on both sides
  a->hostPointer = b->pinned ? const_cast<void*>(p) : nullptr;
  return cudaSuccess;
}

// Streams
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned int flags) {
  Lock lock(g_mu);
  if (!s || (flags & ~unsigned(cudaStreamNonBlocking))) return fail(cudaErrorInvalidValue);
  legacy_stream(0);  // the legacy streams exist first
  auto* st = new Stream;
  st->device = t_device;
  st->blocking = !(flags & cudaStreamNonBlocking);
  g_streams.push_back(st);
  *s = reinterpret_cast<cudaStream_t>(st);
  return cudaSuccess;
}
cudaError_t cudaStreamCreate(cudaStream_t* s) { return cudaStreamCreateWithFlags(s, cudaStreamDefault); }
cudaError_t cudaStreamDestroy(cudaStream_t s) {
  Lock lock(g_mu);
  Stream* st = stream_of(s);
  if (!st || st->legacy) return fail(cudaErrorInvalidResourceHandle);
  drain(st);  // CUDA finishes pending work after the call returns; here it is done first
  st->destroyed = true;
  return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t s) {
  Lock lock(g_mu);
  Stream* st = stream_of(s);
  if (!st) return fail(cudaErrorInvalidResourceHandle);
  note_host_sync("cudaStreamSynchronize", st->pending());
  drain(st);
  return cudaSuccess;
}
cudaError_t cudaStreamQuery(cudaStream_t s) {
  Lock lock(g_mu);
  Stream* st = stream_of(s);
  if (!st) return fail(cudaErrorInvalidResourceHandle);
  if (!st->pending()) return cudaSuccess;
  drain(st);  // "not ready" now; the work proceeds so that a polling loop ends
  return cudaErrorNotReady;
}
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int flags) {
  Lock lock(g_mu);
  Stream* st = stream_of(s);
  auto* ev = reinterpret_cast<Event*>(e);
  if (!st || !g_events.count(ev)) return fail(cudaErrorInvalidResourceHandle);
  if (flags & ~unsigned(cudaEventWaitExternal)) return fail(cudaErrorInvalidValue);
  ++g_counters.stream_waits;
  if (ev->stream) {
    implicit_waits(st);
    push_wait(st, ev->stream, ev->seq);
  }
  return cudaSuccess;
}

// Events
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned int flags) {
  Lock lock(g_mu);
  if (!e || (flags & ~unsigned(cudaEventBlockingSync | cudaEventDisableTiming | cudaEventInterprocess)))
    return fail(cudaErrorInvalidValue);
  auto* ev = new Event;
  g_events.insert(ev);
  *e = reinterpret_cast<cudaEvent_t>(ev);
  return cudaSuccess;
}
cudaError_t cudaEventCreate(cudaEvent_t* e) { return cudaEventCreateWithFlags(e, cudaEventDefault); }
cudaError_t cudaEventDestroy(cudaEvent_t e) {
  Lock lock(g_mu);
  auto* ev = reinterpret_cast<Event*>(e);
  if (!g_events.erase(ev)) return fail(cudaErrorInvalidResourceHandle);
  delete ev;
  return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) {
  Lock lock(g_mu);
  Stream* st = stream_of(s);
  auto* ev = reinterpret_cast<Event*>(e);
  if (!st || !g_events.count(ev)) return fail(cudaErrorInvalidResourceHandle);
  implicit_waits(st);  // a record on the legacy stream also follows the blocking streams
  ++g_counters.events_recorded;
  ev->stream = st;
  ev->seq = st->enqueued;
  return cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t e) {
  Lock lock(g_mu);
  auto* ev = reinterpret_cast<Event*>(e);
  if (!g_events.count(ev)) return fail(cudaErrorInvalidResourceHandle);
  note_host_sync("cudaEventSynchronize", ev->stream && ev->stream->executed < ev->seq);
  if (ev->stream) drive(ev->stream, ev->seq);
  return cudaSuccess;
}
cudaError_t cudaEventQuery(cudaEvent_t e) {
  Lock lock(g_mu);
  auto* ev = reinterpret_cast<Event*>(e);
  if (!g_events.count(ev)) return fail(cudaErrorInvalidResourceHandle);
  if (!ev->stream || ev->stream->executed >= ev->seq) return cudaSuccess;
  drive(ev->stream, ev->seq);  // "not ready" now; done by the next query
  return cudaErrorNotReady;
}

// Copies. CUDA's rules for when the host may touch the host side again: a pageable host
// source or destination makes the copy synchronous (the stream is drained first and the
// copy done before returning); pinned memory and device-to-device copies are asynchronous
// (they happen when the stream reaches them).
namespace {

// Where [p, p+n) lives: 'd' device, 'p' pinned, 'h' pageable host; 0 for a range that
// starts in a block and runs past its end.
char where(const void* p, size_t n) {
  uintptr_t base = 0;
  const Block* b = find_block(p, &base);
  if (!b) return 'h';
  if (reinterpret_cast<uintptr_t>(p) - base + n > b->size) return 0;
  return b->pinned ? 'p' : 'd';
}

// Validates a copy's sides against its kind; `pageable` tells whether it is synchronous.
cudaError_t check_copy(void* dst, size_t dst_span, const void* src, size_t src_span, cudaMemcpyKind kind,
                       bool& pageable) {
  const char d = where(dst, dst_span), s = where(src, src_span);
  if (!d || !s) return cudaErrorInvalidValue;  // runs off the end of an allocation
  auto host = [](char c) { return c == 'h' || c == 'p'; };
  switch (kind) {
    case cudaMemcpyHostToDevice: if (!host(s) || d != 'd') return cudaErrorInvalidValue; break;
    case cudaMemcpyDeviceToHost: if (s != 'd' || !host(d)) return cudaErrorInvalidValue; break;
    case cudaMemcpyDeviceToDevice: if (s != 'd' || d != 'd') return cudaErrorInvalidValue; break;
    case cudaMemcpyHostToHost: case cudaMemcpyDefault: break;
    default: return cudaErrorInvalidMemcpyDirection;
  }
  pageable = s == 'h' || d == 'h';
  return cudaSuccess;
}

cudaError_t submit_copy(Stream* st, bool pageable, std::function<void()> op, const char* call) {
  if (pageable) note_host_sync(call, st->pending());
  enqueue(st, std::move(op));
  if (pageable) drain(st);
  return cudaSuccess;
}

}  // namespace

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t n, cudaMemcpyKind kind, cudaStream_t s) {
  Lock lock(g_mu);
  Stream* st = stream_of(s);
  if (!st) return fail(cudaErrorInvalidResourceHandle);
  if (n == 0) return cudaSuccess;
  bool pageable = false;
  if (cudaError_t e = check_copy(dst, n, src, n, kind, pageable); e != cudaSuccess) return fail(e);
  return submit_copy(st, pageable, [dst, src, n] { std::memmove(dst, src, n); }, "cudaMemcpyAsync (pageable)");
}
cudaError_t cudaMemcpy(void* dst, const void* src, size_t n, cudaMemcpyKind kind) {
  Lock lock(g_mu);
  note_host_sync("cudaMemcpy", legacy_stream(t_device)->pending());
  SyncScope counted;
  if (cudaError_t e = cudaMemcpyAsync(dst, src, n, kind, nullptr); e != cudaSuccess) return e;
  drain(legacy_stream(t_device));  // synchronous with respect to the host
  return cudaSuccess;
}
cudaError_t cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                              cudaMemcpyKind kind, cudaStream_t s) {
  Lock lock(g_mu);
  Stream* st = stream_of(s);
  if (!st) return fail(cudaErrorInvalidResourceHandle);
  if (width > dpitch || width > spitch) return fail(cudaErrorInvalidPitchValue);
  if (width == 0 || height == 0) return cudaSuccess;
  bool pageable = false;
  const size_t dspan = (height - 1) * dpitch + width, sspan = (height - 1) * spitch + width;
  if (cudaError_t e = check_copy(dst, dspan, src, sspan, kind, pageable); e != cudaSuccess) return fail(e);
  return submit_copy(st, pageable, [=] {
    for (size_t r = 0; r < height; ++r)
      std::memmove(static_cast<char*>(dst) + r * dpitch, static_cast<const char*>(src) + r * spitch, width);
  }, "cudaMemcpy2DAsync (pageable)");
}
cudaError_t cudaMemcpyPeerAsync(void* dst, int dst_device, const void* src, int src_device, size_t n,
                                cudaStream_t s) {
  Lock lock(g_mu);
  const int nd = config().devices;
  if (dst_device < 0 || dst_device >= nd || src_device < 0 || src_device >= nd) return fail(cudaErrorInvalidDevice);
  Stream* st = stream_of(s);
  if (!st) return fail(cudaErrorInvalidResourceHandle);
  if (n == 0) return cudaSuccess;
  // Works with or without peer access enabled (CUDA stages it through the host then).
  if (!device_range(dst, n, dst_device) || !device_range(src, n, src_device)) return fail(cudaErrorInvalidValue);
  enqueue(st, [dst, src, n] { std::memmove(dst, src, n); });
  return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void* dst, int v, size_t n, cudaStream_t s) {
  Lock lock(g_mu);
  Stream* st = stream_of(s);
  if (!st) return fail(cudaErrorInvalidResourceHandle);
  if (n == 0) return cudaSuccess;
  if (!device_range(dst, n)) return fail(cudaErrorInvalidValue);
  enqueue(st, [dst, v, n] { std::memset(dst, v, n); });
  return cudaSuccess;
}
cudaError_t cudaMemset(void* dst, int v, size_t n) {
  Lock lock(g_mu);
  note_host_sync("cudaMemset", legacy_stream(t_device)->pending());
  if (cudaError_t e = cudaMemsetAsync(dst, v, n, nullptr); e != cudaSuccess) return e;
  drain(legacy_stream(t_device));
  return cudaSuccess;
}

// Modules. The "cubin" is the stand-in NVRTC's image (sim_internal.hpp): "THEONSIM", a
// little-endian uint64 length, and a shared object built by the host compiler.
cudaError_t cudaLibraryLoadData(cudaLibrary_t* lib, const void* code, cudaJitOption*, void**, unsigned int,
                                cudaLibraryOption*, void**, unsigned int) {
  Lock lock(g_mu);
  if (!lib || !code) return fail(cudaErrorInvalidValue);
  const char* c = static_cast<const char*>(code);
  if (std::memcmp(c, gpu_sim_internal::kImageMagic, 8) != 0) return fail(cudaErrorInvalidKernelImage);
  uint64_t len = 0;
  std::memcpy(&len, c + 8, 8);
  if (len < 4 || len > (uint64_t(1) << 32) || std::memcmp(c + 16, "\x7f" "ELF", 4) != 0)
    return fail(cudaErrorInvalidKernelImage);
  std::string error;
  void* h = load_object(c + 16, static_cast<size_t>(len), error);
  if (!h) {
    std::fprintf(stderr, "gpu_sim: cudaLibraryLoadData: %s\n", error.c_str());
    return fail(cudaErrorInvalidKernelImage);
  }
  auto* l = new SimLibrary;
  l->handle = h;
  g_libraries.insert(l);
  *lib = reinterpret_cast<cudaLibrary_t>(l);
  return cudaSuccess;
}
cudaError_t cudaLibraryGetKernel(cudaKernel_t* k, cudaLibrary_t lib, const char* name) {
  Lock lock(g_mu);
  auto* l = reinterpret_cast<SimLibrary*>(lib);
  if (!k || !name) return fail(cudaErrorInvalidValue);
  if (!g_libraries.count(l)) return fail(cudaErrorInvalidResourceHandle);
  auto& slot = l->kernels[name];
  if (!slot) {
    const std::string n = name;
    auto kk = std::make_unique<SimKernel>();
    kk->name = n;
    kk->bind = reinterpret_cast<void* (*)(void**)>(dlsym(l->handle, (n + "__sim_bind").c_str()));
    kk->run = reinterpret_cast<void (*)(void*, const gpu_sim_launch*)>(dlsym(l->handle, (n + "__sim_run").c_str()));
    kk->release = reinterpret_cast<void (*)(void*)>(dlsym(l->handle, (n + "__sim_free").c_str()));
    if (!kk->bind || !kk->run || !kk->release) {
      l->kernels.erase(name);
      return fail(cudaErrorSymbolNotFound);
    }
    slot = std::move(kk);
    g_kernels.insert(slot.get());
  }
  *k = reinterpret_cast<cudaKernel_t>(slot.get());
  return cudaSuccess;
}
cudaError_t cudaLibraryUnload(cudaLibrary_t lib) {
  Lock lock(g_mu);
  auto* l = reinterpret_cast<SimLibrary*>(lib);
  if (!g_libraries.erase(l)) return fail(cudaErrorInvalidResourceHandle);
  drain_all();  // pending launches of its kernels run first
  for (auto& [name, k] : l->kernels) g_kernels.erase(k.get());
  dlclose(l->handle);
  delete l;
  return cudaSuccess;
}

cudaError_t cudaLaunchKernel(const void* func, dim3 grid, dim3 block, void** args, size_t shmem, cudaStream_t s) {
  Lock lock(g_mu);
  const auto* k = static_cast<const SimKernel*>(func);
  if (!g_kernels.count(k)) return fail(cudaErrorInvalidDeviceFunction);
  Stream* st = stream_of(s);
  if (!st) return fail(cudaErrorInvalidResourceHandle);
  const unsigned long long threads = 1ull * block.x * block.y * block.z;
  if (threads == 0 || threads > 1024 || block.x > 1024 || block.y > 1024 || block.z > 64 || grid.x == 0 ||
      grid.y == 0 || grid.z == 0 || grid.x > 2147483647u || grid.y > 65535 || grid.z > 65535 || shmem > kSharedPerBlock)
    return fail(cudaErrorInvalidConfiguration);
  void* bound = k->bind(args);  // CUDA copies the parameters at launch
  gpu_sim_launch cfg{{grid.x, grid.y, grid.z}, {block.x, block.y, block.z}, shmem, nullptr};
  auto run = k->run;
  auto release = k->release;
  const std::string* name = &k->name;
  ++g_counters.launches;
  enqueue(st, [=]() mutable {
    cfg.kernel_name = name->c_str();
    run(bound, &cfg);
    release(bound);
  });
  return cudaSuccess;
}

}  // extern "C"
