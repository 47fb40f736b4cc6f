"""theon.gpuarray: present so that ``import theano.gpuarray`` programs import unchanged.

Theon places work on the GPU through ``config.device`` (``cuda``, ``cuda0``, ...), read when
``theon.function`` is called; without a CUDA device, functions run on the CPU and say so.
"""
from ..configparser import config


def use(device, force=False, default_to_move_computation_to_gpu=True, move_shared_to_gpu=True,
        preallocate=None):
    """Theano's theano.gpuarray.use(device): sets config.device for later functions."""
    config.device = device


pygpu_activated = False
