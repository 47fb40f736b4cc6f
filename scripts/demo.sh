#!/usr/bin/env bash
# Sets up, builds and runs the demo: the seed document's examples on the CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
BUILD_DIR=${THEON_BUILD_DIR:-build}
echo "== demo: seed example 1 (dot + bias)"
"$BUILD_DIR"/examples/seed_dot_bias
echo
echo "== demo: seed example 3 (relu, exp, log)"
"$BUILD_DIR"/examples/seed_relu_exp_log
