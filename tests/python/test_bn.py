"""theon.tensor.nnet.bn (Theano's batch_normalization, batch_normalization_train,
batch_normalization_test) against NumPy float64 references, gradients by verify_grad."""
import numpy as np
import pytest

import theon
import theon.tensor as T
from theon.tensor.nnet import bn


def ref_axes(axes, ndim):
    if axes == "per-activation":
        return (0,)
    if axes == "spatial":
        return (0,) + tuple(range(2, ndim))
    return tuple(sorted(a % ndim for a in axes))


def test_batch_normalization_matches_formula():
    rng = np.random.default_rng(0)
    x, g, b, m, s = (T.dmatrix(n) for n in "xgbms")
    vals = [rng.standard_normal((4, 5)) for _ in range(5)]
    vals[4] = np.abs(vals[4]) + 0.5
    for mode in ("low_mem", "high_mem"):
        got = theon.function([x, g, b, m, s], bn.batch_normalization(x, g, b, m, s, mode=mode))(*vals)
        xv, gv, bv, mv, sv = vals
        np.testing.assert_allclose(got, (xv - mv) * (gv / sv) + bv, rtol=1e-12)
    assert T.nnet.batch_normalization is bn.batch_normalization
    with pytest.raises(ValueError, match="mode"):
        bn.batch_normalization(x, g, b, m, s, mode="fast")


@pytest.mark.parametrize("axes,shape", [("per-activation", (6, 3, 4)), ("spatial", (4, 3, 5, 2)),
                                        ((0, 2), (5, 3, 4)), ("per-activation", (7, 5))])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("full_params", [False, True])
def test_batch_normalization_train_and_test(axes, shape, dtype, full_params):
    rng = np.random.default_rng(1)
    ndim = len(shape)
    ax = ref_axes(axes, ndim)
    pshape_full = tuple(1 if d in ax else shape[d] for d in range(ndim))
    pshape = pshape_full if full_params else tuple(shape[d] for d in range(ndim) if d not in ax)
    x = T.tensor(dtype, shape=(None,) * ndim, name="x")
    g, b, rm, rv = (T.tensor(dtype, shape=(None,) * len(pshape), name=n) for n in ("g", "b", "rm", "rv"))
    out, mean, invstd, new_rm, new_rv = bn.batch_normalization_train(
        x, g, b, axes=axes, epsilon=1e-3, running_average_factor=0.3, running_mean=rm, running_var=rv)
    xv = rng.standard_normal(shape).astype(dtype)
    gv, bv, rmv = (rng.standard_normal(pshape).astype(dtype) for _ in range(3))
    rvv = (np.abs(rng.standard_normal(pshape)) + 0.5).astype(dtype)
    got = theon.function([x, g, b, rm, rv], [out, mean, invstd, new_rm, new_rv])(xv, gv, bv, rmv, rvv)

    x64 = xv.astype(np.float64)
    mu = x64.mean(axis=ax, keepdims=True)
    var = x64.var(axis=ax, keepdims=True)
    inv = 1 / np.sqrt(var + 1e-3)
    gb, bb, rmb, rvb = (v.astype(np.float64).reshape(pshape_full) for v in (gv, bv, rmv, rvv))
    m = np.prod([shape[d] for d in ax])
    want = [(x64 - mu) * inv * gb + bb, mu, inv, rmb * 0.7 + mu * 0.3, rvb * 0.7 + var * (m / (m - 1)) * 0.3]
    tol = 2e-5 if dtype == "float32" else 1e-11
    for w, gt in zip(want, got):
        assert gt.dtype == np.dtype(dtype)
        np.testing.assert_allclose(gt, w.reshape(pshape) if w.shape != (x64.shape) else w, rtol=tol, atol=tol)

    # batch_normalization_test with the statistics given.
    mv, vv = (rng.standard_normal(pshape).astype(dtype) for _ in range(2))
    vv = np.abs(vv) + 0.5
    mean_v, var_v = (T.tensor(dtype, shape=(None,) * len(pshape), name=n) for n in ("mean", "var"))
    y = bn.batch_normalization_test(x, g, b, mean_v, var_v, axes=axes, epsilon=1e-3)
    got = theon.function([x, g, b, mean_v, var_v], y)(xv, gv, bv, mv, vv)
    mb, vb = (v.astype(np.float64).reshape(pshape_full) for v in (mv, vv))
    np.testing.assert_allclose(got, (x64 - mb) / np.sqrt(vb + 1e-3) * gb + bb, rtol=tol, atol=tol)


def test_train_gradients():
    rng = np.random.default_rng(2)

    def f(x, g, b):
        out, mean, invstd = bn.batch_normalization_train(x, g, b, axes="spatial")
        return out * 2 + mean.sum() + invstd.sum()

    T.verify_grad(f, [rng.standard_normal((4, 3, 2, 2)), rng.standard_normal(3), rng.standard_normal(3)],
                      rng=rng)


def test_test_gradients():
    rng = np.random.default_rng(3)

    def f(x, g, b, m, v):
        return bn.batch_normalization_test(x, g, b, m, v, axes=(0, 2))

    pts = [rng.standard_normal((3, 4, 5)), rng.standard_normal(4), rng.standard_normal(4),
           rng.standard_normal(4), np.abs(rng.standard_normal(4)) + 0.5]
    T.verify_grad(f, pts, rng=np.random.RandomState(0))


def test_errors():
    x = T.dtensor3("x")
    g = T.dvector("g")
    with pytest.raises(ValueError, match="axes"):
        bn.batch_normalization_train(x, g, g, axes="channel")
    with pytest.raises(ValueError, match="both"):
        bn.batch_normalization_train(x, T.dmatrix("g2"), T.dmatrix("b2"), running_mean=T.dmatrix("rm"))
    with pytest.raises(Exception, match="gamma"):
        bn.batch_normalization_train(x, T.dscalar("s"), g)
