"""theon.gpuarray.type: Theano's context registry functions over Theon's context map.

``get_context(name)`` and ``list_contexts()`` read ``config.contexts`` (resolved on first use);
``ContextNotDefined`` is raised for a name the map does not define, as in Theano.
"""
from collections import namedtuple

from .._core import get_context as _get_context
from .._core import list_contexts as _list_contexts


class ContextNotDefined(ValueError):
    """A context name the contexts map does not define (Theano's exception)."""


# Theano returns a pygpu GpuContext; Theon's context is a name, its device and the device's
# description ("cuda0: <name> (<PCI bus id>)", as print_active_device shows it).
Context = namedtuple("Context", ["name", "device", "description"])


def get_context(name):
    """The context `name`; None is the default context (the one ``config.device`` names)."""
    if name is None:
        from ..configparser import config
        name = "cuda0" if config.device == "cuda" else config.device
    try:
        return Context(*_get_context(name))
    except ValueError as e:
        if type(e).__name__ == "ConfigError":  # a malformed map: not a missing name
            raise
        raise ContextNotDefined(str(e)) from None


def list_contexts():
    """The names the contexts map defines, in its order (each device is a context by its name too)."""
    return list(_list_contexts())
