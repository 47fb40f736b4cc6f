"""theon.tensor.elemwise: Theano's ``theano.tensor.elemwise`` op classes, for
``isinstance(node.op, Elemwise)`` (theon/_op_classes.py says which nodes are which)."""
from .._op_classes import All, Any, CAReduce, CAReduceDtype, DimShuffle, Elemwise, Prod, Sum

__all__ = ["Elemwise", "DimShuffle", "CAReduce", "CAReduceDtype", "Sum", "Prod", "All", "Any"]
