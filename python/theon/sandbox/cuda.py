"""theon.sandbox.cuda: the module path of Theano's old CUDA backend, which programs probe
(``theano.sandbox.cuda.cuda_available``). Theon has one CUDA backend (docs/guide/cuda.md); the
probes answer from its state each time they are read:

- ``cuda_available``: a CUDA device is usable (``theon.cuda_status().ok``);
- ``cuda_enabled``: functions compiled now run on it (``config.device`` names a CUDA device
  and one is usable).

``use('gpu')`` / ``use('cuda0')`` sets ``config.device`` (``gpuN`` is read as ``cudaN``).
"""
from .._device import cuda_status
from ..configparser import config

__all__ = ["cuda_available", "cuda_enabled", "use"]


def _on_cuda():
    return str(config.device).startswith(("cuda", "gpu"))


def __getattr__(name):
    if name == "cuda_available":
        return bool(cuda_status().ok)
    if name == "cuda_enabled":
        return _on_cuda() and bool(cuda_status().ok)
    raise AttributeError(f"module 'theon.sandbox.cuda' has no attribute {name!r} (Theon has one CUDA backend: "
                         "theon.config.device = 'cuda')")


def use(device, force=False, default_to_move_computation_to_gpu=True, move_shared_to_gpu=True,
        enable_cuda=True, test_driver=True):
    """Theano's theano.sandbox.cuda.use: later functions run on ``device`` ('gpu', 'gpuN',
    'cuda', 'cudaN'). ``force=True`` raises EnvironmentError (as Theano does) when no CUDA
    device is usable; otherwise functions fall back to the CPU as config.on_fallback says."""
    dev = str(device)
    if dev.startswith("gpu"):
        dev = "cuda" + dev[3:]
    if not dev.startswith("cuda"):
        raise ValueError(f"theano.sandbox.cuda.use: expected 'gpu', 'gpuN', 'cuda' or 'cudaN', got {device!r}")
    from ..gpuarray import _refuse_cpu_placement_flags
    _refuse_cpu_placement_flags("theano.sandbox.cuda.use", default_to_move_computation_to_gpu, move_shared_to_gpu)
    if not enable_cuda:
        raise ValueError("theano.sandbox.cuda.use(enable_cuda=False) asks for no GPU: leave config.device as it is")
    # test_driver: the driver is tested whenever a function asks for the device (cuda_status()).
    status = cuda_status()
    if force and not status.ok:
        raise EnvironmentError(f"theano.sandbox.cuda.use({device!r}, force=True): no CUDA device is usable: "
                               f"{status.reason}")
    config.device = dev
