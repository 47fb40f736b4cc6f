"""GPU from Python: outputs_on_device, theon.DeviceArray, device inputs and shared values,
CUDA DLPack export (stream semantics). Every test here needs a device: without one they skip,
except under the simulated GPU (THEON_GPU_SIM=1), where conftest.py makes a skip a failure.
What happens without a device is tested in test_cuda_absent.py; torch/CuPy interop in
test_cuda_interop.py.
"""
import gc

import numpy as np
import pytest

import theon
import theon.tensor as T
from theon import _core

STATUS = theon.cuda_status()
needs_gpu = pytest.mark.skipif(not STATUS.ok, reason=f"no usable CUDA device: {STATUS.reason}")


# ---------------------------------------------------------------- with a GPU

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
def test_monitor_mode_on_a_device(on_gpu):
    # MonitorMode's callbacks run for the device nodes too, with NumPy copies of device values.
    from theon.compile.monitormode import MonitorMode
    x = T.fvector("x")
    seen = []

    def post(i, node, fn):
        seen.append((i, str(node.op), [np.array(o[0]) for o in fn.outputs]))

    f = theon.function([x], T.exp(x) * 2, mode=MonitorMode(post_func=post))
    nodes = f.maker.fgraph.toposort()
    assert any(n.device == "cuda0" for n in nodes)
    a = np.array([0.0, 1.0, 2.0], dtype=np.float32)
    out = f(a)
    assert [s[1] for s in seen] == [str(n.op) for n in nodes]
    for (i, op, outs), n in zip(seen, nodes):
        assert all(isinstance(v, np.ndarray) for v in outs)
    np.testing.assert_allclose(seen[-1][2][0], out, rtol=1e-6)
    fused = [s for s, n in zip(seen, nodes) if n.device == "cuda0" and "Composite" in s[1]]
    assert len(fused) == 1
    np.testing.assert_allclose(fused[0][2][0], np.exp(a) * 2, rtol=1e-6)


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


@needs_gpu
def test_pass_through_outputs_wait_for_their_copy(on_gpu):
    # No node runs on the GPU, but the copy of the device input to the host is in flight: the
    # call waits for it (the simulator's deferred streams returned zeros).
    x = T.fvector("x")
    f = theon.function([x], x)
    d = theon.to_device(np.full(4096, 7, dtype=np.float32))
    out = f(d)
    assert type(out) is np.ndarray
    np.testing.assert_array_equal(out, np.full(4096, 7, dtype=np.float32))


@needs_gpu
def test_shape_of_a_device_array_copies_nothing(on_gpu):
    x = T.fmatrix("x")
    f = theon.function([x], x.shape)
    d = theon.to_device(np.zeros((300, 70), dtype=np.float32))
    assert d.shape == (300, 70)  # host metadata
    np.testing.assert_array_equal(f(d), [300, 70])
    before = theon.memory_stats("cuda0")["to_host_copies"]
    for _ in range(3):
        np.testing.assert_array_equal(f(d), [300, 70])
    assert theon.memory_stats("cuda0")["to_host_copies"] == before, "x.shape copied the array to the host"


# ---- DLPack export with streams (DLPack 1.1): the CUDA runtime through ctypes -------------

def _cudart():
    import conftest
    lib = conftest.loaded_cudart()
    assert lib is not None
    return lib


class _Stream:
    """A consumer's CUDA stream (what torch or CuPy would pass to __dlpack__)."""

    def __init__(self):
        import ctypes
        self.rt = _cudart()
        self.handle = ctypes.c_void_p()
        assert self.rt.cudaStreamCreateWithFlags(ctypes.byref(self.handle), ctypes.c_uint(1)) == 0  # non-blocking

    def __int__(self):
        return int(self.handle.value)

    def synchronize(self):
        assert self.rt.cudaStreamSynchronize(self.handle) == 0

    def close(self):
        self.rt.cudaStreamDestroy(self.handle)


def _capsule_tensor(capsule):
    """The DLManagedTensor* of an unversioned DLPack capsule, as an integer."""
    import ctypes
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    return get(capsule, b"dltensor")


def _consume_and_release(capsule):
    """Takes the tensor out of the capsule as a consumer does, returns (data pointer, release)."""
    import ctypes
    managed = _capsule_tensor(capsule)
    data = ctypes.c_void_p.from_address(managed).value  # DLManagedTensor.dl_tensor.data
    rename = ctypes.pythonapi.PyCapsule_SetName
    rename.restype, rename.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_char_p]
    assert rename(capsule, b"used_dltensor") == 0  # consumed: the capsule no longer frees it
    deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(ctypes.c_void_p.from_address(managed + 56).value)
    return data, lambda: deleter(managed)  # DLManagedTensor.deleter (after dl_tensor and manager_ctx)


@needs_gpu
def test_dlpack_stream_argument(on_gpu):
    d = theon.to_device(np.arange(8, dtype=np.float32))
    stream = _Stream()
    try:
        for s in (None, 1, 2, -1, int(stream)):
            cap = d.__dlpack__(stream=s)
            assert type(cap).__name__ == "PyCapsule"
        for bad in (0, -2):
            with pytest.raises(ValueError, match="stream"):
                d.__dlpack__(stream=bad)
        for bad in ("1", 1.0, True):
            with pytest.raises(TypeError, match="stream"):
                d.__dlpack__(stream=bad)
        np.testing.assert_array_equal(d.to_host(), np.arange(8))
    finally:
        stream.close()


@needs_gpu
def test_dlpack_consumer_stream_orders_use_and_release(on_gpu):
    # A consumer on its own stream: it reads the exported array there (an async copy into
    # pinned memory), then releases it. The block goes back to Theon's cache and is rewritten
    # by the next call on Theon's stream, which must come after the consumer's read. (Under
    # SIM_STREAMS=deferred, stream work runs only when waited for: without the ordering, the
    # next call's write ran first and the consumer read the new values.)
    import ctypes
    rt = _cudart()
    n = 1 << 16
    x = T.fvector("x")
    f = theon.function([x], x * 2, outputs_on_device=True)
    first, second = np.arange(n, dtype=np.float32), np.full(n, -1, dtype=np.float32)
    stream = _Stream()
    host = ctypes.c_void_p()
    assert rt.cudaHostAlloc(ctypes.byref(host), ctypes.c_size_t(4 * n), ctypes.c_uint(0)) == 0
    try:
        y = f(first)
        cap = y.__dlpack__(stream=int(stream))  # the consumer's stream waits for Theon's
        data, release = _consume_and_release(cap)
        del cap
        assert rt.cudaMemcpyAsync(host, ctypes.c_void_p(data), ctypes.c_size_t(4 * n), ctypes.c_int(2),
                                  stream.handle) == 0  # device to host, on the consumer's stream
        release()
        del y
        gc.collect()
        for _ in range(3):
            f(second)  # reuses the freed block on Theon's stream
        stream.synchronize()
        got = np.ctypeslib.as_array(ctypes.cast(host, ctypes.POINTER(ctypes.c_float)), shape=(n,)).copy()
        np.testing.assert_array_equal(got, first * 2)
    finally:
        rt.cudaFreeHost(host)
        stream.close()


@needs_gpu
def test_tutorials_train_on_the_gpu_as_on_the_cpu(capsys):
    """The logistic regression tutorial (p[T.arange(n), y]), the denoising autoencoder
    (RandomStreams corruption) and LeNet (conv2d through cuDNN, pool_2d) on the GPU, every node
    placed there: the same losses as the CPU."""
    import importlib.util
    import os
    tutorials = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                             "examples", "tutorials")

    def losses(name, argv, device):
        spec = importlib.util.spec_from_file_location(name, os.path.join(tutorials, name + ".py"))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        with theon.config.change_flags(device=device, on_fallback="raise" if device == "cuda" else "warn"):
            assert module.main(argv) == 0
        import re
        return [float(m.group(1)) for m in re.finditer(r"(?:loss|cost) ([0-9.]+)", capsys.readouterr().out)]

    for name, argv in (("logistic_regression", ["--epochs", "3"]),
                       ("denoising_autoencoder", ["--epochs", "2"]),
                       ("lenet", ["--epochs", "2"])):
        cpu, gpu = losses(name, argv, "cpu"), losses(name, argv, "cuda")
        assert len(cpu) == len(gpu) > 0
        np.testing.assert_allclose(gpu, cpu, rtol=1e-4, err_msg=name)


@needs_gpu
def test_print_on_the_gpu_hands_over_the_finished_value(on_gpu):
    x = T.fmatrix("x")
    seen = []
    p = theon.printing.Print("h", global_fn=lambda op, v: seen.append(v.copy()))(T.tanh(x) * 3)
    f = theon.function([x], (p + 1).sum())
    assert all(n.device == "cuda0" for n in f.maker.fgraph.toposort())
    a = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_allclose(f(a), (np.tanh(a) * 3 + 1).sum(), rtol=1e-5)
    assert len(seen) == 1 and type(seen[0]) is np.ndarray
    np.testing.assert_allclose(seen[0], np.tanh(a) * 3, rtol=1e-6)
