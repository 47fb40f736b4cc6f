#!/usr/bin/env bash
# The GPU run, in one call on the lent GPU machine (it starts bare, with no network):
#   1. builds Theon without oneDNN, CBLAS and SLEEF (not on that image), with GoogleTest
#      built from the carried source tree .carry/googletest;
#   2. runs the NVRTC sweep and the GPU suite (ctest label gpu: every op-harness case with
#      every node on the GPU, plus the CUDA runtime tests);
#   3. runs the CUDA tests under compute-sanitizer --tool memcheck (one dtype per op);
#   4. prints a summary table last. Logs go to $OUT (or out/ when $OUT is unset).
#
# From the development machine, once per session:
#   mkdir -p .carry && cp -r /usr/src/googletest .carry/
#   device run: command="bash scripts/gpu_check.sh", carry=[".carry"]
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-out}
mkdir -p "$OUT"
BUILD=build-gpu
export THEON_FLAGS="cxx="
export XDG_CACHE_HOME=$PWD/$BUILD/cache
summary=()
step() {  # step NAME COMMAND...: runs, logs to $OUT/NAME.log, records the status
  local name=$1; shift
  local t0=$(date +%s)
  "$@" >"$OUT/$name.log" 2>&1
  local rc=$?
  summary+=("$(printf '%-28s rc=%-3s %4ss' "$name" "$rc" "$(( $(date +%s) - t0 ))")")
  tail -n 5 "$OUT/$name.log"
  return $rc
}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv >"$OUT/gpu.txt" 2>&1
cat "$OUT/gpu.txt"
step configure cmake -S . -B $BUILD -G Ninja -DCMAKE_BUILD_TYPE=Release -DTHEON_WITH_DNNL=OFF \
  -DTHEON_WITH_CBLAS=OFF -DTHEON_BUILD_PYTHON=OFF -DTHEON_BUILD_BENCH=OFF -DTHEON_BUILD_EXAMPLES=OFF \
  -DTHEON_GTEST_SOURCE_DIR="$PWD/.carry/googletest"
step build ninja -C $BUILD
step nvrtc_sweep $BUILD/tests/test_backends_cuda --gtest_filter='NvrtcSweep.*'
step gpu_suite ctest --test-dir $BUILD -L gpu --output-on-failure -j8 --timeout 300
step cuda_unit $BUILD/tests/test_backends_cuda
if command -v compute-sanitizer >/dev/null; then
  step memcheck_cuda compute-sanitizer --tool memcheck --error-exitcode 9 $BUILD/tests/test_backends_cuda_gpu
  step memcheck_ops env THEON_FLAGS="cxx=,device=cuda,on_fallback=raise" \
    compute-sanitizer --tool memcheck --error-exitcode 9 $BUILD/tests/test_op_harness \
    --gtest_filter='*float32*:*_0:*_1'
fi
ctest --test-dir $BUILD -L gpu -N | tail -1 | tee -a "$OUT/summary.txt"
printf '%s\n' "${summary[@]}" | tee -a "$OUT/summary.txt"
