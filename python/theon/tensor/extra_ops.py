"""theon.tensor.extra_ops: Theano's ``T.extra_ops`` (the parts Theon has)."""
from .. import _core
from .._variable import TensorVariable, _v, dtype_name


def to_one_hot(y, nb_class, dtype=None):
    """One-hot rows of length nb_class for integer vector y (dtype defaults to floatX)."""
    return TensorVariable(_core.tensor.one_hot(_v(y), int(nb_class), dtype_name(dtype)))


def cumsum(x, axis=None):
    """Theano's extra_ops.cumsum (numpy.cumsum): along `axis`, or over the flattened tensor."""
    from . import cumsum as _cumsum
    return _cumsum(x, axis)


def cumprod(x, axis=None):
    """Theano's extra_ops.cumprod (numpy.cumprod): along `axis`, or over the flattened tensor."""
    from . import cumprod as _cumprod
    return _cumprod(x, axis)
