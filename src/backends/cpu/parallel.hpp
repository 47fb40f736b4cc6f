// When the CPU backend's loops go parallel: one rule, from the work's size, for all of them
// (elementwise and fused loops, softmax, pooling, the softmax cross-entropy, reductions' sorts,
// random draws). A loop of fewer than openmp_elemwise_minsize elements (Theano's option;
// default 200,000; frozen in KernelOptions when the function is compiled and handed to the
// loops by the executor's LoopBudgetScope, thread_budget.hpp) runs on the calling thread and
// starts no OpenMP team: below that,
// waking the team and the threads' spin-waits after the loop cost more than the split saves,
// the more so on a machine whose cores are shared. From the threshold up, a thread for every
// half threshold of elements, at most the thunk's thread budget (its context's; 0: the
// thread's omp_get_max_threads()). The threads are libgomp's, the
// pool oneDNN's sgemm uses too (both link libgomp), so there is one pool in the process.
#pragma once

#include "backends/cpu/thread_budget.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace theon::backends::cpu {

/// OpenMP threads for a loop over `elements` elements: 1 below openmp_elemwise_minsize (use
/// `#pragma omp parallel ... num_threads(t) if (t > 1)`).
inline int parallel_threads(int64_t elements) {
#ifdef _OPENMP
  const LoopBudget& budget = loop_budget();
  const int64_t min = std::max<int64_t>(budget.minsize, 2);
  if (elements < min) return 1;
  const int64_t want = std::max<int64_t>(2, elements / (min / 2));
  return static_cast<int>(std::min<int64_t>(want, budget.threads > 0 ? budget.threads : omp_get_max_threads()));
#else
  (void)elements;
  return 1;
#endif
}

/// memcpy of `bytes` bytes holding `elements` elements, split over parallel_threads(elements)
/// threads (a weight matrix copied before an update Gemm: 2 threads copy 3.2 MB in 37 us
/// where one takes 66, on the 2-core Zen 4 machine).
inline void parallel_memcpy(void* dst, const void* src, size_t bytes, int64_t elements) {
  const int threads = parallel_threads(elements);
  if (threads <= 1) {
    std::memcpy(dst, src, bytes);
    return;
  }
  const size_t chunk = (bytes / static_cast<size_t>(threads) + 63) / 64 * 64;
#ifdef _OPENMP
#pragma omp parallel for schedule(static, 1) num_threads(threads)
#endif
  for (int t = 0; t < threads; ++t) {
    const size_t begin = std::min(bytes, chunk * static_cast<size_t>(t)), end = std::min(bytes, begin + chunk);
    if (begin < end) std::memcpy(static_cast<char*>(dst) + begin, static_cast<const char*>(src) + begin, end - begin);
  }
}

}  // namespace theon::backends::cpu
