"""Theano's everyday tensor names (issue 17) against NumPy: the special functions, the
compositions (eye, tile, repeat, ...), the T.nnet / extra_ops names, and the existing names
the issue asked to verify (dtype=, symbolic shapes, negative axes, ...)."""
import math

import numpy as np
import pytest

import theon
import theon.tensor as T
from theon.tensor import extra_ops, nnet
from theon.tensor.xlogx import xlogx, xlogy0

rng = np.random.default_rng(17)


def run(inputs, out, *values):
    return theon.function(inputs, out)(*values)


def close(a, b, rtol=1e-7, atol=1e-9):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)


# ---- special functions ---------------------------------------------------------------------
def _digamma(x):  # float64 reference: recurrence to 40, asymptotic series
    r = 0.0
    while x < 40:
        r -= 1 / x
        x += 1
    return r + math.log(x) - 1 / (2 * x) - 1 / (12 * x * x) + 1 / (120 * x ** 4) - 1 / (252 * x ** 6)


def test_special_functions_match_float64_references():
    x = T.dvector("x")
    u = np.array([-0.999999, -0.9, -0.3, 0.0, 1e-8, 0.5, 0.75, 0.99999999])
    got = run([x], T.erfinv(x), u)
    close([math.erf(g) for g in got], u, rtol=1e-14, atol=1e-15)
    p = np.array([0.1, 0.5, 1.0, 1.5, 3.7, 10.0, 40.5])
    close(run([x], T.gamma(x), p), [math.gamma(v) for v in p], rtol=1e-13)
    close(run([x], T.gammaln(x), p), [math.lgamma(v) for v in p], rtol=1e-13, atol=1e-14)
    close(run([x], T.psi(x), p), [_digamma(v) for v in p], rtol=1e-12, atol=1e-13)
    # psi of negative non-integers through the reflection formula.
    close(run([x], T.psi(x), np.array([-0.5, -2.25])),
          [_digamma(1.5) - math.pi / math.tan(math.pi * -0.5), _digamma(3.25) - math.pi / math.tan(math.pi * -2.25)],
          rtol=1e-11, atol=1e-12)
    # tri_gamma is psi's derivative (central differences of psi).
    h = 1e-5
    close(run([x], T.tri_gamma(x), p), [(_digamma(v + h) - _digamma(v - h)) / (2 * h) for v in p], rtol=1e-6)


def test_erfinv_edges_and_float32():
    x = T.dvector("x")
    got = run([x], T.erfinv(x), np.array([1.0, -1.0, 1.5, np.nan, 0.0]))
    assert got[0] == np.inf and got[1] == -np.inf and np.isnan(got[2]) and np.isnan(got[3]) and got[4] == 0
    f = T.fvector("f")
    v = np.linspace(-0.99, 0.99, 11).astype(np.float32)
    out = run([f], T.erfinv(f), v)
    assert out.dtype == np.float32
    close([math.erf(g) for g in out.astype(np.float64)], v.astype(np.float64), rtol=1e-6, atol=1e-7)


def test_xlogx_xlogy0_and_their_module():
    x, y = T.dvectors("x", "y")
    xv, yv = np.array([0.0, 0.5, 2.0]), np.array([3.0, 0.25, 5.0])
    close(run([x], xlogx(x), xv), [0.0, 0.5 * math.log(0.5), 2 * math.log(2)])
    close(run([x, y], xlogy0(x, y), xv, yv), [0.0, 0.5 * math.log(0.25), 2 * math.log(5)])
    assert T.xlogx.xlogx is xlogx  # Theano's theano.tensor.xlogx module
    assert not hasattr(T, "softsign") and not hasattr(T, "xlogy0")


def test_special_gradients():
    for fn, pt in [(T.erfinv, [0.3, -0.7]), (T.gamma, [0.7, 2.5]), (T.gammaln, [0.4, 3.0]), (T.psi, [0.6, 4.0]),
                   (xlogx, [0.3, 2.0]), (nnet.softsign, [-1.5, 0.7])]:
        T.verify_grad(fn, [np.array(pt)], rng=np.random.RandomState(0))
    T.verify_grad(xlogy0, [np.array([0.3, 2.0]), np.array([1.5, 0.2])], rng=np.random.RandomState(0))


def test_tri_gamma_gradient_is_not_implemented_as_in_theano():
    x = T.dscalar("x")
    with pytest.raises(NotImplementedError, match="tri_gamma"):
        T.grad(T.tri_gamma(x), x)


# ---- nnet and extra_ops names ---------------------------------------------------------------
def test_nnet_names():
    x = T.dvector("x")
    v = np.array([-3.0, -0.5, 0.0, 0.4, 2.0])
    close(run([x], nnet.softsign(x), v), v / (1 + np.abs(v)))
    close(run([x], nnet.hard_sigmoid(x), v), np.clip(0.2 * v + 0.5, 0, 1))
    close(run([x], nnet.ultra_fast_sigmoid(x), v), 1 / (1 + np.exp(-v)), rtol=1e-12)
    close(run([x], nnet.elu(x), v), np.where(v > 0, v, np.exp(v) - 1))
    close(run([x], nnet.relu(x, alpha=0.1), v), np.where(v > 0, v, 0.1 * v))
    p, t = T.dvectors("p", "t")
    pv, tv = np.array([0.2, 0.9]), np.array([0.0, 1.0])
    close(run([p, t], nnet.binary_crossentropy(p, t), pv, tv), -(tv * np.log(pv) + (1 - tv) * np.log(1 - pv)))


def test_categorical_crossentropy_int_labels_and_one_hot_rows():
    c = T.dmatrix("c")
    cv = np.array([[0.2, 0.5, 0.3], [0.6, 0.1, 0.3]])
    labels = T.lvector("l")
    close(run([c, labels], nnet.categorical_crossentropy(c, labels), cv, np.array([1, 0])), -np.log([0.5, 0.6]))
    onehot = T.dmatrix("o")
    close(run([c, onehot], nnet.categorical_crossentropy(c, onehot), cv, np.eye(3)[[1, 0]]), -np.log([0.5, 0.6]))


def test_to_one_hot_static_and_symbolic_class_count():
    y = T.lvector("y")
    n = T.lscalar("n")
    yv = np.array([2, 0, 1])
    close(run([y], extra_ops.to_one_hot(y, 4), yv), np.eye(4)[yv])
    out = run([y, n], extra_ops.to_one_hot(y, n, dtype="int32"), yv, 5)
    assert out.dtype == np.int32
    close(out, np.eye(5)[yv])


def test_extra_ops_diff_bincount_repeat_squeeze():
    x = T.dmatrix("x")
    xv = rng.normal(size=(3, 5))
    close(run([x], extra_ops.diff(x), xv), np.diff(xv))
    close(run([x], extra_ops.diff(x, n=2, axis=0), xv), np.diff(xv, n=2, axis=0))
    i = T.lvector("i")
    iv = np.array([1, 3, 1, 0, 3, 3])
    close(run([i], extra_ops.bincount(i), iv), np.bincount(iv))
    close(run([i], extra_ops.bincount(i, minlength=7), iv), np.bincount(iv, minlength=7))
    w = T.dvector("w")
    wv = rng.normal(size=6)
    close(run([i, w], extra_ops.bincount(i, weights=w), iv, wv), np.bincount(iv, weights=wv))
    close(run([x], extra_ops.repeat(x, 2, axis=1), xv), np.repeat(xv, 2, axis=1))
    r = T.row("r", dtype="float64")
    close(run([r], extra_ops.squeeze(r), xv[:1]), xv[0])


# ---- compositions ---------------------------------------------------------------------------
def test_eye_identity_like():
    n, m = T.lscalars("n", "m")
    close(run([n, m], T.eye(n, m, 1), 3, 4), np.eye(3, 4, 1))
    assert T.eye(3).dtype == theon.config.floatX
    close(T.eye(4, k=-2, dtype="int32").eval(), np.eye(4, k=-2, dtype=np.int32))
    x = T.dmatrix("x")
    close(run([x], T.identity_like(x), np.zeros((2, 3))), np.eye(2, 3))


def test_tile_repeat_linspace_roll():
    x = T.dmatrix("x")
    xv = rng.normal(size=(2, 3))
    close(run([x], T.tile(x, (2, 3)), xv), np.tile(xv, (2, 3)))
    close(run([x], T.tile(x, (2, 1, 2)), xv), np.tile(xv, (2, 1, 2)))
    k = T.lscalar("k")
    close(run([x, k], T.tile(x, [k, 1]), xv, 3), np.tile(xv, (3, 1)))
    close(run([x], T.repeat(x, 3), xv), np.repeat(xv, 3))
    close(run([x, k], T.repeat(x, k, axis=0), xv, 2), np.repeat(xv, 2, axis=0))
    close(run([x], T.repeat(x, [2, 0, 1], axis=1), xv), np.repeat(xv, [2, 0, 1], axis=1))
    close(run([x], x.repeat(2, axis=0), xv), np.repeat(xv, 2, axis=0))
    a, b = T.dscalars("a", "b")
    close(run([a, b], T.linspace(a, b, 7), -1.0, 2.0), np.linspace(-1, 2, 7))
    close(run([a, b], T.linspace(a, b, 4, endpoint=False), 0.0, 1.0), np.linspace(0, 1, 4, endpoint=False))
    for shift, axis in [(1, 0), (-2, 1), (7, None), (4, -1)]:
        close(run([x], T.roll(x, shift, axis), xv), np.roll(xv, shift, axis))
    close(run([x, k], T.roll(x, k, 1), xv, -4), np.roll(xv, -4, 1))


def test_tile_repeat_roll_gradients():
    for f in [lambda x: T.tile(x, (2, 3)), lambda x: T.repeat(x, 2, axis=1), lambda x: T.repeat(x, [1, 0, 3], 0),
              lambda x: T.roll(x, 2, 1), lambda x: T.diagonal(x, 1), lambda x: T.diag(x[0], -1)]:
        T.verify_grad(f, [rng.normal(size=(3, 4))], rng=np.random.RandomState(1))


def test_diag_diagonal():
    x = T.dmatrix("x")
    xv = rng.normal(size=(3, 5))
    for off in (0, 2, -1):
        close(run([x], T.diagonal(x, off), xv), np.diagonal(xv, off))
        close(run([x], T.diag(x, off), xv), np.diag(xv, off))
    close(run([x], x.diagonal(), xv), np.diagonal(xv))
    t = T.dtensor3("t")
    tv = rng.normal(size=(2, 3, 4))
    close(run([t], T.diagonal(t, 1, 2, 0), tv), np.diagonal(tv, 1, 2, 0))
    v = T.dvector("v")
    close(run([v], T.diag(v, 2), np.arange(3.0)), np.diag(np.arange(3.0), 2))


def test_broadcast_pattern_names():
    x = T.dmatrix("x")
    y = T.addbroadcast(x, 0)
    assert y.broadcastable == (True, False)
    close(run([x], y + T.zeros((4, 3)), np.ones((1, 3))), np.ones((4, 3)))
    with pytest.raises(ValueError, match="addbroadcast"):
        run([x], y, np.ones((2, 3)))
    assert T.squeeze(y).ndim == 1
    assert T.unbroadcast(y, 0).broadcastable == (False, False)
    assert T.patternbroadcast(x, (False, True)).broadcastable == (False, True)
    close(run([x], T.unbroadcast(y, 0), np.ones((1, 3))), np.ones((1, 3)))


def test_specify_shape():
    x = T.dmatrix("x")
    s = T.specify_shape(x, (2, 3))
    assert s.type.shape == (2, 3)
    close(run([x], s * 2, np.ones((2, 3))), 2 * np.ones((2, 3)))
    with pytest.raises(ValueError, match="specify_shape"):
        run([x], s, np.ones((3, 2)))
    y = T.dmatrix("y")
    close(run([x, y], T.specify_shape(x, y.shape) + y, np.ones((2, 2)), np.ones((2, 2))), 2 * np.ones((2, 2)))


# ---- existing names the issue asked to verify -----------------------------------------------
def test_existing_names():
    x = T.dmatrix("x")
    xv = rng.normal(size=(3, 4))
    assert T.zeros_like(x, dtype="int32").dtype == "int32"
    assert T.ones_like(x, dtype="float32").dtype == "float32"
    n = T.lscalar("n")
    close(run([n], T.alloc(1.5, n, 2 * n), 2), np.full((2, 4), 1.5))
    close(run([x], T.clip(x, -0.5, 0.5), xv), np.clip(xv, -0.5, 0.5))
    close(run([x], T.maximum(x, 0.1) + T.minimum(x, -0.1), xv), np.maximum(xv, 0.1) + np.minimum(xv, -0.1))
    close(run([x], T.erf(x), xv), [[math.erf(v) for v in r] for r in xv], rtol=1e-14)
    close(run([x], T.log1p(T.abs_(x)) + T.expm1(x), xv), np.log1p(np.abs(xv)) + np.expm1(xv))
    nanv = np.array([[np.nan, 1.0, np.inf, -np.inf]])
    close(run([x], T.isnan(x), nanv), np.isnan(nanv))
    close(run([x], T.isinf(x), nanv), np.isinf(nanv))
    i, j = T.ivectors("i", "j")
    iv, jv = np.array([5, 12, -3], np.int32), np.array([3, 10, 6], np.int32)
    close(run([i, j], T.and_(i, j), iv, jv), iv & jv)
    close(run([i, j], T.or_(i, j), iv, jv), iv | jv)
    close(run([i, j], T.xor(i, j), iv, jv), iv ^ jv)
    close(run([i, j], T.bitwise_and(i, j) + T.bitwise_or(i, j) + T.bitwise_xor(i, j), iv, jv), (iv & jv) + (iv | jv) + (iv ^ jv))
    close(run([i], T.invert(i), iv), ~iv)
    close(run([i], T.bitwise_not(i), iv), ~iv)
    t = T.dtensor3("t")
    tv = rng.normal(size=(2, 3, 4))
    close(run([t], T.flatten(t, 2), tv), tv.reshape(2, 12))
    close(run([t], t.flatten(ndim=2), tv), tv.reshape(2, 12))
    close(run([x], T.stack([x, x + 1], axis=-1), xv), np.stack([xv, xv + 1], axis=-1))
    close(run([x], T.concatenate([x, x * 2], axis=-1), xv), np.concatenate([xv, 2 * xv], axis=-1))
    close(run([x], T.cumsum(x, axis=1) + T.cumprod(x, axis=-1), xv), np.cumsum(xv, 1) + np.cumprod(xv, -1))
    close(run([x], extra_ops.cumsum(x), xv), np.cumsum(xv))
    close(run([x], x[[slice(0, 2), 1]], xv), xv[0:2, 1])
    close(run([x], x[(slice(1, None), slice(None, None, 2))], xv), xv[1:, ::2])


# ---- sort / argsort -------------------------------------------------------------------------
@pytest.mark.parametrize("axis", [-1, 0, None])
def test_sort_argsort_match_numpy(axis):
    x = T.dmatrix("x")
    xv = rng.integers(-3, 4, size=(4, 6)).astype(np.float64)  # ties: argsort is stable
    xv[1, 2] = np.nan
    close(run([x], T.sort(x, axis), xv), np.sort(xv, axis=axis))
    got = run([x], T.argsort(x, axis), xv)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, np.argsort(xv, axis=axis, kind="stable"))
    i = T.ivector("i")
    iv = rng.integers(-50, 50, size=9).astype(np.int32)
    np.testing.assert_array_equal(run([i], i.sort(), iv), np.sort(iv))
    np.testing.assert_array_equal(run([i], i.argsort(kind="mergesort"), iv), np.argsort(iv, kind="stable"))


def test_sort_gradient_and_arguments():
    T.verify_grad(lambda x: T.sort(x, 0), [rng.normal(size=(4, 3))], rng=np.random.RandomState(2))
    T.verify_grad(lambda x: T.sort(x) * T.arange(5.0), [rng.normal(size=(3, 5))], rng=np.random.RandomState(3))
    x = T.dmatrix("x")
    with pytest.raises(ValueError, match="kind"):
        T.sort(x, kind="bogus")
    with pytest.raises(NotImplementedError, match="order"):
        T.argsort(x, order="f")


# ---- nonzero --------------------------------------------------------------------------------
def test_nonzero_flatnonzero_nonzero_values():
    x = T.dtensor3("x")
    xv = rng.integers(-2, 3, size=(2, 3, 4)).astype(np.float64)
    xv[0, 1, 2] = np.nan
    f = theon.function([x], [*T.nonzero(x), T.flatnonzero(x), T.nonzero_values(x), T.nonzero(x, return_matrix=True)])
    *coords, flat, values, mat = f(xv)
    for got, want in zip(coords, np.nonzero(xv)):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(flat, np.flatnonzero(xv))
    np.testing.assert_array_equal(values, xv[np.nonzero(xv)])
    np.testing.assert_array_equal(mat, np.stack(np.nonzero(xv)))
    np.testing.assert_array_equal(f(np.zeros((2, 0, 3)))[3], np.zeros(0, np.int64))
    b = T.bvector("b")
    np.testing.assert_array_equal(run([b], b.nonzero()[0], np.array([0, 3, 0, -1], np.int8)), [1, 3])
    T.verify_grad(lambda v: T.nonzero_values(v) * 2, [rng.normal(size=(3, 4))], rng=np.random.RandomState(4))
