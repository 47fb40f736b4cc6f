#!/usr/bin/env bash
# Sets up a fresh Debian bookworm machine (root, or sudo) for Theon and builds it:
# Debian packages, the Python venv in .venv, then a CMake/Ninja build in build/.
# Safe to run again: it installs only what is missing and rebuilds incrementally.
set -euo pipefail
cd "$(dirname "$0")/.."

# ocl-icd-opencl-dev: oneDNN's CMake package looks for OpenCL (a Recommends of libdnnl-dev,
# which --no-install-recommends leaves out). libssl-dev: SHA-256 of cached kernel modules.
# graphviz: the `dot` program theon.printing.pydotprint runs.
PACKAGES=(cmake ninja-build ccache g++ pkg-config libdnnl-dev ocl-icd-opencl-dev libsleef-dev
          libopenblas-dev libssl-dev libgtest-dev googletest libbenchmark-dev python3-venv python3-dev
          graphviz)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "== setup: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Python tooling (numpy for the benchmark peers and Python tests, pytest).
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "== setup: creating .venv"
  "$PY" -m venv .venv
fi
if ! .venv/bin/python -c "import numpy, pytest, nanobind, scikit_build_core" 2>/dev/null; then
  .venv/bin/pip install -q --disable-pip-version-check "numpy>=2" pytest "nanobind>=2" scikit-build-core
fi

BUILD_DIR=${THEON_BUILD_DIR:-build}
# Configure every time (incremental, about a second) so new CMake files are picked up; the
# Python module is built in the same tree as the library, with the venv's Python.
# What the build includes and skips (e.g. the CUDA backend without a toolkit) is shown; the
# rest of CMake's output goes to build/cmake-configure.log.
mkdir -p "$BUILD_DIR"
# shellcheck disable=SC2086  # THEON_CMAKE_ARGS is a list of -D arguments
if ! cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DPython_EXECUTABLE="$PWD/.venv/bin/python" ${THEON_CMAKE_ARGS:-} >"$BUILD_DIR/cmake-configure.log"; then
  cat "$BUILD_DIR/cmake-configure.log"
  exit 1
fi
grep -E "^-- (Theon|CUDA toolkit)" "$BUILD_DIR/cmake-configure.log" | sed 's/^-- /== setup: /' || true
echo "== setup: building ($BUILD_DIR)"
ninja -C "$BUILD_DIR" -j"$(nproc)"

# Make the venv import theon from the build tree: no second build, no copy.
SITE=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "$PWD/$BUILD_DIR/python" > "$SITE/theon-build.pth"
