"""Function.__call__'s fast path (_core.CallPlan, python/src/function.cpp and numpy_capi.cpp):
exact NumPy arrays of the inputs' dtypes go straight to C++; everything else takes the general
path, with the same results, messages and guarantees."""
import gc

import numpy as np
import pytest

import theon
import theon.tensor as T
from theon import _core


def affine():
    rng = np.random.default_rng(18)
    W = rng.standard_normal((10, 5)).astype(np.float32)
    b = rng.standard_normal(5).astype(np.float32)
    x = T.fmatrix("x")
    return theon.function([x], T.dot(x, theon.shared(W, "W")) + theon.shared(b, "b")), W, b


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # np.asmatrix
def test_plan_is_taken_for_exact_arrays_and_refused_otherwise():
    f, W, b = affine()
    assert f._plan is not None
    x = np.random.default_rng(1).standard_normal((10, 10)).astype(np.float32)
    out = f._plan((x,))
    np.testing.assert_allclose(out, x @ W + b, rtol=1e-5, atol=1e-5)
    # Not an exact float32 ndarray, or the wrong count: NotImplemented, nothing ran.
    for args in [(x.astype(np.float64),), (x.tolist(),), (np.asmatrix(x),), (x, x), (),
                 (x.astype(x.dtype.newbyteorder()),)]:
        assert f._plan(args) is NotImplemented


def test_fast_and_general_paths_agree():
    f, W, b = affine()
    x = np.random.default_rng(2).standard_normal((10, 10)).astype(np.float32)
    fast = f(x)
    general = f(x=x)  # a keyword takes the general path
    np.testing.assert_array_equal(fast, general)
    assert fast.dtype == np.float32 and fast.shape == (10, 5) and fast.flags.writeable
    np.testing.assert_array_equal(f(x.tolist()), fast)  # lists convert on the general path


@pytest.mark.parametrize("view", ["transposed", "negative", "strided", "empty", "broadcast"])
def test_views_go_through_without_copies(view):
    x = T.fmatrix("x")
    f = theon.function([x], x * 2)
    base = np.arange(60, dtype=np.float32).reshape(6, 10)
    a = {"transposed": base.T, "negative": base[::-1, ::-2], "strided": base[::2, 1::3],
         "empty": base[:0], "broadcast": np.broadcast_to(base[:1], (4, 10))}[view]
    assert f._plan((a,)) is not NotImplemented
    np.testing.assert_array_equal(f(a), a * 2)


def test_dtypes_and_integer_outputs():
    for dt in ["int64", "int32", "int16", "int8", "uint8", "bool", "float64"]:
        v = T.vector("v", dtype=dt)
        f = theon.function([v], v)
        a = np.arange(5).astype(dt)
        out = f(a)
        assert out.dtype == np.dtype(dt) and out.dtype.type is np.dtype(dt).type, dt
        np.testing.assert_array_equal(out, a)
        assert out.ctypes.data != a.ctypes.data  # outputs never alias inputs


def test_wrong_dtype_keeps_the_general_message():
    f, _, _ = affine()
    with pytest.raises(TypeError, match="allow_input_downcast|without loss|cannot"):
        f(np.ones((10, 10), np.float64) / 3)


def test_inputs_released_and_outputs_independent():
    f, _, _ = affine()
    x = np.ones((10, 10), np.float32)
    gc.collect()
    before = _core.live_numpy_owners()
    outs = [f(x) for _ in range(100)]
    assert _core.live_numpy_owners() == before
    outs[0][0, 0] = 1e6
    assert outs[1][0, 0] != 1e6
    del outs
    gc.collect()
    assert _core.live_numpy_owners() == before


def test_failed_fast_call_leaves_shared_variables_unchanged():
    s = theon.shared(np.zeros(3, np.float32), "s")
    x = T.fvector("x")
    f = theon.function([x], x.sum(), updates=[(s, s + x)])
    f(np.ones(3, np.float32))
    with pytest.raises(ValueError):
        f(np.ones(4, np.float32))  # s + x: shapes (3,) and (4,)
    np.testing.assert_array_equal(s.get_value(), np.ones(3, np.float32))


def test_multiple_outputs_and_none_inputs():
    x = T.fvector("x")
    f = theon.function([x], [x + 1, x * 2])
    a = np.arange(3, dtype=np.float32)
    r = f(a)
    assert isinstance(r, list) and len(r) == 2
    np.testing.assert_array_equal(r[0], a + 1)
    g = theon.function([], theon.shared(np.float32(3), "c") * 2)
    assert float(g()) == 6.0
