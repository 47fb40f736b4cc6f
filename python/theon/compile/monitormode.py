"""theon.compile.monitormode: Theano's ``MonitorMode(pre_func, post_func)``.

``theano.function(..., mode=MonitorMode(post_func=detect_nan))`` calls
``pre_func(i, node, fn)`` before and ``post_func(i, node, fn)`` after the evaluation of each
node, in a topological order: ``i`` is the node's position, ``node`` its Apply (``.op``,
``.inputs``, ``.outputs``), ``fn.inputs`` and ``fn.outputs`` one-element lists holding the
node's input and output values (NumPy arrays; ``fn.outputs`` hold None before the node runs).

The nodes are those of the compiled program, in the order it runs them (as in ``f.explain()``
and ``f.maker.fgraph.toposort()``), after the optimizer (``optimizer=None`` keeps the graph
as built): ``node.inputs`` and ``node.outputs`` are the optimized graph's variables, so
``debugprint(node)`` shows what ran. The values are NumPy copies made when the callback is
called (device values are copied to the host); ``fn.inputs`` in ``post_func`` hold the values
the node read, even when it overwrote one in place. The C++ executor calls both functions
(``theon::FunctionOptions::monitor``); the compiled program is the one a call without the
mode would run, and a callback that raises fails the call before any update is applied.
"""
import threading
import weakref

__all__ = ["MonitorMode", "detect_nan"]


class _NodeStorage:
    """``fn`` of the callbacks: ``inputs``/``outputs`` as Theano's thunks keep them ([value])."""

    def __init__(self, n_in, n_out):
        self.inputs = [[None] for _ in range(n_in)]
        self.outputs = [[None] for _ in range(n_out)]


def weak_call(fn):
    """A callable that calls ``fn`` through a weak reference. The compiled (C++) function holds
    its monitor callables where Python's garbage collector cannot see them: a strong reference
    to a callback whose globals reach the Function would make a cycle that is never freed."""
    if fn is None:
        return None
    ref = weakref.ref(fn)

    def call(*args):
        target = ref()
        if target is None:
            raise RuntimeError("MonitorMode: the monitored Function was released")
        target(*args)
    return call


class MonitorMode:
    """A mode whose functions call ``pre_func(i, node, fn)`` / ``post_func(i, node, fn)`` around
    each node's evaluation (see the module's text for how). ``optimizer``: the optimizer of the
    compiled function that gives the results ('default': config.mode's; None or 'None': no
    rewrites, Theon's mode NONE; 'fast_run', 'fast_compile'). ``linker`` must be None (Theon
    has one executor)."""

    def __init__(self, pre_func=None, post_func=None, optimizer="default", linker=None):
        if linker is not None:
            from ..errors import not_available
            raise not_available("MonitorMode(linker=...)", "Theon has one executor")
        if optimizer not in ("default", None, "None", "fast_run", "fast_compile", "FAST_RUN", "FAST_COMPILE"):
            raise ValueError(f"MonitorMode: optimizer must be 'default', None, 'fast_run' or 'fast_compile', "
                             f"got {optimizer!r}")
        self.pre_func = pre_func
        self.post_func = post_func
        self.optimizer = optimizer
        self.name = "MonitorMode"

    def optimizer_mode(self):
        """The mode name the compiled function gets."""
        if self.optimizer == "default":
            return None
        if self.optimizer in (None, "None"):
            return "NONE"
        return self.optimizer.upper()

    def hooks(self):
        """(before, after): the functions theon's executor calls around each node
        (``_core.function``'s ``monitor_before`` / ``monitor_after``), or (None, None).
        The Python Function keeps them; the compiled function gets weak_call()s of them."""
        if self.pre_func is None and self.post_func is None:
            return None, None
        from ..gof.graph import Apply
        pre, post = self.pre_func, self.post_func
        current = threading.local()  # the node being run by this thread: (Apply, _NodeStorage)

        def before(i, info, inputs):
            node = Apply(info)
            storage = _NodeStorage(len(node.inputs), len(node.outputs))
            for cell, value in zip(storage.inputs, inputs):
                cell[0] = value
            current.node = (node, storage)
            if pre is not None:
                pre(i, node, storage)

        def after(i, info, inputs, outputs):
            node, storage = current.node
            current.node = None
            for cell, value in zip(storage.outputs, outputs):
                cell[0] = value
            if post is not None:
                post(i, node, storage)

        return before, after

    def __repr__(self):
        return f"MonitorMode(pre_func={self.pre_func!r}, post_func={self.post_func!r}, optimizer={self.optimizer!r})"


def detect_nan(i, node, fn):
    """Theano's example post_func: prints the node (debugprint), its inputs and its outputs when
    one of its outputs holds a NaN. ``MonitorMode(post_func=detect_nan)``."""
    import numpy as np
    from ..printing import debugprint
    for output in fn.outputs:
        value = np.asarray(output[0])
        if value.dtype.kind == "f" and np.isnan(value).any():
            print("*** NaN detected ***")
            debugprint(node)
            print("Inputs : %s" % [inp[0] for inp in fn.inputs])
            print("Outputs: %s" % [out[0] for out in fn.outputs])
            break
