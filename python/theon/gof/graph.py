"""theon.gof.graph: Theano's ``theano.gof.graph`` walks over symbolic graphs.

``inputs``, ``ancestors``, ``variables``, ``io_toposort``, ``is_same_graph``, ``clone`` (Theano's
gof.graph.clone(i, o)) and ``clone_replace`` (``theano.clone``)
take Theon variables; ``var.owner`` is an :class:`Apply` (``.op``, ``.inputs``, ``.outputs``)
or None for a leaf (a symbolic input, a shared variable, a constant), as in Theano. The walks
visit variables in Theano's order (a depth-first walk from the last of the variables given).
"""
from collections import deque

import numpy as np

from .. import _core
from .. import _variable
from .._op_classes import op_class
from .._variable import SharedVariable, TensorConstant, TensorVariable, Variable, _WRAPPERS, as_tensor_variable

__all__ = ["Apply", "Op", "inputs", "ancestors", "variables", "io_toposort", "is_same_graph", "clone", "clone_replace", "Variable",
           "Constant"]

Constant = TensorConstant


def wrap(var):
    """The Python variable for a graph variable (``_core.Var``): its existing wrapper, else a new
    one of the right class (TensorConstant with ``.data``, SharedVariable, TensorVariable)."""
    known = _WRAPPERS.get(var.id())
    if known is not None:
        return known
    role = _core.var_role(var)
    if role == "constant":
        c = TensorConstant.__new__(TensorConstant, var)
        TensorVariable.__init__(c, var)
        c.data = _core.constant_value(var)
        return c
    if role == "shared":
        return SharedVariable(var)
    # A wrapper for an existing node: no test value to compute (config.compute_test_value is for
    # the variables the user's code makes, and walking a graph must not evaluate it).
    saved = _variable._computing_test_value
    _variable._computing_test_value = True
    try:
        return TensorVariable(var)
    finally:
        _variable._computing_test_value = saved


class Op:
    """What a node computes (``node.op``): ``str()`` is its printed form ("Elemwise{add}"),
    ``kind`` its op kind, ``props`` its parameters. Two ops are equal when they compute the
    same function of their inputs (equal kinds and props)."""

    def __init__(self, info):
        self.name = info.op
        self.kind = info.op_kind
        self.props = tuple(tuple(p) for p in info.op_props)
        self.pure = info.op_pure

    def __str__(self):
        return self.name

    __repr__ = __str__

    def __eq__(self, other):
        return isinstance(other, Op) and (self.kind, self.props) == (other.kind, other.props)

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash((self.kind, self.props))


class Apply:
    """Theano's Apply: a node of a symbolic graph. ``op``, ``inputs`` and ``outputs`` (variables)."""

    def __init__(self, info):
        self._id = info.id
        self.op = op_class(info.op_kind, Op)(info)  # an Elemwise, a CAReduce... (theon/_op_classes.py)
        self.inputs = [wrap(v) for v in info.inputs]
        self.outputs = [wrap(v) for v in info.outputs]

    @property
    def nin(self):
        return len(self.inputs)

    @property
    def nout(self):
        return len(self.outputs)

    @property
    def out(self):
        """The output of a one-output node."""
        if len(self.outputs) != 1:
            raise ValueError(f"{self}.out: the node has {len(self.outputs)} outputs")
        return self.outputs[0]

    def __eq__(self, other):
        return isinstance(other, Apply) and other._id == self._id

    def __hash__(self):
        return hash(self._id)

    def __str__(self):
        return f"{self.op}({', '.join(str(i) for i in self.inputs)})"

    __repr__ = __str__


def owner(var):
    """The Apply computing ``var``, or None for a symbolic input, a shared variable or a constant."""
    info = _core.var_owner(as_tensor_variable(var)._v)
    return Apply(info) if info is not None else None


def _list(variables):
    """The variables of a list, tuple or any other iterable (Lasagne walks
    ``inputs(reversed(exprs))``), or of one variable."""
    if isinstance(variables, Variable) or not hasattr(variables, "__iter__"):
        return [as_tensor_variable(variables)]
    return [as_tensor_variable(v) for v in variables]


def ancestors(variable_list, blockers=None):
    """Every variable the variables of ``variable_list`` depend on, themselves included, each
    once (Theano's order: depth-first from the last one given). The inputs of a variable in
    ``blockers`` are not walked."""
    block = {v._v.id() for v in _list(blockers)} if blockers else set()
    start = deque(_list(variable_list))
    out, seen = [], set()
    while start:
        v = start.pop()
        key = v._v.id()
        if key in seen:
            continue
        seen.add(key)
        out.append(v)
        if key not in block:
            info = _core.var_owner(v._v)
            if info is not None:
                start.extend(wrap(i) for i in reversed(info.inputs))
    return out


def inputs(variable_list, blockers=None):
    """The leaves the variables depend on: symbolic inputs, shared variables and constants (and
    the variables of ``blockers`` met on the way), in Theano's order."""
    return [v for v in ancestors(variable_list, blockers) if v.owner is None]


def variables(i, o):
    """Every variable between the inputs ``i`` and the outputs ``o`` (both included)."""
    return ancestors(o, blockers=i)


def io_toposort(inputs, outputs):
    """The Apply nodes between ``inputs`` and ``outputs`` in an order where every node comes
    after the nodes computing its inputs (iterative: deep graphs are fine)."""
    block = {v._v.id() for v in _list(inputs)}
    order, done = [], set()
    for out in _list(outputs):
        stack = [(out, False)]
        while stack:
            v, expanded = stack.pop()
            key = v._v.id()
            if key in block:
                continue
            info = _core.var_owner(v._v)
            if info is None or info.id in done:
                continue
            if expanded:
                done.add(info.id)
                order.append(Apply(info))
                continue
            stack.append((v, True))
            for i in reversed(info.inputs):
                stack.append((wrap(i), False))
    return order


def _const_equal(a, b):
    va, vb = _core.constant_value(a), _core.constant_value(b)
    return va.dtype == vb.dtype and va.shape == vb.shape and np.array_equal(va, vb, equal_nan=va.dtype.kind == "f")


def is_same_graph(var1, var2, givens=None, debug=False):
    """True when ``var1`` and ``var2`` compute the same thing with the same graph: equal ops
    (kind and parameters) over equal inputs, constants equal by value, other leaves by
    identity. ``x * (y * z)`` and ``(x * y) * z`` are different graphs. ``givens`` (a dict or
    pairs) lists variables to be taken as equal (a variable of var1's graph and one of
    var2's). Impure nodes (random draws) are equal only when they are the same node."""
    pairs = set()
    for a, b in (givens.items() if hasattr(givens, "items") else (givens or [])):
        ka, kb = as_tensor_variable(a)._v.id(), as_tensor_variable(b)._v.id()
        pairs.add((ka, kb))
        pairs.add((kb, ka))
    memo = {}
    todo = [(as_tensor_variable(var1)._v, as_tensor_variable(var2)._v)]
    # Iterative structural comparison; a pair is equal when its nodes' inputs are, which the
    # stack checks after them (post-order).
    while todo:
        a, b = todo[-1]
        key = (a.id(), b.id())
        if key in memo:
            todo.pop()
            continue
        if a.id() == b.id() or key in pairs:
            memo[key] = True
            todo.pop()
            continue
        ra, rb = _core.var_role(a), _core.var_role(b)
        if ra != rb or a.dtype != b.dtype or a.ndim != b.ndim:
            memo[key] = False
            todo.pop()
            continue
        if ra == "constant":
            memo[key] = _const_equal(a, b)
            todo.pop()
            continue
        if ra != "output":
            memo[key] = False  # distinct inputs or shared variables
            todo.pop()
            continue
        ia, ib = _core.var_owner(a), _core.var_owner(b)
        if ia.index != ib.index or ia.op_kind != ib.op_kind or list(ia.op_props) != list(ib.op_props) or \
                len(ia.inputs) != len(ib.inputs) or not ia.op_pure or not ib.op_pure:
            memo[key] = ia.id == ib.id and ia.index == ib.index
            todo.pop()
            continue
        pending = [(x, y) for x, y in zip(ia.inputs, ib.inputs) if (x.id(), y.id()) not in memo]
        if pending:
            todo.extend(pending)
            continue
        memo[key] = all(memo[(x.id(), y.id())] for x, y in zip(ia.inputs, ib.inputs))
        todo.pop()
    result = memo[(as_tensor_variable(var1)._v.id(), as_tensor_variable(var2)._v.id())]
    if debug:
        print(f"is_same_graph({var1}, {var2}): {result}")
    return result


def _replace_pairs(replace):
    if replace is None:
        return []
    items = replace.items() if hasattr(replace, "items") else replace
    out = []
    for old, new in items:
        old_v = as_tensor_variable(old)
        out.append((old_v._v, as_tensor_variable(new, dtype=None)._v))
    return out


def clone_replace(output, replace=None, strict=True, share_inputs=True, copy_inputs=None):
    """Theano's ``theano.clone``: a copy of the graph computing ``output`` (a variable or a list
    of them), with the variables of ``replace`` (a dict or pairs: old -> new) replaced.

    ``share_inputs`` (Theano's default True): the copy reads the same symbolic inputs and
    shared variables; False gives it new input variables of the same types and names (and new
    graph variables over the same shared values). ``strict``: a replacement must have the
    replaced variable's type (it may know a static size the other did not); with False, only
    the rank must match and the nodes above a replacement of another type are re-typed, as
    Theano re-makes them (a float64 replacement of a float32 input gives float64 results; an
    op that cannot be re-typed for another dtype raises NotImplementedError naming it). The
    original graph is unchanged."""
    if copy_inputs is not None:  # Theano's deprecated name for share_inputs' opposite
        share_inputs = not copy_inputs
    single = not isinstance(output, (list, tuple))
    outs = _list(output)
    cloned = _core.clone([o._v for o in outs], _replace_pairs(replace), bool(strict), bool(share_inputs))
    res = [wrap(c) for c in cloned]
    return res[0] if single else res


def clone(i, o, copy_inputs=True, copy_orphans=None):
    """Theano's ``theano.gof.graph.clone(i, o, copy_inputs=True, copy_orphans=None)``: a copy of
    the subgraph between the inputs ``i`` and the outputs ``o`` (lists), returned as (the copy's
    inputs, the copy's outputs). ``copy_inputs``: the copy gets new variables of the same types
    and names for ``i`` (else it reads ``i`` itself); ``copy_orphans`` (default:
    ``copy_inputs``): the same for the other leaves the outputs read (symbolic inputs not in
    ``i``, shared variables; constants are shared either way, being immutable). ``theano.clone``
    (with replacements) is :func:`clone_replace`."""
    ins = [as_tensor_variable(v) for v in _list(i)]
    outs = [as_tensor_variable(v) for v in _list(o)]
    if copy_orphans is None:
        copy_orphans = copy_inputs
    if copy_inputs:
        new_ins = []
        for v in ins:
            # a constant or shared variable given as an input stays itself (its value is the same)
            new_ins.append(v if _core.var_role(v._v) in ("constant", "shared") else v.type(v.name))
    else:
        new_ins = list(ins)
    # Replacements are used as they are: the given inputs become new_ins (themselves when not
    # copied), and share_inputs decides the orphans.
    new_outs = clone_replace(outs, replace=list(zip(ins, new_ins)), strict=True,
                             share_inputs=not copy_orphans) if outs else []
    return new_ins, new_outs


def stack_search(start, expand, mode="bfs", build_inv=False):
    """Theano's stack_search: every node reachable from ``start`` (a deque or list) through
    ``expand(node)`` (an iterable or None), each once, breadth-first ('bfs') or depth-first
    ('dfs'); with ``build_inv``, also {node: [the nodes whose expansion gave it]}."""
    if mode not in ("bfs", "dfs"):
        raise ValueError(f"stack_search: mode must be 'bfs' or 'dfs', got {mode!r}")
    todo = deque(start)
    pop = todo.popleft if mode == "bfs" else todo.pop
    out, seen, inv = [], set(), {}
    while todo:
        node = pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        out.append(node)
        more = expand(node)
        if more:
            more = list(more)
            todo.extend(more)
            if build_inv:
                for m in more:
                    inv.setdefault(m, []).append(node)
    return (out, inv) if build_inv else out


def variables_and_orphans(i, o):
    """(every variable between ``i`` and ``o``, the leaves among them that are not in ``i``)."""
    block = {v._v.id() for v in _list(i)}
    vs = variables(i, o)
    return vs, [v for v in vs if v.owner is None and v._v.id() not in block]


def orphans(i, o):
    """The leaves ``o`` depends on that are not in ``i`` (constants, shared variables, other inputs)."""
    return variables_and_orphans(i, o)[1]


def ops(i, o):
    """The Apply nodes between ``i`` and ``o`` (a list, in a topological order)."""
    return io_toposort(i, o)


list_of_nodes = ops


def is_in_ancestors(l_apply, f_apply):
    """True when the node ``f_apply`` computes one of the inputs of ``l_apply``, directly or not."""
    key = f_apply._id
    for v in ancestors(l_apply.inputs):
        info = _core.var_owner(v._v)
        if info is not None and info.id == key:
            return True
    return False


def equal_computations(xs, ys, in_xs=None, in_ys=None):
    """True when each ``xs[k]`` computes the same as ``ys[k]`` (is_same_graph), the variables of
    ``in_xs`` and ``in_ys`` taken as equal pairwise."""
    if len(xs) != len(ys):
        raise ValueError(f"equal_computations: {len(xs)} and {len(ys)} variables")
    givens = list(zip(in_xs or [], in_ys or []))
    return all(is_same_graph(x, y, givens=givens) for x, y in zip(xs, ys))


__all__ += ["stack_search", "variables_and_orphans", "orphans", "ops", "list_of_nodes", "is_in_ancestors",
            "equal_computations"]
