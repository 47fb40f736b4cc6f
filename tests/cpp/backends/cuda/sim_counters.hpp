// The simulated CUDA device's counters (tests/gpu_sim/sim_counters_abi.h) for GPU tests:
// launches, operations, host synchronisations and waits, events, stream waits, and the work
// pending on each stream at each host synchronisation. Found with dlsym in the process, so a
// test that includes this still builds and runs against a real libcudart (available() false):
//
//   testing::SimCounters sim;
//   if (!sim.available()) GTEST_SKIP() << "needs the simulated device";  // or check only when present
//   sim.reset();
//   f();                                                       // one call
//   const theon_gpu_sim_counters c = sim.read();
//   EXPECT_EQ(c.host_syncs, 1u);                               // the call's single host wait
//   if (testing::sim_streams_are("deferred"))                  // work is queued only there
//     EXPECT_GT(sim.pending_at(0, stream_of_context_b), 0u);   // b's work was enqueued before it
#pragma once
#include "../../../gpu_sim/sim_counters_abi.h"

#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

namespace theon::testing {

class SimCounters {
 public:
  SimCounters()
      : read_(find<decltype(read_)>("theon_gpu_sim_read_counters")),
        reset_(find<decltype(reset_)>("theon_gpu_sim_reset_counters")),
        pending_(find<decltype(pending_)>("theon_gpu_sim_pending_at_sync")),
        device_pending_(find<decltype(device_pending_)>("theon_gpu_sim_device_pending_at_sync")),
        call_(find<decltype(call_)>("theon_gpu_sim_sync_call")) {}

  /// Whether the simulated runtime is loaded in this process (load it first: cuda_status()).
  bool available() const { return read_ && reset_ && pending_ && device_pending_ && call_; }
  /// Zeroes the counters and the record of host synchronisations (no-op off the simulator).
  void reset() const {
    if (available()) reset_();
  }
  /// The counters since the last reset (all zero off the simulator).
  theon_gpu_sim_counters read() const {
    theon_gpu_sim_counters c{};
    if (available()) read_(&c);
    return c;
  }
  /// Operations (including stream waits) pending on `stream` when host synchronisation
  /// number `sync` (0-based since the reset) was called; UINT64_MAX when there was none.
  uint64_t pending_at(uint64_t sync, const void* stream) const {
    return available() ? pending_(sync, stream) : UINT64_MAX;
  }
  /// The same summed over the streams of `device`.
  uint64_t device_pending_at(uint64_t sync, int device) const {
    return available() ? device_pending_(sync, device) : UINT64_MAX;
  }
  /// The CUDA call that made synchronisation number `sync` ("" past the recorded ones).
  std::string call_at(uint64_t sync) const { return available() ? call_(sync) : ""; }

 private:
  // In the process's global scope (a test linked with libcudart), else in the libcudart that
  // libtheon_cuda loaded (opened locally when the test links only libtheon).
  template <class F>
  static F find(const char* name) {
    if (void* f = dlsym(RTLD_DEFAULT, name)) return reinterpret_cast<F>(f);
    for (const char* soname : {"libcudart.so.13", "libcudart.so.12", "libcudart.so"})
      if (void* lib = dlopen(soname, RTLD_LAZY | RTLD_NOLOAD)) {
        void* f = dlsym(lib, name);
        dlclose(lib);  // (RTLD_NOLOAD took a reference: the library stays loaded)
        if (f) return reinterpret_cast<F>(f);
      }
    return nullptr;
  }
  void (*read_)(theon_gpu_sim_counters*);
  void (*reset_)();
  uint64_t (*pending_)(uint64_t, const void*);
  uint64_t (*device_pending_)(uint64_t, int);
  const char* (*call_)(uint64_t);
};

/// Whether the simulator runs with SIM_STREAMS=`mode` ("eager" when unset).
inline bool sim_streams_are(const char* mode) {
  const char* v = std::getenv("SIM_STREAMS");
  return std::strcmp(v && *v ? v : "eager", mode) == 0;
}

}  // namespace theon::testing
