"""theon.tensor.blas_c: Theano's ``theano.tensor.blas_c.CGemv`` (a Gemv run by a C BLAS)."""
from .._op_classes import CGemv

__all__ = ["CGemv"]
