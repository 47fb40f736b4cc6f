#!/usr/bin/env bash
# Sets up, builds and runs the demo: training on the digits data set (examples/train_digits.cpp).
# Arguments go to the trainer (e.g. --epochs 10 --model mlp).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
BUILD_DIR=${THEON_BUILD_DIR:-build}
echo "== demo: training on the handwritten digits (logistic regression, then an MLP)"
"$BUILD_DIR"/examples/train_digits "$@"
