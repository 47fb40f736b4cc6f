// The thread budget of CPU work (DESIGN.md "Execution model", contexts): what Theon's OpenMP
// loops and oneDNN may use on the thread that runs a thunk.
//
// A Program with several CPU contexts runs each on its own worker thread (exec/executor.hpp);
// each gets a budget (ExecContext::threads: by default the process's threads divided among
// the CPU contexts, settable per context through LowerOptions::context_threads), so two
// contexts never run four threads on two cores. The executor applies it with a
// LoopBudgetScope on the thread that runs the context's thunks:
//   - omp_set_num_threads(budget): OpenMP's nthreads-var is per thread, so it sets the team
//     size of that worker's parallel regions only — oneDNN's sgemm and every loop that asks
//     omp_get_max_threads();
//   - parallel_threads() (parallel.hpp) reads the scope's frozen openmp_elemwise_minsize
//     (KernelOptions, read from config() when the function was compiled) and its budget,
//     never config() while a call runs.
// Debian's OpenBLAS has ONE process-wide thread count (openblas_set_num_threads), not one per
// thread: while calls with several CPU contexts run, an OpenBlasSingleThread pins it to 1
// (the CPU contexts' workers are the parallelism) and restores it when the last such call
// ends. It is found with dlsym, so a build or a process without OpenBLAS skips it.
#pragma once
#include <cstdint>

namespace theon::backends::cpu {

/// The OpenMP threads of the process (omp_get_max_threads() as the first caller saw it,
/// before any worker set its own; 1 without OpenMP): what CPU contexts divide among them.
int process_threads();

/// What a CPU loop may use on this thread.
struct LoopBudget {
  int64_t minsize = 200000;  // openmp_elemwise_minsize (the option's default outside a Program)
  int threads = 0;           // at most this many threads; 0: omp_get_max_threads()
};
/// The budget of the thunk this thread runs (the defaults outside a Program: kernels run by
/// constant folding and unit tests).
const LoopBudget& loop_budget();

/// Sets this thread's loop budget (and, with threads > 0, its OpenMP thread count) for its
/// lifetime; restores both after.
class LoopBudgetScope {
 public:
  explicit LoopBudgetScope(const LoopBudget& budget);
  ~LoopBudgetScope();
  LoopBudgetScope(const LoopBudgetScope&) = delete;
  LoopBudgetScope& operator=(const LoopBudgetScope&) = delete;

 private:
  LoopBudget saved_;
  int saved_omp_ = 0;  // the thread's OpenMP count before, when this scope changed it
};

/// OpenBLAS on one thread while any instance lives (process-wide, counted; see above).
class OpenBlasSingleThread {
 public:
  OpenBlasSingleThread();
  ~OpenBlasSingleThread();
  OpenBlasSingleThread(const OpenBlasSingleThread&) = delete;
  OpenBlasSingleThread& operator=(const OpenBlasSingleThread&) = delete;
  /// OpenBLAS's thread count now (-1 when the process has no OpenBLAS).
  static int openblas_threads();
};

}  // namespace theon::backends::cpu
