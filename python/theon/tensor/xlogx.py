"""theon.tensor.xlogx: Theano's ``theano.tensor.xlogx`` (x * log(x) and x * log(y), 0 where x is 0)."""
from .. import _core
from .._variable import TensorVariable, _v


def xlogx(x):
    """x * log(x), with 0 * log(0) = 0."""
    return TensorVariable(_core.tensor.xlogx(_v(x)))


def xlogy0(x, y):
    """x * log(y), 0 where x is 0."""
    return TensorVariable(_core.tensor.xlogy0(_v(x), _v(y)))
