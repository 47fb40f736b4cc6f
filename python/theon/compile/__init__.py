"""theon.function: Theano's ``theano.function`` over the C++ ``theon::function``.

Inputs are NumPy arrays (viewed without a copy when their dtype is the input's or converts
to it without loss), Python numbers or lists; outputs are NumPy arrays (no copy either).
A lossy conversion is a TypeError unless allow_input_downcast=True (with None, Theano's
default, Python floats may still be rounded to a float input's dtype).

On a GPU (``config.device = 'cuda'``), inputs may also be :class:`theon.DeviceArray` objects or
CUDA arrays of other frameworks (torch, CuPy, JAX through DLPack), taken without a copy, and
``function(..., outputs_on_device=True)`` (a Theon extension) returns outputs as DeviceArrays.
"""
import re

import numpy as np

from .. import _core
from .. import _dlpack
from .._device import DeviceArray
from .._variable import _SUPPORTED, SharedVariable, TensorVariable, _theon_array, _v, as_tensor_variable
from .._op_classes import op_class
from ..errors import TheonTypeError, not_available


class In:
    """A function input with options (Theano's theano.In): a default `value`, a `name` for
    keyword calls, per-input `allow_downcast`, `strict` (exact dtype)."""

    def __init__(self, variable, name=None, value=None, update=None, mutable=None, strict=False,
                 allow_downcast=None, autoname=True, implicit=None, borrow=False, shared=False):
        if not isinstance(variable, TensorVariable):
            raise TheonTypeError(f"In: expected a symbolic variable, got {type(variable).__name__}")
        if update is not None:
            raise not_available("In(update=...)", "use function(updates=...)")
        if implicit or shared:  # Theano's own bookkeeping for shared variables, which Theon does itself
            raise not_available(f"In(implicit={implicit!r}, shared={shared!r})",
                                "shared variables are implicit inputs of every function that reads them")
        self.variable = variable
        self.name = name if name is not None else (variable.name if autoname else None)
        self.value = value
        self.strict = strict
        self.allow_downcast = allow_downcast
        self.borrow = borrow
        self.mutable = mutable


class Out:
    """A function output (Theano's theano.Out). borrow is accepted; Theon's outputs never
    alias internal memory, so they are always safe to keep."""

    def __init__(self, variable, borrow=False):
        self.variable = variable
        self.borrow = borrow


class Op:
    """What a node of the compiled program runs (``node.op``); str() gives its name."""

    def __init__(self, name):
        self.name = name

    def __str__(self):
        return self.name

    __repr__ = __str__

    def __eq__(self, other):
        return isinstance(other, Op) and other.name == self.name

    def __hash__(self):
        return hash(self.name)


def _op(name, device="cpu", output_type=""):
    """The op of a compiled node: of a class named after its family ('Elemwise', 'CGemv',
    'GpuElemwise' on a GPU) and derived from Theano's class for it (theon/_op_classes.py)."""
    family = re.match(r"[A-Za-z_0-9]+", name)
    family = family.group(0) if family else "Op"
    shape = re.search(r"\(([^)]*)\)\s*$", output_type)  # "float32 (?, 5)": the output's rank
    rank = (len([d for d in shape.group(1).split(",") if d.strip()]) if shape else None)
    return op_class(family, Op, on_gpu=device.startswith("cuda"), output_rank=rank)(name)


class Apply:
    """A node of the compiled program: .op, .device, .kernel, .inputs (names), .output_type."""

    def __init__(self, index, op, inputs, output_type, device, kernel, line):
        self.index = index
        self.op = _op(op, device, output_type)
        self.inputs = inputs
        self.output_type = output_type
        self.device = device
        self.kernel = kernel
        self.line = line

    def __repr__(self):
        return f"{self.op}({', '.join(self.inputs)})"


class FunctionGraph:
    """``f.maker.fgraph``: ``inputs`` and ``outputs`` are the function's input and output
    variables (the graph the user built: Theon optimizes a private copy in C++, whose nodes
    ``toposort()`` lists, in the order the compiled program runs them, as Apply records with
    .op, .inputs (names), .device, .kernel)."""

    def __init__(self, fn, inputs=(), outputs=()):
        self._fn = fn
        self.inputs = list(inputs)
        self.outputs = list(outputs)

    def toposort(self):
        return [Apply(i, n.op, list(n.inputs), n.output_type, n.device, n.kernel,
                      f"{i}  {n.op}({', '.join(n.inputs)}) -> {n.output_type}  [{n.device}, kernel {n.kernel}] {n.reason}")
                for i, n in enumerate(self._fn.nodes())]

    def __repr__(self):
        return self._fn.debugprint()


class FunctionMaker:
    """``f.maker``: ``fgraph`` (above), ``inputs`` (the In objects), ``outputs`` (variables),
    ``mode`` (as given to function())."""

    def __init__(self, fn, inputs, outputs, mode=None):
        self.fgraph = FunctionGraph(fn, [i.variable for i in inputs], outputs or [])
        self.inputs = inputs
        self.outputs = outputs
        self.mode = mode


def _text_mode(mode):
    if mode is None:
        return ""
    if isinstance(mode, str):
        return mode
    name = getattr(mode, "name", None) or getattr(mode, "mode", None)
    if isinstance(name, str):
        return name
    raise TheonTypeError(f"function(mode=...): expected a mode name (FAST_RUN, FAST_COMPILE), got {mode!r}")


def _pairs(d, what):
    if d is None:
        return []
    items = list(d.items()) if hasattr(d, "items") else list(d)
    out = []
    for item in items:
        if not isinstance(item, (list, tuple)) or len(item) != 2:
            raise TheonTypeError(f"function({what}=...): expected (variable, value) pairs, got {item!r}")
        out.append(item)
    return out


# dtypes with a NumPy equivalent: functions of only these inputs get Function._plan.
_PLAN_DTYPES = frozenset(d.name for d in _SUPPORTED)


class Function:
    """A compiled function: ``f(*inputs)`` returns one NumPy array for a single output, a
    list for a list of outputs (DeviceArrays for outputs left on a GPU by outputs_on_device)."""

    def __init__(self, fn, ins, single, allow_input_downcast):
        self._fn = fn
        self._ins = ins
        self._single = single
        self._names = {i.name: k for k, i in enumerate(ins) if i.name}
        self._dtypes = [np.dtype(i.variable.dtype) for i in ins]
        self._downcast = [allow_input_downcast if i.allow_downcast is None else i.allow_downcast for i in ins]
        self.maker = FunctionMaker(fn, ins, None)
        self.trust_input = False
        self._build = None    # function()'s arguments, for copy()
        self._monitor_hooks = (None, None)  # MonitorMode's callbacks (compile/monitormode.py)
        self._name = None     # a copy's name when it shares the compiled program
        # The call's fast path (python/src/function.cpp): exact NumPy arrays of the inputs'
        # dtypes go straight to the compiled program; it answers NotImplemented for anything
        # else, which then takes _convert below.
        self._plan = _core.CallPlan(fn, [dt.name for dt in self._dtypes], single) \
            if all(dt.name in _PLAN_DTYPES for dt in self._dtypes) else None

    @property
    def name(self):
        return self._name if self._name is not None else self._fn.name

    def copy(self, share_memory=False, swap=None, delete_updates=False, name=None, profile=None):
        """Theano's Function.copy: a function computing the same outputs, named ``name`` (else
        "<name> copy"). ``swap`` ({old shared variable: new one of the same type}) makes the
        copy read and update the new variables instead (the original is unchanged);
        ``delete_updates`` drops every update (the default updates of random streams too).
        ``share_memory=True`` without swap or delete_updates makes the copy run the original's
        compiled program (one program, whose calls each take their own scratch state, so the
        two never see each other's intermediate values); otherwise the copy compiles anew.
        Shared variables are shared by both unless swapped, as in Theano."""
        if profile not in (None, False):
            raise not_available("Function.copy(profile=...)", "the profiler is a later issue")
        b = self._build
        new_name = name if name is not None else f"{self.name} copy"
        swaps = []
        for old, new in (swap.items() if hasattr(swap, "items") else (swap or [])):
            if not isinstance(old, SharedVariable) or not isinstance(new, SharedVariable):
                raise TheonTypeError(f"Function.copy(swap=...): {old!r} -> {new!r}: both must be shared variables")
            if old.type != new.type or old.type.shape != new.type.shape:
                raise TheonTypeError(f"Function.copy(swap=...): {old} ({old.type}) and {new} ({new.type}) must have "
                                     "the same type")
            swaps.append((old, new))
        if share_memory and not swaps and not delete_updates:
            f = Function(self._fn, self._ins, self._single, b["allow_input_downcast"])
            f.maker = self.maker
            f._build, f._name, f._monitor_hooks = b, new_name, self._monitor_hooks
            return f
        kw = dict(b)
        kw["name"] = new_name
        if swaps:
            key = {o._v.id(): n for o, n in swaps}
            kw["updates"] = [(key.get(s._v.id(), s), v) for s, v in kw["updates"]]
            kw["givens"] = list(kw["givens"]) + swaps
        if delete_updates:  # inputs read only by the updates become unused: that is the point
            kw["updates"], kw["no_default_updates"], kw["on_unused_input"] = [], True, "ignore"
        return function(**kw)

    def __reduce__(self):  # pickle.dump: saves what it was compiled from (theon/_pickle.py)
        from .._pickle import reduce_function
        return reduce_function(self)

    def explain(self):
        """Every node with its device, kernel and why it was placed there."""
        return self._fn.explain()

    def debugprint(self):
        return self._fn.debugprint()

    def _convert(self, k, a):
        dt = self._dtypes[k]
        if isinstance(a, np.ndarray) and (type(a) is not np.ndarray or a.dtype not in _SUPPORTED):
            # big-endian, uint16/32/64 (to the input's dtype when that is safe), masked, complex, ...
            a = _theon_array(np.asarray(a) if isinstance(a, np.matrix) else a,
                             f"function '{self.name}', input {k} ('{self._ins[k].variable}')", target=dt)
        if type(a) is np.ndarray and a.dtype in _SUPPORTED:
            if a.dtype != dt:
                if self._ins[k].strict:
                    raise TheonTypeError(f"function '{self.name}', input {k} ({self._ins[k].variable}): strict "
                                         f"input needs dtype {dt}, got {a.dtype}")
                if self._downcast[k]:
                    a = a.astype(dt)
            return a
        if isinstance(a, DeviceArray):  # device memory, no copy; the C++ check converts safe dtypes
            if a.dtype != dt:
                if self._ins[k].strict:
                    raise TheonTypeError(f"function '{self.name}', input {k} ({self._ins[k].variable}): strict "
                                         f"input needs dtype {dt}, got {a.dtype}")
                if self._downcast[k]:
                    a = a.astype(dt.name)
            return a
        if isinstance(a, TensorVariable):
            raise TheonTypeError(f"function '{self.name}', input {k}: got a symbolic variable; functions take "
                                 "values (NumPy arrays or numbers)")
        if hasattr(a, "__dlpack__") and not isinstance(a, np.generic):
            a = _dlpack.from_dlpack(a)  # torch/CuPy/JAX arrays without a copy: CPU ones as NumPy, CUDA ones
            return self._convert(k, a)  # as DeviceArray
        arr = np.asarray(a)
        if arr.dtype == object:
            raise TheonTypeError(f"function '{self.name}', input {k}: cannot convert {type(a).__name__} to {dt}")
        if arr.dtype not in _SUPPORTED:
            arr = _theon_array(arr, f"function '{self.name}', input {k} ('{self._ins[k].variable}')", target=dt)
        if arr.dtype == dt:
            return arr
        if isinstance(a, np.generic) and arr.dtype in _SUPPORTED and not self._downcast[k]:
            return arr  # a NumPy scalar is strong: the C++ check decides
        conv = arr.astype(dt)
        allowed = self._downcast[k]
        if allowed is None:
            allowed = dt.kind == "f" and arr.dtype.kind == "f" and not isinstance(a, np.ndarray)
        if not allowed and np.can_cast(arr.dtype, dt, "safe") is False:
            same = np.array_equal(conv, arr, equal_nan=arr.dtype.kind == "f" and dt.kind == "f")
            if not same:
                raise TheonTypeError(
                    f"function '{self.name}', input {k} ('{self._ins[k].variable}', {dt}): the value {a!r} "
                    f"cannot be converted to {dt} without loss (cast it first, or set allow_input_downcast=True)")
        return conv

    def __call__(self, *args, **kwargs):
        if self._plan is not None and not kwargs:
            out = self._plan(args)
            if out is not NotImplemented:
                return out
        n = len(self._ins)
        if len(args) > n:
            raise TheonTypeError(f"function '{self.name}' takes {n} input(s), got {len(args)}")
        if kwargs or len(args) < n:
            vals = list(args) + [None] * (n - len(args))
            given = [True] * len(args) + [False] * (n - len(args))
            for key, val in kwargs.items():
                k = self._names.get(key)
                if k is None:
                    raise TheonTypeError(f"function '{self.name}' has no input named {key!r}")
                if given[k]:
                    raise TheonTypeError(f"function '{self.name}': input {key!r} given twice")
                vals[k], given[k] = val, True
            for k in range(n):
                if not given[k]:
                    if self._ins[k].value is None:
                        raise TheonTypeError(f"function '{self.name}' takes {n} input(s): input {k} "
                                             f"('{self._ins[k].variable}') is missing")
                    vals[k] = self._ins[k].value
            args = vals
        args = [self._convert(k, a) for k, a in enumerate(args)]
        outs = self._fn(args)
        return outs[0] if self._single else outs


def function(inputs, outputs=None, mode=None, updates=None, givens=None, no_default_updates=False,
             accept_inplace=False, name=None, rebuild_strict=True, allow_input_downcast=None, profile=None,
             on_unused_input=None, outputs_on_device=False):
    """Compiles `outputs` as a function of `inputs` (Theano's theano.function).

    ``outputs_on_device`` (a Theon extension, not in Theano): when the function runs on a GPU,
    return its outputs as :class:`theon.DeviceArray` (left in GPU memory: no copy to the host;
    ``to_host()``/``numpy.asarray()`` copy, ``__dlpack__`` hands them to torch/CuPy). Outputs
    of a function that runs on the CPU are NumPy arrays either way."""
    if profile not in (None, False):
        raise not_available("function(profile=...)", "the profiler is a later issue (f.explain() shows what runs "
                                                      "where)")
    if not rebuild_strict:
        raise not_available("function(rebuild_strict=False)",
                            "a givens or updates replacement must have the dtype and rank of what it replaces")
    build = dict(inputs=inputs, outputs=outputs, mode=mode, updates=list(_pairs(updates, "updates")),
                 givens=list(_pairs(givens, "givens")), no_default_updates=no_default_updates, name=name,
                 allow_input_downcast=allow_input_downcast, on_unused_input=on_unused_input,
                 outputs_on_device=outputs_on_device)
    from .monitormode import MonitorMode
    from .monitormode import weak_call
    before = after = None
    if isinstance(mode, MonitorMode):
        before, after = mode.hooks()
        mode = mode.optimizer_mode()
    if inputs is None:
        inputs = []
    if not isinstance(inputs, (list, tuple)):
        raise TheonTypeError("function: inputs must be a list of variables (theon.function([x], y))")
    ins = []
    for k, i in enumerate(inputs):
        if isinstance(i, In):
            ins.append(i)
        elif isinstance(i, SharedVariable):
            raise TheonTypeError(f"function: input {k} ('{i}') is a shared variable; shared variables are implicit "
                                 "inputs, use givens to replace one")
        elif isinstance(i, TensorVariable):
            ins.append(In(i))
        else:
            raise TheonTypeError(f"function: input {k} is a {type(i).__name__}, not a symbolic variable")
    single = False
    if outputs is None:
        outs = []
    elif isinstance(outputs, (list, tuple)):
        outs = list(outputs)
    else:
        outs, single = [outputs], True
    outs = [o.variable if isinstance(o, Out) else o for o in outs]
    out_vars = [as_tensor_variable(o) for o in outs]
    ups = []
    for s, v in _pairs(updates, "updates"):
        if not isinstance(s, SharedVariable):
            raise TheonTypeError(f"function(updates=...): {s!r} is not a shared variable")
        ups.append((s._v, _v(v)))
    gv = [(_v(a), _v(b)) for a, b in _pairs(givens, "givens")]
    # no_default_updates: True skips every default update (a random stream's state advance),
    # a list of shared variables skips theirs.
    if isinstance(no_default_updates, (list, tuple)):
        for s in no_default_updates:
            if not isinstance(s, SharedVariable):
                raise TheonTypeError(f"function(no_default_updates=...): {s!r} is not a shared variable")
        skip_all, skip = False, [s._v for s in no_default_updates]
    else:
        skip_all, skip = bool(no_default_updates), []
    fn = _core.function([i.variable._v for i in ins], [o._v for o in out_vars], ups, gv, _text_mode(mode),
                        name or "", on_unused_input or "raise", bool(allow_input_downcast), bool(outputs_on_device),
                        skip_all, skip, weak_call(before), weak_call(after))
    f = Function(fn, ins, single, allow_input_downcast)
    f._monitor_hooks = (before, after)  # the compiled function calls them through weak references
    f.maker = FunctionMaker(fn, ins, out_vars, build["mode"])
    f._build = build
    return f


from . import monitormode  # noqa: E402  (theano.compile.monitormode)
from ..gof.graph import is_same_graph  # noqa: E402,F401  (theano.compile.is_same_graph, as Theano imports it)
from ..tensor import specify_shape  # noqa: E402,F401  (theano.compile.specify_shape)
from .monitormode import MonitorMode  # noqa: E402
from .._variable import shared  # noqa: E402,F401  (theano.compile.shared, theano.compile.SharedVariable)
