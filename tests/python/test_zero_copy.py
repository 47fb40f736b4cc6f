"""NumPy in and out without copies, and references released (no leaks)."""
import gc
import threading

import numpy as np
import pytest

import theon
import theon.tensor as T
from theon import _core


def test_input_is_viewed_not_copied():
    a = np.arange(12.0).reshape(3, 4)
    assert _core.array_data_ptr(a) == a.ctypes.data
    v = a[:, ::2]
    assert _core.array_data_ptr(v) == v.ctypes.data
    r = a[::-1, ::-1]
    assert _core.array_data_ptr(r) == r.ctypes.data
    back = _core.to_theon_and_back(a)
    assert back.ctypes.data == a.ctypes.data
    back2 = _core.to_theon_and_back(r)
    np.testing.assert_array_equal(back2, r)
    assert back2.ctypes.data == r.ctypes.data


def test_views_keep_the_numpy_array_alive():
    gc.collect()
    base = _core.live_numpy_owners()
    a = np.arange(6.0)
    back = _core.to_theon_and_back(a)
    assert _core.live_numpy_owners() == base + 1
    del a
    gc.collect()
    np.testing.assert_array_equal(back, np.arange(6.0))  # still valid
    del back
    gc.collect()
    assert _core.live_numpy_owners() == base


def test_function_calls_release_inputs():
    x = T.dmatrix()
    f = theon.function([x], x * 2)
    gc.collect()
    base = _core.live_numpy_owners()
    a = np.ones((50, 50))
    for _ in range(100):
        f(a)
    assert _core.live_numpy_owners() == base


def test_outputs_are_writable_and_independent():
    x = T.dvector()
    f = theon.function([x], [x * 2, x])
    a = np.arange(3.0)
    y, same = f(a)
    y[0] = 100
    same[1] = 50
    assert a[1] == 1  # outputs never alias inputs
    assert y.flags.writeable


def test_shared_borrow_aliases_numpy():
    a = np.zeros(3)
    s = theon.shared(a, borrow=True)
    a[0] = 7
    assert s.get_value()[0] == 7
    c = theon.shared(a)
    a[1] = 8
    assert c.get_value()[1] == 0


def test_dtypes_round_trip():
    for dt in ["bool", "int8", "int16", "int32", "int64", "uint8", "float32", "float64"]:
        a = (np.arange(6) % 2).astype(dt).reshape(2, 3)
        b = _core.to_theon_and_back(a)
        assert b.dtype == a.dtype
        np.testing.assert_array_equal(a, b)
    with pytest.raises(TypeError, match="no dtype"):
        _core.to_theon_and_back(np.zeros(2, dtype=np.complex128))


def test_gil_released_during_calls():
    x = T.dmatrix()
    f = theon.function([x], T.dot(x, x).sum())
    a = np.random.default_rng(0).standard_normal((120, 120))
    want = (a @ a).sum()
    results = []

    def work():
        for _ in range(20):
            results.append(float(f(a)))
    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 60
    np.testing.assert_allclose(results, want, rtol=1e-10)
