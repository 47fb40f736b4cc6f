"""Pickling of shared variables, graph variables and compiled functions (Theano pickles all
three; docs/guide/python.md, "Saving and loading (pickle)").

- A shared variable saves its value (a host copy: the pickle is device-free), name, dtype,
  broadcastable pattern, context (``target``), default update, tag and attributes; it loads
  on its context where that exists here, otherwise on the CPU with a warning naming it.
- A graph variable saves the graph behind it down to its leaves and to the variables that
  have a Python object of their own at save time: those are saved as themselves, so every
  variable the program can reach keeps its identity within one pickle (two expressions over
  one shared variable load over one shared variable; ``classifier.input`` is still the input
  of ``classifier.p_y_given_x``). Each node is recorded as its op kind and props and rebuilt
  only through the core's ``make_op(kind, props)``, which validates them: nothing a pickle
  holds reaches generated source, compiler flags or paths. A kind unknown here or props the
  kind does not take raise TheonValueError when loading.
- A Function saves the arguments it was compiled from (inputs, outputs, updates, givens,
  mode, name and the other options) and is compiled again when loaded.

This module is imported lazily by ``__reduce__`` of TensorVariable and Function.
"""
import warnings

import numpy as np

from . import _core
from ._variable import SharedVariable, TensorVariable, _WRAPPERS, shared
from .errors import TheonValueError

# The record format: a pickle written by another format fails with a clear error.
_FORMAT = "theon-graph-1"
# Attributes a wrapper keeps for the core's variable: rebuilt, not saved.
_INTERNAL = frozenset(("_v", "tag", "_default_update", "data"))


# ---- saving ----

def _state(var):
    """What __dict__ holds beyond the core variable: attributes, the tag's contents, the
    default update of a shared variable (in the state, which pickle saves after the variable
    itself, since the update's graph reads the variable)."""
    d = var.__dict__
    attrs = {k: v for k, v in d.items() if k not in _INTERNAL}
    tag = d.get("tag")
    tag_items = {k: v for k, v in tag.__dict__.items() if k != "_owner"} if tag is not None else {}
    update = d.get("_default_update")
    if update is None and isinstance(var, SharedVariable):
        c = _core.default_update(var._v)  # a random stream's state advance, from the core
        if c is not None:
            from .gof.graph import wrap
            update = wrap(c)
    if not attrs and not tag_items and update is None:
        return None
    return {"attrs": attrs, "tag": tag_items, "default_update": update}


def set_state(var, state):
    """TensorVariable.__setstate__: what _state saved."""
    var.__dict__.update(state["attrs"])
    for k, v in state["tag"].items():
        setattr(var.tag, k, v)
    if state["default_update"] is not None:
        var.default_update = state["default_update"]


def _graph_record(root):
    """The graph computing `root` (a core variable) as plain data: leaves (Python variables,
    saved as themselves, or constants without one, saved by value) and nodes in topological
    order, each (kind, props, input refs, output (dtype, shape, name)). A ref is
    ("leaf", i) or ("node", n, output)."""
    from .gof.graph import wrap
    leaves, nodes, refs = [], [], {}
    root_id = root.id()
    stack = [(root, None)]
    while stack:
        var, rec = stack.pop()
        vid = var.id()
        if vid in refs:
            continue
        if rec is None:  # first visit: a leaf, or a node whose inputs come first
            known = _WRAPPERS.get(vid)
            role = _core.var_role(var)
            if vid != root_id and known is not None:
                leaf = known
            elif role == "constant":
                leaf = ("constant", _core.constant_value(var), _core.is_weak_constant(var), var.name)
            elif role != "output":
                leaf = wrap(var)
            else:
                rec = _core.node_record(var)
                stack.append((var, rec))
                stack.extend((i, None) for i in reversed(rec.inputs))
                continue
            refs[vid] = ("leaf", len(leaves))
            leaves.append(leaf)
            continue
        n = len(nodes)
        nodes.append((rec.kind, tuple(tuple(p) for p in rec.props), tuple(refs[i.id()] for i in rec.inputs),
                      tuple((o.dtype, tuple(o.static_shape), o.name, _core.var_context(o))
                            for o in rec.outputs)))
        for k, o in enumerate(rec.outputs):
            refs.setdefault(o.id(), ("node", n, k))
    return (_FORMAT, tuple(leaves), tuple(nodes), refs[root.id()])


def _usable_context(name):
    """A saved node's context where this process has it; "" (unpinned: placed by its inputs,
    else on the default context) with a warning where it does not."""
    if not name:
        return ""
    try:
        _core.get_context(name)
        return name
    except (ValueError, _core.TheonError) as e:
        warnings.warn(f"a saved node was pinned to context {name!r}, which this process cannot use "
                      f"({str(e).splitlines()[0]}); it is loaded unpinned", stacklevel=3)
        return ""


def reduce_variable(var):
    """TensorVariable.__reduce__ (and of its subclasses): by what the variable is."""
    role = _core.var_role(var._v)
    state = _state(var)
    if role == "shared":
        args = (var.get_value(), var.name, var.dtype, var.broadcastable, getattr(var, "target", None),
                getattr(var, "strict", False), getattr(var, "allow_downcast", None))
        return (_load_shared, args, state)
    if role == "constant":
        args = (_core.constant_value(var._v), _core.is_weak_constant(var._v), var.name)
        return (_load_constant, args, state)
    if role == "input":
        return (_load_input, (var.dtype, tuple(var._v.static_shape), var.name), state)
    return (_load_graph, (_graph_record(var._v),), state)


def reduce_function(f):
    """Function.__reduce__: the arguments it was compiled from; loading compiles it again."""
    if f._build is None:
        from .errors import TheonTypeError
        raise TheonTypeError(f"cannot pickle function '{f.name}': it was not made by theon.function()")
    build = dict(f._build)
    build["name"] = f.name
    return (_load_function, (build,), {"trust_input": f.trust_input})


# ---- loading ----

def _bad(what):
    return TheonValueError(f"cannot load a theon pickle: {what}")


def _load_shared(value, name, dtype, broadcastable, target, strict, allow_downcast):
    a = np.asarray(value)
    if a.dtype.name != dtype:
        raise _bad(f"shared variable {name!r} holds a {a.dtype} value but is recorded as {dtype}")
    kw = dict(name=name, broadcastable=broadcastable)
    if strict:
        kw["strict"] = strict
    if allow_downcast is not None:
        kw["allow_downcast"] = allow_downcast
    if target is not None:
        try:
            return shared(a, target=target, **kw)
        except _core.TheonError as e:  # no such context here (or no contexts yet)
            warnings.warn(f"shared variable {name!r} was saved on context {target!r}, which this process "
                          f"cannot use ({str(e).splitlines()[0]}); it is loaded on the CPU", stacklevel=2)
    return shared(a, **kw)


def _load_constant(value, weak, name):
    from .gof.graph import wrap
    return wrap(_core.make_constant(np.asarray(value), bool(weak), name or ""))


def _load_input(dtype, shape, name):
    return TensorVariable(_core.tensor.tensor(dtype, list(shape), name or ""))


def _ref(ref, leaves, built, n_node):
    try:
        if ref[0] == "leaf":
            return leaves[ref[1]]
        if ref[0] == "node" and 0 <= ref[1] < n_node:
            return built[ref[1]][ref[2]]
    except (IndexError, TypeError):
        pass
    raise _bad(f"the graph record refers to {ref!r}, which is not an earlier node or a leaf")


def _load_graph(record):
    from .gof.graph import wrap
    if not isinstance(record, tuple) or len(record) != 4 or record[0] != _FORMAT:
        raise _bad(f"expected a graph record of format {_FORMAT!r}")
    _, saved_leaves, nodes, root = record
    leaves = []
    for leaf in saved_leaves:
        if isinstance(leaf, TensorVariable):
            leaves.append(leaf._v)
        elif isinstance(leaf, tuple) and len(leaf) == 4 and leaf[0] == "constant":
            leaves.append(_core.make_constant(np.asarray(leaf[1]), bool(leaf[2]), leaf[3] or ""))
        else:
            raise _bad(f"a graph leaf is a {type(leaf).__name__}, not a variable")
    built = []
    for k, node in enumerate(nodes):
        try:
            kind, props, ins, outs = node
            props = [(str(a), str(b)) for a, b in props]
            # (dtype, shape, name) or, with its context, (dtype, shape, name, context)
            outs = [(str(o[0]), [int(s) for s in o[1]], str(o[2]), _usable_context(str(o[3]) if len(o) > 3 else ""))
                    for o in outs]
        except (TypeError, ValueError, IndexError):
            raise _bad(f"node {k} of the graph record is malformed") from None
        in_vars = [_ref(r, leaves, built, k) for r in ins]
        try:
            built.append(_core.rebuild_node(str(kind), props, in_vars, outs))
        except _core.TheonError as e:
            raise _bad(f"node {k}: {e}") from None
    return wrap(_ref(root, leaves, built, len(built)))


def _load_function(build):
    from .compile import function
    return function(**build)
