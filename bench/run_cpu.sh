#!/usr/bin/env bash
# Runs the CPU variants of W1-W3, W5, W6, W8, W10 (../shared/bench/WORKLOADS.md section 5) in
# one run: Theon and the hand-written loop (bench/theon_bench), then the numpy and numexpr
# peers (../shared/bench/peers/cpu_peers.py --peers numpy,numexpr: numpy with its default BLAS
# threads, numpy-1t, numexpr; plus the CEIL rows: numpy memcpy and triad), then Theon's COMPILE
# (100-op graph, cold and warm cache) and OVERHEAD (3-node function per call) rows; merges the
# CSVs and prints a table with the ratios Theon/numpy and Theon/hand, and W5 in GB/s.
#
#   bench/run_cpu.sh [--quick] [--w5-only]
#
# --w5-only: W5 and CEIL only (Theon default threads and one thread, numpy, numexpr).
# Environment: W5_LOG2 (default 24: n = 2^24, section 5), BUILD_DIR (default build-bench if it exists, else build; theon_bench is built
# with ninja unless SKIP_BUILD=1; a failed build only warns when a binary is there),
# PYTHON (default .venv/bin/python), PEERS (default ../shared/bench/peers/cpu_peers.py),
# OUT_DIR (default build/bench-results/cpu-<date>).
# Results: $OUT_DIR/theon.csv, peers.csv (+ .log, .env.txt) and merged.csv; the last run is
# also copied to build/bench-results/latest-cpu.csv. OPENBLAS_CORETYPE is never set here: the
# ENV rows record what the BLAS libraries picked.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
QUICK=()
W5_ONLY=0
for a in "$@"; do
  case "$a" in
    --quick) QUICK=(--quick) ;;
    --w5-only) W5_ONLY=1 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "unknown option $a" >&2; exit 2 ;;
  esac
done

PYTHON="${PYTHON:-$REPO/.venv/bin/python}"
PEERS="${PEERS:-$REPO/../shared/bench/peers/cpu_peers.py}"
if [[ -z "${BUILD_DIR:-}" ]]; then
  if [[ -d "$REPO/build-bench" ]]; then BUILD_DIR="$REPO/build-bench"; else BUILD_DIR="$REPO/build"; fi
fi
STAMP="$(date +%Y%m%d-%H%M%S)"
OUT_DIR="${OUT_DIR:-$REPO/build/bench-results/cpu-$STAMP}"
mkdir -p "$OUT_DIR"

BENCH="$BUILD_DIR/bench/theon_bench"
if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
  if [[ ! -f "$BUILD_DIR/build.ninja" ]]; then
    cmake -S "$REPO" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release
  fi
  if ! ninja -C "$BUILD_DIR" theon_bench >"$OUT_DIR/build.log" 2>&1; then
    echo "warning: building theon_bench failed (see $OUT_DIR/build.log)" >&2
  fi
fi
if [[ ! -x "$BENCH" ]]; then
  echo "error: no $BENCH (set BUILD_DIR, or build it: ninja -C $BUILD_DIR theon_bench)" >&2
  exit 1
fi

W5_LOG2="${W5_LOG2:-24}"
if [[ "$W5_ONLY" == 1 ]]; then
  ONLY=W5; PEER_ONLY=W5,CEIL
else
  ONLY=W1,W2,W3,W5,W6,W8,W10; PEER_ONLY=W1,W2,W3,W5,W6,W8,W10,CEIL
fi
if ! "$PYTHON" -c "import numexpr" 2>/dev/null; then
  echo "note: numexpr is not installed in $PYTHON (its rows will be SKIP): $PYTHON -m pip install numexpr" >&2
fi

echo "loadavg before: $(cat /proc/loadavg)" | tee "$OUT_DIR/loadavg.txt"
echo "== inputs (numpy default_rng(1) and, for W5, default_rng(5), as the peers draw them)"
"$PYTHON" "$REPO/bench/make_inputs.py" "$OUT_DIR/inputs" --w5 "$W5_LOG2" --w6 --w8 --w10

echo "== theon + hand ($BENCH ${QUICK[*]} --only $ONLY), default threads"
"$BENCH" "${QUICK[@]}" --only "$ONLY" --w5-log2 "$W5_LOG2" --inputs "$OUT_DIR/inputs" --csv "$OUT_DIR/theon.csv" \
  | tee "$OUT_DIR/theon.log"
echo "== theon, one thread (as numpy-1t: OPENBLAS/OMP/MKL_NUM_THREADS=1)"
OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 \
  "$BENCH" "${QUICK[@]}" --only "$ONLY" --w5-log2 "$W5_LOG2" --inputs "$OUT_DIR/inputs" --csv "$OUT_DIR/theon-1t.csv" \
  --peer theon-1t-cpu --no-hand | tee "$OUT_DIR/theon-1t.log"

echo "== numpy and numexpr peers ($PEERS --peers numpy,numexpr --only $PEER_ONLY ${QUICK[*]})"
"$PYTHON" "$PEERS" "${QUICK[@]}" --only "$PEER_ONLY" --peers numpy,numexpr --out "$OUT_DIR/peers.csv" \
  > "$OUT_DIR/peers.stdout" 2>&1 || echo "(cpu_peers.py exited with $?: see $OUT_DIR/peers.stdout)"
rm -f "$OUT_DIR"/inputs/w5_*.npy  # 200 MB

if [[ "$W5_ONLY" != 1 ]]; then
  echo "== theon COMPILE (100-op graph: cold temp compiledir, warm same process, warm second process)"
  echo "   and OVERHEAD (3-node function, 4 elements)"
  "$BENCH" "${QUICK[@]}" --only COMPILE,OVERHEAD --csv "$OUT_DIR/theon-compile.csv" | tee "$OUT_DIR/theon-compile.log"
fi

echo "loadavg after:  $(cat /proc/loadavg)" | tee -a "$OUT_DIR/loadavg.txt"


"$PYTHON" - "$OUT_DIR" <<'EOF'
import csv, os, shutil, sys
out = sys.argv[1]
fields = ["workload", "peer", "variant", "value", "unit", "us_per_call", "spread_pct",
          "rel_err", "bound", "check", "note"]
rows = []
for name in ("theon.csv", "theon-1t.csv", "peers.csv", "theon-compile.csv"):
    p = os.path.join(out, name)
    if os.path.exists(p):
        with open(p, newline="") as f:
            rows += list(csv.DictReader(f))
merged = os.path.join(out, "merged.csv")
with open(merged, "w", newline="") as f:
    w = csv.DictWriter(f, fields, extrasaction="ignore")
    w.writeheader()
    w.writerows(rows)
shutil.copyfile(merged, os.path.join(os.path.dirname(out), "latest-cpu.csv"))

def us(r):
    try:
        return float(r["us_per_call"])
    except (KeyError, ValueError):
        return None

table = {}
for r in rows:
    if r["workload"] in ("W1", "W2", "W3") and r["check"] in ("ok", "FAIL"):
        table[(r["workload"], r["peer"], r["variant"])] = r

if table:
    print("\n%-3s %-12s %-13s %10s %8s %9s %5s  %s" % ("W", "peer", "variant", "us/call", "spread%",
                                                      "rel_err", "check", "note"))
    for wl in ("W1", "W2", "W3"):
        for key in sorted(k for k in table if k[0] == wl):
            r = table[key]
            print("%-3s %-12s %-13s %10s %8s %9s %5s  %s" % (wl, r["peer"], r["variant"], r["us_per_call"],
                  r["spread_pct"], r["rel_err"], r["check"], r["note"][:60]))
    for r in rows:
        if r["check"] in ("ERROR", "SKIP") or r["workload"] == "RUN":
            print("%-3s %-12s %-13s %s %s" % (r["workload"], r["peer"], r["variant"], r["check"], r["note"][:100]))

    print("\nratios (Theon us/call divided by the other's; < 1 means Theon is faster)")
    print("(Theon-1t: OPENBLAS/OMP/MKL_NUM_THREADS=1, as numpy-1t; hand: one thread; hand-lit: W3 with a")
    print(" literal logf(expf(r)) per element)")
    print("%-3s %12s %17s %12s %15s %14s" % ("W", "Theon/numpy", "Theon-1t/numpy-1t", "Theon/hand",
                                              "Theon-1t/hand", "Theon/hand-lit"))
    for wl in ("W1", "W2", "W3"):
        v = "host" if wl == "W3" else "cpu"
        def ratio(mine, peer, variant):
            t = table.get((wl, mine, v))
            o = table.get((wl, peer, variant))
            if not t or not o or us(t) is None or not us(o):
                return "-"
            return "%.2f" % (us(t) / us(o))
        print("%-3s %12s %17s %12s %15s %14s" % (
            wl, ratio("theon-cpu", "numpy", v), ratio("theon-1t-cpu", "numpy-1t", v),
            ratio("theon-cpu", "hand-cpu", v), ratio("theon-1t-cpu", "hand-cpu", v),
            ratio("theon-cpu", "hand-cpu", v + ":literal")))
print("\nW5 fused_chain (GB/s at 16 B/element; CEIL: numpy's one-thread memcpy and triad)")
ceil = None
for r in rows:
    if r["workload"] in ("W5", "CEIL") and r["check"] in ("ok", "FAIL", ""):
        if r["workload"] == "CEIL" and "memcpy" in r["variant"]:
            try:
                ceil = float(r["value"])
            except ValueError:
                pass
for r in rows:
    if r["workload"] in ("W5", "CEIL") and r["unit"] == "GB/s":
        frac = ""
        try:
            if ceil and r["workload"] == "W5":
                frac = "%.2f of memcpy" % (float(r["value"]) / ceil)
        except ValueError:
            pass
        print("%-4s %-14s %-22s %9s GB/s %10s us %6s%% %5s  %s  %s" % (
            r["workload"], r["peer"], r["variant"], r["value"], r["us_per_call"], r["spread_pct"],
            r["check"], frac, r["note"][:70]))
for r in rows:
    if r["workload"] in ("COMPILE", "OVERHEAD"):
        print("%-8s %-12s %-28s %10s %-8s %s" % (r["workload"], r["peer"], r["variant"], r["value"],
                                                r["unit"], r["note"][:150]))
print()
print(open(os.path.join(out, "loadavg.txt")).read().rstrip())
print("merged CSV: %s" % merged)
EOF
