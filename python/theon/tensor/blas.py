"""theon.tensor.blas: Theano's ``theano.tensor.blas`` op classes. In a compiled function's
graph (``f.maker.fgraph.toposort()``) a matrix-vector product is a Gemv (a CGemv), a
matrix-matrix one a Dot22."""
from .._op_classes import Dot22, Gemm, Gemv

__all__ = ["Gemv", "Gemm", "Dot22"]
