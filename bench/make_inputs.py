#!/usr/bin/env python3
"""Writes the inputs of W1-W3 (../shared/bench/WORKLOADS.md sections 2 and 5) as .npy files
for bench/theon_bench.cpp (--inputs DIR), drawn exactly as the peers draw them
(cpu_peers.py seed_data): numpy.random.default_rng(1), then W (10,5), b (5,), then the x pool,
each standard_normal in float64 cast to float32.

    python3 bench/make_inputs.py DIR [--w5 LOG2] [--w7] [--w6] [--w8] [--w10]

Files: W.npy (10,5), b.npy (5,), x_small.npy (16,10,10) for W1 (its own rng(1) stream:
W, b, then 16 x's), x_large.npy (4,10000,10) for W2/W3 (rng(1): W, b, then 4 x's).
With --w5 LOG2 (n = 2**LOG2; section 5 uses 24): w5_<n>.npy (3, n) = a, b, c drawn as
cpu_peers.py fused_data draws them (default_rng(5), standard_normal(n, dtype=float32) three
times) and w5_idx_<n>.npy (int64, the check positions default_rng(55).integers(0, n, 2**20)).
With --w7: w7_x.npy (2048, 2048) and w7_rows.npy (the 256 check rows), as cpu_peers.py
softmax_data draws them (default_rng(7) standard_normal float32; default_rng(77).choice).
With --w6 (B = 256, cpu_peers.py mlp_data): w6_p<k>.npy (k = 0..5: W1, b1, W2, b2, W3, b3 from
default_rng(6)), w6_X<i>.npy (256, 784) and w6_y<i>.npy (int64, 256) for the 4 batches, and the
check's float64 reference of the first step on batch 0 from the float32 inputs: w6_ref_loss.npy
(one value) and w6_ref_g<k>.npy (the gradients, float64; mlp_loss_grads' manual backward).
With --w8: w8_A.npy, w8_B.npy (1024, 1024) and w8_rows.npy (cpu_peers.py gemm_data).
With --w10: w10_{h0,U,x,Wx,b}.npy (cpu_peers.py rnn_data, default_rng(10)).
"""
import math
import os
import sys

import numpy as np


def seed_data(rows, pool):
    rng = np.random.default_rng(1)
    W = rng.standard_normal((10, 5)).astype(np.float32)
    b = rng.standard_normal(5).astype(np.float32)
    xs = [rng.standard_normal((rows, 10)).astype(np.float32) for _ in range(pool)]
    return W, b, xs


def mlp_loss_grads(p, X, y):
    """cpu_peers.py mlp_loss_grads (numpy, float64 here): the W6 loss and manual backward."""
    W1, b1, W2, b2, W3, b3 = p
    B = X.shape[0]
    z1 = X @ W1 + b1
    h1 = np.maximum(z1, 0)
    z2 = h1 @ W2 + b2
    h2 = np.maximum(z2, 0)
    z3 = h2 @ W3 + b3
    m = z3.max(axis=1, keepdims=True)
    e = np.exp(z3 - m)
    s = e.sum(axis=1, keepdims=True)
    rows = np.arange(B)
    loss = (np.log(s[:, 0]) + m[:, 0] - z3[rows, y]).mean()
    d3 = e / s
    d3[rows, y] -= 1
    d3 /= B
    d2 = (d3 @ W3.T) * (z2 > 0)
    d1 = (d2 @ W2.T) * (z1 > 0)
    return loss, [X.T @ d1, d1.sum(axis=0), h1.T @ d2, d2.sum(axis=0), h2.T @ d3, d3.sum(axis=0)]


def write_w6(out, B=256):
    rng = np.random.default_rng(6)
    p = [rng.standard_normal((784, 1024)) / math.sqrt(784), 0.1 * rng.standard_normal(1024),
         rng.standard_normal((1024, 1024)) / math.sqrt(1024), 0.1 * rng.standard_normal(1024),
         rng.standard_normal((1024, 10)) / math.sqrt(1024), 0.1 * rng.standard_normal(10)]
    p = [a.astype(np.float32) for a in p]
    batches = [(rng.random((B, 784)).astype(np.float32), rng.integers(0, 10, B)) for _ in range(4)]
    for k, a in enumerate(p):
        np.save(os.path.join(out, "w6_p%d.npy" % k), a)
    for i, (X, y) in enumerate(batches):
        np.save(os.path.join(out, "w6_X%d.npy" % i), X)
        np.save(os.path.join(out, "w6_y%d.npy" % i), y.astype(np.int64))
    loss, g = mlp_loss_grads([a.astype(np.float64) for a in p], batches[0][0].astype(np.float64), batches[0][1])
    np.save(os.path.join(out, "w6_ref_loss.npy"), np.array([loss], np.float64))
    for k, a in enumerate(g):
        np.save(os.path.join(out, "w6_ref_g%d.npy" % k), np.ascontiguousarray(a, np.float64))


def write_w8(out, n=1024):
    rng = np.random.default_rng(8)
    np.save(os.path.join(out, "w8_A.npy"), rng.standard_normal((n, n), dtype=np.float32))
    np.save(os.path.join(out, "w8_B.npy"), rng.standard_normal((n, n), dtype=np.float32))
    np.save(os.path.join(out, "w8_rows.npy"), np.random.default_rng(88).choice(n, 64, replace=False).astype(np.int64))


def write_w10(out):
    rng = np.random.default_rng(10)
    U = (rng.standard_normal((64, 64)) * 0.0625).astype(np.float32)
    x = rng.standard_normal((64, 32)).astype(np.float32)
    Wx = (rng.standard_normal((32, 64)) / math.sqrt(32)).astype(np.float32)
    b = (0.1 * rng.standard_normal(64)).astype(np.float32)
    h0 = (0.5 * rng.standard_normal((64, 64))).astype(np.float32)
    for name, a in (("h0", h0), ("U", U), ("x", x), ("Wx", Wx), ("b", b)):
        np.save(os.path.join(out, "w10_%s.npy" % name), a)


def main():
    args = sys.argv[1:]
    if any(a in ("-h", "--help") for a in args) or any(a.startswith("-") and a not in
                                                       ("--w5", "--w6", "--w7", "--w8", "--w10") for a in args):
        print(__doc__)
        sys.exit(0 if any(a in ("-h", "--help") for a in args) else 2)
    w7 = "--w7" in args
    extra = {f: f in args for f in ("--w6", "--w8", "--w10")}
    args = [a for a in args if a != "--w7" and a not in extra]
    w5 = None
    if len(args) == 3 and args[1] == "--w5":
        w5 = int(args[2])
        args = args[:1]
    if len(args) != 1:
        sys.exit("usage: make_inputs.py DIR [--w5 LOG2] [--w7] [--w6] [--w8] [--w10]")
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
    if extra["--w6"]:
        write_w6(out)
    if extra["--w8"]:
        write_w8(out)
    if extra["--w10"]:
        write_w10(out)


if __name__ == "__main__":
    main()
