#!/usr/bin/env bash
# The real-GPU run, in steps that each fit one 10-minute call on the lent GPU machine (it
# starts bare, with no network, and keeps build outputs between calls while it is warm):
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
#   device run: command="bash scripts/gpu_check.sh build", carry=[".carry"]; then sweep, ...
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

step() {
  case $1 in
    build)
      nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv >"$OUT/gpu.txt" 2>&1
      cat "$OUT/gpu.txt"
      run configure cmake -S . -B $BUILD -G Ninja -DCMAKE_BUILD_TYPE=Release -DTHEON_WITH_DNNL=OFF \
        -DTHEON_WITH_CBLAS=OFF -DTHEON_BUILD_PYTHON=OFF -DTHEON_BUILD_BENCH=OFF -DTHEON_BUILD_EXAMPLES=OFF \
        -DTHEON_GTEST_SOURCE_DIR="$PWD/.carry/googletest"
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
      echo "unknown step '$1' (build, sweep, suite, cuda-unit, memcheck-unit, memcheck-ops, all)" >&2
      exit 2 ;;
  esac
}

[ $# -gt 0 ] || { sed -n '2,23p' "$0"; exit 2; }
for s in "$@"; do step "$s"; done
exit $status
