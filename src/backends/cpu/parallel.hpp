// When the CPU backend's loops go parallel: one rule, from the work's size, for all of them
// (elementwise and fused loops, softmax, pooling, the softmax cross-entropy, reductions' sorts,
// random draws). A loop of fewer than config().openmp_elemwise_minsize elements (Theano's
// option; default 200,000) runs on the calling thread and starts no OpenMP team: below that,
// waking the team and the threads' spin-waits after the loop cost more than the split saves,
// the more so on a machine whose cores are shared. From the threshold up, a thread for every
// half threshold of elements, at most omp_get_max_threads(). The threads are libgomp's, the
// pool oneDNN's sgemm uses too (both link libgomp), so there is one pool in the process.
#pragma once

#include <theon/config.hpp>

#include <algorithm>
#include <cstdint>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace theon::backends::cpu {

/// OpenMP threads for a loop over `elements` elements: 1 below openmp_elemwise_minsize (use
/// `#pragma omp parallel ... num_threads(t) if (t > 1)`).
inline int parallel_threads(int64_t elements) {
#ifdef _OPENMP
  const int64_t min = std::max<int64_t>(config().openmp_elemwise_minsize, 2);
  if (elements < min) return 1;
  const int64_t want = std::max<int64_t>(2, elements / (min / 2));
  return static_cast<int>(std::min<int64_t>(want, omp_get_max_threads()));
#else
  (void)elements;
  return 1;
#endif
}

}  // namespace theon::backends::cpu
