"""Impossible sizes and failed allocations (issue 11).

A shape whose element or byte count does not fit in 64 bits is a ShapeError (a ValueError, as
NumPy's "array is too big") naming the op and the shape; it used to wrap around, and a
function returned heap garbage or crashed. An allocation the machine cannot give is a
MemoryError (Python's own, through theon's TheonMemoryError) naming the bytes and the device,
and the call that raised it changed no shared variable.

The failing allocations ask for 2**47 bytes or more: beyond x86-64's user address space and
RAM + swap, so malloc refuses at once and nothing is touched, whatever the overcommit mode.
"""
import subprocess
import sys

import numpy as np
import pytest

import theon
import theon.tensor as T
from theon import errors

from conftest import subprocess_env


def test_alloc_with_an_overflowing_size_is_a_shape_error():
    n = T.lscalar("n")
    f = theon.function([n], T.alloc(np.float32(1.5), n, 4)[7, :4])
    with pytest.raises(errors.ShapeError) as e:
        f(2**62)  # 2**64 elements: wrapped to 0, the call returned 4 values of heap garbage
    msg = str(e.value)
    assert "Alloc" in msg and "shape (4611686018427387904, 4) is too big" in msg, msg
    assert isinstance(e.value, ValueError)
    np.testing.assert_array_equal(f(8), np.full(4, 1.5, np.float32))


def test_static_overflowing_sizes_fail_when_the_graph_is_built():
    with pytest.raises(ValueError, match=r"shape \(4611686018427387904, 4\) is too big"):
        T.alloc(1.5, 2**62, 4)
    with pytest.raises(ValueError, match=r"shape \(4294967296, 4294967296\) is too big"):
        T.vector("x").reshape((2**32, 2**32))
    with pytest.raises(ValueError, match="is too big"):
        T.zeros((2**40, 2**40))


_RESHAPE = """
import numpy as np, theon, theon.tensor as T
x = T.vector('x'); s = T.tensor('int64', shape=(2,), name='s')
f = theon.function([x, s], x.reshape(s)[5, 7])
try:
    f(np.zeros(0, 'float32'), np.array([2**32, 2**32]))
except ValueError as e:
    print('ValueError:', e)
"""


def test_reshape_of_an_empty_vector_to_an_overflowing_shape_is_a_shape_error():
    # In a child process: before the fix this segfaulted (2**64 "matched" the 0 elements).
    r = subprocess.run([sys.executable, "-c", _RESHAPE], capture_output=True, text=True,
                       env=subprocess_env(THEON_FLAGS="cxx="), timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "ValueError: Reshape" in r.stdout, r.stdout
    assert "shape (4294967296, 4294967296) is too big" in r.stdout, r.stdout


def test_a_failed_allocation_is_a_memory_error_and_commits_nothing():
    calls = theon.shared(np.int64(0), name="calls")
    n = T.lscalar("n")
    f = theon.function([n], T.alloc(np.float32(1.0), n).sum(), updates=[(calls, calls + 1)], name="f")
    with pytest.raises(MemoryError) as e:
        f(2**45)  # 2**45 float32 = 2**47 bytes (128 TiB)
    msg = str(e.value)
    assert "out of memory on cpu: cannot allocate 140737488355328 bytes (128.0 TiB)" in msg, msg
    assert "function 'f'" in msg and "Alloc" in msg, msg
    assert isinstance(e.value, errors.TheonError)
    assert int(calls.get_value()) == 0  # nothing committed
    assert float(f(3)) == 3.0  # the function still works
    assert int(calls.get_value()) == 1


def test_memory_error_is_python_memory_error():
    from theon import _core
    assert issubclass(_core.TheonMemoryError, MemoryError)
    assert issubclass(_core.TheonMemoryError, errors.TheonError)
    assert errors.TheonMemoryError is _core.TheonMemoryError


def test_a_float16_input_of_a_float32_function_is_converted_losslessly():
    x = T.vector("x")
    f = theon.function([x], x * 2, name="double")
    r = f(np.array([1.5, 0.1, -3], np.float16))
    assert r.dtype == np.float32
    np.testing.assert_array_equal(r, np.array([1.5, 0.1, -3], np.float16).astype(np.float32) * 2)
