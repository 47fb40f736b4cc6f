"""theon.tensor.signal.pool: Theano's ``theano.tensor.signal.pool``.

pool_2d / pool_3d pool the last 2 / 3 dims of a float32 or float64 tensor in mode 'max',
'sum', 'average_inc_pad' or 'average_exc_pad' (docs/guide/pooling.md). The window, stride and
padding must be given as Python ints (or NumPy/constant values), as Theano programs give them.
"""
import warnings

import numpy as np

from ... import _core
from ..._variable import TensorConstant, TensorVariable, _v, as_tensor_variable

_p = _core.pool

__all__ = ["pool_2d", "pool_3d", "max_pool_2d_same_size", "Pool", "PoolGrad", "MaxPoolGrad",
           "AveragePoolGrad", "DownsampleFactorMaxGradGrad"]

_MODES = ("max", "sum", "average_inc_pad", "average_exc_pad")


def _ints(value, nd, what):
    """A tuple of nd Python ints from ints, tuples, lists, NumPy arrays or constants."""
    if isinstance(value, TensorConstant):
        value = value.data
    elif isinstance(value, TensorVariable):
        raise TypeError(f"{what} must be constant integers (a tuple of {nd} ints), got the symbolic "
                        f"variable {value}")
    arr = np.asarray(value)
    if arr.ndim == 0:
        arr = np.repeat(arr, nd)
    if arr.ndim != 1 or arr.shape[0] != nd:
        raise ValueError(f"{what} must have {nd} entries, got {value!r}")
    if arr.dtype.kind not in "iub":
        raise TypeError(f"{what} must be integers, got {value!r}")
    return [int(e) for e in arr]


def _deprecated(fn, nd, ws, stride, pad, ds, st, padding):
    zero = (0,) * nd
    if ds is not None:
        if ws is not None:
            raise ValueError("You can't provide a tuple value to both 'ws' and 'ds'."
                             " Please provide a value only to 'ws'.")
        warnings.warn("DEPRECATION: the 'ds' parameter is not going to exist anymore as it is going to "
                      "be replaced by the parameter 'ws'.", stacklevel=3)
        ws = ds
    elif ws is None:
        raise ValueError("You must provide a tuple value for the window size.")
    if st is not None:
        if stride is not None:
            raise ValueError("You can't provide a tuple value to both 'st and 'stride'."
                             " Please provide a value only to 'stride'.")
        warnings.warn("DEPRECATION: the 'st' parameter is not going to exist anymore as it is going to "
                      "be replaced by the parameter 'stride'.", stacklevel=3)
        stride = st
    if padding is not None:
        if pad is not None and tuple(_ints(pad, nd, "pad")) != zero:
            raise ValueError("You can't provide a tuple value to both 'padding' and pad."
                             "  Please provide a value only to pad.")
        warnings.warn("DEPRECATION: the 'padding' parameter is not going to exist anymore as it is going "
                      "to be replaced by the parameter 'pad'.", stacklevel=3)
        pad = padding
    ws = _ints(ws, nd, f"{fn}: ws")
    stride = ws if stride is None else _ints(stride, nd, f"{fn}: stride")
    pad = list(zero) if pad is None else _ints(pad, nd, f"{fn}: pad")
    return ws, stride, pad


def _ignore_border(fn, ignore_border):
    if ignore_border is None:
        warnings.warn(f"{fn}() will have the parameter ignore_border default value changed to True "
                      "(currently False). To have consistent behavior with all Theano versions, "
                      "explicitly add the parameter ignore_border=True.", stacklevel=3)
        return False
    return bool(ignore_border)


def _pool(nd, input, ws, ignore_border, stride, pad, mode, ds, st, padding):
    fn = f"pool_{nd}d"
    ws, stride, pad = _deprecated(fn, nd, ws, stride, pad, ds, st, padding)
    x = as_tensor_variable(input)
    if x.ndim < nd:
        raise NotImplementedError(f"{fn} requires a dimension >= {nd}")
    ignore_border = _ignore_border(fn, ignore_border)
    build = _p.pool_2d if nd == 2 else _p.pool_3d
    return TensorVariable(build(x._v, ws, ignore_border, stride, pad, str(mode)))


def pool_2d(input, ws=None, ignore_border=None, stride=None, pad=(0, 0), mode='max', ds=None, st=None,
            padding=None):
    """Pools the last 2 dims of input (rank >= 2) over windows ws (Theano's pool_2d).

    stride defaults to ws; pad zeros on both sides (pad < ws, only with ignore_border=True);
    ignore_border=False keeps the partial windows at the ends (default False, with a warning,
    as Theano); mode 'max', 'sum', 'average_inc_pad' (padding counts) or 'average_exc_pad'.
    ds, st and padding are Theano's deprecated names of ws, stride and pad.
    """
    return _pool(2, input, ws, ignore_border, stride, pad, mode, ds, st, padding)


def pool_3d(input, ws=None, ignore_border=None, stride=None, pad=(0, 0, 0), mode='max', ds=None, st=None,
            padding=None):
    """Pools the last 3 dims of input (rank >= 3): pool_2d's rules, three entries each."""
    return _pool(3, input, ws, ignore_border, stride, pad, mode, ds, st, padding)


def max_pool_2d_same_size(input, patch_size):
    """input's shape with each non-overlapping patch keeping only its maximum (zeros elsewhere)."""
    return TensorVariable(_p.max_pool_2d_same_size(_v(input), _ints(patch_size, 2, "patch_size")))


class _PoolOpBase:
    """Theano's pooling op classes: parameters at construction, the op applied by calling it."""
    __props__ = ("ignore_border", "mode", "ndim")

    def __init__(self, ignore_border=False, mode="max", ndim=2):
        if mode == "max_deterministic":
            mode = "max"
        if mode not in _MODES:
            raise ValueError("Pool mode parameter only support 'max', 'sum', 'average_inc_pad' and "
                             f"'average_exc_pad'. Got {mode}")
        if ndim not in (2, 3):
            raise NotImplementedError(f"pooling over {ndim} dims: only 2 and 3 are supported")
        self.ignore_border = bool(ignore_border)
        self.mode = mode
        self.ndim = ndim

    def _params(self, ws, stride, pad):
        fn = type(self).__name__
        ws = _ints(ws, self.ndim, f"{fn}: ws")
        stride = ws if stride is None else _ints(stride, self.ndim, f"{fn}: stride")
        pad = [0] * self.ndim if pad is None else _ints(pad, self.ndim, f"{fn}: pad")
        return ws, stride, pad

    def __eq__(self, other):
        return type(self) is type(other) and all(getattr(self, k) == getattr(other, k) for k in self.__props__)

    def __hash__(self):
        return hash((type(self),) + tuple(getattr(self, k) for k in self.__props__))

    def __repr__(self):
        return f"{type(self).__name__}{{ignore_border={self.ignore_border}, mode='{self.mode}', ndim={self.ndim}}}"


class Pool(_PoolOpBase):
    """Theano's Pool(ignore_border, mode, ndim): ``Pool(True)(x, ws, stride, pad)``."""

    def __call__(self, x, ws, stride=None, pad=None):
        ws, stride, pad = self._params(ws, stride, pad)
        build = _p.pool_2d if self.ndim == 2 else _p.pool_3d
        return TensorVariable(build(_v(x), ws, self.ignore_border, stride, pad, self.mode))

    @staticmethod
    def out_shape(imgshape, ws=None, ignore_border=False, stride=None, pad=None, ndim=2, ds=None, st=None,
                  padding=None):
        """The output shape of Pool for an input of shape imgshape (integers), Theano's rule."""
        ws, stride, pad = _deprecated("Pool.out_shape", ndim, ws, stride, pad, ds, st, padding)
        out = list(imgshape[:-ndim])
        for i in range(ndim):
            n = int(imgshape[-ndim + i])
            r = n + 2 * pad[i]
            if n == 0:
                out.append(0)
            elif ignore_border:
                out.append(max((r - ws[i]) // stride[i] + 1, 0))
            elif stride[i] >= ws[i]:
                out.append((r - 1) // stride[i] + 1)
            else:
                out.append(max(0, (r - 1 - ws[i] + stride[i]) // stride[i]) + 1)
        return out


class PoolGrad(_PoolOpBase):
    """Base of Theano's pooling gradient classes."""


class MaxPoolGrad(PoolGrad):
    """Theano's MaxPoolGrad(ignore_border, ndim)(x, maxout, gz, ws, stride, pad)."""

    def __init__(self, ignore_border, ndim=2):
        super().__init__(ignore_border, "max", ndim)

    def __call__(self, x, maxout, gz, ws, stride=None, pad=None):
        ws, stride, pad = self._params(ws, stride, pad)
        return TensorVariable(_p.max_pool_grad(_v(x), _v(maxout), _v(gz), ws, self.ignore_border, stride, pad))


class AveragePoolGrad(PoolGrad):
    """Theano's AveragePoolGrad(ignore_border, mode, ndim)(x, gz, ws, stride, pad)."""

    def __init__(self, ignore_border, mode="average_inc_pad", ndim=2):
        if mode == "max":
            raise ValueError("AveragePoolGrad mode must be 'sum', 'average_inc_pad' or 'average_exc_pad'")
        super().__init__(ignore_border, mode, ndim)

    def __call__(self, x, gz, ws, stride=None, pad=None):
        ws, stride, pad = self._params(ws, stride, pad)
        return TensorVariable(_p.average_pool_grad(_v(x), _v(gz), ws, self.ignore_border, stride, pad, self.mode))


class DownsampleFactorMaxGradGrad(_PoolOpBase):
    """Theano's DownsampleFactorMaxGradGrad: made by grad() of a MaxPoolGrad (second
    derivatives of max pooling); not applied directly."""

    def __init__(self, ignore_border, mode="max", ndim=2):
        super().__init__(ignore_border, mode, ndim)

    def __call__(self, *args, **kwargs):
        raise NotImplementedError("DownsampleFactorMaxGradGrad is built by theon.grad of a max-pool gradient; "
                                  "differentiate MaxPoolGrad instead of applying it")
