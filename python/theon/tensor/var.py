"""theon.tensor.var: Theano's ``theano.tensor.var`` (``from theano.tensor.var import TensorVariable``)."""
from .._variable import TensorConstant, TensorVariable

__all__ = ["TensorVariable", "TensorConstant"]
