"""Contexts: names for devices (Theano's "Using multiple GPUs"; docs/guide/contexts.md).

``config.contexts = "dev0->cuda0;dev1->cuda1"`` names devices; every device is also a context
under its own name (``"cpu"``, ``"cuda0"``). The map is checked (and, with
``config.print_active_device``, printed) where it is first used: a function's compile,
``shared(..., target=name)``, ``transfer(name)`` or ``with theon.context(name):``.
"""
from . import _core


def _context_name(name, what):
    if not isinstance(name, str):
        from .errors import TheonTypeError
        raise TheonTypeError(f"{what}: a context name is a str ('dev0', 'cpu', 'cuda1'), got {type(name).__name__}")
    return name


def transfer(var, target):
    """Theano's ``theano.tensor.transfer(var, target)``: `var` moved to the context `target` (a
    name of the contexts map, ``'cpu'`` or ``'cudaN'``); the gradient flows back through it.
    An unknown name is a ValueError listing the known contexts."""
    from ._variable import TensorVariable, as_tensor_variable
    v = as_tensor_variable(var)
    return TensorVariable(_core.transfer(v._v, _context_name(target, f"transfer({v!s}, {target!r})")))


class context:
    """``with theon.context("dev1"):`` pins the outputs of every node made inside the block (on
    this thread) to the context ``dev1``: they run there, and transfers bring their inputs.
    Blocks nest; the name is checked on entry (a ValueError listing the known contexts)."""

    def __init__(self, name):
        self.name = _context_name(name, f"context({name!r})")
        self._entered = []

    def __enter__(self):
        scope = _core.ContextScope(self.name)
        scope.enter()
        self._entered.append(scope)
        return self

    def __exit__(self, *exc):
        self._entered.pop().exit()
        return False

    def __repr__(self):
        return f"theon.context({self.name!r})"
