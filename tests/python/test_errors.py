"""Every C++ error maps to a Python exception of the expected builtin class, message unchanged."""
import subprocess
import sys

import numpy as np
import pytest

import theon
import theon.tensor as T
from theon import errors


def test_hierarchy():
    assert issubclass(errors.TheonTypeError, TypeError)
    assert issubclass(errors.ShapeError, ValueError)
    assert issubclass(errors.TheonValueError, ValueError)
    assert issubclass(errors.ConfigError, ValueError)
    assert issubclass(errors.TheonIndexError, IndexError)
    assert issubclass(errors.TheonNotImplementedError, NotImplementedError)
    for cls in (errors.DeviceError, errors.InternalError, errors.TheonRuntimeError, errors.GradientError):
        assert issubclass(cls, RuntimeError)
    for name in errors.__all__:
        assert issubclass(getattr(errors, name), errors.TheonError)


def test_type_error_dtype():
    x = T.fmatrix("x")
    f = theon.function([x], x * 2, name="f")
    with pytest.raises(errors.TheonTypeError) as e:
        f(np.ones((2, 2)))
    assert "function 'f', input 0 ('x'" in str(e.value)
    assert "float64" in str(e.value)


def test_type_error_bad_dtype_name_and_rank():
    with pytest.raises(TypeError):
        T.cast(T.fvector(), "complex128")
    with pytest.raises(TypeError):
        theon.function([T.fvector()], T.fvector() * 2)  # unrelated input
    x = T.dmatrix()
    with pytest.raises(TypeError):
        theon.function([x], x)(np.ones(3))  # wrong rank


def test_shape_error_at_call():
    x, y = T.dmatrix("x"), T.dmatrix("y")
    f = theon.function([x, y], x + y)
    with pytest.raises(errors.ShapeError) as e:
        f(np.ones((2, 3)), np.ones((4, 3)))
    assert "(2, 3)" in str(e.value) and "(4, 3)" in str(e.value)
    with pytest.raises(ValueError):
        theon.function([x, y], T.dot(x, y))(np.ones((2, 3)), np.ones((2, 3)))


def test_shape_error_at_build():
    with pytest.raises(ValueError):
        T.dmatrix().sum(axis=5)
    with pytest.raises(ValueError):
        T.tensor("float64", shape=(3,)) + T.tensor("float64", shape=(4,))


def test_index_error():
    x = T.dvector()
    i = T.lscalar()
    f = theon.function([x, i], x[i])
    with pytest.raises(errors.TheonIndexError):
        f(np.ones(3), 5)
    with pytest.raises(IndexError):
        theon.function([x], T.take(x, [7]))(np.ones(3))


def test_config_error_is_value_error():
    with pytest.raises(errors.ConfigError):
        theon.config.floatX = "int32"
    with pytest.raises(ValueError):
        theon.config.mode = "turbo"
    with pytest.raises(ValueError):
        theon.config.set("no_such_key", "1")


def test_not_implemented():
    with pytest.raises(NotImplementedError):
        T.nnet.conv2d(T.tensor4(), T.tensor4(), unshared=True)
    with pytest.raises(NotImplementedError):
        T.dvector()[T.dvector() > 0]


def test_device_fallback_raise():
    x = T.fvector()
    with theon.config.change_flags(device="cuda", on_fallback="raise"):
        with pytest.raises(RuntimeError) as e:  # at compile time or at the first call
            theon.function([x], x * 2)(np.ones(2, dtype=np.float32))
    assert isinstance(e.value, errors.DeviceError)
    assert "no CUDA device available" in str(e.value)


def test_device_fallback_warns_on_stderr():
    code = ("import theon, theon.tensor as T, numpy as np\n"
            "theon.config.device = 'cuda'\n"
            "x = T.fvector()\n"
            "print(theon.function([x], x * 2)(np.ones(2, dtype='float32')))\n")
    from conftest import subprocess_env
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=subprocess_env(), timeout=60)
    assert r.returncode == 0, r.stderr
    assert "no CUDA device available" in r.stderr
    assert "[2. 2.]" in r.stdout


def test_message_unchanged_from_cpp():
    x = T.fmatrix("x")
    f = theon.function([x], x)
    try:
        f(np.ones((1, 1)))
    except TypeError as e:
        msg = str(e)
    assert msg.startswith("function") and "allow_input_downcast" in msg
