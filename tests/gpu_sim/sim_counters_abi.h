/* The simulated CUDA runtime's counters (tests/gpu_sim/cuda/sim_cudart.cpp), simulator-only
 * exports beside theon_gpu_sim_marker. Tests read them through
 * tests/cpp/backends/cuda/sim_counters.hpp, which finds them with dlsym, so a test binary
 * still runs on a real GPU (there it reads nothing). Plain C: both sides include this file.
 *
 * A host synchronisation is a call after which the host goes on only once device work is
 * done: cudaStreamSynchronize, cudaEventSynchronize, cudaDeviceSynchronize, cudaMemcpy and
 * cudaMemset, an asynchronous copy with a pageable host side (CUDA makes it synchronous),
 * cudaFree and cudaFreeHost. host_syncs counts them whatever the stream mode; host_waits
 * counts those that found the work they wait for still pending, which happens only where
 * work is left queued (SIM_STREAMS=deferred or random): under deferred, "everything was
 * enqueued before one wait" reads as host_waits == 1 with the pending counts of each stream
 * at that wait (theon_gpu_sim_pending_at_sync). */
#ifndef THEON_GPU_SIM_COUNTERS_ABI_H
#define THEON_GPU_SIM_COUNTERS_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct theon_gpu_sim_counters {
  uint64_t launches;        /* kernels launched (cudaLaunchKernel calls accepted) */
  uint64_t operations;      /* work enqueued on streams: launches, copies, memsets, library calls */
  uint64_t host_syncs;      /* host synchronisations (above), in every mode */
  uint64_t host_waits;      /* those that found their work pending: the host really waited */
  uint64_t events_recorded; /* cudaEventRecord calls */
  uint64_t stream_waits;    /* cudaStreamWaitEvent calls */
};

/* Copies the counters since the process started or the last reset. */
void theon_gpu_sim_read_counters(struct theon_gpu_sim_counters* out);
/* Zeroes the counters and forgets the host synchronisations recorded so far. */
void theon_gpu_sim_reset_counters(void);
/* For host synchronisation number `sync` (0-based, counted since the last reset): the
 * operations pending on `stream` (a cudaStream_t) when it was called, before it waited; the
 * legacy default stream is the stream of the calling thread's device. UINT64_MAX when there
 * was no such synchronisation (or it is past the first 65536 since the reset, which are the
 * ones kept). */
uint64_t theon_gpu_sim_pending_at_sync(uint64_t sync, const void* stream);
/* The same summed over every stream of `device`. */
uint64_t theon_gpu_sim_device_pending_at_sync(uint64_t sync, int device);
/* The CUDA call of synchronisation number `sync` ("cudaStreamSynchronize", ...), or "" past
 * the recorded ones. */
const char* theon_gpu_sim_sync_call(uint64_t sync);

#ifdef __cplusplus
}
#endif

#endif
