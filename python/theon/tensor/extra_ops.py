"""theon.tensor.extra_ops: Theano's ``T.extra_ops`` (the parts Theon has)."""
from .. import _core
from .._variable import TensorVariable, _v, dtype_name


def to_one_hot(y, nb_class, dtype=None):
    """One-hot rows of length nb_class for integer vector y (dtype defaults to floatX); nb_class
    may be symbolic (an integer scalar)."""
    if isinstance(nb_class, TensorVariable):
        from . import arange, cast, eq
        y = TensorVariable(_v(y))
        if y.ndim != 1:
            raise TypeError(f"to_one_hot: y must be an integer vector, got {y.type}")
        return cast(eq(y.dimshuffle(0, "x"), arange(nb_class).dimshuffle("x", 0)), dtype or "floatX")
    return TensorVariable(_core.tensor.one_hot(_v(y), int(nb_class), dtype_name(dtype)))


def cumsum(x, axis=None):
    """Theano's extra_ops.cumsum (numpy.cumsum): along `axis`, or over the flattened tensor."""
    from . import cumsum as _cumsum
    return _cumsum(x, axis)


def cumprod(x, axis=None):
    """Theano's extra_ops.cumprod (numpy.cumprod): along `axis`, or over the flattened tensor."""
    from . import cumprod as _cumprod
    return _cumprod(x, axis)


def repeat(x, repeats, axis=None):
    """numpy.repeat (Theano's extra_ops.repeat)."""
    from . import repeat as _repeat
    return _repeat(x, repeats, axis)


def squeeze(x, axis=None):
    """x without its broadcastable dims (Theano's extra_ops.squeeze)."""
    from . import squeeze as _squeeze
    return _squeeze(x, axis)


def diff(x, n=1, axis=-1):
    """numpy.diff: the n-th order difference along `axis` (Theano's extra_ops.diff)."""
    from . import as_tensor_variable
    x = as_tensor_variable(x)
    axis = axis + x.ndim if axis < 0 else axis
    for _ in range(int(n)):
        hi = [slice(None)] * x.ndim
        lo = [slice(None)] * x.ndim
        hi[axis], lo[axis] = slice(1, None), slice(None, -1)
        x = x[tuple(hi)] - x[tuple(lo)]
    return x


def bincount(x, weights=None, minlength=None, assert_nonneg=False):
    """numpy.bincount of a non-negative integer vector (Theano's extra_ops.bincount): the count
    (or the sum of `weights`) of each value 0..max(x), at least `minlength` entries."""
    from . import arange, as_tensor_variable, cast, eq, maximum, max as _max, sum as _sum, switch
    x = as_tensor_variable(x)
    if x.ndim != 1 or x.dtype not in ("int8", "int16", "int32", "int64", "uint8"):
        raise TypeError(f"bincount: x must be an integer vector, got {x.type}")
    if assert_nonneg:
        from ..errors import not_available
        raise not_available("bincount(assert_nonneg=True)", "Theon has no run-time assertion op yet")
    n = switch(eq(x.shape[0], 0), 0, _max(cast(x, "int64")) + 1) if x.ndim else 0
    if minlength is not None:
        n = maximum(n, int(minlength) if not isinstance(minlength, TensorVariable) else minlength)
    hits = eq(x.dimshuffle(0, "x"), arange(n).dimshuffle("x", 0))
    if weights is None:
        return _sum(cast(hits, "int64"), axis=0)
    w = as_tensor_variable(weights)
    return _sum(switch(hits, w.dimshuffle(0, "x"), 0), axis=0)
