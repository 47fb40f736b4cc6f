"""theon.tensor.shared_randomstreams: Theano's RandomStreams, on Theon's one random engine.

Each call (``uniform``, ``normal``, ...) makes a random variable with its own state, a shared
int64 vector ``[seed, calls]`` (``out.rng``), whose default update advances it every time a
function that draws the variable is called (``theon.function(..., no_default_updates=True)``
keeps it). The numbers are Philox4x32-10 of (seed, the variable's creation index, calls,
element index): identical on the CPU and the GPU, but not Theano's (docs/guide/random.md).
``theon.sandbox.rng_mrg.MRG_RandomStreams`` is the same engine with the MRG signatures.
"""
import math
import numbers
import operator

import numpy as np

from .. import _core
from .._variable import SharedVariable, TensorVariable, as_tensor_variable
from ..errors import TheonTypeError, not_available, warn_ignored_once


def _no_nstreams(name, nstreams):
    # MRG's number of parallel generator streams: Theon's draws come from one counter-based
    # stream per draw, the same on the CPU and the GPU, so there is nothing to choose.
    if nstreams is not None:
        warn_ignored_once(f"{name}(nstreams=...)", "each draw is one counter-based stream (the same values on the "
                                                   "CPU and the GPU)", stacklevel=4)

__all__ = ["RandomStreams", "RandomStateSharedVariable", "RandomState"]


class RandomState(np.ndarray):
    """The value of a random variable's state (``rv.rng.get_value()``): the int64 vector
    ``[seed, calls]``, with the methods of the NumPy RandomState that Theano's value is, so that
    Theano's idioms run::

        rng_val = rv_u.rng.get_value(borrow=True)   # Get the rng for rv_u
        rng_val.seed(89234)                         # seeds the generator
        rv_u.rng.set_value(rng_val, borrow=True)    # Assign back seeded rng

    and ``state = rng.get_state()`` ... ``rng.set_state(state)``. It is a copy: changing it
    changes the variable's state only through ``set_value``."""

    _STATE_KIND = "theon-philox4x32"

    def seed(self, seed=None):
        """Restarts the stream at `seed` (a fresh one from the OS's entropy for None, as NumPy)."""
        if seed is None:
            seed = int(np.random.SeedSequence().entropy % (1 << 62))
        try:
            seed = operator.index(seed)
        except TypeError:
            raise TheonTypeError(f"RandomState.seed: the seed must be an integer, got {seed!r}") from None
        if not 0 <= seed < (1 << 63):
            raise ValueError(f"RandomState.seed: the seed must be in [0, 2**63), got {seed}")
        self[0], self[1] = seed, 0

    def get_state(self):
        """('theon-philox4x32', array([seed, calls])): what set_state takes back."""
        return (self._STATE_KIND, np.array(self, dtype=np.int64))

    def set_state(self, state):
        kind, value = state if isinstance(state, tuple) and len(state) == 2 else (self._STATE_KIND, state)
        if isinstance(state, tuple) and len(state) != 2:
            kind = state[0] if state else None
        value = np.asarray(value) if kind == self._STATE_KIND else None
        if value is None or value.shape != (2,) or value.dtype.kind not in "iu":
            raise TheonTypeError(f"RandomState.set_state: expected a state from get_state() ('{self._STATE_KIND}', "
                                 f"[seed, calls]), got {state!r} (a NumPy RandomState's state does not apply: "
                                 "Theon's streams are counter-based)")
        self[:] = value


class RandomStateSharedVariable(SharedVariable):
    """A random variable's state (``rv.rng``; Theano's RandomStateSharedVariable): get_value()
    gives a :class:`RandomState` (the int64 vector [seed, calls]), set_value takes one back (or
    the vector)."""

    def get_value(self, borrow=False, return_internal_type=False):
        return np.array(super().get_value(), dtype=np.int64).view(RandomState)

    def set_value(self, value, borrow=False):
        super().set_value(np.array(value, dtype=np.int64), borrow=False)

_DEFAULT_SEED = 12345


def _param(x):
    """A Var for a distribution parameter (Python numbers stay weak literals)."""
    return as_tensor_variable(x)._v


def _dtype_name(dtype):
    if dtype is None:
        return None
    if dtype == "floatX":
        from ..configparser import config
        return str(config.floatX)
    return np.dtype(dtype).name if not isinstance(dtype, str) else dtype


class RandomStreams:
    """Theano's theano.tensor.shared_randomstreams.RandomStreams(seed)."""

    def __init__(self, seed=None, **kwargs):
        if kwargs:  # Theano's RandomStreams takes only a seed
            raise TypeError(f"RandomStreams() got an unexpected keyword argument {next(iter(kwargs))!r}")
        self._seed = _DEFAULT_SEED if seed is None else int(seed)
        self._r = _core.RandomStreams(self._seed)

    # ---- state ---------------------------------------------------------------------------
    def seed(self, seed=None):
        """Reseeds every random variable made so far (their call counts restart at 0)."""
        self._seed = _DEFAULT_SEED if seed is None else int(seed)
        self._r.seed(self._seed)

    @property
    def state_updates(self):
        """(state, next state) of every random variable, in creation order."""
        return [(RandomStateSharedVariable(s), TensorVariable(n)) for s, n in self._r.state_updates()]

    def updates(self):
        return self.state_updates

    # ---- helpers -------------------------------------------------------------------------
    def _size(self, size, ndim, params, what):
        """(list of size Vars, or None; the shape vector Var, or None) for the C++ call."""
        if size is None:
            # Theano: the shape the parameters broadcast to.
            shape = None
            vs = [as_tensor_variable(p) for p in params]
            b = vs[0]
            for v in vs[1:]:
                b = b + v
            dims, shape = ([], None) if b.ndim == 0 else (None, b.shape)
        elif isinstance(size, TensorVariable):
            if size.ndim != 1:
                raise TheonTypeError(f"{what}: size {size} must be an int vector or a tuple of sizes")
            dims, shape = None, size
        else:
            if isinstance(size, (numbers.Number, np.generic)):
                size = (size,)
            size = tuple(size.tolist() if isinstance(size, np.ndarray) else size)
            for s in size:
                if isinstance(s, TensorVariable):
                    continue  # an int scalar (the C++ side checks its dtype)
                try:
                    n = operator.index(s)  # NumPy's rule for sizes: 2.5 (or 2.0) is not one
                except TypeError:
                    raise TheonTypeError(f"{what}: size={size} has {s!r}, which is not an integer; "
                                         "sizes must be integers") from None
                if n < 0:
                    raise ValueError(f"{what}: negative size {n} in size={size}")
            dims, shape = [as_tensor_variable(s, dtype=None if isinstance(s, TensorVariable) else "int64")._v
                           for s in size], None
        if ndim is not None and dims is not None and len(dims) != ndim:
            raise ValueError(f"{what}: ndim={ndim} but size has {len(dims)} dimension(s)")
        return (dims or []), (shape._v if shape is not None else None)

    def _wrap(self, v):
        """The random variable, with Theano's attributes: .rng (its state), .update."""
        out = TensorVariable(v)
        state, nxt = self._r.state_update_of(v)
        out.rng = RandomStateSharedVariable(state)
        out.update = (out.rng, TensorVariable(nxt))
        return out

    # ---- distributions (Theano's signatures) ----------------------------------------------
    def uniform(self, size=None, low=0.0, high=1.0, ndim=None, dtype=None, nstreams=None):
        _no_nstreams("uniform", nstreams)
        dims, shape = self._size(size, ndim, [low, high], "uniform")
        return self._wrap(self._r.uniform(dims, shape, _param(low), _param(high), _dtype_name(dtype)))

    def normal(self, size=None, avg=0.0, std=1.0, ndim=None, dtype=None, nstreams=None, truncate=False):
        _no_nstreams("normal", nstreams)
        if truncate:
            return self._truncated_normal(size, avg, std, ndim, dtype)
        dims, shape = self._size(size, ndim, [avg, std], "normal")
        return self._wrap(self._r.normal(dims, shape, _param(avg), _param(std), _dtype_name(dtype)))

    def _truncated_normal(self, size, avg, std, ndim, dtype):
        """Theano's normal(truncate=True): the normal distribution cut at 2 standard deviations
        (nothing further out is drawn), as the inverse CDF of a uniform draw between Phi(-2) and
        Phi(2) (Keras's truncated_normal asks for it)."""
        from .. import tensor as T
        if size is None:  # the shape avg and std broadcast to, as normal()
            b = as_tensor_variable(avg) + as_tensor_variable(std)
            size = b.shape if b.ndim else ()
        tail = 0.5 * math.erfc(math.sqrt(2.0))  # Phi(-2)
        u = self.uniform(size, low=tail, high=1.0 - tail, ndim=ndim, dtype=dtype)
        out = avg + std * (T.erfinv(2.0 * u - 1.0) * math.sqrt(2.0))
        if dtype is not None and out.dtype != _dtype_name(dtype):
            out = out.astype(_dtype_name(dtype))
        out.rng, out.update = u.rng, u.update
        return out

    def binomial(self, size=None, n=1, p=0.5, ndim=None, dtype="int64", prob=None, nstreams=None):
        if prob is not None:
            p = prob
        _no_nstreams("binomial", nstreams)
        if not isinstance(n, (numbers.Integral, np.integer)):
            raise TheonTypeError(f"binomial: n must be a Python int in Theon, got {n!r}")
        dims, shape = self._size(size, ndim, [p], "binomial")
        return self._wrap(self._r.binomial(dims, shape, int(n), _param(p), _dtype_name(dtype)))

    def random_integers(self, size=None, low=0, high=1, ndim=None, dtype="int64"):
        dims, shape = self._size(size, ndim, [low, high], "random_integers")
        return self._wrap(self._r.random_integers(dims, shape, _param(low), _param(high), _dtype_name(dtype)))

    def choice(self, size=None, a=2, replace=True, p=None, ndim=None, dtype="int64"):
        if not isinstance(a, (numbers.Integral, np.integer)):
            raise TheonTypeError(f"choice: a must be an int (draws from range(a)) in Theon, got {a!r}")
        dims, shape = self._size(() if size is None else size, ndim, [], "choice")
        pv = None if p is None else as_tensor_variable(p)._v
        return self._wrap(self._r.choice(dims, shape, int(a), bool(replace), pv, _dtype_name(dtype)))

    def permutation(self, size=None, n=1, ndim=None, dtype="int64"):
        if size not in (None, (), []):
            raise NotImplementedError("permutation(size=...) (several permutations) is not available in Theon")
        if ndim not in (None, 0):
            raise TheonTypeError(f"permutation(ndim={ndim!r}): ndim is the rank of size, which is () here")
        return self._wrap(self._r.permutation(int(n), _dtype_name(dtype)))

    def multinomial(self, size=None, n=1, pvals=None, ndim=None, dtype="int64", nstreams=None):
        if pvals is None:
            pvals = [[0.5, 0.5]]
        _no_nstreams("multinomial", nstreams)
        pv = as_tensor_variable(pvals)
        if size is not None or ndim is not None:  # Theano's draw shape; here it follows pvals' rows
            raise not_available(f"multinomial(size={size!r}, ndim={ndim!r})",
                                "one draw per row of pvals (leave size and ndim as None)")
        if pv.ndim != 1:
            return self._wrap(self._r.multinomial(pv._v, int(n), _dtype_name(dtype)))
        one = self._wrap(self._r.multinomial(pv.dimshuffle("x", 0)._v, int(n), _dtype_name(dtype)))
        out = one[0]
        out.rng, out.update = one.rng, one.update
        return out
