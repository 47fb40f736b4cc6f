#!/usr/bin/env python3
"""Convolutional workloads on the CPU, Theon beside JAX (issue 16's benchmark), same shapes,
same float32 data, timed the same way (median of R samples of K calls after warm-up):

  lenet_step   one SGD step of Theano's LeNet (convolutional_mlp.py) at MNIST size: a batch of
               256 28x28 images, conv 5x5 x20 -> pool 2 -> tanh -> conv 5x5 x50 -> pool 2 -> tanh
               -> 500 tanh -> softmax 10, the negative log-likelihood, four parameter updates.
  resnet_block forward + backward of a ResNet basic block on (32, 64, 28, 28): conv 3x3 'half'
               -> batch norm (train) -> relu -> conv 3x3 -> batch norm -> + x -> relu, the
               gradient of the sum of the output w.r.t. the input and both filters.

    .venv/bin/python bench/conv_cpu.py --framework theon
    /path/to/peers-venv/bin/python bench/conv_cpu.py --framework jax

Each prints one `ROW workload,framework,ms/call,spread%` line per workload; the results of both
frameworks are checked against each other by the caller comparing the printed loss
(`CHECK workload value`).
"""
import argparse
import statistics
import time

import numpy as np


def timed(fn, warm=3, reps=10, inner=2):
    for _ in range(warm):
        fn()
    samples = []
    for _ in range(reps):
        t = time.perf_counter()
        for _ in range(inner):
            fn()
        samples.append((time.perf_counter() - t) / inner)
    med = statistics.median(samples)
    return med, 100.0 * (max(samples) - min(samples)) / med


def data():
    rng = np.random.default_rng(16)
    lenet = {
        "x": rng.standard_normal((256, 1, 28, 28), dtype=np.float32),
        "y": rng.integers(0, 10, 256).astype(np.int64),
        "w0": (rng.standard_normal((20, 1, 5, 5)) * 0.1).astype(np.float32),
        "w1": (rng.standard_normal((50, 20, 5, 5)) * 0.05).astype(np.float32),
        "w2": (rng.standard_normal((50 * 4 * 4, 500)) * 0.02).astype(np.float32),
        "w3": (rng.standard_normal((500, 10)) * 0.05).astype(np.float32),
    }
    block = {
        "x": rng.standard_normal((32, 64, 28, 28), dtype=np.float32),
        "k1": (rng.standard_normal((64, 64, 3, 3)) * 0.05).astype(np.float32),
        "k2": (rng.standard_normal((64, 64, 3, 3)) * 0.05).astype(np.float32),
    }
    return lenet, block


def run_theon(lenet, block):
    import theon
    import theon.tensor as T
    from theon.tensor.nnet import conv2d
    from theon.tensor.signal import pool

    # LeNet SGD step: parameters in shared variables, updated in place by the step.
    x, y = T.tensor4("x"), T.lvector("y")
    W = [theon.shared(lenet[k].copy(), name=k) for k in ("w0", "w1", "w2", "w3")]
    h = T.tanh(pool.pool_2d(conv2d(x, W[0]), ws=(2, 2), ignore_border=True))
    h = T.tanh(pool.pool_2d(conv2d(h, W[1]), ws=(2, 2), ignore_border=True))
    h = T.tanh(T.dot(h.flatten(2), W[2]))
    p = T.nnet.softmax(T.dot(h, W[3]))
    loss = -T.mean(T.log(p)[T.arange(y.shape[0]), y])
    grads = T.grad(loss, W)
    step = theon.function([x, y], loss, updates=[(w, w - 0.01 * g) for w, g in zip(W, grads)])
    first = float(theon.function([x, y], loss)(lenet["x"], lenet["y"]))
    med, sp = timed(lambda: step(lenet["x"], lenet["y"]))
    print(f"CHECK lenet_step {first:.6f}")
    print(f"ROW lenet_step,theon,{med * 1e3:.3f},{sp:.1f}")

    # ResNet basic block forward + backward.
    xb = T.tensor4("xb")
    k1, k2 = T.tensor4("k1"), T.tensor4("k2")
    ones, zeros = np.ones((1, 64, 1, 1), np.float32), np.zeros((1, 64, 1, 1), np.float32)
    from theon.tensor.nnet.bn import batch_normalization_train

    def bn(v):
        return batch_normalization_train(v, ones, zeros, axes="spatial", epsilon=1e-5)[0]
    out = T.nnet.relu(bn(conv2d(T.nnet.relu(bn(conv2d(xb, k1, border_mode="half"))), k2, border_mode="half")) + xb)
    total = T.sum(out)
    f = theon.function([xb, k1, k2], [total] + T.grad(total, [xb, k1, k2]))
    print(f"CHECK resnet_block {float(f(block['x'], block['k1'], block['k2'])[0]):.3f}")
    med, sp = timed(lambda: f(block["x"], block["k1"], block["k2"]))
    print(f"ROW resnet_block,theon,{med * 1e3:.3f},{sp:.1f}")


def run_jax(lenet, block):
    import jax
    import jax.numpy as jnp
    from jax import lax

    def conv(v, k, pad):
        # Theano's conv2d flips the filters (a true convolution).
        return lax.conv_general_dilated(v, k[:, :, ::-1, ::-1], (1, 1), pad,
                                        dimension_numbers=("NCHW", "OIHW", "NCHW"))

    def pool2(v):
        return lax.reduce_window(v, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")

    def lenet_loss(W, x, y):
        h = jnp.tanh(pool2(conv(x, W[0], "VALID")))
        h = jnp.tanh(pool2(conv(h, W[1], "VALID")))
        h = jnp.tanh(h.reshape(h.shape[0], -1) @ W[2])
        logp = jax.nn.log_softmax(h @ W[3])
        return -jnp.mean(logp[jnp.arange(y.shape[0]), y])

    @jax.jit
    def step(W, x, y):
        loss, g = jax.value_and_grad(lenet_loss)(W, x, y)
        return loss, [w - 0.01 * gw for w, gw in zip(W, g)]

    W = [jnp.asarray(lenet[k]) for k in ("w0", "w1", "w2", "w3")]
    x, y = jnp.asarray(lenet["x"]), jnp.asarray(lenet["y"])
    print(f"CHECK lenet_step {float(jax.jit(lenet_loss)(W, x, y)):.6f}")
    state = {"W": W}

    def one():
        loss, state["W"] = step(state["W"], x, y)
        loss.block_until_ready()
    med, sp = timed(one)
    print(f"ROW lenet_step,jax,{med * 1e3:.3f},{sp:.1f}")

    def bn(v):
        m = v.mean(axis=(0, 2, 3), keepdims=True)
        var = v.var(axis=(0, 2, 3), keepdims=True)
        return (v - m) / jnp.sqrt(var + 1e-5)

    def block_total(xb, k1, k2):
        h = jax.nn.relu(bn(conv(xb, k1, "SAME")))
        return jnp.sum(jax.nn.relu(bn(conv(h, k2, "SAME")) + xb))

    f = jax.jit(jax.value_and_grad(block_total, argnums=(0, 1, 2)))
    args = [jnp.asarray(block[k]) for k in ("x", "k1", "k2")]
    print(f"CHECK resnet_block {float(f(*args)[0]):.3f}")
    med, sp = timed(lambda: jax.block_until_ready(f(*args)))
    print(f"ROW resnet_block,jax,{med * 1e3:.3f},{sp:.1f}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--framework", choices=["theon", "jax"], required=True)
    args = parser.parse_args()
    lenet, block = data()
    (run_theon if args.framework == "theon" else run_jax)(lenet, block)


if __name__ == "__main__":
    main()
