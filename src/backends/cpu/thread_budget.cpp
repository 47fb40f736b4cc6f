#include "backends/cpu/thread_budget.hpp"

#include <dlfcn.h>

#include <mutex>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace theon::backends::cpu {

int process_threads() {
#ifdef _OPENMP
  static const int threads = omp_get_max_threads();
  return threads;
#else
  return 1;
#endif
}

namespace {

// Initial-exec: read on every CPU loop of a call, so a plain %fs-relative load rather than a
// __tls_get_addr call (16 bytes of the static TLS that glibc keeps for libraries loaded by
// dlopen, as Python loads libtheon).
[[gnu::tls_model("initial-exec")]] thread_local LoopBudget current_budget;

// OpenBLAS's process-wide setter and getter, when the process has OpenBLAS (looked up once).
struct OpenBlas {
  void (*set)(int) = nullptr;
  int (*get)() = nullptr;
  OpenBlas() {
    set = reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
    get = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
    if (!set || !get) set = nullptr, get = nullptr;
  }
};
const OpenBlas& openblas() {
  static const OpenBlas lib;
  return lib;
}
std::mutex pin_mutex;
int pins = 0;           // live OpenBlasSingleThread instances (pin_mutex)
int saved_threads = 0;  // OpenBLAS's count before the first pin (pin_mutex)

}  // namespace

const LoopBudget& loop_budget() { return current_budget; }

LoopBudgetScope::LoopBudgetScope(const LoopBudget& budget) : saved_(current_budget) {
  current_budget = budget;
#ifdef _OPENMP
  if (budget.threads > 0) {
    const int now = omp_get_max_threads();
    if (now != budget.threads) {
      saved_omp_ = now;
      omp_set_num_threads(budget.threads);
    }
  }
#endif
}

LoopBudgetScope::~LoopBudgetScope() {
  current_budget = saved_;
#ifdef _OPENMP
  if (saved_omp_ > 0) omp_set_num_threads(saved_omp_);
#endif
}

OpenBlasSingleThread::OpenBlasSingleThread() {
  const OpenBlas& lib = openblas();
  if (!lib.set) return;
  std::lock_guard<std::mutex> lock(pin_mutex);
  if (pins++ == 0) {
    saved_threads = lib.get();
    if (saved_threads != 1) lib.set(1);
  }
}

OpenBlasSingleThread::~OpenBlasSingleThread() {
  const OpenBlas& lib = openblas();
  if (!lib.set) return;
  std::lock_guard<std::mutex> lock(pin_mutex);
  if (--pins == 0 && saved_threads != 1) lib.set(saved_threads);
}

int OpenBlasSingleThread::openblas_threads() {
  const OpenBlas& lib = openblas();
  return lib.get ? lib.get() : -1;
}

}  // namespace theon::backends::cpu
