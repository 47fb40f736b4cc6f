"""Devices: whether a GPU is usable, its memory counters, and arrays in GPU memory.

    >>> theon.cuda_status()
    CudaStatus(ok=False, reason='...', device_count=0)
    >>> theon.memory_stats('cuda0')
    {'in_use': 0, 'cached': 0, 'peak': 0, 'allocations': 0, 'reuses': 0, 'to_host_copies': 0, 'to_host_bytes': 0, 'host_waits': 0}

Arrays in GPU memory are :class:`DeviceArray` objects (the C++ ``theon::Array``): what a
function compiled with ``outputs_on_device=True`` returns on a GPU, what :func:`to_device`
makes, and what :func:`theon.from_dlpack` makes of a torch/CuPy/JAX CUDA array (no copy).
Functions take them as inputs without a copy; ``to_host()`` and ``numpy.asarray()`` copy them
to the host; ``__dlpack__`` hands their memory to other frameworks without a copy.
"""
from collections import namedtuple

from . import _core

DeviceArray = _core.DeviceArray

_STATS = ("in_use", "cached", "peak", "allocations", "reuses", "to_host_copies", "to_host_bytes", "host_waits")


class CudaStatus(namedtuple("CudaStatus", ["ok", "reason", "device_count"])):
    """Whether CUDA devices can be used (``ok``), why not (``reason``, empty when ok), and how
    many there are. ``bool(status)`` is ``status.ok``."""

    __slots__ = ()

    def __bool__(self):
        return bool(self.ok)


def _device_text(device):
    if isinstance(device, int) and not isinstance(device, bool):
        return f"cuda{device}"
    if not isinstance(device, str):
        from .errors import TheonTypeError
        raise TheonTypeError(f"expected a device name ('cpu', 'cuda', 'cuda0', ...) or a CUDA device index, "
                             f"got {type(device).__name__}")
    return device


def cuda_status():
    """Whether a CUDA device is usable: ``CudaStatus(ok, reason, device_count)``. The first call
    opens Theon's CUDA backend (libtheon_cuda); ``reason`` says why no device can be used (no
    backend library, no driver, no GPU)."""
    return CudaStatus(*_core.cuda_status())


def memory_stats(device="cuda0"):
    """The caching device allocator's counters for ``device`` ('cuda0', 'cuda1', ... or an
    index), as a dict: ``in_use`` (bytes held by live arrays), ``cached`` (bytes freed and kept
    for reuse), ``peak`` (most bytes in use at once), ``allocations`` (blocks taken from the
    driver), ``reuses`` (blocks served from the cache), ``to_host_copies`` and ``to_host_bytes``
    (copies from the device to the host, and their bytes), ``host_waits`` (times the host
    waited for the device's stream). All zero for 'cpu' and without a GPU."""
    return _core.memory_stats(_device_text(device))


def empty_cache(device="cuda0"):
    """Returns ``device``'s cached (unused) blocks to the driver; nothing without a GPU."""
    _core.empty_cache(_device_text(device))


def to_device(value, device="cuda0"):
    """A copy of ``value`` (a NumPy array, a number, a DeviceArray, a CUDA DLPack array) on
    ``device``: a :class:`DeviceArray` for a CUDA device, a NumPy array for 'cpu'; ``value``
    itself when it is already there. :class:`theon.errors.DeviceError` ("no CUDA device
    available: <reason>") without a usable GPU."""
    import numpy as np
    if not isinstance(value, DeviceArray) and not _is_cuda_dlpack(value):
        from ._variable import _theon_array
        value = _theon_array(value if isinstance(value, np.ndarray) else np.asarray(value), "to_device")
    return _core.to_device(value, _device_text(device))


_DLPACK_CUDA = 2


def _is_cuda_dlpack(obj):
    """True for an object of another framework whose DLPack device is CUDA."""
    if isinstance(obj, DeviceArray) or not hasattr(obj, "__dlpack_device__"):
        return False
    dev = _core.dlpack_device(obj)
    return dev is not None and dev[0] == _DLPACK_CUDA
