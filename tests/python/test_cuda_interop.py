"""CUDA DLPack interop with torch and CuPy (zero-copy both ways). These need the real
frameworks with a real GPU: they skip without them, also under the simulated GPU (torch and
CuPy bring their own CUDA runtime, which the simulator cannot stand in for).
"""
import numpy as np
import pytest

import theon
import theon.tensor as T

STATUS = theon.cuda_status()
needs_gpu = pytest.mark.skipif(not STATUS.ok, reason=f"no usable CUDA device: {STATUS.reason}")


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
