#!/usr/bin/env bash
# A longer run of the graph fuzzer (tests/cpp/rewrite/graph_fuzz_test.cpp) than CI's fixed,
# seeded budget: random graphs for N minutes with a random seed (docs/guide/testing.md,
# "Fuzzing"). Each failing trial prints the line that reruns it alone.
#
#   scripts/fuzz.sh --minutes 10                 # interpreter (fast: the most trials)
#   scripts/fuzz.sh --minutes 30 --codegen       # generated C++ kernels, as users run them
#   scripts/fuzz.sh --minutes 30 --gpu-sim       # on the simulated CUDA device (slow)
#   scripts/fuzz.sh --seed 1234 --trials 500     # a given seed and budget
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
  echo "options: --minutes N, --trials N, --seed S, --first-trial T, --max-failures N, --codegen, --gpu-sim"
  echo "environment: THEON_BUILD_DIR (default build)"
}

minutes="" trials="" seed="" first="" max_failures="" mode=interpreter
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) minutes="$2"; shift 2 ;;
    --trials) trials="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --first-trial) first="$2"; shift 2 ;;
    --max-failures) max_failures="$2"; shift 2 ;;
    --codegen) mode=codegen; shift ;;
    --gpu-sim) mode=gpu-sim; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "fuzz.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
if [ -z "$minutes" ] && [ -z "$trials" ]; then minutes=5; fi
# A seed below 2^32, different each run unless given.
if [ -z "$seed" ]; then seed=$(( $(od -An -N4 -tu4 /dev/urandom) )); fi

BUILD_DIR=${THEON_BUILD_DIR:-build}
if [ ! -d "$BUILD_DIR" ]; then
  echo "fuzz.sh: no build folder '$BUILD_DIR' (build first, or set THEON_BUILD_DIR)" >&2
  exit 2
fi
targets=(test_rewrite)
if [ "$mode" = gpu-sim ]; then
  targets+=(theon_cuda theon_gpu_sim_cudart theon_gpu_sim_cublas theon_gpu_sim_cublaslt theon_gpu_sim_nvrtc)
fi
cmake --build "$BUILD_DIR" --target "${targets[@]}" > /dev/null
BUILD_DIR=$(cd "$BUILD_DIR" && pwd)

env_vars=(THEON_FUZZ_SEED="$seed")
[ -n "$minutes" ] && env_vars+=(THEON_FUZZ_MINUTES="$minutes")
[ -n "$trials" ] && env_vars+=(THEON_FUZZ_TRIALS="$trials")
[ -n "$first" ] && env_vars+=(THEON_FUZZ_FIRST_TRIAL="$first")
[ -n "$max_failures" ] && env_vars+=(THEON_FUZZ_MAX_FAILURES="$max_failures")
case "$mode" in
  interpreter) flags="cxx=" ;;
  codegen) flags="compiledir=$BUILD_DIR/fuzz_compiledir" ;;
  gpu-sim)
    flags="cxx=,device=cuda,on_fallback=raise,compiledir=$BUILD_DIR/gpu_sim/compiledir"
    env_vars+=(LD_LIBRARY_PATH="$BUILD_DIR/gpu_sim/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" THEON_GPU_SIM=1
               SIM_DEVICES=2) ;;
esac
env_vars+=(THEON_FLAGS="$flags")

echo "fuzz.sh: seed $seed, ${minutes:+$minutes minutes}${minutes:+${trials:+, }}${trials:+$trials trials}, $mode"
status=0
env "${env_vars[@]}" "$BUILD_DIR/tests/test_rewrite" --gtest_filter='GraphFuzz.*' --gtest_brief=1 || status=$?
if [ "$status" -ne 0 ]; then
  echo "fuzz.sh: failures above; each 'rerun:' line reruns its trial, with this environment:"
  extra=""
  [ "$mode" = gpu-sim ] && extra=" LD_LIBRARY_PATH=$BUILD_DIR/gpu_sim/lib THEON_GPU_SIM=1 SIM_DEVICES=2"
  echo "  THEON_FLAGS='$flags'$extra"
fi
exit "$status"
