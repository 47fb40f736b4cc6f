#!/usr/bin/env bash
# Sets up, builds and runs every test (C++ through ctest; Python when present).
# GPU tests (ctest label "gpu") skip themselves on machines without a CUDA device; the same
# tests then run on the simulated CUDA device (label "gpu-sim", docs/guide/testing.md).
set -euo pipefail
cd "$(dirname "$0")/.."
phase() { echo "== $1 ($(date +%T))"; }
start=$(date +%s)
phase "setup and build"
./scripts/setup.sh
built=$(date +%s)
BUILD_DIR=${THEON_BUILD_DIR:-build}
phase "C++ tests"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$(nproc)" --timeout 300 -LE 'nvrtc|gpu-sim'
cpp=$(date +%s)
if ctest --test-dir "$BUILD_DIR" -N -L gpu-sim | grep -q "Total Tests: [1-9]"; then
  phase "GPU tests on the simulated CUDA device (eager; deferred+guard; reverse; random x3)"
  ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$(nproc)" -L gpu-sim
fi
sim=$(date +%s)
if ctest --test-dir "$BUILD_DIR" -N -L nvrtc | grep -q "Total Tests: [1-9]"; then
  phase "NVRTC compile sweep (every CUDA kernel the op tests use, for sm_90)"
  ctest --test-dir "$BUILD_DIR" --output-on-failure --timeout 900 -L nvrtc
fi
sweep=$(date +%s)
if [ -d tests/python ] && ls tests/python/test_*.py >/dev/null 2>&1; then
  phase "Python tests"
  THEON_FLAGS="cxx=" THEANO_FLAGS="" .venv/bin/python -m pytest -q tests/python
fi
end=$(date +%s)
echo "== timings: setup+build $((built - start)) s, C++ tests $((cpp - built)) s, GPU simulator $((sim - cpp)) s, NVRTC sweep $((sweep - sim)) s, Python $((end - sweep)) s"
