// The block scheduler of the kernel emulator (libtheon_gpu_sim_emulator.so).
//
// A grid runs on the OS thread that calls run_grid, one block after another. The CUDA
// threads of a block are ucontext fibers on that OS thread; the scheduler runs each
// runnable fiber until it exits or blocks (at __syncthreads or a warp collective), then
// resolves what the blocked fibers wait for:
//   - a warp collective completes when every lane of its mask has reached a collective of
//     the same kind with the same mask (lanes of one warp may form several groups);
//   - the block barrier completes when every thread of the block waits at it.
// When nothing can be resolved, or the state breaks CUDA's rules, it reports one line on
// stderr, "gpu_sim: kernel K block (x,y,z) thread (x,y,z): what", and aborts, so the test
// process fails. Launch configurations CUDA rejects abort with
// "gpu_sim: kernel K launch grid (..) block (..) dynamic shared N: invalid configuration: ..."
// (the stand-in runtime checks them first and returns cudaErrorInvalidConfiguration; this
// is the backstop).
//
// All state is per call (a GridRun on run_grid's stack) or thread_local (the current run,
// the fiber stacks and the dynamic shared buffer, reused between blocks and launches of one
// OS thread), so several OS threads (simulated streams or devices) may run grids at once.
//
// SIM_ORDER=reverse (read at every launch) runs threads and blocks in reverse order.
#include "emulator_api.hpp"

#include <link.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define GPU_SIM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GPU_SIM_ASAN 1
#endif
#endif
#ifdef GPU_SIM_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace gpu_sim {
namespace {

constexpr size_t kStackBytes = 256 << 10;        // per CUDA thread
constexpr size_t kMaxDynamicShared = 48 << 10;   // without cudaFuncSetAttribute opt-in
constexpr unsigned char kGarbage = 0xcd;         // uninitialised shared memory

enum class State { Runnable, AtBarrier, AtCollective, Done };

struct Fiber {
  ucontext_t ctx;
  uint3 tid;
  unsigned linear = 0;
  State state = State::Runnable;
  int barrier_pred = 0;
  // At a warp collective:
  detail::Collective kind = detail::Collective::SyncWarp;
  const char* what = nullptr;
  unsigned mask = 0;
  uint64_t posted = 0, result = 0;
  int src_lane = -1;
  void* asan_fake_stack = nullptr;
};

// One launch: the grid's configuration and the running block's fibers.
struct GridRun {
  const gpu_sim_launch* cfg = nullptr;
  detail::ThreadBody body = nullptr;
  void* closure = nullptr;
  uint3 block_idx{0, 0, 0};
  dim3 block_dim, grid_dim;
  unsigned threads = 0;
  std::vector<Fiber> fibers;
  Fiber* cur = nullptr;
  ucontext_t sched;
  unsigned barrier_count = 0;  // __syncthreads_count of the last barrier
  unsigned char* smem = nullptr;  // dynamic shared memory
  // The scheduler's own stack, for ASan's fiber switches.
  const void* sched_stack_bottom = nullptr;
  size_t sched_stack_size = 0;
  void* sched_fake_stack = nullptr;
};

thread_local GridRun* t_run = nullptr;

// ---- per-OS-thread resources, reused between blocks and launches ----
struct ThreadResources {
  std::vector<char*> stacks;  // each: a PROT_NONE guard page, then kStackBytes
  unsigned char* smem_map = nullptr;  // kMaxDynamicShared, then a PROT_NONE page
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));

  ~ThreadResources() {
    for (char* s : stacks) munmap(s - page, kStackBytes + page);
    if (smem_map) munmap(smem_map, kMaxDynamicShared + page);
  }
  char* stack(size_t i) {
    while (stacks.size() <= i) {
      void* m = mmap(nullptr, kStackBytes + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                     -1, 0);
      if (m == MAP_FAILED) {
        std::fprintf(stderr, "gpu_sim: no memory for fiber stacks\n");
        std::abort();
      }
      mprotect(m, page, PROT_NONE);  // a stack overflow faults instead of corrupting its neighbour
      stacks.push_back(static_cast<char*>(m) + page);
    }
    return stacks[i];
  }
  // The dynamic shared buffer: `bytes` (rounded up to 16) ending at a PROT_NONE page.
  unsigned char* dynamic_shared(size_t bytes) {
    if (!smem_map) {
      void* m = mmap(nullptr, kMaxDynamicShared + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (m == MAP_FAILED) {
        std::fprintf(stderr, "gpu_sim: no memory for shared memory\n");
        std::abort();
      }
      smem_map = static_cast<unsigned char*>(m);
      mprotect(smem_map + kMaxDynamicShared, page, PROT_NONE);
    }
    return smem_map + kMaxDynamicShared - ((bytes + 15) & ~size_t{15});
  }
};
thread_local ThreadResources t_res;

// ---- reports ----
[[noreturn]] void fail_at(const GridRun& r, const Fiber* f, const std::string& msg) {
  const uint3 t = f ? f->tid : uint3{0, 0, 0};
  std::fprintf(stderr, "gpu_sim: kernel %s block (%u,%u,%u) thread (%u,%u,%u): %s\n",
               r.cfg->kernel_name ? r.cfg->kernel_name : "?", r.block_idx.x, r.block_idx.y, r.block_idx.z, t.x, t.y,
               t.z, msg.c_str());
  std::fflush(stderr);
  std::abort();
}

std::string hex(unsigned v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%08x", v);
  return b;
}

std::string lanes_text(unsigned bits) {  // "3,5,16-31"
  std::string s;
  for (unsigned l = 0; l < 32;) {
    if (!(bits >> l & 1u)) {
      ++l;
      continue;
    }
    unsigned e = l;
    while (e + 1 < 32 && (bits >> (e + 1) & 1u)) ++e;
    if (!s.empty()) s += ",";
    s += std::to_string(l);
    if (e > l) s += "-" + std::to_string(e);
    l = e + 1;
  }
  return s.empty() ? "none" : s;
}

const char* state_text(State s) {
  switch (s) {
    case State::Runnable: return "runnable";
    case State::AtBarrier: return "at __syncthreads";
    case State::AtCollective: return "at a warp collective";
    case State::Done: return "exited";
  }
  return "?";
}

// ---- fiber switches, annotated for ASan ----
void switch_to_fiber(GridRun& r, Fiber& f) {
  r.cur = &f;
#ifdef GPU_SIM_ASAN
  __sanitizer_start_switch_fiber(&r.sched_fake_stack, f.ctx.uc_stack.ss_sp, f.ctx.uc_stack.ss_size);
#endif
  swapcontext(&r.sched, &f.ctx);
#ifdef GPU_SIM_ASAN
  __sanitizer_finish_switch_fiber(r.sched_fake_stack, nullptr, nullptr);
#endif
  r.cur = nullptr;
}

// From the running fiber back to the scheduler; returns when the scheduler resumes it.
void yield_to_scheduler(GridRun& r, Fiber& f) {
#ifdef GPU_SIM_ASAN
  __sanitizer_start_switch_fiber(&f.asan_fake_stack, r.sched_stack_bottom, r.sched_stack_size);
#endif
  swapcontext(&f.ctx, &r.sched);
#ifdef GPU_SIM_ASAN
  __sanitizer_finish_switch_fiber(f.asan_fake_stack, nullptr, nullptr);
#endif
}

void fiber_entry() {
  GridRun& r = *t_run;
#ifdef GPU_SIM_ASAN
  __sanitizer_finish_switch_fiber(nullptr, &r.sched_stack_bottom, &r.sched_stack_size);
#endif
  r.body(r.closure);
  Fiber& f = *r.cur;
  f.state = State::Done;
#ifdef GPU_SIM_ASAN
  __sanitizer_start_switch_fiber(nullptr, r.sched_stack_bottom, r.sched_stack_size);  // this fiber ends
#endif
  setcontext(&r.sched);  // never resumed
  std::abort();
}

Fiber& current(const char* what) {
  GridRun* r = t_run;
  if (!r || !r->cur) {
    std::fprintf(stderr, "gpu_sim: %s called outside a running kernel\n", what);
    std::abort();
  }
  return *r->cur;
}

// ---- resolving blocked fibers ----

// Completes the warp collectives whose every lane has arrived; true if any completed.
bool resolve_collectives(GridRun& r) {
  bool progress = false;
  const unsigned warps = (r.threads + 31) / 32;
  for (unsigned w = 0; w < warps; ++w) {
    Fiber* lane = &r.fibers[w * 32];
    const unsigned lanes = std::min(32u, r.threads - w * 32);
    unsigned handled = 0;
    for (unsigned l = 0; l < lanes; ++l) {
      Fiber& f = lane[l];
      if (f.state != State::AtCollective || (handled >> l & 1u)) continue;
      const unsigned mask = f.mask;  // lanes exist and include l: checked at the call
      bool complete = true;
      for (unsigned m = 0; m < lanes; ++m) {
        if (!(mask >> m & 1u)) continue;
        const Fiber& g = lane[m];
        if (g.state == State::Done)
          fail_at(r, &f, std::string(f.what) + " with mask " + hex(mask) + " (warp " + std::to_string(w) +
                             "): lane " + std::to_string(m) + " of the mask has exited");
        if (g.state != State::AtCollective) {
          complete = false;  // at __syncthreads: may be a deadlock, decided later
          continue;
        }
        if (g.mask != mask)
          fail_at(r, &f, std::string(f.what) + ": lanes of warp " + std::to_string(w) + " name different masks: lane " +
                             std::to_string(l) + " " + hex(mask) + ", lane " + std::to_string(m) + " " + hex(g.mask) +
                             " (" + g.what + ")");
        if (g.kind != f.kind)
          fail_at(r, &f, std::string("lanes ") + std::to_string(l) + " and " + std::to_string(m) + " of warp " +
                             std::to_string(w) + " meet at different collectives with mask " + hex(mask) + ": " +
                             f.what + " and " + g.what);
      }
      handled |= mask;
      if (!complete) continue;
      unsigned ballot = 0;
      for (unsigned m = 0; m < lanes; ++m)
        if ((mask >> m & 1u) && lane[m].posted) ballot |= 1u << m;
      for (unsigned m = 0; m < lanes; ++m) {
        if (!(mask >> m & 1u)) continue;
        Fiber& g = lane[m];
        switch (g.kind) {
          case detail::Collective::SyncWarp: g.result = 0; break;
          case detail::Collective::Shuffle: g.result = lane[g.src_lane].posted; break;
          case detail::Collective::Ballot: g.result = ballot; break;
          case detail::Collective::All: g.result = ballot == mask; break;
          case detail::Collective::Any: g.result = ballot != 0; break;
        }
        g.state = State::Runnable;
      }
      progress = true;
    }
  }
  return progress;
}

// Nothing runnable, no collective complete: the block barrier, or an error.
void resolve_barrier(GridRun& r) {
  const Fiber *at_barrier = nullptr, *exited = nullptr, *at_collective = nullptr;
  unsigned n_barrier = 0, n_exited = 0, n_collective = 0;
  for (const Fiber& f : r.fibers) {
    if (f.state == State::AtBarrier) at_barrier = at_barrier ? at_barrier : &f, ++n_barrier;
    if (f.state == State::Done) exited = exited ? exited : &f, ++n_exited;
    if (f.state == State::AtCollective) at_collective = at_collective ? at_collective : &f, ++n_collective;
  }
  if (at_barrier && !at_collective) {
    if (exited)
      fail_at(r, at_barrier,
              "divergent __syncthreads: " + std::to_string(n_barrier) + " threads wait at the barrier while " +
                  std::to_string(n_exited) + " have exited (the first: thread (" + std::to_string(exited->tid.x) +
                  "," + std::to_string(exited->tid.y) + "," + std::to_string(exited->tid.z) + "))");
    unsigned count = 0;
    for (Fiber& f : r.fibers) count += f.barrier_pred != 0, f.state = State::Runnable;
    r.barrier_count = count;
    return;
  }
  // A deadlock: describe the first waiting collective and where its missing lanes are.
  std::string msg = "deadlock: " + std::to_string(n_barrier) + " threads at __syncthreads, " +
                    std::to_string(n_collective) + " at warp collectives, " + std::to_string(n_exited) + " exited";
  const Fiber* who = at_collective ? at_collective : at_barrier;
  if (at_collective) {
    const unsigned w = at_collective->linear / 32;
    const Fiber* lane = &r.fibers[w * 32];
    unsigned missing = 0;
    for (unsigned m = 0; m < 32; ++m)
      if ((at_collective->mask >> m & 1u) && lane[m].state != State::AtCollective) missing |= 1u << m;
    msg += "; " + std::string(at_collective->what) + " with mask " + hex(at_collective->mask) + " in warp " +
           std::to_string(w) + " waits for lanes " + lanes_text(missing);
    if (missing) msg += std::string(", which are ") + state_text(lane[__builtin_ctz(missing)].state);
  }
  fail_at(r, who, msg);
}

// ---- the kernel's module: where its __shared__ variables live ----
struct TlsSearch {
  const unsigned char* anchor;
  unsigned char* bss = nullptr;
  size_t bss_bytes = 0;
};

int find_tls_block(struct dl_phdr_info* info, size_t, void* data) {
  auto* s = static_cast<TlsSearch*>(data);
  if (!info->dlpi_tls_data) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_TLS) continue;
    auto* start = static_cast<unsigned char*>(info->dlpi_tls_data);
    if (s->anchor >= start && s->anchor < start + ph.p_memsz) {
      s->bss = start + ph.p_filesz;  // .tbss: the zero-initialised thread_locals
      s->bss_bytes = ph.p_memsz - ph.p_filesz;
      return 1;
    }
  }
  return 0;
}

// A fresh context on `stack` that starts in fiber_entry. (Its own function: getcontext
// returns twice as far as the compiler knows, which would clobber the caller's locals.)
__attribute__((noinline)) void prepare_fiber(Fiber& f, char* stack) {
  getcontext(&f.ctx);
  f.ctx.uc_stack.ss_sp = stack;
  f.ctx.uc_stack.ss_size = kStackBytes;
  f.ctx.uc_link = nullptr;
#ifdef GPU_SIM_ASAN
  __asan_unpoison_memory_region(stack, kStackBytes);  // left poisoned by the stack's last fiber
#endif
  makecontext(&f.ctx, fiber_entry, 0);
}

// ---- launch checks ----
void check_launch(const gpu_sim_launch& c) {
  std::string why;
  const unsigned long long threads = 1ull * c.block[0] * c.block[1] * c.block[2];
  if (c.grid[0] == 0 || c.grid[1] == 0 || c.grid[2] == 0) why = "a grid dimension is 0";
  else if (c.block[0] == 0 || c.block[1] == 0 || c.block[2] == 0) why = "a block dimension is 0";
  else if (threads > 1024) why = std::to_string(threads) + " threads per block (at most 1024)";
  else if (c.block[0] > 1024 || c.block[1] > 1024) why = "blockDim.x/y above 1024";
  else if (c.block[2] > 64) why = "blockDim.z = " + std::to_string(c.block[2]) + " (at most 64)";
  else if (c.grid[0] > 2147483647u) why = "gridDim.x above 2^31-1";
  else if (c.grid[1] > 65535 || c.grid[2] > 65535) why = "gridDim.y/z above 65535";
  else if (c.dynamic_shared_bytes > kMaxDynamicShared)
    why = std::to_string(c.dynamic_shared_bytes) + " bytes of dynamic shared memory (at most 48 KiB)";
  if (why.empty()) return;
  std::fprintf(stderr,
               "gpu_sim: kernel %s launch grid (%u,%u,%u) block (%u,%u,%u) dynamic shared %zu: invalid "
               "configuration: %s\n",
               c.kernel_name ? c.kernel_name : "?", c.grid[0], c.grid[1], c.grid[2], c.block[0], c.block[1],
               c.block[2], c.dynamic_shared_bytes, why.c_str());
  std::fflush(stderr);
  std::abort();
}

bool reverse_order() {
  const char* e = std::getenv("SIM_ORDER");
  return e && std::strcmp(e, "reverse") == 0;
}

}  // namespace

unsigned char* dynamic_shared() { return current("dynamic_shared"), t_run->smem; }

namespace detail {

const uint3& thread_index() { return current("threadIdx").tid; }
const uint3& block_index() { return current("blockIdx"), t_run->block_idx; }
const dim3& block_dim() { return current("blockDim"), t_run->block_dim; }
const dim3& grid_dim() { return current("gridDim"), t_run->grid_dim; }
unsigned lane_id() { return current("lane id").linear & 31u; }

void fail(const char* message) { fail_at(*t_run, &current("gpu_sim::detail::fail"), message); }

unsigned syncthreads(int pred) {
  Fiber& f = current("__syncthreads");
  f.barrier_pred = pred;
  f.state = State::AtBarrier;
  yield_to_scheduler(*t_run, f);
  return t_run->barrier_count;
}

uint64_t warp_collective(Collective kind, unsigned mask, uint64_t value, int src_lane, const char* what) {
  Fiber& f = current(what);
  GridRun& r = *t_run;
  const unsigned lane = f.linear & 31u, first = f.linear - lane;
  const unsigned lanes = std::min(32u, r.threads - first);
  const unsigned existing = lanes == 32 ? 0xffffffffu : (1u << lanes) - 1u;
  if (!(mask >> lane & 1u))
    fail_at(r, &f, std::string(what) + " with mask " + hex(mask) + ": the calling lane " + std::to_string(lane) +
                       " is not in its own mask");
  if (mask & ~existing)
    fail_at(r, &f, std::string(what) + " with mask " + hex(mask) + " names lanes " + lanes_text(mask & ~existing) +
                       " of warp " + std::to_string(first / 32) + ", which do not exist (the block has " +
                       std::to_string(r.threads) + " threads: not a multiple of 32)");
  if (kind == Collective::Shuffle && !(mask >> src_lane & 1u))
    fail_at(r, &f, std::string(what) + " with mask " + hex(mask) + ": lane " + std::to_string(lane) +
                       " reads lane " + std::to_string(src_lane) + ", which is not in the mask (undefined value)");
  f.kind = kind;
  f.what = what;
  f.mask = mask;
  f.posted = value;
  f.src_lane = src_lane;
  f.state = State::AtCollective;
  yield_to_scheduler(r, f);
  return f.result;
}

unsigned live_lanes() {
  Fiber& f = current("__activemask");
  GridRun& r = *t_run;
  const unsigned first = f.linear & ~31u, lanes = std::min(32u, r.threads - first);
  unsigned bits = 0;
  for (unsigned l = 0; l < lanes; ++l)
    if (r.fibers[first + l].state != State::Done) bits |= 1u << l;
  return bits;
}

void run_grid(const gpu_sim_launch& cfg, ThreadBody body, void* closure, const void* tls_anchor) {
  check_launch(cfg);
  GridRun r;
  r.cfg = &cfg;
  r.body = body;
  r.closure = closure;
  r.block_dim = dim3(cfg.block[0], cfg.block[1], cfg.block[2]);
  r.grid_dim = dim3(cfg.grid[0], cfg.grid[1], cfg.grid[2]);
  r.threads = cfg.block[0] * cfg.block[1] * cfg.block[2];
  r.fibers.resize(r.threads);
  for (unsigned i = 0; i < r.threads; ++i) t_res.stack(i);
  r.smem = t_res.dynamic_shared(cfg.dynamic_shared_bytes);
  const size_t smem_bytes = (cfg.dynamic_shared_bytes + 15) & ~size_t{15};

  TlsSearch tls{static_cast<const unsigned char*>(tls_anchor)};
  if (tls_anchor) dl_iterate_phdr(find_tls_block, &tls);

  const bool reverse = reverse_order();
  GridRun* outer = t_run;  // a kernel never launches one, but keep the caller's run intact
  t_run = &r;
  const unsigned long long blocks = 1ull * cfg.grid[0] * cfg.grid[1] * cfg.grid[2];
  for (unsigned long long q = 0; q < blocks; ++q) {
    const unsigned long long b = reverse ? blocks - 1 - q : q;
    r.block_idx = uint3{static_cast<unsigned>(b % cfg.grid[0]), static_cast<unsigned>(b / cfg.grid[0] % cfg.grid[1]),
                        static_cast<unsigned>(b / (1ull * cfg.grid[0] * cfg.grid[1]))};
    // Shared memory starts as garbage in every block.
    std::memset(r.smem, kGarbage, smem_bytes);
    if (tls.bss) std::memset(tls.bss, kGarbage, tls.bss_bytes);
    for (unsigned i = 0; i < r.threads; ++i) {
      Fiber& f = r.fibers[i];
      f.linear = i;
      f.tid = uint3{i % cfg.block[0], i / cfg.block[0] % cfg.block[1], i / (cfg.block[0] * cfg.block[1])};
      f.state = State::Runnable;
      f.asan_fake_stack = nullptr;
      prepare_fiber(f, t_res.stacks[i]);
    }
    for (;;) {
      for (unsigned k = 0; k < r.threads; ++k) {  // each runs until it exits or blocks
        Fiber& f = r.fibers[reverse ? r.threads - 1 - k : k];
        if (f.state == State::Runnable) switch_to_fiber(r, f);
      }
      if (std::all_of(r.fibers.begin(), r.fibers.end(), [](const Fiber& f) { return f.state == State::Done; })) break;
      if (!resolve_collectives(r)) resolve_barrier(r);
    }
  }
  t_run = outer;
}

}  // namespace detail
}  // namespace gpu_sim
