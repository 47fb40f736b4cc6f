#!/usr/bin/env bash
# Fresh-machine check: do the README's two commands work on a bare Debian bookworm machine?
#
#   1. debootstrap --variant=minbase bookworm into a root directory (default under /var/tmp);
#   2. copy this checkout in (tracked + untracked-not-ignored files: no build/, .venv/,
#      build-wheel/), to "/root/theon checkout" -- a path with a space in it;
#   3. in a chroot, as root: ./scripts/demo.sh, then ./scripts/test.sh (no CUDA toolkit there:
#      the build must say it skips the CUDA backend, and why);
#   4. both again (idempotent; the second build should have nothing to do);
#   5. a fresh venv (not the project's .venv): pip install ./python, then import theon and
#      call a compiled function from that venv;
#   6. a table of every step's wall time. Exits non-zero if a step fails, naming it.
#
# /proc, /sys, /dev, /dev/pts and /dev/shm are mounted into the root and always unmounted on
# exit (trap), also on failure or Ctrl-C. When `unshare` works, the whole check runs in a
# private mount namespace as well, so not even `kill -9` can leave a mount behind.
# Needs root. See docs/guide/fresh_machine.md.
#
#   sudo scripts/fresh_machine_check.sh [--root DIR] [--logs DIR] [--mirror URL] [--keep] [--reuse]
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: scripts/fresh_machine_check.sh [options]    (as root)

  --root DIR     the debootstrapped root (env THEON_FRESH_ROOT; default /var/tmp/theon-fresh-root).
                 Must be an absolute path without spaces, outside the checkout.
  --logs DIR     one log per step (env THEON_FRESH_LOGS; default <root>-logs)
  --mirror URL   Debian mirror (env THEON_FRESH_MIRROR; default: the one this host's
                 /etc/apt/sources.list(.d) uses for bookworm, else http://deb.debian.org/debian)
  --keep         keep the root afterwards (it is removed otherwise)
  --reuse        reuse a root left by an earlier run (--keep): skips debootstrap; the packages
                 and caches installed there stay, the checkout is copied in afresh
  --no-host-ca   do not give the root this host's CA bundle (see "TLS" in the guide)
  -h, --help     this text
EOF
}

SUITE=bookworm
CHECKOUT="/root/theon checkout"     # inside the root: a space, on purpose (README commands)
WHEEL_VENV=/root/wheel-venv         # inside the root: a venv of its own, not the project's .venv
HOST_CA_IN_ROOT=/etc/ssl/theon-fresh-host-ca.crt

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
ROOT=${THEON_FRESH_ROOT:-/var/tmp/theon-fresh-root}
LOGS=${THEON_FRESH_LOGS:-}
MIRROR=${THEON_FRESH_MIRROR:-}
KEEP=0
REUSE=0
HOST_CA=auto
ARGS=("$@")

die() { echo "fresh_machine_check: $*" >&2; exit 2; }
while (($#)); do
  case $1 in
    --root) [ $# -ge 2 ] || die "--root needs a directory"; ROOT=$2; shift 2 ;;
    --root=*) ROOT=${1#*=}; shift ;;
    --logs) [ $# -ge 2 ] || die "--logs needs a directory"; LOGS=$2; shift 2 ;;
    --logs=*) LOGS=${1#*=}; shift ;;
    --mirror) [ $# -ge 2 ] || die "--mirror needs a URL"; MIRROR=$2; shift 2 ;;
    --mirror=*) MIRROR=${1#*=}; shift ;;
    --keep) KEEP=1; shift ;;
    --reuse) REUSE=1; shift ;;
    --no-host-ca) HOST_CA=no; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument: $1" ;;
  esac
done

[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, chroot, mount)"

# A private mount namespace: mounts made below vanish with the last process in it, whatever
# happens to this script. The trap below unmounts them anyway (and is all there is without it).
if [ -z "${THEON_FRESH_IN_NS:-}" ] && command -v unshare >/dev/null &&
   unshare --mount --propagation private true 2>/dev/null; then
  export THEON_FRESH_IN_NS=1
  exec unshare --mount --propagation private "$BASH" "${BASH_SOURCE[0]}" "${ARGS[@]}"
fi

# ---- the root directory: checked before anything is created or removed -------------------
case $ROOT in /*) ;; *) die "--root must be an absolute path: $ROOT" ;; esac
ROOT=$(realpath -m -- "$ROOT")
[[ $ROOT =~ [[:space:]\\] ]] && die "--root must not contain spaces or backslashes: $ROOT"
case $ROOT in
  /|/bin|/boot|/dev|/etc|/home|/lib*|/opt|/proc|/root|/run|/sbin|/srv|/sys|/tmp|/usr|/usr/*|/var|/var/tmp|/work)
    die "refusing --root $ROOT" ;;
esac
case "$ROOT/" in "$SRC"/*) die "--root must be outside the checkout ($SRC)" ;; esac
case "$SRC/" in "$ROOT"/*) die "the checkout must not be inside --root" ;; esac
MARKER=$ROOT/.theon-fresh-root              # this script made the directory
DONE_MARKER=$ROOT/.theon-fresh-debootstrap-done
if [ -e "$ROOT" ] && [ ! -e "$MARKER" ] && [ -n "$(ls -A "$ROOT" 2>/dev/null)" ]; then
  die "$ROOT exists, is not empty and was not made by this script: refusing to use it"
fi
LOGS=${LOGS:-$ROOT-logs}
LOGS=$(realpath -m -- "$LOGS")
mkdir -p "$(dirname "$ROOT")" "$LOGS"
rm -f "$LOGS"/[0-9][0-9]-*.log

exec 9>"$ROOT.lock"
flock -n 9 || die "another check is using $ROOT ($ROOT.lock)"

# ---- the mirror: the host's own bookworm mirror ------------------------------------------
host_apt_uri() {  # host_apt_uri SUITE: the first URI the host's apt sources use for SUITE
  local want=$1 f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    awk -v want="$want" '$1 == "deb" {
        i = 2; if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
        if ($(i + 1) == want) { print $i; exit } }' "$f"
  done
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    awk -v want="$want" 'BEGIN { RS = ""; FS = "\n" } {
        uris = ""; suites = ""; deb = 0; enabled = 1
        for (i = 1; i <= NF; i++) {
          l = $i; if (l ~ /^[ \t]*#/) continue
          if (l ~ /^URIs:/)    { sub(/^URIs:[ \t]*/, "", l); uris = l }
          if (l ~ /^Suites:/)  { sub(/^Suites:[ \t]*/, "", l); suites = l }
          if (l ~ /^Types:/ && l ~ /(^|[ \t:])deb([ \t]|$)/) deb = 1
          if (l ~ /^Enabled:[ \t]*no/) enabled = 0
        }
        if (!deb || !enabled) next
        n = split(suites, s, /[ \t]+/)
        for (j = 1; j <= n; j++) if (s[j] == want) { split(uris, u, /[ \t]+/); print u[1]; exit }
      }' "$f"
  done
}
HOST_MIRROR=$(host_apt_uri "$SUITE" | sed -n 1p)   # sed reads all: no SIGPIPE under pipefail
MIRROR=${MIRROR:-${HOST_MIRROR:-http://deb.debian.org/debian}}
MIRROR=${MIRROR%/}
SECURITY=$(host_apt_uri "$SUITE-security" | sed -n 1p)
if [ -z "$SECURITY" ] && [ "$MIRROR" = "http://deb.debian.org/debian" ]; then
  SECURITY=http://deb.debian.org/debian-security
fi

# ---- steps, timings, summary ---------------------------------------------------------------
STEPS=("debootstrap" "prepare root" "copy checkout" "demo (1st)" "test (1st)"
       "demo (2nd)" "test (2nd)" "wheel build" "import + call")
declare -A STATUS=() SECS=()
for s in "${STEPS[@]}"; do STATUS[$s]="not run"; SECS[$s]=""; done
CHECKS=()                 # "name|ok/FAIL/WARN|detail"
FAILED=""                 # the first step or check that failed
CHILD=""                  # the step running now (a background job)
TAILPID=""
STEP_NO=0
STEP_RC=0
LAST_LOG=""
CURRENT_STEP=""
STEP_T0=0
T_START=$(date +%s)

stamp() { local l; while IFS= read -r l || [ -n "$l" ]; do printf '%(%T)T %s\n' -1 "$l"; done; }
fmt_secs() { printf '%d:%02d' $(($1 / 60)) $(($1 % 60)); }

# run_step NAME COMMAND...: runs COMMAND with its output in $LOGS/NN-name.log, shown as it
# comes; records the status and the wall time; COMMAND's status goes to STEP_RC. It returns 0:
# called in a condition (`run_step ... || ...`), bash would run COMMAND with set -e ignored.
run_step() {
  local name=$1; shift
  local log t0 rc=0 secs
  STEP_NO=$((STEP_NO + 1))
  CURRENT_STEP=$name
  log=$LOGS/$(printf '%02d' "$STEP_NO")-$(sed -E 's/[^a-z0-9]+/-/g; s/-$//' <<<"${name,,}").log
  echo
  echo "=============== [$name] start $(date +%T)   (log: $log)"
  t0=$(date +%s)
  STEP_T0=$t0
  : >"$log"
  # Each line stamped with the time it came (where the minutes of a long step go).
  ( "$@" 2>&1 </dev/null | stamp ) >"$log" &
  CHILD=$!
  tail -n +1 --pid="$CHILD" -f "$log" &
  TAILPID=$!
  wait "$CHILD" || rc=$?
  CHILD=""
  CURRENT_STEP=""
  wait "$TAILPID" 2>/dev/null || true
  TAILPID=""
  secs=$(($(date +%s) - t0))
  SECS[$name]=$secs
  if ((rc == 0)); then STATUS[$name]=ok; else STATUS[$name]="FAIL (rc $rc)"; fi
  echo "=============== [$name] ${STATUS[$name]} in ${secs} s ($(fmt_secs "$secs"))"
  LAST_LOG=$log
  STEP_RC=$rc
}
skip_step() { STATUS[$1]="skipped ($2)"; SECS[$1]=0; echo "=============== [$1] skipped: $2"; }
step_or_die() {  # step_or_die NAME COMMAND...: a failed step ends the check
  run_step "$@"
  if ((STEP_RC)); then
    FAILED=${FAILED:-$1}
    echo "fresh_machine_check: step '$1' failed; see $LAST_LOG" >&2
    exit 1
  fi
}
check() {        # check NAME ok|FAIL|WARN DETAIL
  CHECKS+=("$1|$2|$3")
  echo "=============== check [$1]: $2 - $3"
  if [ "$2" = FAIL ]; then FAILED=${FAILED:-$1}; fi
  return 0
}

summary() {
  local s total=$(($(date +%s) - T_START)) c name st detail
  echo
  echo "================ fresh-machine check: summary ($(date '+%F %T %Z'))"
  echo "root $ROOT  mirror $MIRROR  logs $LOGS"
  printf '%-16s %-24s %8s %8s\n' step status seconds m:ss
  for s in "${STEPS[@]}"; do
    if [ -n "${SECS[$s]}" ]; then
      printf '%-16s %-24s %8s %8s\n' "$s" "${STATUS[$s]}" "${SECS[$s]}" "$(fmt_secs "${SECS[$s]}")"
    else
      printf '%-16s %-24s %8s %8s\n' "$s" "${STATUS[$s]}" - -
    fi
  done
  local d2=${SECS["demo (2nd)"]} t2=${SECS["test (2nd)"]}
  if [ -n "$d2" ] && [ -n "$t2" ]; then
    s=$((d2 + t2))
    printf '%-16s %-24s %8s %8s\n' "2nd demo+test" "" "$s" "$(fmt_secs "$s")"
  fi
  printf '%-16s %-24s %8s %8s\n' total "" "$total" "$(fmt_secs "$total")"
  for c in "${CHECKS[@]}"; do
    IFS='|' read -r name st detail <<<"$c"
    printf 'check %-32s %-5s %s\n' "$name" "$st" "$detail"
  done
  if [ -n "$FAILED" ]; then echo "RESULT: FAILED at: $FAILED"; else echo "RESULT: PASSED"; fi
}

# ---- mounts and clean-up ---------------------------------------------------------------------
mounts_under_root() { awk -v r="$ROOT/" 'index($2, r) == 1 { print $2 }' /proc/self/mounts | sort -r; }

kill_tree() {  # kill_tree PID: PID and its descendants (found by parent id), TERM
  local pid=$1 kids k
  kids=$(ps -e -o pid=,ppid= | awk -v p="$pid" '$2 == p { print $1 }')
  for k in $kids; do kill_tree "$k"; done
  kill -TERM "$pid" 2>/dev/null || true
}

kill_root_procs() {  # every process whose root is $ROOT: started by this check, in the chroot
  local p pids=() i
  for i in 1 2 3 4 5 6 7 8 9 10; do
    pids=()
    for p in /proc/[0-9]*; do
      [ "$(readlink "$p/root" 2>/dev/null)" = "$ROOT" ] && pids+=("${p#/proc/}")
    done
    ((${#pids[@]})) || return 0
    if ((i < 6)); then kill -TERM "${pids[@]}" 2>/dev/null || true
    else kill -KILL "${pids[@]}" 2>/dev/null || true; fi
    sleep 1
  done
}

unmount_all() {
  local m
  while IFS= read -r m; do
    umount "$m" 2>/dev/null || umount -l "$m" || echo "fresh_machine_check: could not unmount $m" >&2
  done < <(mounts_under_root)
  [ -z "$(mounts_under_root)" ]
}

cleanup() {
  local rc=$?
  trap - EXIT INT TERM HUP
  set +e
  [ -n "$CHILD" ] && kill_tree "$CHILD"
  [ -n "$TAILPID" ] && kill "$TAILPID" 2>/dev/null
  kill_root_procs
  echo
  if unmount_all; then
    echo "== unmounted everything under $ROOT"
    if ((KEEP)); then
      echo "== kept $ROOT (chroot \"$ROOT\" bash; the checkout is \"$CHECKOUT\")"
    elif [ -e "$MARKER" ]; then
      echo "== removing $ROOT (--keep keeps it)"
      rm -rf --one-file-system -- "$ROOT"
    fi
  else
    echo "== mounts remain under $ROOT: NOT removing it" >&2
    rc=${rc:-1}; ((rc)) || rc=1
  fi
  if ((rc == 0)) && [ -n "$FAILED" ]; then rc=1; fi
  if ((rc != 0)) && [ -z "$FAILED" ]; then FAILED="(interrupted or set-up error, rc $rc)"; fi
  summary
  exit "$rc"
}
on_signal() {
  echo "fresh_machine_check: $1, stopping" >&2
  if [ -n "$CURRENT_STEP" ]; then
    STATUS[$CURRENT_STEP]="interrupted ($1)"
    SECS[$CURRENT_STEP]=$(($(date +%s) - STEP_T0))
  fi
  FAILED=${FAILED:-"${CURRENT_STEP:-the check}, interrupted ($1)"}
  exit 130
}
trap cleanup EXIT
trap 'on_signal SIGINT' INT
trap 'on_signal SIGTERM' TERM
trap 'on_signal SIGHUP' HUP

mount_into_root() {
  mkdir -p "$ROOT/proc" "$ROOT/sys" "$ROOT/dev"
  mount -t proc proc "$ROOT/proc"
  mount -t sysfs -o ro sysfs "$ROOT/sys"
  mount --bind /dev "$ROOT/dev"                 # not recursive: pts and shm come next
  mount --make-private "$ROOT/dev"
  mkdir -p "$ROOT/dev/pts" "$ROOT/dev/shm"
  mount --bind /dev/pts "$ROOT/dev/pts"
  mount --make-private "$ROOT/dev/pts"
  mount -t tmpfs -o mode=1777,nosuid,nodev shm "$ROOT/dev/shm"
}

# in_root DIR COMMAND...: COMMAND in the chroot, in DIR, as root, with a clean login-like
# environment (nothing of this host's environment but the CA bundle, see prepare_root).
CHROOT_ENV=(HOME=/root USER=root LOGNAME=root SHELL=/bin/bash LANG=C.UTF-8 TERM=dumb
            PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)
if [ "$HOST_CA" = auto ] && compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null &&
   [ -s /etc/ssl/certs/ca-certificates.crt ]; then
  HOST_CA=yes
  CHROOT_ENV+=("PIP_CERT=$HOST_CA_IN_ROOT" "SSL_CERT_FILE=$HOST_CA_IN_ROOT")
fi
in_root() {
  local dir=$1; shift
  # shellcheck disable=SC2016  # $1 and $@ are the inner bash's arguments
  chroot "$ROOT" /usr/bin/env -i "${CHROOT_ENV[@]}" \
    /bin/bash -c 'cd -- "$1" && shift && exec "$@"' in-root "$dir" "$@"
}

# ---- the steps -------------------------------------------------------------------------------
do_debootstrap() {
  debootstrap --version
  echo "debootstrap --variant=minbase $SUITE $ROOT $MIRROR"
  debootstrap --variant=minbase "$SUITE" "$ROOT" "$MIRROR"
  : >"$DONE_MARKER"
  du -sh --one-file-system "$ROOT"
}

prepare_root() {
  mount_into_root
  echo "mounted:"; mounts_under_root
  cp -L /etc/resolv.conf "$ROOT/etc/resolv.conf"
  # What a fresh bookworm install has: main, updates, security (the security mirror the host uses).
  {
    echo "deb $MIRROR $SUITE main"
    echo "deb $MIRROR $SUITE-updates main"
    [ -n "$SECURITY" ] && echo "deb $SECURITY $SUITE-security main"
  } >"$ROOT/etc/apt/sources.list"
  cat "$ROOT/etc/apt/sources.list"
  # TLS: where this host trusts local CAs (a TLS-inspecting egress proxy), pip in the root needs
  # them too; pip's own bundle would refuse the proxy's certificates. Only pip and OpenSSL
  # are pointed at the copy; nothing else of the host goes in.
  rm -f "$ROOT$HOST_CA_IN_ROOT"
  if [ "$HOST_CA" = yes ]; then
    mkdir -p "$(dirname "$ROOT$HOST_CA_IN_ROOT")"
    cp -L /etc/ssl/certs/ca-certificates.crt "$ROOT$HOST_CA_IN_ROOT"
    echo "host has local CAs ($(cd /usr/local/share/ca-certificates && echo ./*.crt)): copied its bundle to $HOST_CA_IN_ROOT"
  fi
  echo "python3 in the root: $(chroot "$ROOT" sh -c 'command -v python3 || echo none')"
  echo "nvcc in the root: $(chroot "$ROOT" sh -c 'command -v nvcc || ls -d /usr/local/cuda* 2>/dev/null || echo none')"
}

copy_checkout() {
  local dest=$ROOT$CHECKOUT
  echo "source: $SRC at $(git -C "$SRC" rev-parse --short HEAD), $(git -C "$SRC" status --porcelain | wc -l) changed/untracked path(s):"
  git -C "$SRC" status --short
  rm -rf --one-file-system -- "$dest" "$ROOT$WHEEL_VENV"
  mkdir -p -- "$dest"
  git -C "$SRC" ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' f; do
      # --cached still lists a tracked file deleted in the working tree: leave those out
      if [ -e "$SRC/$f" ] || [ -L "$SRC/$f" ]; then printf '%s\0' "$f"; fi
    done |
    tar -C "$SRC" --null -T - --owner=0 --group=0 -cf - |
    tar -C "$dest" -xf -
  echo "copied $(find "$dest" -type f | wc -l) files, $(du -sh "$dest" | cut -f1), into \"$CHECKOUT\""
  ls -A "$dest"
}

# shellcheck disable=SC2016  # run by bash inside the root, with the venv as $1
WHEEL_SCRIPT='set -euo pipefail
venv=$1
python3 -m venv "$venv"
"$venv/bin/python" -m pip --version
"$venv/bin/python" -m pip install --disable-pip-version-check -v "./python"
"$venv/bin/python" -m pip list --disable-pip-version-check'

IMPORT_CODE='import os, numpy, theon
import theon.tensor as T
print("theon", getattr(theon, "__version__", "ok"), "from", os.path.dirname(theon.__file__))
assert "site-packages" in theon.__file__, "theon must come from the wheel venv"
x = T.vector("x")
f = theon.function([x], x * 2)
r = f(numpy.ones(3, dtype="float32"))
print("f(ones(3)) =", r, r.dtype)
assert r.shape == (3,) and numpy.allclose(r, 2.0)
print("cuda_status:", theon.cuda_status())'

# ---- main (a function: bash reads it whole before running it, so editing this file
# during a run cannot change the run) -------------------------------------------------------
main() {
  echo "== fresh-machine check, $(date '+%F %T %Z') on $(uname -srm), $(nproc) cores"
  echo "== source $SRC; root $ROOT; logs $LOGS; mirror $MIRROR; security ${SECURITY:-none}"
  echo "== mount namespace: $([ -n "${THEON_FRESH_IN_NS:-}" ] && echo "private (unshare)" || echo "the host's")"

  if ! command -v debootstrap >/dev/null; then
    echo "== installing debootstrap on the host"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null ||
      { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null; }
  fi

  unmount_all || die "could not unmount what an earlier run left under $ROOT"
  if ((REUSE)) && [ -e "$DONE_MARKER" ]; then
    skip_step debootstrap "--reuse"
  else
    ((REUSE)) && echo "== --reuse: no finished root at $ROOT, making one"
    if [ -e "$ROOT" ]; then
      echo "== removing the old root $ROOT"
      rm -rf --one-file-system -- "$ROOT"
    fi
    mkdir -p "$ROOT"
    : >"$MARKER"
    step_or_die debootstrap do_debootstrap
  fi
  step_or_die "prepare root" prepare_root
  step_or_die "copy checkout" copy_checkout

  step_or_die "demo (1st)" in_root "$CHECKOUT" ./scripts/demo.sh
  # The build must say that it leaves the CUDA backend out, and why (no toolkit in the root).
  if line=$(grep -m1 -E "CUDA (backend: skipped|toolkit not found)" "$LAST_LOG"); then
    check "build says it skips CUDA" ok "$line"
  else
    check "build says it skips CUDA" FAIL "no 'CUDA backend: skipped' / 'CUDA toolkit not found' line in the demo's output"
  fi
  grep -h "held-out accuracy" "$LAST_LOG" || true
  step_or_die "test (1st)" in_root "$CHECKOUT" ./scripts/test.sh

  step_or_die "demo (2nd)" in_root "$CHECKOUT" ./scripts/demo.sh
  demo2=$LAST_LOG
  step_or_die "test (2nd)" in_root "$CHECKOUT" ./scripts/test.sh
  if grep -q "ninja: no work to do" "$demo2" && grep -q "ninja: no work to do" "$LAST_LOG"; then
    check "2nd run rebuilt nothing" ok "ninja: no work to do (demo and test)"
  else
    check "2nd run rebuilt nothing" WARN "ninja rebuilt something on the second run (see the logs)"
  fi

  step_or_die "wheel build" in_root "$CHECKOUT" /bin/bash -c "$WHEEL_SCRIPT" wheel "$WHEEL_VENV"
  step_or_die "import + call" in_root /root "$WHEEL_VENV/bin/python" -c "$IMPORT_CODE"
  # the EXIT trap unmounts, removes the root unless --keep, prints the summary
}
main
