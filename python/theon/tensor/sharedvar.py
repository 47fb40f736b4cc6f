"""theon.tensor.sharedvar: Theano's ``theano.tensor.sharedvar``, the classes of shared
variables for ``isinstance``. Every Theon shared variable (``theon.shared``) is a
TensorSharedVariable; ScalarSharedVariable names the same class."""
from .._variable import SharedVariable, TensorSharedVariable

ScalarSharedVariable = TensorSharedVariable

__all__ = ["SharedVariable", "TensorSharedVariable", "ScalarSharedVariable"]
