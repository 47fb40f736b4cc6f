"""Python per-call overhead of W1 (seed_small) on the CPU, over the C++ call, in one run.

Runs the C++ driver (bench/theon_bench --only W1) and the same function through the Python
bindings with the same inputs and WORKLOADS.md's timing rule (100 warm-up calls, R samples of
K = 50 calls, median), and numpy's `x @ W + b` on them the same way, and prints the three and
the difference. Goals (issue 18): Python within 1 us of C++, and no slower than numpy.

    .venv/bin/python bench/python_overhead.py [--build build] [--quick]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np


def numpy_w1(samples, k=50, warmup=100):
    rng = np.random.default_rng(1)
    W = rng.standard_normal((10, 5)).astype(np.float32)
    b = rng.standard_normal(5).astype(np.float32)
    pool = [rng.standard_normal((10, 10)).astype(np.float32) for _ in range(16)]
    for i in range(warmup):
        pool[i % 16] @ W + b
    times, call = [], 0
    for _ in range(samples):
        t0 = time.perf_counter()
        for _ in range(k):
            pool[call % 16] @ W + b
            call += 1
        times.append((time.perf_counter() - t0) / k * 1e6)
    return statistics.median(times)


def python_w1(samples, k=50, warmup=100):
    import theon
    import theon.tensor as T

    rng = np.random.default_rng(1)
    W = rng.standard_normal((10, 5)).astype(np.float32)
    b = rng.standard_normal(5).astype(np.float32)
    pool = [rng.standard_normal((10, 10)).astype(np.float32) for _ in range(16)]
    x = T.fmatrix("x")
    f = theon.function([x], T.dot(x, theon.shared(W, "W")) + theon.shared(b, "b"))
    ref = pool[0].astype(np.float64) @ W.astype(np.float64) + b
    out = f(pool[0])
    err = np.linalg.norm(out - ref) / np.linalg.norm(ref)
    assert out.dtype == np.float32 and out.shape == (10, 5) and err < 5e-5, err
    for i in range(warmup):
        f(pool[i % 16])
    times, call = [], 0
    for _ in range(samples):
        t0 = time.perf_counter()
        for _ in range(k):
            f(pool[call % 16])
            call += 1
        times.append((time.perf_counter() - t0) / k * 1e6)
    return statistics.median(times)


def cpp_w1(build, quick):
    exe = os.path.join(build, "bench", "theon_bench")
    with tempfile.TemporaryDirectory() as d:
        csv = os.path.join(d, "w1.csv")
        args = [exe, "--only", "W1", "--no-hand", "--csv", csv] + (["--quick"] if quick else [])
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
        rows = [line.split(",") for line in open(csv).read().splitlines()]
    header = rows[0]
    col = header.index("us_per_call")
    for r in rows[1:]:
        if r[0] == "W1" and r[col]:
            return float(r[col])
    raise SystemExit("theon_bench wrote no W1 row")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    samples = 5 if a.quick else 20
    cpp = cpp_w1(a.build, a.quick)
    py = python_w1(samples)
    npy = numpy_w1(samples)
    print(f"W1 per call: C++ {cpp:.2f} us, Python {py:.2f} us, Python overhead {py - cpp:+.2f} us "
          f"(goal: under +1 us); numpy {npy:.2f} us, Python / numpy {py / npy:.2f} (goal: <= 1)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
