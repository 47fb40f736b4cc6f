"""theon.tensor.signal.pool (Theano's pool_2d, pool_3d, max_pool_2d_same_size and the op
classes) against a NumPy float64 reference written like Theano's Pool.perform."""
import itertools
import warnings

import numpy as np
import pytest

import theon
import theon.tensor as T
from theon.tensor.signal import pool

MODES = ["max", "sum", "average_inc_pad", "average_exc_pad"]


def out_size(n, ws, st, pad, ignore_border):
    if n == 0:
        return 0
    r = n + 2 * pad
    if ignore_border:
        return max((r - ws) // st + 1, 0)
    if st >= ws:
        return (r - 1) // st + 1
    return max(0, (r - 1 - ws + st) // st) + 1


def ref_pool(x, ws, ignore_border, stride, pad, mode):
    nd = len(ws)
    stride = ws if stride is None else stride
    img = tuple(x.shape[-nd + i] + 2 * pad[i] for i in range(nd))
    y = np.zeros(x.shape[:-nd] + img)
    y[(Ellipsis,) + tuple(slice(pad[i], img[i] - pad[i]) for i in range(nd))] = x
    out_shp = tuple(out_size(x.shape[-nd + i], ws[i], stride[i], pad[i], ignore_border) for i in range(nd))
    z = np.zeros(x.shape[:-nd] + out_shp)
    for k in np.ndindex(*x.shape[:-nd]):
        for r in np.ndindex(*out_shp):
            sl = []
            for i in range(nd):
                start = r[i] * stride[i]
                end = min(start + ws[i], img[i])
                if mode != "average_inc_pad":
                    start, end = max(start, pad[i]), min(end, img[i] - pad[i])
                sl.append(slice(start, end))
            region = y[k][tuple(sl)]
            z[k + r] = {"max": np.max, "sum": np.sum}.get(mode, np.mean)(region)
    return z


def run(inputs, out, *values):
    return theon.function(inputs, out)(*values)


CONFIGS = [
    # (ws, ignore_border, stride, pad, shape)
    ((2, 2), True, None, (0, 0), (2, 3, 4, 6)),
    ((3, 2), False, (2, 1), (0, 0), (2, 2, 7, 5)),
    ((2, 3), False, (3, 4), (0, 0), (1, 2, 7, 9)),
    ((3, 3), True, (2, 2), (1, 2), (2, 1, 6, 7)),
    ((2, 2), True, (1, 1), (1, 1), (5, 4)),
    ((2, 2, 2), False, None, (0, 0, 0), (2, 3, 5, 4, 3)),
    ((3, 2, 2), True, (2, 1, 2), (1, 0, 1), (1, 5, 4, 5)),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("ws,ignore_border,stride,pad,shape", CONFIGS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_pool_matches_reference(mode, ws, ignore_border, stride, pad, shape, dtype):
    rng = np.random.default_rng(0)
    x = T.tensor(dtype, shape=(None,) * len(shape), name="x")
    fn = pool.pool_2d if len(ws) == 2 else pool.pool_3d
    y = fn(x, ws=ws, ignore_border=ignore_border, stride=stride, pad=pad, mode=mode)
    xv = rng.standard_normal(shape).astype(dtype)
    want = ref_pool(xv.astype(np.float64), ws, ignore_border, stride, pad, mode)
    got = run([x], y, xv)
    assert got.dtype == np.dtype(dtype) and got.shape == want.shape
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    # A non-contiguous view of the same values gives the same result.
    xt = np.ascontiguousarray(np.swapaxes(xv, -1, -2)).swapaxes(-1, -2)
    np.testing.assert_allclose(run([x], y, xt), want, rtol=tol, atol=tol)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("ws,ignore_border,stride,pad,shape", CONFIGS[:5])
def test_pool_gradient(mode, ws, ignore_border, stride, pad, shape):
    rng = np.random.default_rng(1)
    T.verify_grad(lambda v: pool.pool_2d(v, ws=ws, ignore_border=ignore_border, stride=stride, pad=pad,
                                             mode=mode), [rng.standard_normal(shape)], rng=np.random.RandomState(0))


def test_max_pool_second_derivative():
    rng = np.random.default_rng(2)

    def g(v):
        z = pool.pool_2d(v, ws=(3, 3), ignore_border=True, stride=(2, 2), pad=(1, 1))
        return T.grad(T.sum(z ** 2), v)

    T.verify_grad(g, [rng.standard_normal((2, 2, 6, 5))], rng=np.random.RandomState(0))


def test_max_pool_2d_same_size():
    rng = np.random.default_rng(3)
    x = T.dtensor4("x")
    xv = rng.standard_normal((2, 3, 5, 7))
    got = run([x], pool.max_pool_2d_same_size(x, (2, 3)), xv)
    want = np.zeros_like(xv)
    for i, j in itertools.product(range(2), range(2)):
        patch = xv[:, :, 2 * i:2 * i + 2, 3 * j:3 * j + 3]
        m = patch.max(axis=(2, 3), keepdims=True)
        want[:, :, 2 * i:2 * i + 2, 3 * j:3 * j + 3] = np.where(patch == m, patch, 0)
    np.testing.assert_array_equal(got, want)


def test_op_classes():
    rng = np.random.default_rng(4)
    x = T.dtensor4("x")
    xv = rng.standard_normal((1, 2, 4, 4))
    z = pool.Pool(ignore_border=True, mode="max")(x, (2, 2))
    gz = T.dtensor4("gz")
    gx = pool.MaxPoolGrad(ignore_border=True)(x, z, gz, (2, 2))
    ga = pool.AveragePoolGrad(ignore_border=True, mode="average_inc_pad")(x, gz, (2, 2))
    gzv = rng.standard_normal((1, 2, 2, 2))
    f = theon.function([x, gz], [gx, ga])
    got_max, got_avg = f(xv, gzv)
    sym = T.grad(T.sum(pool.pool_2d(x, (2, 2), ignore_border=True) * gz), x)
    np.testing.assert_allclose(got_max, theon.function([x, gz], sym)(xv, gzv))
    np.testing.assert_allclose(got_avg, np.repeat(np.repeat(gzv, 2, axis=2), 2, axis=3) / 4)
    assert pool.Pool.out_shape((2, 3, 5, 5), (2, 2), ignore_border=False) == [2, 3, 3, 3]
    assert pool.Pool(True) == pool.Pool(True) and pool.Pool(True) != pool.Pool(False)


def test_deprecated_names_and_default_ignore_border():
    x = T.dtensor4("x")
    xv = np.arange(2 * 5 * 5, dtype=np.float64).reshape(1, 2, 5, 5)
    with pytest.warns(UserWarning, match="ds"):
        y = pool.pool_2d(x, ds=(2, 2), ignore_border=True)
    assert run([x], y, xv).shape == (1, 2, 2, 2)
    with pytest.warns(UserWarning, match="ignore_border"):
        y = pool.pool_2d(x, ws=(2, 2))
    assert run([x], y, xv).shape == (1, 2, 3, 3)  # Theano's default: ignore_border=False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = pool.pool_2d(x, ws=(3, 3), st=(1, 1), padding=(1, 1), ignore_border=True)
    np.testing.assert_allclose(run([x], y, xv), ref_pool(xv, (3, 3), True, (1, 1), (1, 1), "max"))
    with pytest.raises(ValueError, match="both 'ws' and 'ds'"):
        pool.pool_2d(x, ws=(2, 2), ds=(2, 2), ignore_border=True)


def test_errors_name_the_call():
    x = T.dtensor4("images")
    with pytest.raises(NotImplementedError, match=r"images.*pad=\(1, 1\).*ignore_border=True"):
        pool.pool_2d(x, ws=(2, 2), ignore_border=False, pad=(1, 1))
    with pytest.raises(NotImplementedError, match=r"images.*pad < ws"):
        pool.pool_2d(x, ws=(2, 2), ignore_border=True, pad=(2, 0))
    with pytest.raises(ValueError, match="mode"):
        pool.pool_2d(x, ws=(2, 2), ignore_border=True, mode="median")
    with pytest.raises(NotImplementedError, match="dimension >= 2"):
        pool.pool_2d(T.dvector("v"), ws=(2, 2), ignore_border=True)
    with pytest.raises(TypeError, match="float32 or float64"):
        pool.pool_2d(T.itensor4("k"), ws=(2, 2), ignore_border=True)
    with pytest.raises(ValueError, match="ws must be >= 1"):
        pool.pool_2d(x, ws=(0, 2), ignore_border=True)
