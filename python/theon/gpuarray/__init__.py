"""theon.gpuarray: present so that ``import theano.gpuarray`` programs import unchanged.

Theon places work on the GPU through ``config.device`` (``cuda``, ``cuda0``, ...), read when
``theon.function`` is called; without a CUDA device, functions run on the CPU and say so.

``pygpu_activated`` (the probe libraries read to decide whether Theano's GPU back-end is on)
is read from Theon's state each time: True when ``config.device`` names a CUDA device and a
CUDA device is usable (``theon.cuda_status()``), so that functions compiled now run on it.
Theon does not use pygpu; the GPU op modules of Theano's back-end (``theano.gpuarray.dnn``,
``basic_ops``...) do not exist: Theon's ``theano.tensor`` ops run on the GPU themselves.
"""
from .._device import cuda_status
from ..configparser import config


def use(device, force=False, default_to_move_computation_to_gpu=True, move_shared_to_gpu=True,
        preallocate=None):
    """Theano's theano.gpuarray.use(device): sets config.device for later functions. ``force=True``
    raises ValueError (as Theano does) when no CUDA device is usable."""
    if force and not cuda_status().ok:
        raise ValueError(f"theano.gpuarray.use({device!r}, force=True): no CUDA device is usable: "
                         f"{cuda_status().reason}")
    config.device = device


def __getattr__(name):
    if name == "pygpu_activated":
        return str(config.device).startswith("cuda") and bool(cuda_status().ok)
    raise AttributeError(f"module 'theon.gpuarray' has no attribute {name!r}")
