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
from . import type  # noqa: A004  (theano.gpuarray.type, as in Theano)
from .type import ContextNotDefined, get_context, list_contexts


def use(device, force=False, default_to_move_computation_to_gpu=True, move_shared_to_gpu=True,
        preallocate=None):
    """Theano's theano.gpuarray.use(device): sets config.device for later functions. ``force=True``
    raises ValueError (as Theano does) when no CUDA device is usable."""
    if force and not cuda_status().ok:
        raise ValueError(f"theano.gpuarray.use({device!r}, force=True): no CUDA device is usable: "
                         f"{cuda_status().reason}")
    _refuse_cpu_placement_flags("theano.gpuarray.use", default_to_move_computation_to_gpu, move_shared_to_gpu)
    if preallocate is not None:
        from ..errors import warn_ignored_once
        warn_ignored_once("theano.gpuarray.use(preallocate=...)", "GPU memory is cached as blocks are freed "
                                                                  "(config.gpu_memory_cache)")
    config.device = device


def _refuse_cpu_placement_flags(what, default_to_move_computation_to_gpu, move_shared_to_gpu):
    # Theon places every node and shared value that can run on the device there; keeping
    # them on the CPU while device=cuda is not something it can do (yet).
    if not default_to_move_computation_to_gpu or not move_shared_to_gpu:
        from ..errors import not_available
        raise not_available(f"{what}(default_to_move_computation_to_gpu={default_to_move_computation_to_gpu!r}, "
                            f"move_shared_to_gpu={move_shared_to_gpu!r})",
                            "with device=cuda every node and shared variable that can run there moves there")


def __getattr__(name):
    if name == "pygpu_activated":
        return str(config.device).startswith("cuda") and bool(cuda_status().ok)
    raise AttributeError(f"module 'theon.gpuarray' has no attribute {name!r}")
