#!/usr/bin/env bash
# Installs a built Theon into a temporary prefix, then configures, builds and runs the
# consumer project (tests/install/consumer: find_package(Theon) + Theon::theon) against it.
#
#   tests/install/check_install.sh <theon build dir> [work dir]
#
# CMAKE (default: cmake on PATH) picks the cmake binary; CONSUMER_CXX_FLAGS are passed to
# the consumer's compiler (ctest passes the sanitizer flags of a sanitized build). The work
# dir (default: a fresh temporary dir) is removed afterwards unless KEEP_WORK=1.
set -euo pipefail

if [[ $# -lt 1 ]]; then
  echo "usage: $0 <theon build dir> [work dir]" >&2
  exit 2
fi
BUILD="$(cd "$1" && pwd)"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CMAKE="${CMAKE:-cmake}"
WORK="${2:-$(mktemp -d "${TMPDIR:-/tmp}/theon-install-check.XXXXXX")}"
mkdir -p "$WORK"
if [[ "${KEEP_WORK:-0}" != 1 ]]; then
  trap 'rm -rf "$WORK"' EXIT
fi
PREFIX="$WORK/prefix"
GEN=()
if command -v ninja >/dev/null 2>&1; then GEN=(-G Ninja); fi

echo "== install $BUILD -> $PREFIX"
"$CMAKE" --install "$BUILD" --prefix "$PREFIX" >"$WORK/install.log"
test -f "$PREFIX/include/theon/theon.hpp" || { echo "FAIL: headers not installed" >&2; exit 1; }
ls "$PREFIX"/lib*/cmake/Theon/TheonConfig.cmake >/dev/null || { echo "FAIL: TheonConfig.cmake not installed" >&2; exit 1; }

echo "== configure + build the consumer against $PREFIX"
"$CMAKE" -S "$HERE/consumer" -B "$WORK/consumer-build" "${GEN[@]}" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$PREFIX" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_CXX_FLAGS="${CONSUMER_CXX_FLAGS:-}" \
  >"$WORK/configure.log" || { cat "$WORK/configure.log" >&2; exit 1; }
# The consumer must have found the installed package, not the build tree.
grep -q "Theon_DIR:PATH=$PREFIX/" "$WORK/consumer-build/CMakeCache.txt" || {
  echo "FAIL: Theon was not found under $PREFIX:" >&2
  grep "Theon_DIR" "$WORK/consumer-build/CMakeCache.txt" >&2
  exit 1
}
"$CMAKE" --build "$WORK/consumer-build" >"$WORK/build.log" 2>&1 || { cat "$WORK/build.log" >&2; exit 1; }

echo "== run"
# The consumer must load the installed library (its build RPATH points at $PREFIX/lib*).
if command -v ldd >/dev/null 2>&1; then
  # (Captured first: `ldd | grep -q` under pipefail fails when grep exits early and ldd
  # gets SIGPIPE.)
  LIBS=$(ldd "$WORK/consumer-build/theon_consumer")
  grep libtheon <<<"$LIBS"
  grep -q "libtheon.*$PREFIX/" <<<"$LIBS" || {
    echo "FAIL: theon_consumer does not load libtheon from $PREFIX" >&2
    exit 1
  }
fi
"$WORK/consumer-build/theon_consumer"
echo "install check: ok"
