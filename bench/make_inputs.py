#!/usr/bin/env python3
"""Writes the inputs of W1-W3 (../shared/bench/WORKLOADS.md sections 2 and 5) as .npy files
for bench/theon_bench.cpp (--inputs DIR), drawn exactly as the peers draw them
(cpu_peers.py seed_data): numpy.random.default_rng(1), then W (10,5), b (5,), then the x pool,
each standard_normal in float64 cast to float32.

    python3 bench/make_inputs.py DIR [--w5 LOG2] [--w7]

Files: W.npy (10,5), b.npy (5,), x_small.npy (16,10,10) for W1 (its own rng(1) stream:
W, b, then 16 x's), x_large.npy (4,10000,10) for W2/W3 (rng(1): W, b, then 4 x's).
With --w5 LOG2 (n = 2**LOG2; section 5 uses 24): w5_<n>.npy (3, n) = a, b, c drawn as
cpu_peers.py fused_data draws them (default_rng(5), standard_normal(n, dtype=float32) three
times) and w5_idx_<n>.npy (int64, the check positions default_rng(55).integers(0, n, 2**20)).
With --w7: w7_x.npy (2048, 2048) and w7_rows.npy (the 256 check rows), as cpu_peers.py
softmax_data draws them (default_rng(7) standard_normal float32; default_rng(77).choice).
"""
import os
import sys

import numpy as np


def seed_data(rows, pool):
    rng = np.random.default_rng(1)
    W = rng.standard_normal((10, 5)).astype(np.float32)
    b = rng.standard_normal(5).astype(np.float32)
    xs = [rng.standard_normal((rows, 10)).astype(np.float32) for _ in range(pool)]
    return W, b, xs


def main():
    args = sys.argv[1:]
    w7 = "--w7" in args
    args = [a for a in args if a != "--w7"]
    w5 = None
    if len(args) == 3 and args[1] == "--w5":
        w5 = int(args[2])
        args = args[:1]
    if len(args) != 1:
        sys.exit("usage: make_inputs.py DIR [--w5 LOG2] [--w7]")
    out = args[0]
    os.makedirs(out, exist_ok=True)
    W, b, small = seed_data(10, 16)
    W2, b2, large = seed_data(10000, 4)
    assert np.array_equal(W, W2) and np.array_equal(b, b2)
    np.save(os.path.join(out, "W.npy"), np.ascontiguousarray(W))
    np.save(os.path.join(out, "b.npy"), np.ascontiguousarray(b))
    np.save(os.path.join(out, "x_small.npy"), np.ascontiguousarray(np.stack(small)))
    np.save(os.path.join(out, "x_large.npy"), np.ascontiguousarray(np.stack(large)))
    if w5 is not None:
        n = 2 ** w5
        rng = np.random.default_rng(5)
        abc = [rng.standard_normal(n, dtype=np.float32) for _ in range(3)]
        np.save(os.path.join(out, "w5_%d.npy" % n), np.stack(abc))
        idx = np.random.default_rng(55).integers(0, n, min(n, 2 ** 20)).astype(np.int64)
        np.save(os.path.join(out, "w5_idx_%d.npy" % n), idx)
    if w7:
        x = np.random.default_rng(7).standard_normal((2048, 2048), dtype=np.float32)
        np.save(os.path.join(out, "w7_x.npy"), x)
        np.save(os.path.join(out, "w7_rows.npy"), np.random.default_rng(77).choice(2048, 256, replace=False).astype(np.int64))


if __name__ == "__main__":
    main()
