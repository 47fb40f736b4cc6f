"""DLPack exchange: arrays of other frameworks in, Theon outputs out.

Outputs of Theon functions are NumPy arrays, which implement ``__dlpack__`` themselves, so
``torch.from_dlpack(out)`` (or CuPy's, JAX's) takes them without a copy. Inputs that
implement ``__dlpack__`` (torch tensors, CuPy/JAX arrays on the CPU) are viewed through
NumPy without a copy. Device (CUDA) arrays need Theon's CUDA backend, which is not there
yet: they raise NotImplementedError rather than being copied silently.
"""
import numpy as np

_DLPACK_CPU = 1
_DEVICE_NAMES = {2: "CUDA", 3: "CUDA host", 4: "OpenCL", 7: "Vulkan", 8: "Metal", 10: "ROCm", 13: "CUDA managed"}


def from_dlpack(obj):
    """A NumPy view (no copy) of any CPU array that implements ``__dlpack__``."""
    if hasattr(obj, "__dlpack_device__"):
        kind = int(obj.__dlpack_device__()[0])
        if kind != _DLPACK_CPU:
            raise NotImplementedError(
                f"theon.from_dlpack: a {_DEVICE_NAMES.get(kind, f'device type {kind}')} array was given; device "
                "arrays are not available yet (they come with the CUDA backend). Copy it to the CPU first.")
    return np.from_dlpack(obj)
