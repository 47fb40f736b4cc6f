"""float16 as Theano has it: a storage dtype of shared variables, inputs and outputs, computed in
float32 inside kernels (docs/guide/float16.md)."""
import numpy as np
import pytest

import theon
import theon.tensor as T


def test_variables_and_constructors_take_float16():
    x = T.matrix("x", dtype="float16")
    assert x.dtype == "float16"
    assert T.TensorType("float16", (False,))("v").dtype == "float16"
    assert x.astype("float32").dtype == "float32"
    assert T.vector(dtype="float32").astype("float16").dtype == "float16"
    assert "float16" in T.float_dtypes


def test_shared_float16_keeps_its_dtype_both_ways():
    w = theon.shared(np.array([1, 2.5, -3], np.float16), name="w")
    assert w.dtype == "float16"
    v = w.get_value()
    assert v.dtype == np.float16
    np.testing.assert_array_equal(v, np.array([1, 2.5, -3], np.float16))
    w.set_value(np.array([0.1, 0.2, 0.3], np.float16))
    np.testing.assert_array_equal(w.get_value(), np.array([0.1, 0.2, 0.3], np.float16))


def test_arithmetic_dtypes_follow_numpy():
    h = T.vector(dtype="float16")
    assert (h + h).dtype == "float16"
    assert (h + T.vector(dtype="float32")).dtype == "float32"
    assert (h + T.vector(dtype="int8")).dtype == "float16"
    assert (h + T.vector(dtype="int32")).dtype == "float64"
    assert (h * 2.5).dtype == "float16"
    assert T.sum(h).dtype == "float16"
    assert T.exp(h).dtype == "float16"


def test_outputs_are_float16_arrays_close_to_float64():
    x = T.vector("x", dtype="float16")
    y = T.vector("y", dtype="float16")
    f = theon.function([x, y], [T.tanh(x) * y + 1, T.sum(x * y)])
    xv = np.linspace(-2, 2, 11).astype(np.float16)
    yv = np.linspace(3, -1, 11).astype(np.float16)
    a, s = f(xv, yv)
    assert a.dtype == np.float16 and s.dtype == np.float16
    x64, y64 = xv.astype(np.float64), yv.astype(np.float64)
    np.testing.assert_allclose(a, np.tanh(x64) * y64 + 1, rtol=4e-3, atol=1e-3)
    np.testing.assert_allclose(s, np.sum(x64 * y64), rtol=4e-3, atol=1e-3)


def test_sum_accumulates_in_float32():
    x = T.vector("x", dtype="float16")
    f = theon.function([x], T.sum(x))
    out = f(np.ones(4096, np.float16))  # a float16 accumulator stops at 2048
    assert out.dtype == np.float16 and out == 4096


def test_float16_updates_store_float16():
    w = theon.shared(np.zeros(3, np.float16), name="w")
    x = T.vector("x", dtype="float16")
    f = theon.function([x], [], updates=[(w, w + x)])
    f(np.array([0.5, 1, 2], np.float16))
    f(np.array([0.5, 1, 2], np.float16))
    v = w.get_value()
    assert v.dtype == np.float16
    np.testing.assert_array_equal(v, np.array([1, 2, 4], np.float16))


def test_a_mismatched_float32_input_is_refused_without_downcast():
    x = T.vector("x", dtype="float16")
    f = theon.function([x], x * 2)
    with pytest.raises(TypeError, match="float32"):
        f(np.ones(3, np.float32))
    g = theon.function([x], x * 2, allow_input_downcast=True)
    r = g(np.ones(3, np.float32))
    assert r.dtype == np.float16


def _train(dtype, steps=60):
    rng = np.random.RandomState(0)
    n, d = 200, 5
    X = rng.randn(n, d)
    true_w = rng.randn(d)
    Y = (X @ true_w + 0.3 * rng.randn(n) > 0).astype(np.float64)
    w = theon.shared(np.zeros(d, dtype), name="w")
    b = theon.shared(np.zeros((), dtype), name="b")
    x = T.matrix("x", dtype=dtype)
    y = T.vector("y", dtype=dtype)
    p = T.nnet.sigmoid(T.dot(x, w) + b)
    loss = T.mean(T.nnet.binary_crossentropy(p, y))
    gw, gb = T.grad(loss, [w, b])
    step = theon.function([x, y], loss, updates=[(w, w - 0.5 * gw), (b, b - 0.5 * gb)])
    losses = [float(step(X.astype(dtype), Y.astype(dtype))) for _ in range(steps)]
    assert w.get_value().dtype == np.dtype(dtype)
    return losses, step(X.astype(dtype), Y.astype(dtype)).dtype


def test_logistic_regression_training_step_in_float16():
    l16, out_dtype = _train("float16")
    l32, _ = _train("float32")
    assert out_dtype == np.float16
    assert l16[-1] < 0.6 * l16[0], l16
    assert abs(l16[-1] - l32[-1]) < 0.02, (l16[-1], l32[-1])
    np.testing.assert_allclose(l16[:10], l32[:10], atol=0.01)


def test_random_streams_draw_float16():
    from theon.tensor.shared_randomstreams import RandomStreams
    srng = RandomStreams(seed=3)
    u = srng.uniform((2000,), dtype="float16")
    f = theon.function([], u)
    a = f()
    assert a.dtype == np.float16
    assert a.min() >= 0 and a.max() <= 1 and abs(a.mean() - 0.5) < 0.05


def test_floatx_may_be_float16():
    old = theon.config.floatX
    try:
        theon.config.floatX = "float16"
        x = T.vector("x")
        assert x.dtype == "float16"
        f = theon.function([x], x * 1.5)
        assert f(np.array([2], np.float16)).dtype == np.float16
    finally:
        theon.config.floatX = old


def test_conv2d_and_pooling_with_gradients_in_float16():
    from theon.tensor.signal import pool
    rng = np.random.RandomState(1)
    xv = rng.randn(2, 3, 6, 6).astype(np.float16)
    wv = rng.randn(4, 3, 3, 3).astype(np.float16)
    outs = []
    for dtype in ("float16", "float64"):
        x = T.tensor4("x", dtype=dtype)
        w = T.tensor4("w", dtype=dtype)
        p = pool.pool_2d(T.nnet.conv2d(x, w), ws=(2, 2), ignore_border=True)
        outs.append(theon.function([x, w], [p, T.grad(T.sum(p), w)])(xv.astype(dtype), wv.astype(dtype)))
    (p16, g16), (p64, g64) = outs
    assert p16.dtype == np.float16 and g16.dtype == np.float16
    np.testing.assert_allclose(p16, p64, rtol=4e-3, atol=2e-2)
    np.testing.assert_allclose(g16, g64, rtol=4e-3, atol=2e-2)


def test_conv_bias_relu_training_step_in_float16_folds_the_bias():
    # The epilogue passes run before the float16 pass, so a float16 conv + bias still folds
    # (then computes in float32); values agree with the unfused float32 graph at float16 precision.
    rng = np.random.default_rng(0)
    x = T.tensor4("x", dtype="float16")
    w = theon.shared(rng.standard_normal((4, 3, 3, 3)).astype("float16"), name="w")
    b = theon.shared((np.arange(4) * 0.1).astype("float16"), name="b")
    y = T.nnet.relu(T.nnet.conv2d(x, w, border_mode="half") + b.dimshuffle("x", 0, "x", "x"))
    f = theon.function([x], [y, theon.grad(y.sum(), w)])
    assert any("epilogue=bias" in str(n.op) for n in f.maker.fgraph.toposort())
    xv = rng.standard_normal((2, 3, 5, 5)).astype("float16")
    out, gw = f(xv)
    assert out.dtype == np.float16 and gw.dtype == np.float16
    x32 = T.tensor4("x32")
    w32, b32 = w.get_value().astype("float32"), b.get_value().astype("float32")
    y32 = T.nnet.relu(T.nnet.conv2d(x32, w32, border_mode="half") + T.constant(b32).dimshuffle("x", 0, "x", "x"))
    ref = theon.function([x32], y32, mode="NONE")(xv.astype("float32"))
    np.testing.assert_allclose(out.astype("float32"), ref, rtol=2e-3, atol=2e-2)
