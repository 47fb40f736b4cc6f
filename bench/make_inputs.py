#!/usr/bin/env python3
"""Writes the inputs of W1-W3 (../shared/bench/WORKLOADS.md sections 2 and 5) as .npy files
for bench/theon_bench.cpp (--inputs DIR), drawn exactly as the peers draw them
(cpu_peers.py seed_data): numpy.random.default_rng(1), then W (10,5), b (5,), then the x pool,
each standard_normal in float64 cast to float32.

    python3 bench/make_inputs.py DIR

Files: W.npy (10,5), b.npy (5,), x_small.npy (16,10,10) for W1 (its own rng(1) stream:
W, b, then 16 x's), x_large.npy (4,10000,10) for W2/W3 (rng(1): W, b, then 4 x's).
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
    if len(sys.argv) != 2:
        sys.exit("usage: make_inputs.py DIR")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    W, b, small = seed_data(10, 16)
    W2, b2, large = seed_data(10000, 4)
    assert np.array_equal(W, W2) and np.array_equal(b, b2)
    np.save(os.path.join(out, "W.npy"), np.ascontiguousarray(W))
    np.save(os.path.join(out, "b.npy"), np.ascontiguousarray(b))
    np.save(os.path.join(out, "x_small.npy"), np.ascontiguousarray(np.stack(small)))
    np.save(os.path.join(out, "x_large.npy"), np.ascontiguousarray(np.stack(large)))


if __name__ == "__main__":
    main()
