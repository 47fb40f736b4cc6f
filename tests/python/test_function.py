"""theon.function: calls, conversions, updates, givens, In/Out, toposort, a training loop."""
import numpy as np
import pytest

import theon
import theon.tensor as T


def test_single_and_list_outputs():
    x = T.dvector("x")
    f = theon.function([x], x * 2)
    g = theon.function([x], [x * 2, x + 1])
    h = theon.function([x], (x * 2,))
    a = np.arange(3.0)
    assert isinstance(f(a), np.ndarray)
    out = g(a)
    assert isinstance(out, list) and len(out) == 2
    assert isinstance(h(a), list)
    np.testing.assert_allclose(out[1], a + 1)
    assert theon.function([x], theon.Out(x * 3, borrow=True))(a)[2] == 6


def test_mean_of_bool_is_a_fraction():
    """Theano's error-rate idiom: T.mean(T.neq(y_pred, y))."""
    a, b = T.lvector(), T.lvector()
    f = theon.function([a, b], [T.mean(T.neq(a, b)), T.neq(a, b).mean(axis=0)])
    r = f(np.array([1, 2, 3, 4]), np.array([1, 0, 3, 0]))
    assert float(r[0]) == 0.5 and float(r[1]) == 0.5


def test_scalar_outputs_are_0d_arrays():
    x = T.dvector()
    r = theon.function([x], x.sum())(np.ones(4))
    assert isinstance(r, np.ndarray) and r.shape == () and r == 4


def test_python_inputs_and_downcast():
    x = T.fvector("x")
    f = theon.function([x], x * 2)
    np.testing.assert_allclose(f([1, 2.5]), [2, 5])           # a list of Python numbers
    assert f([1.1]).dtype == np.float32                         # Python floats round to floatX
    with pytest.raises(TypeError, match="allow_input_downcast"):
        f(np.array([1.0, 2.0]))                                  # a float64 array is a lossy cast
    g = theon.function([x], x * 2, allow_input_downcast=True)
    np.testing.assert_allclose(g(np.array([1.0, 2.0])), [2, 4])
    np.testing.assert_allclose(f(np.array([1, 2], dtype=np.int16)), [2, 4])  # lossless: accepted
    i = T.iscalar("i")
    fi = theon.function([i], i + 1)
    assert fi(3) == 4
    with pytest.raises(TypeError):
        fi(2.5)
    with pytest.raises(TypeError):
        fi(2 ** 40)
    assert theon.function([i], i + 1, allow_input_downcast=True)(2.7) == 3
    s = T.dscalar()
    assert theon.function([s], s * 2)(3) == 6
    strict = theon.function([theon.In(x, strict=True)], x)
    with pytest.raises(TypeError):
        strict(np.array([1, 2], dtype=np.int16))


def test_wrong_number_of_inputs():
    x = T.dvector("x")
    f = theon.function([x], x)
    with pytest.raises(TypeError):
        f()
    with pytest.raises(TypeError):
        f(np.ones(2), np.ones(2))
    with pytest.raises(TypeError):
        f(x)


def test_in_defaults_and_keywords():
    x, y = T.dscalar("x"), T.dscalar("y")
    f = theon.function([x, theon.In(y, value=1.0)], x + y)
    assert f(2.0) == 3 and f(2.0, 5.0) == 7 and f(x=1.0, y=2.0) == 3 and f(4.0, y=1.0) == 5
    with pytest.raises(TypeError):
        f(1.0, x=2.0)
    with pytest.raises(TypeError):
        f(z=1.0)


def test_updates_dict_and_pairs():
    c = theon.shared(np.int64(0), "c")
    inc = T.lscalar("inc")
    f = theon.function([inc], c, updates={c: c + inc})
    assert f(2) == 0 and f(3) == 2 and c.get_value() == 5
    g = theon.function([], c * 2, updates=[(c, c - 1)])
    assert g() == 10 and c.get_value() == 4
    with pytest.raises(TypeError):
        theon.function([inc], inc, updates=[(inc, inc + 1)])


def test_updates_all_or_nothing():
    w = theon.shared(np.ones(3), "w")
    idx = T.lscalar("idx")
    f = theon.function([idx], w[idx], updates=[(w, w * 2)])
    with pytest.raises(IndexError):
        f(10)
    np.testing.assert_array_equal(w.get_value(), np.ones(3))
    f(1)
    np.testing.assert_array_equal(w.get_value(), 2 * np.ones(3))


def test_givens_minibatch():
    data = theon.shared(np.arange(20.0).reshape(10, 2), "data")
    x = T.dmatrix("x")
    i = T.lscalar("i")
    f = theon.function([i], x.sum(), givens={x: data[i * 2:(i + 1) * 2]})
    assert f(1) == np.arange(20.0).reshape(10, 2)[2:4].sum()
    g = theon.function([], x.sum(), givens=[(x, np.ones((2, 2)))])
    assert g() == 4


def test_shared_values():
    a = np.arange(6.0).reshape(2, 3)
    s = theon.shared(a, "s")
    a[0, 0] = 100
    assert s.get_value()[0, 0] == 0             # copied
    v = s.get_value()
    v[0, 1] = 50
    assert s.get_value()[0, 1] == 1             # get_value returns a copy
    s.set_value(np.ones((4, 3)))
    assert s.get_value().shape == (4, 3)
    s.set_value(np.ones((2, 2), dtype=np.int32))  # a safe cast is accepted
    assert s.get_value().dtype == np.float64
    with pytest.raises(TypeError):
        theon.shared(np.ones(3, dtype=np.float32)).set_value(np.ones(3))
    with pytest.raises(TypeError):
        s.set_value(np.ones(3))                     # rank differs (Theano: TypeError too)
    f32 = theon.shared(np.float32(1.5), "f")
    assert f32.ndim == 0 and f32.dtype == "float32"
    b = theon.shared(np.zeros(2), borrow=True)
    assert b.get_value(borrow=True) is not None
    assert theon.shared(3).dtype == "int64" and theon.shared(0.5).dtype == "float64"
    with pytest.raises(TypeError):
        theon.shared(T.dvector())


def test_profile_not_available():
    x = T.dvector()
    with pytest.raises(NotImplementedError, match="not available yet"):
        theon.function([x], x, profile=True)
    theon.function([x], x, profile=False)


def test_toposort_and_explain():
    x = T.fmatrix("x")
    w = theon.shared(np.ones((3, 2), dtype=np.float32), "w")
    f = theon.function([x], T.nnet.relu(T.dot(x, w)), name="f")
    topo = f.maker.fgraph.toposort()
    names = [type(n.op).__name__ for n in topo]
    assert "Gemm" in names  # relu(dot(x, w)): one Gemm with a relu epilogue and no addend
    assert all(n.device == "cpu" for n in topo)
    assert all(str(n.op) for n in topo)
    assert "function 'f'" in f.explain()
    assert f.name == "f"
    assert "bias=none, act=relu" in theon.printing.debugprint(f, file="str")


def test_mode_names():
    x = T.dvector()
    for mode in ["FAST_RUN", "FAST_COMPILE", "fast_run", None]:
        np.testing.assert_allclose(theon.function([x], x + 1, mode=mode)(np.zeros(2)), [1, 1])
    with pytest.raises(ValueError):
        theon.function([x], x, mode="turbo")


def test_logistic_regression_tutorial():
    """The Theano tutorial's logistic regression (deeplearning.net 'A Real Example')."""
    rng = np.random.RandomState(23455)
    N, feats = 400, 30
    D = (rng.randn(N, feats), rng.randint(size=N, low=0, high=2))
    training_steps = 200

    x = T.dmatrix("x")
    y = T.dvector("y")
    w = theon.shared(rng.randn(feats), name="w")
    b = theon.shared(0., name="b")

    p_1 = 1 / (1 + T.exp(-T.dot(x, w) - b))
    prediction = p_1 > 0.5
    xent = -y * T.log(p_1) - (1 - y) * T.log(1 - p_1)
    cost = xent.mean() + 0.01 * (w ** 2).sum()
    gw, gb = T.grad(cost, [w, b])

    train = theon.function(inputs=[x, y], outputs=[prediction, xent],
                           updates=((w, w - 0.1 * gw), (b, b - 0.1 * gb)))
    predict = theon.function(inputs=[x], outputs=prediction)

    # The same steps in NumPy.
    wn, bn = w.get_value().copy(), 0.0
    X, Y = D[0], D[1].astype(np.float64)
    for _ in range(training_steps):
        pred, err = train(D[0], D[1])
        p = 1 / (1 + np.exp(-X @ wn - bn))
        gwn = X.T @ (p - Y) / N + 0.02 * wn
        gbn = np.mean(p - Y)
        wn, bn = wn - 0.1 * gwn, bn - 0.1 * gbn
    np.testing.assert_allclose(w.get_value(), wn, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(b.get_value(), bn, rtol=1e-6, atol=1e-9)
    np.testing.assert_array_equal(predict(D[0]), 1 / (1 + np.exp(-X @ wn - bn)) > 0.5)


def test_softmax_regression_float32_minibatches():
    rng = np.random.RandomState(0)
    X = rng.randn(64, 5).astype(np.float32)
    Y = (X[:, 0] > 0).astype(np.int64) + (X[:, 1] > 0)
    data_x, data_y = theon.shared(X), theon.shared(Y)
    x, y, i = T.fmatrix("x"), T.lvector("y"), T.lscalar("i")
    W = theon.shared(np.zeros((5, 3), dtype=np.float32), "W")
    b = theon.shared(np.zeros(3, dtype=np.float32), "b")
    p = T.nnet.softmax(T.dot(x, W) + b)
    cost = T.mean(T.nnet.categorical_crossentropy(p, y))
    gW, gb = theon.grad(cost, [W, b])
    lr = 0.5
    train = theon.function([i], cost, updates=[(W, W - lr * gW), (b, b - lr * gb)],
                           givens={x: data_x[i * 16:(i + 1) * 16], y: data_y[i * 16:(i + 1) * 16]})
    err = theon.function([], T.mean(T.neq(T.argmax(p, axis=1), y)), givens={x: data_x, y: data_y})
    first = float(train(0))
    for epoch in range(30):
        for k in range(4):
            c = train(k)
    assert c.dtype == np.float32 and float(c) < first
    assert W.get_value().dtype == np.float32
    assert float(err()) < 0.3


class _DLPackOnly:
    """An array of another framework: only the DLPack protocol (as torch/CuPy/JAX offer)."""

    def __init__(self, a, device=(1, 0)):
        self._a, self._device = a, device

    def __dlpack__(self, *args, **kwargs):
        return self._a.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._device


def test_dlpack_inputs_and_outputs():
    x = T.dvector("x")
    f = theon.function([x], x * 2.0)
    src = np.arange(4, dtype=np.float64)
    out = f(_DLPackOnly(src))
    np.testing.assert_array_equal(out, src * 2)
    view = theon.from_dlpack(_DLPackOnly(src))
    assert np.shares_memory(view, src)  # no copy
    back = np.from_dlpack(out)  # outputs speak DLPack too
    assert np.shares_memory(back, out)
    with pytest.raises(NotImplementedError, match="CUDA array"):
        theon.from_dlpack(_DLPackOnly(src, device=(2, 0)))
