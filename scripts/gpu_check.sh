#!/usr/bin/env bash
# The real-GPU run, in steps that each fit one 10-minute call on the lent GPU machine (it
# starts bare, with no network, and keeps build outputs between calls while it is warm):
#   first          THE FIRST CALL OF A LENT MACHINE, alone, in one call of at most 9 minutes
#                  on a bare 16-core machine: builds only what the checks below need, then
#                  the GPU suite, the NVRTC sweep, the C++ seed examples (the contexts seed
#                  under dev0->cuda0;dev1->cuda0 and dev0->cpu;dev1->cpu) and the contexts
#                  benchmark; every step is cut to the time left (FIRST_BUDGET_S, default
#                  520 s, from the step's start), so the call returns with its logs. Later
#                  issues add their C++ checks here without growing it past 9 minutes.
#   build          configure and build without oneDNN, CBLAS and SLEEF (not on that image),
#                  GoogleTest from the carried source tree .carry/googletest
#   sweep          the NVRTC compile sweep (test_nvrtc_sweep: every kernel the op tests use)
#   suite          the GPU suite: ctest label gpu (the CUDA unit tests and every op-harness
#                  case with every node on the GPU, on_fallback=raise)
#   cuda-unit      the CUDA backend's device-free unit tests on the GPU machine
#   memcheck-unit  compute-sanitizer memcheck over the CUDA unit tests
#   memcheck-ops   compute-sanitizer memcheck over the op harness, one dtype per op
# Both memcheck steps turn the caching allocator off (gpu_memory_cache=False): every block
# is its exact size and freed at once, so an overrun past a tensor's end is reported
# instead of landing in the rest of a rounded, cached block.
#
# Usage: scripts/gpu_check.sh STEP [STEP...]   (or "all": every step, in order)
# Each step logs to $OUT/<step>.log (or out/ when $OUT is unset) and adds a line to
# $OUT/summary.txt. A gtest step that ran no test fails: a green step that ran nothing is
# the failure to avoid.
#
# From the development machine, once per session:
#   mkdir -p .carry && cp -r /usr/src/googletest .carry/
#   device run: command="bash scripts/gpu_check.sh first", carry=[".carry"] (the first call);
#   later calls, on the warm machine: build, sweep, suite, ...
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-out}
mkdir -p "$OUT"
BUILD=build-gpu
export THEON_FLAGS="cxx="
export XDG_CACHE_HOME=$PWD/$BUILD/cache
status=0

# run NAME COMMAND...: runs it, logs to $OUT/NAME.log, records rc and time in the summary.
run() {
  local name=$1; shift
  local t0=$(date +%s)
  "$@" >"$OUT/$name.log" 2>&1
  local rc=$?
  # gtest binaries: "[  PASSED  ] 0 tests" or no PASSED line at all means nothing ran.
  if [ $rc -eq 0 ] && grep -q '^\[==========\]' "$OUT/$name.log" &&
     ! grep -qE '^\[  PASSED  \] [1-9]' "$OUT/$name.log"; then
    echo "$name: no test ran" >>"$OUT/$name.log"; rc=3
  fi
  # ctest: "No tests were found" is a failure too.
  if [ $rc -eq 0 ] && grep -q 'No tests were found' "$OUT/$name.log"; then rc=3; fi
  printf '%-16s rc=%-3s %4ss\n' "$name" "$rc" "$(( $(date +%s) - t0 ))" | tee -a "$OUT/summary.txt"
  tail -n 5 "$OUT/$name.log"
  [ $rc -eq 0 ] || status=1
}

# Seconds left of the `first` budget (at least 1).
left() { local l=$(( FIRST_END - $(date +%s) )); [ $l -gt 1 ] && echo $l || echo 1; }

configure() {
  run configure cmake -S . -B $BUILD -G Ninja -DCMAKE_BUILD_TYPE=Release -DTHEON_WITH_DNNL=OFF \
    -DTHEON_WITH_CBLAS=OFF -DTHEON_BUILD_PYTHON=OFF -DTHEON_BUILD_BENCH=${1:-OFF} \
    -DTHEON_BUILD_EXAMPLES=${1:-OFF} -DTHEON_GTEST_SOURCE_DIR="$PWD/.carry/googletest"
}

step() {
  case $1 in
    first)
      FIRST_END=$(( $(date +%s) + ${FIRST_BUDGET_S:-520} ))
      { nvidia-smi --query-gpu=name,driver_version,memory.total,pci.bus_id --format=csv; nproc; } >"$OUT/gpu.txt" 2>&1
      cat "$OUT/gpu.txt"
      configure ON
      # Only what the checks need: the libraries, the GPU suite's two binaries, the sweep,
      # the seed examples and the contexts benchmark (found by name: later issues add seeds).
      local seeds=$(ninja -C $BUILD -t targets all 2>/dev/null | sed -n 's/^\(seed[A-Za-z0-9_]*\): .*/\1/p' | sort -u)
      local bench=$(ninja -C $BUILD -t targets all 2>/dev/null | sed -n 's/^\(contexts_bench\): .*/\1/p' | head -1)
      run build timeout $(left) ninja -C $BUILD theon theon_cuda test_backends_cuda_gpu test_op_harness \
        test_nvrtc_sweep $seeds $bench
      run suite timeout $(( $(left) * 6 / 10 )) ctest --test-dir $BUILD -L '^gpu$' --output-on-failure -j8 --timeout 120
      ctest --test-dir $BUILD -L '^gpu$' -N | tail -1 | tee -a "$OUT/summary.txt"
      run sweep timeout $(( $(left) * 6 / 10 )) $BUILD/tests/test_nvrtc_sweep
      local s
      for s in $seeds; do
        case $s in
          *context*)
            run "$s.cuda" timeout 60 env THEON_FLAGS="cxx=,contexts=dev0->cuda0;dev1->cuda0" $BUILD/examples/$s
            run "$s.cpu" timeout 60 env THEON_FLAGS="cxx=,contexts=dev0->cpu;dev1->cpu" $BUILD/examples/$s ;;
          *) run "$s" timeout 60 env THEON_FLAGS="cxx=,device=cuda0" $BUILD/examples/$s ;;
        esac
      done
      [ -n "$bench" ] && run contexts-bench timeout $(left) $BUILD/bench/contexts_bench --gpu ;;
    build)
      nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv >"$OUT/gpu.txt" 2>&1
      cat "$OUT/gpu.txt"
      configure OFF
      run build ninja -C $BUILD ;;
    sweep)
      run sweep $BUILD/tests/test_nvrtc_sweep ;;
    suite)
      # '^gpu$': the label gpu only (a plain "gpu" would also match gpu-sim).
      run suite ctest --test-dir $BUILD -L '^gpu$' --output-on-failure -j8 --timeout 300
      ctest --test-dir $BUILD -L '^gpu$' -N | tail -1 | tee -a "$OUT/summary.txt" ;;
    cuda-unit)
      run cuda-unit $BUILD/tests/test_backends_cuda ;;
    memcheck-unit|memcheck-ops)
      if ! command -v compute-sanitizer >/dev/null; then
        echo "$1: compute-sanitizer not found" | tee -a "$OUT/summary.txt"; status=1; return
      fi
      local flags="cxx=,gpu_memory_cache=False"
      if [ "$1" = memcheck-unit ]; then
        run memcheck-unit env THEON_FLAGS="$flags" compute-sanitizer --tool memcheck --error-exitcode 9 \
          $BUILD/tests/test_backends_cuda_gpu
      else
        run memcheck-ops env THEON_FLAGS="$flags,device=cuda,on_fallback=raise" THEON_HARNESS_DTYPES=first \
          compute-sanitizer --tool memcheck --error-exitcode 9 $BUILD/tests/test_op_harness --gtest_filter='Ops/*'
      fi ;;
    all)
      for s in build sweep suite cuda-unit memcheck-unit memcheck-ops; do step $s; done ;;
    *)
      echo "unknown step '$1' (first, build, sweep, suite, cuda-unit, memcheck-unit, memcheck-ops, all)" >&2
      exit 2 ;;
  esac
}

[ $# -gt 0 ] || { sed -n '2,30p' "$0"; exit 2; }
for s in "$@"; do step "$s"; done
exit $status
