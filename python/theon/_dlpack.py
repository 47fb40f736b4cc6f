"""DLPack exchange: arrays of other frameworks in, Theon outputs out.

Outputs of Theon functions are NumPy arrays, which implement ``__dlpack__`` themselves, so
``torch.from_dlpack(out)`` (or CuPy's, JAX's) takes them without a copy; outputs left on a
GPU (``outputs_on_device=True``) are :class:`theon.DeviceArray` objects, which implement it
for their device memory. Inputs that implement ``__dlpack__`` are taken without a copy too:
CPU arrays (torch tensors, CuPy/JAX arrays on the CPU) are viewed through NumPy, CUDA arrays
become DeviceArrays viewing the producer's memory (kept alive until Theon's last view of it
is gone). A CUDA array on a machine without a usable CUDA device raises
:class:`theon.errors.NoCudaDeviceError` ("no CUDA device available: <reason>"); it is never
copied silently.
"""
import numpy as np

from . import _core
from ._device import DeviceArray, cuda_status
from .errors import NoCudaDeviceError, TheonNotImplementedError

_DLPACK_CPU = 1
_DLPACK_CUDA = 2
_DEVICE_NAMES = {2: "CUDA", 3: "CUDA host", 4: "OpenCL", 7: "Vulkan", 8: "Metal", 10: "ROCm", 13: "CUDA managed"}


def from_dlpack(obj):
    """An array that implements ``__dlpack__``, without a copy: a NumPy view of a CPU array,
    a :class:`theon.DeviceArray` viewing a CUDA array (a DeviceArray is returned as is)."""
    if isinstance(obj, DeviceArray):
        return obj
    if hasattr(obj, "__dlpack_device__"):
        kind, index = _core.dlpack_device(obj)
        if kind == _DLPACK_CUDA:
            status = cuda_status()
            if not status.ok:
                raise NoCudaDeviceError(
                    f"theon.from_dlpack: a CUDA array ({type(obj).__name__} on cuda{index}) was given but no CUDA "
                    f"device available: {status.reason}")
            return _core.from_dlpack_cuda(obj)
        if kind != _DLPACK_CPU:
            raise TheonNotImplementedError(
                f"theon.from_dlpack: a {_DEVICE_NAMES.get(kind, f'device type {kind}')} array was given; Theon "
                "takes CPU and CUDA arrays. Copy it to the CPU first.")
    return np.from_dlpack(obj)
