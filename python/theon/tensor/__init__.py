"""theon.tensor: Theano's ``theano.tensor`` (``import theon.tensor as T``).

Variables (T.matrix, T.fvector, ...), every op of Theon's C++ ``tensor::`` namespace under
Theano's names, T.nnet, T.grad and T.verify_grad.
"""
import builtins as _builtins
import keyword as _keyword

import numpy as _np

from .. import _core
from .._variable import (SharedVariable, TensorConstant, TensorSharedVariable, TensorType, TensorVariable,
                         _shape_of, _v, as_tensor_variable, dtype_name as _dtype_name)
from ..errors import TheonNotImplementedError as _NotImpl
from ..errors import TheonTypeError as _TheonTypeError
from ..errors import not_available as _not_available
# theano.tensor.var (the module, for `from theano.tensor.var import TensorVariable`) is imported
# first, so that T.var below is the variance, as in Theano.
from . import var as _var_module  # noqa: F401

_t = _core.tensor
as_tensor = as_tensor_variable


def _w(v):
    return TensorVariable(v)


def _axes(axis):
    if axis is None:
        return None
    if isinstance(axis, (list, tuple)):
        return [int(a) for a in axis]
    return [int(axis)]


# ---- variables ----------------------------------------------------------------------
def _maker(kind, dtype=None):
    def make(name=None, dtype=dtype):
        return _w(_t.make(kind, name or "", _dtype_name(dtype)))
    make.__name__ = kind
    make.__doc__ = f"A symbolic {kind} (dtype: {dtype or 'config.floatX'})."
    return make


scalar = _maker("scalar")
vector = _maker("vector")
matrix = _maker("matrix")
tensor3 = _maker("tensor3")
tensor4 = _maker("tensor4")

# Theano's typed forms are types: T.dscalar('x') makes a variable and x.type == T.dscalar.
_PREFIX = {"f": "float32", "d": "float64", "b": "int8", "w": "int16", "i": "int32", "l": "int64"}
_RANK = {"scalar": 0, "vector": 1, "matrix": 2, "tensor3": 3, "tensor4": 4}
for _p, _dt in _PREFIX.items():
    for _k, _n in _RANK.items():
        globals()[_p + _k] = TensorType(_dt, (False,) * _n)


def tensor(dtype=None, broadcastable=None, name=None, shape=None):
    """Any rank: Theano's tensor(dtype, broadcastable, name); or shape=(None|int, ...)."""
    return TensorType(dtype or "floatX", broadcastable, shape=shape)(name)


def _rowcol(shape, dtype):
    def make(name=None, dtype=dtype):
        return tensor(dtype or "floatX", shape=shape, name=name)
    return make


row, col = _rowcol((1, None), None), _rowcol((None, 1), None)
for _p, _dt in _PREFIX.items():
    globals()[_p + "row"] = TensorType(_dt, (True, False))
    globals()[_p + "col"] = TensorType(_dt, (False, True))


def constant(x, name=None, ndim=None, dtype=None):
    c = TensorConstant(_np.asarray(x, dtype=_dtype_name(dtype)) if dtype is not None else x, name)
    if ndim is not None and c.ndim != ndim:
        raise ValueError(f"constant: expected {ndim} dimensions, got {c.ndim}")
    return c


# ---- elementwise --------------------------------------------------------------------
def _binary(fn, name, doc=""):
    def op(a, b):
        return _w(fn(_v(a), _v(b)))
    op.__name__ = name
    op.__doc__ = doc or f"Elementwise {name} (NumPy broadcasting, NEP 50 promotion)."
    return op


def _unary(fn, name, doc=""):
    def op(a):
        return _w(fn(_v(a)))
    op.__name__ = name
    op.__doc__ = doc or f"Elementwise {name}."
    return op


add = _binary(_t.add, "add")
sub = _binary(_t.sub, "sub")
mul = _binary(_t.mul, "mul")
true_div = _binary(_t.true_div, "true_div")
floor_div = int_div = _binary(_t.floor_div, "floor_div")
mod = _binary(_t.mod, "mod")
pow = _binary(_t.pow, "pow")
lt = less = _binary(_t.lt, "lt")
gt = greater = _binary(_t.gt, "gt")
le = less_equal = _binary(_t.le, "le")
ge = greater_equal = _binary(_t.ge, "ge")
eq = _binary(_t.eq, "eq")
neq = _binary(_t.neq, "neq")
and_ = bitwise_and = _binary(_t.and_, "and_")
or_ = bitwise_or = _binary(_t.or_, "or_")
xor = bitwise_xor = _binary(_t.xor_, "xor")
maximum = _binary(_t.maximum, "maximum")
minimum = _binary(_t.minimum, "minimum")
dot = _binary(_t.dot, "dot", "Theano's dot: vectors and matrices.")
matmul = _binary(_t.matmul, "matmul", "numpy.matmul: batched over the leading dims.")

neg = _unary(_t.neg, "neg")
abs = abs_ = _unary(_t.abs, "abs")
sgn = sign = _unary(_t.sign, "sgn")
sqr = _unary(_t.sqr, "sqr")
invert = bitwise_not = _unary(_t.invert, "invert")
exp = _unary(_t.exp, "exp")
log = _unary(_t.log, "log")
log1p = _unary(_t.log1p, "log1p")
expm1 = _unary(_t.expm1, "expm1")
sqrt = _unary(_t.sqrt, "sqrt")
tanh = _unary(_t.tanh, "tanh")
sin = _unary(_t.sin, "sin")
cos = _unary(_t.cos, "cos")
sigmoid = _unary(_t.sigmoid, "sigmoid")
softplus = _unary(_t.softplus, "softplus")


def inv(x):
    return 1.0 / as_tensor_variable(x)


def log2(x):
    return log(x) / float(_np.log(2.0))


def log10(x):
    return log(x) / float(_np.log(10.0))


def isnan(x):
    x = as_tensor_variable(x)
    return neq(x, x)


def isinf(x):
    return eq(abs(x), float("inf"))


def clip(x, min, max):
    return _w(_t.clip(_v(x), _v(min), _v(max)))


def switch(cond, ift, iff):
    """ift where cond is true, else iff (numpy.where)."""
    return _w(_t.switch_(_v(cond), _v(ift), _v(iff)))


where = switch


def cast(x, dtype):
    return _w(_t.cast(_v(x), _dtype_name(dtype)))


# ---- reductions ---------------------------------------------------------------------
def _accumulate_in(x, acc_dtype, name):
    """x cast to Theano's `acc_dtype` (the accumulator's dtype), which must hold every value of
    x (Theano refuses a narrower one too)."""
    acc = _dtype_name(acc_dtype)
    if not _np.can_cast(_np.dtype(x.dtype), _np.dtype(acc), "safe"):
        raise _TheonTypeError(f"{name}(acc_dtype={acc!r}): the input '{x}' is {x.dtype}; an accumulator of dtype "
                             f"{acc} would lose precision")
    return cast(x, acc) if x.dtype != acc else x


def _reduction(fn, name):
    def op(x, axis=None, dtype=None, keepdims=False, acc_dtype=None):
        if acc_dtype is not None:  # reduce in acc_dtype, then give the dtype the call gives without it
            x = as_tensor_variable(x)
            want = _dtype_name(dtype) if dtype is not None else op(x, axis, keepdims=keepdims).dtype
            return cast(op(_accumulate_in(x, acc_dtype, name), axis, keepdims=keepdims), want)
        out = _w(fn(_v(x), _axes(axis), bool(keepdims)))
        return cast(out, dtype) if dtype is not None and out.dtype != _dtype_name(dtype) else out
    op.__name__ = name
    op.__doc__ = f"{name} over `axis` (None: all axes; an int or a list)."
    return op


sum = _reduction(_t.sum, "sum")
_mean = _reduction(_t.mean, "mean")


def mean(x, axis=None, dtype=None, keepdims=False, acc_dtype=None):
    """mean over `axis` (None: all axes; an int or a list)."""
    x = as_tensor_variable(x)
    if x.dtype == "bool":  # the C++ Reduce{mean} of bool returns the sum (reported); mean of int64 is right
        x = cast(x, "int64")
    if acc_dtype is not None:
        want = _dtype_name(dtype) if dtype is not None else _mean(x, axis, keepdims=keepdims).dtype
        return cast(_mean(_accumulate_in(x, acc_dtype, "mean"), axis, keepdims=keepdims), want)
    return _mean(x, axis, dtype=dtype, keepdims=keepdims)
prod = _reduction(_t.prod, "prod")


def max(x, axis=None, keepdims=False):
    return _w(_t.max(_v(x), _axes(axis), bool(keepdims)))


def min(x, axis=None, keepdims=False):
    return _w(_t.min(_v(x), _axes(axis), bool(keepdims)))


def any(x, axis=None, keepdims=False):
    return _w(_t.any(_v(x), _axes(axis), bool(keepdims)))


def all(x, axis=None, keepdims=False):
    return _w(_t.all(_v(x), _axes(axis), bool(keepdims)))


def _one_axis(axis, name):
    a = _axes(axis)
    if a is None:
        return None
    if len(a) != 1:
        raise _NotImpl(f"{name} over several axes is not available yet: pass one axis or None")
    return a[0]


def argmax(x, axis=None, keepdims=False):
    return _w(_t.argmax(_v(x), _one_axis(axis, "argmax"), bool(keepdims)))


def argmin(x, axis=None, keepdims=False):
    return _w(_t.argmin(_v(x), _one_axis(axis, "argmin"), bool(keepdims)))


def var(x, axis=None, ddof=0, keepdims=False, corrected=False):
    """The variance over `axis`, divided by n - ddof. corrected=True: Theano's corrected
    two-pass algorithm, which subtracts the rounding error of the mean,
    (sum(d**2) - sum(d)**2 / n) / (n - ddof) with d = x - mean(x)."""
    x = as_tensor_variable(x)
    dev = x - mean(x, axis, keepdims=True)
    d = sqr(dev)
    if not ddof and not corrected:
        return mean(d, axis, keepdims=keepdims)
    s = sum(d, axis, keepdims=keepdims)
    n = cast(size(x) if axis is None else prod(stack([x.shape[a] for a in _axes(axis)])), s.dtype)
    if corrected:
        s = s - sqr(sum(dev, axis, keepdims=keepdims)) / n
    return s / (n - ddof)


def std(x, axis=None, ddof=0, keepdims=False, corrected=False):
    return sqrt(var(x, axis, ddof=ddof, keepdims=keepdims, corrected=corrected))


def norm(x, L, axis=None, keepdims=False):
    if L == 1:
        return sum(abs(x), axis, keepdims=keepdims)
    if L == 2:
        return sqrt(sum(sqr(x), axis, keepdims=keepdims))
    return sum(abs(x) ** L, axis, keepdims=keepdims) ** (1.0 / L)


# ---- shape --------------------------------------------------------------------------
def shape(x):
    return _shape_of(as_tensor_variable(x))


def size(x):
    return _w(_t.size(_v(x)))


def transpose(x, axes=None):
    return _w(_t.transpose(_v(x), [] if axes is None else [int(a) for a in axes]))


def dimshuffle(x, *pattern):
    return as_tensor_variable(x).dimshuffle(*pattern)


def _is_symbolic_shape(s):
    return isinstance(s, TensorVariable) or (isinstance(s, (list, tuple)) and
                                             _builtins.any(isinstance(e, TensorVariable) for e in s))


def _shape_vector(s):
    if isinstance(s, TensorVariable):
        return cast(s, "int64") if s.dtype != "int64" else s
    return stack([cast(e, "int64") if isinstance(e, TensorVariable) else constant(int(e), dtype="int64") for e in s])


def reshape(x, newshape, ndim=None):
    """x with a new shape: ints (one may be -1), or symbolic (a vector or a tuple with variables).
    `ndim` (Theano's: the rank of the result) must agree with the shape when given."""
    x = as_tensor_variable(x)
    if isinstance(newshape, (int, _np.integer)):
        newshape = (int(newshape),)
    if _is_symbolic_shape(newshape):
        out = _w(x._v.reshape_sym(_shape_vector(newshape)._v))
    else:
        out = _w(x._v.reshape([int(s) for s in newshape]))
    if ndim is not None and int(ndim) != out.ndim:
        raise _TheonTypeError(f"reshape('{x}', ndim={ndim}): the new shape has {out.ndim} dimension(s)")
    return out


def flatten(x, ndim=1, outdim=None):
    return _w(_v(x).flatten(outdim if outdim is not None else ndim))


def broadcast_to(x, shape):
    return _w(_t.broadcast_to(_v(x), [int(s) for s in shape]))


def concatenate(tensor_list, axis=0):
    return _w(_t.concatenate([_v(t) for t in tensor_list], int(axis)))


def join(axis, *tensors):
    return concatenate(tensors, axis)


def stack(tensors, *more, axis=0):
    """stack(list, axis=0); the old Theano form stack(a, b, c) works too."""
    if not isinstance(tensors, (list, tuple)):
        tensors = [tensors, *more]
    elif more:
        axis = more[0]
    return _w(_t.stack([_v(t) for t in tensors], int(axis)))


# ---- indexing -----------------------------------------------------------------------
def take(a, indices, axis=None):
    a = as_tensor_variable(a)
    if axis is None:
        a, axis = a.flatten(), 0
    return _w(_t.take(a._v, _v(indices if not isinstance(indices, (list, _np.ndarray)) else
                                  _np.asarray(indices, dtype=_np.int64)), int(axis)))


def _no_inplace_request(name, inplace, tolerate_inplace_aliasing):
    # Theano's flags for its own optimizer: Theon's inplace pass decides where a node may
    # write into its input, so a graph never asks for it.
    if inplace or tolerate_inplace_aliasing:
        raise _not_available(f"{name}(inplace={inplace!r}, tolerate_inplace_aliasing={tolerate_inplace_aliasing!r})",
                            "the result is a new tensor; the optimizer makes it inplace where that is safe")


def set_subtensor(x, y, inplace=False, tolerate_inplace_aliasing=False):
    """Theano's set_subtensor(x[idx], y): a new tensor equal to x with x[idx] = y."""
    _no_inplace_request("set_subtensor", inplace, tolerate_inplace_aliasing)
    return _w(_t.set_subtensor(_v(x), _v(y)))


def inc_subtensor(x, y, inplace=False, set_instead_of_inc=False, tolerate_inplace_aliasing=False):
    """Theano's inc_subtensor(x[idx], y): a new tensor equal to x with x[idx] += y."""
    _no_inplace_request("inc_subtensor", inplace, tolerate_inplace_aliasing)
    fn = _t.set_subtensor if set_instead_of_inc else _t.inc_subtensor
    return _w(fn(_v(x), _v(y)))


# ---- construction -------------------------------------------------------------------
def zeros_like(x, dtype=None):
    return _w(_t.zeros_like(_v(x), _dtype_name(dtype)))


def ones_like(x, dtype=None):
    return _w(_t.ones_like(_v(x), _dtype_name(dtype)))


def alloc(value, *shape):
    """A tensor of `shape` filled with scalar `value`; shape entries may be symbolic."""
    if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
        shape = tuple(shape[0])
    v = _v(value)
    if _builtins.any(isinstance(s, TensorVariable) for s in shape):
        return _w(_t.alloc(v, [_v(s) for s in shape]))
    return _w(_t.alloc_static(v, [int(s) for s in shape]))


def _filled(fill):
    def make(shape, dtype=None):
        if isinstance(shape, (int, _np.integer, TensorVariable)):
            shape = (shape,)
        return alloc(constant(fill, dtype=dtype or "floatX"), *shape)
    return make


zeros = _filled(0)
ones = _filled(1)


def fill(model, value):
    return alloc(value, *[model.shape[i] for i in range(as_tensor_variable(model).ndim)]) \
        if as_tensor_variable(model).ndim else as_tensor_variable(value) + zeros_like(model)


# ---- tutorial names: plural constructors, arange, round, products ---------------------
from .._variable import Variable  # noqa: E402  (Theano: theano.tensor.Variable is gof.Variable)
from .._contexts import transfer  # noqa: E402,F401  (theano.tensor.transfer(var, target))


def _multi(make, name):
    """Theano's plural constructors: ``x, y = T.dmatrices('x', 'y')``. An int n gives n unnamed
    variables; a single name gives one variable, not a list (and, as in Theano, a single string
    of several letters one variable per letter: ``T.dscalars('xy')``)."""
    def many(*names):
        if names and isinstance(names[0], (int, _np.integer)) and not isinstance(names[0], bool):
            return [make() for _ in range(int(names[0]))]
        if len(names) == 1:
            names = names[0]
        if len(names) == 1:
            return make(names)
        return [make(n) for n in names]
    many.__name__ = name
    many.__doc__ = f"Several {make}: one per name, or n unnamed ones for an int n."
    return many


_PLURAL = {"scalar": "scalars", "vector": "vectors", "matrix": "matrices", "tensor3": "tensor3s",
           "tensor4": "tensor4s", "row": "rows", "col": "cols"}
for _k, _plural in _PLURAL.items():
    globals()[_plural] = _multi(globals()[_k], _plural)
    for _p in _PREFIX:
        globals()[_p + _plural] = _multi(globals()[_p + _k], _p + _plural)


def arange(start, stop=None, step=1, dtype=None):
    """numpy.arange with symbolic scalars (Theano's T.arange): arange(stop) or arange(start,
    stop, step). dtype: integers give int64, floats their float dtype (Python floats floatX);
    a step of 0 raises ValueError (when the function runs, if the step is symbolic)."""
    if stop is None:
        start, stop = 0, start
    return _w(_t.arange(_v(start), _v(stop), _v(step), _dtype_name(dtype)))


def round(a, mode=None):
    """Elementwise rounding; mode "half_to_even" (the default, NumPy's) or "half_away_from_zero"."""
    mode = mode or "half_to_even"
    if mode == "half_to_even":
        return _w(_t.round_half_to_even(_v(a)))
    if mode == "half_away_from_zero":
        return _w(_t.round_half_away_from_zero(_v(a)))
    raise ValueError(f"round: mode must be 'half_to_even' or 'half_away_from_zero', got {mode!r}")


square = sqr


def _axes_pair(axes, what):
    try:
        a_axes, b_axes = axes
    except (TypeError, ValueError):
        raise TypeError(f"{what}: axes must be an int or a pair of axis lists, got {axes!r}") from None
    as_list = (lambda x: [int(x)] if isinstance(x, (int, _np.integer)) else [int(i) for i in x])
    return as_list(a_axes), as_list(b_axes)


def tensordot(a, b, axes=2):
    """numpy.tensordot: sum over a's last `axes` axes and b's first `axes`, or over the axes
    of a pair of lists ([a_axes], [b_axes])."""
    if isinstance(axes, (int, _np.integer)):
        return _w(_t.tensordot_n(_v(a), _v(b), int(axes)))
    a_axes, b_axes = _axes_pair(axes, "tensordot")
    return _w(_t.tensordot(_v(a), _v(b), a_axes, b_axes))


def batched_dot(a, b):
    """a[i] . b[i] for each i of the leading (batch) axis (Theano's batched_dot)."""
    return _w(_t.batched_dot(_v(a), _v(b)))


def batched_tensordot(x, y, axes=2):
    """tensordot per batch element (axis 0 of both); an int n sums x's last n axes against
    y's axes 1..n."""
    x, y = as_tensor_variable(x), as_tensor_variable(y)
    if isinstance(axes, (int, _np.integer)):
        a_axes, b_axes = list(range(x.ndim - int(axes), x.ndim)), list(range(1, int(axes) + 1))
    else:
        a_axes, b_axes = _axes_pair(axes, "batched_tensordot")
    return _w(_t.batched_tensordot(x._v, y._v, a_axes, b_axes))


def outer(x, y):
    """The outer product of x and y, both flattened."""
    return _w(_t.outer(_v(x), _v(y)))


def shape_padleft(t, n_ones=1):
    """t with n_ones broadcastable dims in front."""
    return _w(_t.shape_padleft(_v(t), int(n_ones)))


def shape_padright(t, n_ones=1):
    """t with n_ones broadcastable dims at the end."""
    return _w(_t.shape_padright(_v(t), int(n_ones)))


def shape_padaxis(t, axis):
    """t with a broadcastable dim inserted at `axis` (negative: from the end of the result)."""
    return _w(_t.shape_padaxis(_v(t), int(axis)))


# ---- issue 17: Theano's everyday names (C++ builders of src/api/tensor_extra.cpp) ----------
def _int_arg(x):
    """An int (a weak literal) or a symbolic integer scalar."""
    if isinstance(x, (_np.integer,)):
        x = int(x)
    return _v(x)


def eye(n, m=None, k=0, dtype=None):
    """An n x m matrix with ones on diagonal k (Theano's eye; n, m, k may be symbolic)."""
    return _w(_t.eye(_int_arg(n), _int_arg(n if m is None else m), _int_arg(k), _dtype_name(dtype)))


def identity_like(x):
    """eye with x's (matrix) shape and dtype."""
    return _w(_t.identity_like(_v(x)))


def tile(x, reps, ndim=None):
    """numpy.tile: reps is a list of ints or symbolic scalars; ndim (Theano's) the output rank."""
    if isinstance(reps, TensorVariable):
        if reps.ndim != 1 or reps.type.shape[0] is None:
            raise TypeError("tile: a symbolic reps must be a vector of static length, or pass a list")
        reps = [reps[i] for i in range(reps.type.shape[0])]
    reps = list(reps) if isinstance(reps, (list, tuple)) else [reps]
    if ndim is not None:
        if ndim < len(reps):
            raise ValueError(f"tile: ndim={ndim} is smaller than len(reps)={len(reps)}")
        reps = [1] * (ndim - len(reps)) + reps
    return _w(_t.tile(_v(x), [_int_arg(r) for r in reps]))


def repeat(x, repeats, axis=None):
    """numpy.repeat: repeats an int, a symbolic integer scalar or one count per element."""
    if isinstance(repeats, (list, tuple, _np.ndarray)):
        repeats = _np.asarray(repeats, dtype=_np.int64)
    elif isinstance(repeats, (int, _np.integer)):
        repeats = constant(int(repeats), dtype="int64")
    return _w(_t.repeat(_v(x), _v(repeats), None if axis is None else int(axis)))


def linspace(start, stop, num=50, endpoint=True):
    """numpy.linspace with symbolic start and stop (num static)."""
    return _w(_t.linspace(_v(start), _v(stop), int(num), bool(endpoint)))


def squeeze(x, axis=None):
    """x without its broadcastable dims (Theano's squeeze), or without the listed ones."""
    return _w(_t.squeeze(_v(x), _axes(axis)))


def addbroadcast(x, *axes):
    """x with `axes` broadcastable (their size is checked to be 1 when the function runs)."""
    return _w(_t.addbroadcast(_v(x), [int(a) for a in axes]))


def unbroadcast(x, *axes):
    """x with `axes` no longer broadcastable."""
    return _w(_t.unbroadcast(_v(x), [int(a) for a in axes]))


def patternbroadcast(x, broadcastable):
    """x with the broadcastable pattern `broadcastable` (a bool per dim)."""
    return _w(_t.patternbroadcast(_v(x), [bool(b) for b in broadcastable]))


def specify_shape(x, shape):
    """x, checked to have `shape` when the function runs; integer sizes become static."""
    x = as_tensor_variable(x)
    if isinstance(shape, TensorVariable):
        shape = [shape[i] for i in range(x.ndim)]
    return _w(_t.specify_shape(x._v, [_int_arg(s) for s in shape]))


def roll(x, shift, axis=None):
    """numpy.roll: elements shifted by `shift` (symbolic allowed) along `axis`, wrapping."""
    return _w(_t.roll(_v(x), _int_arg(shift), None if axis is None else int(axis)))


def diagonal(a, offset=0, axis1=0, axis2=1):
    """numpy.diagonal: the diagonal `offset` of the (axis1, axis2) planes, as the last dim."""
    return _w(_t.diagonal(_v(a), int(offset), int(axis1), int(axis2)))


def diag(v, k=0):
    """numpy.diag: a vector's matrix with it on diagonal k, or a matrix's diagonal k."""
    return _w(_t.diag(_v(v), int(k)))


_SORT_KINDS = ("quicksort", "mergesort", "heapsort", "stable")


def _sort_args(kind, order, what):
    if order is not None:
        raise _NotImpl(f"{what}: order= (structured arrays) is not available")
    if kind not in _SORT_KINDS:
        raise ValueError(f"{what}: kind must be one of {_SORT_KINDS}, got {kind!r}")


def sort(a, axis=-1, kind="quicksort", order=None):
    """numpy.sort along `axis` (None: the flattened tensor), ascending, NaN last. Every `kind`
    sorts stably (the values are the same whichever kind NumPy would use)."""
    _sort_args(kind, order, "sort")
    return _w(_t.sort(_v(a), None if axis is None else int(axis)))


def argsort(a, axis=-1, kind="quicksort", order=None):
    """numpy.argsort: int64 positions of the sorted values along `axis` (None: flattened). Ties
    keep their input order for every `kind` (a stable sort; NumPy's quicksort leaves their
    order open)."""
    _sort_args(kind, order, "argsort")
    return _w(_t.argsort(_v(a), None if axis is None else int(axis)))


def flatnonzero(a):
    """numpy.flatnonzero: int64 positions of a's non-zero elements in the flattened tensor."""
    return _w(_t.flatnonzero(_v(a)))


def nonzero(a, return_matrix=False):
    """numpy.nonzero: a tuple of int64 index vectors, one per dim; return_matrix=True gives
    them as the rows of one (a.ndim, count) matrix (Theano's)."""
    idx = [_w(v) for v in _t.nonzero(_v(a))]
    return stack(idx) if return_matrix else tuple(idx)


def nonzero_values(a):
    """a's non-zero elements, flattened (Theano's nonzero_values)."""
    return _w(_t.nonzero_values(_v(a)))


# ---- builders generated from the op registry ------------------------------------------
# Every builder of theon/scalar_ops.def and of the non-Custom rows of theon/ops.def gets its
# Theano-style name here unless a hand-written wrapper above already gives one (aliases,
# Theano's extra arguments). A new registry row needs no line in this file.
def _axis_scan(fn, name):
    def op(x, axis=None):
        return _w(fn(_v(x), None if axis is None else int(axis)))
    op.__name__ = name
    op.__doc__ = f"{name} along `axis` (None: over the flattened tensor)."
    return op


def _arg_reduce(fn, name):
    def op(x, axis=None, keepdims=False):
        return _w(fn(_v(x), None if axis is None else int(axis), bool(keepdims)))
    op.__name__ = name
    op.__doc__ = f"{name} along `axis` (None: of the flattened tensor); int64."
    return op


def _ternary(fn, name):
    def op(a, b, c):
        return _w(fn(_v(a), _v(b), _v(c)))
    op.__name__ = name
    op.__doc__ = f"Elementwise {name}."
    return op


_GENERATED = {"Elemwise1": _unary, "Elemwise2": _binary, "Elemwise3": _ternary, "AxisScan": _axis_scan,
              "Reduce": _reduction, "ArgReduce": _arg_reduce}
# Names Theano keeps in a submodule only: T.nnet.softsign, T.xlogx.xlogx / xlogy0.
_ELSEWHERE = {"softsign", "xlogx", "xlogy0"}
for _name, _signature in _t.generated_builders():
    # C++ spells names that clash with keywords with a trailing underscore (switch_, and_);
    # Python keeps it only where the bare name is a Python keyword too (and_, or_).
    _public = _name[:-1] if _name.endswith("_") and not _keyword.iskeyword(_name[:-1]) else _name
    if _public not in globals() and _public not in _ELSEWHERE:
        globals()[_public] = _GENERATED[_signature](getattr(_t, _name), _public)


# ---- dtype lists (Theano's theano.tensor.float_dtypes) ---------------------------------
# float16 is a storage dtype computed in float32 (docs/guide/float16.md), as in Theano.
float_dtypes = ["float16", "float32", "float64"]

# ---- gradients (theon.gradient) -----------------------------------------------------
from ..gradient import Lop, Rop, consider_constant, grad, hessian, jacobian, verify_grad  # noqa: E402
from ..printing import pprint  # noqa: E402  (T.pprint, as in Theano)

from . import extra_ops, nnet, sharedvar, signal, xlogx  # noqa: E402  (T.xlogx is the module, as in Theano)

from . import shared_randomstreams  # noqa: E402  (theano.tensor.shared_randomstreams)
# Theano's op classes (isinstance(node.op, T.Elemwise)) and the modules that define them.
from . import blas, blas_c, elemwise, subtensor  # noqa: E402
from .elemwise import CAReduce, DimShuffle, Elemwise  # noqa: E402
from .subtensor import AdvancedIncSubtensor1, AdvancedSubtensor1, IncSubtensor, Subtensor  # noqa: E402
from .._op_classes import Alloc, Dot, Join, Reshape  # noqa: E402  (theano.tensor.basic's, as T.Dot...)

__all__ = [n for n in dir() if not n.startswith("_")]
