"""Theano's op classes, for ``isinstance(node.op, T.Elemwise)`` and ``type(node.op).__name__``.

Theon's ops are C++ op kinds; a node's ``op`` (in a symbolic graph, ``var.owner.op``, or in a
compiled one, ``f.maker.fgraph.toposort()``) is an instance of a class named after what it
computes and derived from the Theano class that computes the same: an ``Elemwise{add}`` node's
op is a :class:`Elemwise`, a sum's a :class:`Sum` (a :class:`CAReduce`). In a compiled graph, a
matrix-vector product is a ``CGemv`` (a :class:`Gemv`), a matrix-matrix one a ``Dot22``, and a
node that runs on a GPU has Theano's ``Gpu`` prefix (``GpuElemwise``, still an Elemwise), so the
tutorial's "did it use the GPU" scripts tell. These classes describe ops; programs do not make
ops with them (Theon builds nodes with the functions of theon.tensor).
"""
from .errors import not_available


class _TheanoOpClass:
    def __init__(self, *args, **kwargs):
        raise not_available(f"{type(self).__name__}(...): making an op from its class",
                            "Theon's ops are built by the functions of theon.tensor (T.exp(x), x.sum(), T.dot(a, b))")


# theano.tensor.elemwise
class Elemwise(_TheanoOpClass):
    """An elementwise op (fused ones too, as Theano's Elemwise{Composite{...}})."""


class DimShuffle(_TheanoOpClass):
    """A reordering of axes, with broadcastable axes added or dropped."""


class CAReduce(_TheanoOpClass):
    """A reduction over axes (sum, product, max, min, any, all)."""


class CAReduceDtype(CAReduce):
    """A reduction with an output and accumulator dtype (Sum, Prod)."""


class Sum(CAReduceDtype):
    pass


class Prod(CAReduceDtype):
    pass


class All(CAReduce):
    pass


class Any(CAReduce):
    pass


# theano.tensor.basic
class Dot(_TheanoOpClass):
    """A tensor product (T.dot)."""


class Alloc(_TheanoOpClass):
    pass


class Reshape(_TheanoOpClass):
    pass


class Join(_TheanoOpClass):
    pass


class Shape(_TheanoOpClass):
    pass


class Argmax(_TheanoOpClass):
    pass


# theano.tensor.subtensor
class Subtensor(_TheanoOpClass):
    pass


class IncSubtensor(_TheanoOpClass):
    pass


class AdvancedSubtensor1(_TheanoOpClass):
    pass


class AdvancedIncSubtensor1(_TheanoOpClass):
    pass


# theano.tensor.blas and blas_c
class Gemv(_TheanoOpClass):
    """A matrix-vector product (in a compiled graph)."""


class CGemv(Gemv):
    pass


class Gemm(_TheanoOpClass):
    pass


class Dot22(_TheanoOpClass):
    """A matrix-matrix product (in a compiled graph)."""


# theano.tensor.nnet
class Softmax(_TheanoOpClass):
    pass


class LogSoftmax(_TheanoOpClass):
    pass


# Theon op kinds (compiled-graph op families) -> the Theano class their op derives from.
_KIND_TO_CLASS = {
    "Elemwise": Elemwise, "Composite": Elemwise, "DimShuffle": DimShuffle,
    "Sum": Sum, "Prod": Prod, "Max": CAReduce, "Min": CAReduce, "Any": Any, "All": All, "Mean": CAReduce,
    "FusedReduce": CAReduce, "Dot": Dot, "Gemm": Gemm, "Alloc": Alloc, "Reshape": Reshape, "Join": Join,
    "Shape": Shape, "ArgMax": Argmax, "Subtensor": Subtensor, "IncSubtensor": IncSubtensor,
    "AdvancedSubtensor1": AdvancedSubtensor1, "AdvancedIncSubtensor1": AdvancedIncSubtensor1,
    "Softmax": Softmax, "LogSoftmax": LogSoftmax,
}
# A compiled product's Theano class, by its output's rank: matrix-vector and vector-matrix are
# Gemv (CGemv with a C BLAS), matrix-matrix Dot22; a vector-vector product stays a Dot.
_PRODUCT_BY_RANK = {1: ("CGemv", CGemv), 2: ("Dot22", Dot22)}

_CLASSES = {}


def op_class(kind, base, on_gpu=False, output_rank=None):
    """The class of a node's op: named after `kind` (Theano's name where it has another one,
    with 'Gpu' in front on a GPU), derived from the Theano class of `kind` and from `base` (the
    op record's class, whose __init__ it uses)."""
    name, theano_class = kind, _KIND_TO_CLASS.get(kind)
    if kind == "Dot" and output_rank in _PRODUCT_BY_RANK:
        name, theano_class = _PRODUCT_BY_RANK[output_rank]
    if on_gpu:
        name = "Gpu" + (name[1:] if name in ("CGemv",) else name)
    key = (name, theano_class, base)
    cls = _CLASSES.get(key)
    if cls is None:
        bases = (theano_class, base) if theano_class is not None else (base,)
        cls = _CLASSES[key] = type(name, bases, {"__init__": base.__init__, "__module__": base.__module__})
    return cls
