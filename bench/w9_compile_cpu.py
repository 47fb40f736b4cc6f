# W9 on the CPU (shared bench/WORKLOADS.md): the W6 step at B=256 from an uncompiled state
# to its first result, in a fresh process. Cold: an empty compiledir; warm: the one a cold run
# left. Usage: THEON_FLAGS=compiledir=DIR python bench/w9_compile_cpu.py (run twice).
import sys, time, os
t0 = time.perf_counter()
import numpy as np
import theon
import theon.tensor as T
t_import = time.perf_counter() - t0
rng = np.random.default_rng(6)
B = 256
def p(shape, scale): return theon.shared((rng.standard_normal(shape) * scale).astype("float32"))
W1, b1 = p((784, 1024), 1 / np.sqrt(784)), p((1024,), 0.1)
W2, b2 = p((1024, 1024), 1 / np.sqrt(1024)), p((1024,), 0.1)
W3, b3 = p((1024, 10), 1 / np.sqrt(1024)), p((10,), 0.1)
X = rng.random((B, 784), dtype=np.float32); y = rng.integers(0, 10, B).astype("int64")
x = T.matrix("x"); t = T.lvector("t")
h1 = T.nnet.relu(T.dot(x, W1) + b1); h2 = T.nnet.relu(T.dot(h1, W2) + b2)
loss = T.mean(T.nnet.categorical_crossentropy(T.nnet.softmax(T.dot(h2, W3) + b3), t))
params = [W1, b1, W2, b2, W3, b3]
grads = T.grad(loss, params)
t1 = time.perf_counter()
f = theon.function([x, t], loss, updates=[(q, q - 0.01 * g) for q, g in zip(params, grads)])
t2 = time.perf_counter()
out = f(X, y)
t3 = time.perf_counter()
print(f"function() {t2-t1:.3f} s, first call {t3-t2:.3f} s, first-call total {t3-t1:.3f} s, import {t_import:.3f} s")
