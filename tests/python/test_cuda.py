"""GPU from Python: cuda_status, memory_stats, outputs_on_device, theon.DeviceArray, CUDA DLPack.

The first half runs everywhere and checks what a machine without a usable CUDA device does
(clear errors naming the reason, CPU fallback); the second half needs a GPU and skips
itself otherwise.
"""
import gc

import numpy as np
import pytest

import theon
import theon.tensor as T
from theon import _core, errors

STATUS = theon.cuda_status()
needs_gpu = pytest.mark.skipif(not STATUS.ok, reason=f"no usable CUDA device: {STATUS.reason}")
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
    keys = {"in_use", "cached", "peak", "allocations", "reuses"}
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
        assert theon.memory_stats(dev) == {"in_use": 0, "cached": 0, "peak": 0, "allocations": 0, "reuses": 0}
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


# ---------------------------------------------------------------- with a GPU

@pytest.fixture
def on_gpu():
    with theon.config.change_flags(device="cuda", on_fallback="raise"):
        yield


@needs_gpu
def test_cuda_status_with_gpu():
    s = theon.cuda_status()
    assert s.ok and s.reason == "" and s.device_count >= 1


@needs_gpu
def test_device_outputs(on_gpu):
    x = T.fmatrix("x")
    f = theon.function([x], [x * 2, T.sum(x)], outputs_on_device=True)
    assert any(n.device == "cuda0" for n in f.maker.fgraph.toposort())
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    y, s = f(a)
    assert isinstance(y, theon.DeviceArray) and isinstance(s, theon.DeviceArray)
    assert y.shape == (2, 3) and y.dtype == np.float32 and y.device == "cuda0"
    assert y.ndim == 2 and y.size == 6 and y.nbytes == 24 and len(y) == 2
    assert s.shape == ()
    assert repr(y) == "DeviceArray(shape=(2, 3), dtype=float32, device=cuda0)"
    h = y.to_host()
    assert type(h) is np.ndarray
    np.testing.assert_array_equal(h, a * 2)
    np.testing.assert_array_equal(np.asarray(y), a * 2)
    assert np.asarray(y, dtype=np.float64).dtype == np.float64
    assert float(np.asarray(s)) == 15.0 and float(s) == 15.0 and s.item() == 15.0
    with pytest.raises(ValueError, match="copy=False"):
        np.asarray(y, copy=False)
    assert y.__dlpack_device__() == (2, 0)
    # Host outputs by default.
    g = theon.function([x], x * 2)
    assert type(g(a)) is np.ndarray


@needs_gpu
def test_device_arrays_as_inputs(on_gpu):
    x = T.fvector("x")
    f = theon.function([x], x + 1, outputs_on_device=True)
    g = theon.function([x], x * 10)
    d = theon.to_device(np.arange(4, dtype=np.float32))
    assert isinstance(d, theon.DeviceArray) and d.device == "cuda0"
    chained = f(f(d))  # device to device, no host round trip
    np.testing.assert_array_equal(g(chained), (np.arange(4) + 2) * 10)
    # A lossy dtype conversion of a device input: rejected unless allowed.
    with pytest.raises(TypeError, match="allow_input_downcast"):
        f(theon.to_device(np.arange(4, dtype=np.float64)))
    h = theon.function([x], x * 2, allow_input_downcast=True)
    np.testing.assert_array_equal(h(theon.to_device(np.arange(4, dtype=np.float64))), np.arange(4) * 2)
    # Back to the CPU.
    np.testing.assert_array_equal(theon.to_device(d, "cpu"), np.arange(4))


@needs_gpu
def test_device_array_dlpack_self_round_trip(on_gpu):
    gc.collect()
    base = _core.live_device_owners()
    d = theon.to_device(np.arange(5, dtype=np.float32))
    before = theon.memory_stats()["in_use"]
    view = theon.from_dlpack(d)
    assert view is d
    imported = _core.from_dlpack_cuda(d)  # through a DLPack capsule: a view, not a copy
    assert _core.live_device_owners() == base + 1
    assert theon.memory_stats()["in_use"] == before
    np.testing.assert_array_equal(imported.to_host(), np.arange(5))
    del d
    gc.collect()
    np.testing.assert_array_equal(imported.to_host(), np.arange(5))  # the capsule keeps it alive
    del imported
    gc.collect()
    assert _core.live_device_owners() == base
    # A host copy for consumers that ask for the CPU.
    e = theon.to_device(np.arange(3.0))
    np.testing.assert_array_equal(np.from_dlpack(e, device="cpu"), np.arange(3.0))


@needs_gpu
def test_torch_dlpack_round_trip(on_gpu):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")
    x = T.fmatrix("x")
    f = theon.function([x], x * 2 + 1, outputs_on_device=True)
    t = torch.arange(6, dtype=torch.float32, device="cuda").reshape(2, 3)
    out = f(t)  # a torch CUDA tensor in, without a copy
    assert isinstance(out, theon.DeviceArray)
    back = torch.from_dlpack(out)  # and out to torch, without a copy
    assert back.is_cuda and back.shape == (2, 3)
    assert torch.equal(back, t * 2 + 1)
    assert theon.from_dlpack(back).shape == (2, 3)
    # Zero-copy both ways: the same device memory.
    d = theon.from_dlpack(t)
    assert torch.from_dlpack(d).data_ptr() == t.data_ptr()
    # Non-contiguous torch views go in as they are.
    np.testing.assert_array_equal(f(t.t()).to_host(), (t.t() * 2 + 1).cpu().numpy())


@needs_gpu
def test_cupy_dlpack_round_trip(on_gpu):
    cp = pytest.importorskip("cupy")
    x = T.fvector("x")
    f = theon.function([x], x * 2, outputs_on_device=True)
    c = cp.arange(4, dtype=cp.float32)
    out = f(c)
    back = cp.from_dlpack(out)
    assert (back == c * 2).all()


@needs_gpu
def test_shared_values_on_device(on_gpu):
    w = theon.shared(np.zeros(3, dtype=np.float32), name="w")
    step = theon.function([], w * 1, updates=[(w, w + 1)])
    step()
    step()
    v = w.get_value()
    assert type(v) is np.ndarray
    np.testing.assert_array_equal(v, [2, 2, 2])
    v[0] = 100  # a copy
    np.testing.assert_array_equal(w.get_value(borrow=True), [2, 2, 2])
    w.set_value(np.full(3, 5, dtype=np.float32))
    step()
    np.testing.assert_array_equal(w.get_value(), [6, 6, 6])
    d = theon.to_device(np.full(3, 7, dtype=np.float32))
    w.set_value(d)
    step()
    np.testing.assert_array_equal(w.get_value(), [8, 8, 8])
    np.testing.assert_array_equal(d.to_host(), [7, 7, 7])  # set_value copied it
    with pytest.raises(TypeError, match="float64"):  # a lossy cast is not made silently
        w.set_value(theon.to_device(np.full(3, 1.0)))
    np.testing.assert_array_equal(w.get_value(), [8, 8, 8])


@needs_gpu
def test_memory_stats_reuse(on_gpu):
    x = T.fvector("x")
    f = theon.function([x], x * 2, outputs_on_device=True)
    a = np.ones(1 << 16, dtype=np.float32)
    f(a)  # warm up: the program's own buffers
    gc.collect()
    s0 = theon.memory_stats("cuda0")
    for _ in range(5):
        out = f(a)
        del out
    s1 = theon.memory_stats("cuda0")
    assert s1["reuses"] > s0["reuses"]
    assert s1["peak"] >= s1["in_use"]
    keep = f(a)
    assert theon.memory_stats()["in_use"] >= keep.nbytes
    del keep
    theon.empty_cache()
    assert theon.memory_stats()["cached"] == 0
