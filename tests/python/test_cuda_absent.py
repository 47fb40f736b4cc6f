"""CUDA from Python where no device is needed: cuda_status, memory_stats, what a machine
without a usable CUDA device does (clear errors naming the reason, CPU fallback), and the
parts of the DLPack and DeviceArray API that need no device.

Tests marked without_gpu check the behaviour WITHOUT a device and skip where there is one
(also under the simulated GPU); the GPU tests are in test_cuda.py, which never skips under
THEON_GPU_SIM=1 (conftest.py makes a skip there a failure).
"""
import numpy as np
import pytest

import theon
import theon.tensor as T
from theon import _core, errors

STATUS = theon.cuda_status()
without_gpu = pytest.mark.skipif(STATUS.ok, reason="checks the behaviour without a CUDA device")


class _FakeCudaArray:
    """A CUDA array of another framework as far as the DLPack protocol goes. __dlpack__ is
    never to be called when no CUDA device is usable."""

    def __init__(self, device=(2, 0)):
        self._device = device
        self.exported = 0

    def __dlpack__(self, *args, **kwargs):
        self.exported += 1
        raise AssertionError("__dlpack__ must not be called without a usable CUDA device")

    def __dlpack_device__(self):
        return self._device


# ---------------------------------------------------------------- everywhere

def test_cuda_status_shape():
    s = theon.cuda_status()
    assert isinstance(s, theon.CudaStatus)
    ok, reason, count = s
    assert s.ok is ok and s.reason == reason and s.device_count == count
    assert isinstance(ok, bool) and isinstance(reason, str) and isinstance(count, int)
    assert bool(s) == ok
    assert theon.cuda_status() == s  # the library is probed once


@without_gpu
def test_cuda_status_without_gpu():
    s = theon.cuda_status()
    assert s.ok is False
    assert s.reason  # says why: no backend library, no driver, no GPU
    assert s.device_count == 0


def test_memory_stats_keys_and_cpu_zeros():
    keys = {"in_use", "cached", "peak", "allocations", "reuses", "to_host_copies", "to_host_bytes", "host_waits"}
    st = theon.memory_stats("cpu")
    assert set(st) == keys and all(v == 0 for v in st.values())
    assert set(theon.memory_stats()) == keys
    assert set(theon.memory_stats(0)) == keys
    with pytest.raises(errors.ConfigError, match="unknown device 'gpu7x'"):
        theon.memory_stats("gpu7x")
    with pytest.raises(TypeError, match="device name"):
        theon.memory_stats(1.5)


@without_gpu
def test_memory_stats_and_empty_cache_without_gpu():
    for dev in ("cuda0", "cuda", "cuda1", 0):
        assert theon.memory_stats(dev) == {"in_use": 0, "cached": 0, "peak": 0, "allocations": 0, "reuses": 0,
                                           "to_host_copies": 0, "to_host_bytes": 0, "host_waits": 0}
    theon.empty_cache()  # nothing to do, no error
    theon.empty_cache("cuda1")


@without_gpu
def test_device_cuda_on_fallback_raise():
    x = T.fvector("x")
    with theon.config.change_flags(device="cuda", on_fallback="raise"):
        with pytest.raises(errors.DeviceError) as e:
            theon.function([x], x * 2)
    msg = str(e.value)
    assert "no CUDA device available" in msg and STATUS.reason in msg
    assert "on_fallback=warn" in msg


@without_gpu
def test_device_cuda_on_fallback_warn_runs_on_cpu(capfd):
    x = T.fvector("x")
    with theon.config.change_flags(device="cuda", on_fallback="warn"):
        f = theon.function([x], x * 2, name="twice")
    err = capfd.readouterr().err
    assert "no CUDA device available" in err and "every node runs on the CPU" in err and "twice" in err
    out = f(np.arange(3, dtype=np.float32))
    assert type(out) is np.ndarray
    np.testing.assert_array_equal(out, [0, 2, 4])
    assert all(n.device == "cpu" for n in f.maker.fgraph.toposort())


@without_gpu
def test_device_cuda_on_fallback_ignore_is_silent(capfd):
    x = T.fvector("x")
    with theon.config.change_flags(device="cuda", on_fallback="ignore"):
        f = theon.function([x], x + 1)
    assert "no CUDA device available" not in capfd.readouterr().err
    np.testing.assert_array_equal(f(np.zeros(2, dtype=np.float32)), [1, 1])


def test_outputs_on_device_on_cpu_function_returns_numpy():
    x = T.dmatrix("x")
    f = theon.function([x], [x * 2, x.sum()], outputs_on_device=True)
    a = np.arange(6.0).reshape(2, 3)
    y, s = f(a)
    assert type(y) is np.ndarray and type(s) is np.ndarray
    np.testing.assert_array_equal(y, a * 2)
    assert float(s) == 15.0
    g = theon.function([x], x + 1, outputs_on_device=False)
    assert type(g(a)) is np.ndarray


@without_gpu
def test_outputs_on_device_with_cpu_fallback_returns_numpy(capfd):
    x = T.fvector()
    with theon.config.change_flags(device="cuda", on_fallback="warn"):
        f = theon.function([x], x * 3, outputs_on_device=True)
    capfd.readouterr()
    out = f(np.ones(2, dtype=np.float32))
    assert type(out) is np.ndarray
    np.testing.assert_array_equal(out, [3, 3])


def test_device_array_is_not_constructible():
    assert theon.DeviceArray is _core.DeviceArray
    with pytest.raises(TypeError, match="cannot be made directly"):
        theon.DeviceArray()


def test_to_device_cpu_returns_numpy():
    a = np.arange(4.0)
    b = theon.to_device(a, "cpu")
    assert type(b) is np.ndarray and np.shares_memory(a, b)  # already there: the value itself
    np.testing.assert_array_equal(theon.to_device([1.0, 2.0], "cpu"), [1.0, 2.0])
    with pytest.raises(errors.ConfigError, match="unknown device"):
        theon.to_device(a, "tpu0")


@without_gpu
def test_to_device_without_gpu():
    with pytest.raises(errors.DeviceError, match="no CUDA device available") as e:
        theon.to_device(np.ones(3, dtype=np.float32), "cuda0")
    assert STATUS.reason in str(e.value)


@without_gpu
def test_cuda_dlpack_without_gpu_from_dlpack():
    obj = _FakeCudaArray()
    with pytest.raises(errors.NoCudaDeviceError) as e:
        theon.from_dlpack(obj)
    msg = str(e.value)
    assert "CUDA array" in msg and "_FakeCudaArray on cuda0" in msg
    assert "no CUDA device available" in msg and STATUS.reason in msg
    # A DeviceError, and still a NotImplementedError as before the CUDA backend existed.
    assert isinstance(e.value, errors.DeviceError) and isinstance(e.value, NotImplementedError)
    assert obj.exported == 0


@without_gpu
def test_cuda_dlpack_without_gpu_function_input():
    x = T.fvector("x")
    f = theon.function([x], x * 2)
    obj = _FakeCudaArray(device=(2, 1))
    with pytest.raises(errors.DeviceError, match="no CUDA device available") as e:
        f(obj)
    assert "on cuda1" in str(e.value)
    assert obj.exported == 0
    # The core checks too (the Python layer is not the only guard).
    with pytest.raises(errors.DeviceError, match="no CUDA device available"):
        f._fn([obj])
    with pytest.raises(errors.DeviceError, match="no CUDA device available"):
        _core.from_dlpack_cuda(obj)
    assert obj.exported == 0
    assert _core.live_device_owners() == 0


@without_gpu
def test_cuda_dlpack_without_gpu_shared_values():
    w = theon.shared(np.zeros(3, dtype=np.float32), name="w")
    obj = _FakeCudaArray()
    with pytest.raises(errors.NoCudaDeviceError, match="no CUDA device available"):
        w.set_value(obj)
    with pytest.raises(errors.NoCudaDeviceError, match="no CUDA device available"):
        theon.shared(obj)
    np.testing.assert_array_equal(w.get_value(), [0, 0, 0])  # unchanged
    assert obj.exported == 0


def test_other_dlpack_devices_are_not_implemented():
    with pytest.raises(NotImplementedError, match="ROCm array"):
        theon.from_dlpack(_FakeCudaArray(device=(10, 0)))
    with pytest.raises(TypeError, match="expected a CUDA array"):
        _core.from_dlpack_cuda(np.zeros(2))


def test_bad_dlpack_device_is_a_clear_error():
    with pytest.raises(TypeError, match=r"__dlpack_device__\(\) must return"):
        theon.from_dlpack(_FakeCudaArray(device="cuda"))


def test_cpu_dlpack_inputs_still_zero_copy():
    class CpuOnly:
        def __init__(self, a):
            self._a = a

        def __dlpack__(self, *args, **kwargs):
            return self._a.__dlpack__(*args, **kwargs)

        def __dlpack_device__(self):
            return (1, 0)

    src = np.arange(4.0)
    assert np.shares_memory(theon.from_dlpack(CpuOnly(src)), src)
    x = T.dvector()
    np.testing.assert_array_equal(theon.function([x], x + 1)(CpuOnly(src)), src + 1)
