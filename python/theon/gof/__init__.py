"""theon.gof: Theano's ``theano.gof`` names that programs use for type checks
(``isinstance(v, theano.gof.Variable)``) and graph walks (``theano.gof.graph``). Every Theon
variable is a TensorVariable: constants and shared variables are subclasses of it.
"""
from .. import _variable
from .._variable import SharedVariable, TensorConstant, TensorVariable
from . import graph
from .graph import Apply, Op

Variable = _variable.Variable
Constant = TensorConstant

__all__ = ["Variable", "Constant", "SharedVariable", "graph", "Apply", "Op"]
