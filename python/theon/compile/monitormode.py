"""theon.compile.monitormode: Theano's ``MonitorMode(pre_func, post_func)``.

``theano.function(..., mode=MonitorMode(post_func=detect_nan))`` calls
``pre_func(i, node, fn)`` before and ``post_func(i, node, fn)`` after the evaluation of each
node, in a topological order: ``i`` is the node's position, ``node`` its Apply (``.op``,
``.inputs``, ``.outputs``), ``fn.inputs`` and ``fn.outputs`` one-element lists holding the
node's input and output values (NumPy arrays; ``fn.outputs`` hold None before the node runs).

How Theon does it: its executor runs a compiled C++ program whose observer
(``src/runtime/observer.hpp``) reports each thunk's op, device and bytes but not the values
(the runtime layer knows no graph and hands no arrays out). So a MonitorMode function, at
each call, first evaluates the graph the user built (after givens) node by node, each node
as a small compiled function of its input values, calling the two functions around each;
then it runs the compiled function itself for the outputs and updates. The monitored values
are those of the unoptimized graph (the nodes the user's code made), computed from the same
inputs and the shared values as they were before the call (random draws give the same values
as the call's, which reads the same state). A callback that raises stops the call before any
update is applied. Calls cost about twice as much plus one small function call per node.
"""
from .. import _core
from .._variable import TensorVariable

__all__ = ["MonitorMode", "detect_nan"]


class _NodeStorage:
    """``fn`` of the callbacks: ``inputs``/``outputs`` as Theano's thunks keep them ([value])."""

    def __init__(self, n_in, n_out):
        self.inputs = [[None] for _ in range(n_in)]
        self.outputs = [[None] for _ in range(n_out)]


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

    def attach(self, f, ins, out_vars, ups, gv):
        return _Monitor(self, [i.variable for i in ins], out_vars, [TensorVariable(v) for _, v in ups], gv)

    def __repr__(self):
        return f"MonitorMode(pre_func={self.pre_func!r}, post_func={self.post_func!r}, optimizer={self.optimizer!r})"


class _Monitor:
    def __init__(self, mode, inputs, outputs, update_values, givens):
        from ..gof.graph import clone, io_toposort
        roots = list(outputs) + list(update_values)
        if givens:
            roots = clone(roots, replace=[(TensorVariable(a), TensorVariable(b)) for a, b in givens], strict=False)
        self.mode = mode
        self.inputs = inputs
        self.nodes = io_toposort(inputs, roots)
        self.fns = [None] * len(self.nodes)

    def _node_function(self, k):
        from ..gof.graph import clone
        from . import function
        node = self.nodes[k]
        fresh, pairs = [], []
        for i in node.inputs:
            if _core.var_role(i._v) == "constant":
                continue
            v = i.type(i.name or None)
            fresh.append(v)
            pairs.append((i, v))
        outs = clone(node.outputs, replace=pairs)
        slots = [k2 for k2, i in enumerate(node.inputs) if _core.var_role(i._v) != "constant"]
        return function(fresh, outs, mode="FAST_COMPILE", on_unused_input="ignore",
                        name=f"MonitorMode node {k}: {node.op}"), slots

    def run(self, args):
        values = {v._v.id(): a for v, a in zip(self.inputs, args)}

        def value_of(var):
            key = var._v.id()
            if key not in values:
                role = _core.var_role(var._v)
                if role == "shared":
                    values[key] = var.get_value(borrow=False)
                elif role == "constant":
                    values[key] = _core.constant_value(var._v)
                else:
                    raise ValueError(f"MonitorMode: no value for {var} (not an input of the function)")
            return values[key]

        for k, node in enumerate(self.nodes):
            if self.fns[k] is None:
                self.fns[k] = self._node_function(k)
            fn, slots = self.fns[k]
            storage = _NodeStorage(len(node.inputs), len(node.outputs))
            for j, i in enumerate(node.inputs):
                storage.inputs[j][0] = value_of(i)
            if self.mode.pre_func is not None:
                self.mode.pre_func(k, node, storage)
            res = fn(*[storage.inputs[j][0] for j in slots])
            res = res if isinstance(res, list) else [res]
            for j, (o, r) in enumerate(zip(node.outputs, res)):
                storage.outputs[j][0] = r
                values[o._v.id()] = r
            if self.mode.post_func is not None:
                self.mode.post_func(k, node, storage)


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
