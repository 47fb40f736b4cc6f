"""Symbolic variables: TensorVariable (Theano's), constants, shared variables, and the
conversion of Python values into graph variables.

Python ints and floats in expressions are *weak* literals (NEP 50): ``x * 2.0`` keeps x's
dtype. NumPy scalars and arrays are strong constants.
"""
import weakref

import numpy as np

from . import _core
from .errors import TheonTypeError, not_available

_SUPPORTED = frozenset(np.dtype(n) for n in
                       ("bool", "int8", "int16", "int32", "int64", "uint8", "float16", "float32", "float64"))
# NumPy dtypes Theon has no equivalent of: what they are called in errors.
_REFUSED_KINDS = {"c": "complex", "O": "object", "S": "bytes", "U": "str", "M": "datetime", "m": "timedelta",
                  "V": "structured (void)"}
# Unsigned integers wider than uint8 have no Theon dtype: each converts to the smallest signed
# dtype that holds all its values (uint64 to int64 when the values fit).
_WIDER = {np.dtype("uint16"): np.dtype("int32"), np.dtype("uint32"): np.dtype("int64"),
          np.dtype("uint64"): np.dtype("int64")}
_INT64_MAX = np.iinfo(np.int64).max
SUPPORTED_TEXT = ("bool, int8, int16, int32, int64, uint8, float16, float32, float64; uint16, uint32 and uint64 convert to "
                  "int32, int64 and int64, big-endian arrays to native byte order")


def _theon_array(a, what, target=None):
    """`a` (a NumPy array) as an array of a dtype Theon has, converting where no value changes:
    big-endian to native byte order, uint16 to int32, uint32 to int64, uint64 to int64 when every
    value fits; with a `target` dtype (a function input's, a shared variable's) a safe cast goes
    straight there. Masked arrays and complex, object, str, bytes, datetime, structured dtypes raise
    TheonTypeError naming the dtype and what is supported. An array already fine is returned as is."""
    if isinstance(a, np.ma.MaskedArray):
        raise TheonTypeError(f"{what}: a masked array (numpy.ma) has no Theon equivalent and its mask would be lost; "
                             "pass a.filled(value) or a.data")
    dt = a.dtype
    if dt in _SUPPORTED:
        return a
    kind = _REFUSED_KINDS.get(dt.kind)
    if kind is not None:
        kind = "" if kind in str(dt) else f" ({kind})"
        raise TheonTypeError(f"{what}: theon has no dtype {dt}{kind}; supported: {SUPPORTED_TEXT}")
    native = dt.newbyteorder("=")
    if target is not None and np.can_cast(dt, target, "safe"):
        return a.astype(target)
    if native in _SUPPORTED:
        return a.astype(native)
    wide = _WIDER.get(native)
    if wide is None:
        raise TheonTypeError(f"{what}: theon has no dtype {dt}; supported: {SUPPORTED_TEXT}")
    if native == np.uint64 and a.size:
        big = a > _INT64_MAX
        if big.any():
            bad = a[big].flat[0]
            raise TheonTypeError(f"{what}: the uint64 value {bad} does not fit in int64 (theon has no uint64: "
                                 "uint64 arrays convert to int64 when every value fits)")
    return a.astype(wide)


def _floatX():
    return _core.config.get("floatX")


def dtype_name(dtype):
    """'float32' for 'float32', np.float32, np.dtype('float32'); 'floatX' is config.floatX."""
    if dtype is None:
        return None
    if isinstance(dtype, str):
        if dtype == "floatX":
            return _floatX()
        return _core.dtype_name(dtype)
    return np.dtype(dtype).name


def _wrap(v):
    return TensorVariable(v) if v is not None else None


def _as_array(value, dtype=None):
    """A NumPy array for a Python/NumPy value: Python floats (and float lists) take floatX."""
    if isinstance(value, np.ndarray):
        a = value
    else:
        a = np.asarray(value)
        if dtype is None and a.dtype == np.float64 and not isinstance(value, np.generic):
            dtype = _floatX()
    if dtype is not None:
        a = a.astype(dtype_name(dtype), copy=False)
    if a.dtype == object and not isinstance(value, np.ndarray):
        raise TheonTypeError(f"cannot make a tensor from {type(value).__name__} {value!r}")
    return _theon_array(a, "constant")


def as_tensor_variable(x, name=None, ndim=None, dtype=None):
    """A TensorVariable for x: itself, a weak literal for Python numbers, a constant otherwise."""
    if isinstance(x, TensorVariable):
        v = x
        if dtype is not None and v.dtype != dtype_name(dtype):
            v = v.astype(dtype)
    elif isinstance(x, _core.Var):
        v = TensorVariable(x)
    elif dtype is None and not isinstance(x, (bool, np.bool_)) and type(x) in (int, float) and \
            (type(x) is float or -(1 << 53) <= x <= (1 << 53)):
        v = TensorVariable(_core.literal(float(x), type(x) is int))
    elif isinstance(x, Variable):
        raise TheonTypeError(f"{x} is a generic Variable of type {x.type!r}, not a tensor: Theon's ops compute "
                             "tensors (make tensor inputs with T.matrix('x') or a TensorType, e.g. T.dmatrix('x'))")
    elif isinstance(x, (list, tuple)) and any(isinstance(e, TensorVariable) for e in x):
        from . import tensor
        v = tensor.stack(list(x))
    else:
        v = TensorConstant(_as_array(x, dtype), name)
        name = None
    if ndim is not None and v.ndim != ndim:
        from .errors import ShapeError
        raise ShapeError(f"as_tensor_variable: expected a {ndim}-d tensor, got {v.type}")
    if name is not None:
        v.name = name
    return v


def _v(x):
    return as_tensor_variable(x)._v


def _bound(b):
    if b is None or isinstance(b, _core.Var):
        return b
    if isinstance(b, TensorVariable):
        return b._v
    if isinstance(b, (bool, np.bool_)):
        raise TheonTypeError(f"slice bounds must be integers, got {b!r}")
    return int(b.__index__())


def _index_item(a):
    if isinstance(a, slice):
        return slice(_bound(a.start), _bound(a.stop), _bound(a.step))
    if isinstance(a, TensorVariable):
        if a.dtype == "bool":
            raise not_available("boolean mask indexing", "index with integer arrays (e.g. T.nonzero is not there yet)")
        return a._v
    if isinstance(a, (bool, np.bool_)):
        raise not_available("boolean indexing", "use integer indices")
    if isinstance(a, (list, tuple, np.ndarray)):
        arr = np.asarray(a)
        if arr.dtype == np.bool_:
            raise not_available("boolean mask indexing", "use integer indices")
        if arr.dtype.kind not in "iu":
            raise TheonTypeError(f"index arrays must be integers, got dtype {arr.dtype}")
        return _core.constant(_theon_array(arr, "index array").astype(np.int64))
    try:
        return int(a.__index__())
    except AttributeError:
        raise TheonTypeError(f"indices must be integers, slices, None, ... or integer variables, "
                             f"got {type(a).__name__}") from None


_NAMED_BROADCASTABLE = {(): "scalar", (False,): "vector", (False, True): "col", (True, False): "row",
                        (False, False): "matrix"}


class TensorType:
    """Theano's TensorType(dtype, broadcastable): ``T.dscalar``, ``T.fmatrix``... are instances.
    Calling one makes a variable (``T.dscalar('x')``), and ``x.type == T.dscalar`` holds for
    it. ``shape=`` (a Theon extension) declares static sizes: None or -1 for unknown."""

    def __init__(self, dtype, broadcastable=None, name=None, shape=None):
        self.dtype = dtype_name(dtype)
        if shape is None:
            shape = [1 if b else -1 for b in (broadcastable or ())]
        self.shape = tuple(-1 if s is None else int(s) for s in shape)
        self.broadcastable = tuple(s == 1 for s in self.shape)
        self.name = name

    @property
    def ndim(self):
        return len(self.shape)

    def __call__(self, name=None):
        return TensorVariable(_core.tensor.tensor(self.dtype, list(self.shape), name or ""))

    make_variable = __call__

    # Equal as in Theano: dtype and broadcastable pattern. Theon's static sizes other than 1 (a
    # constant's, x * np.ones(3)'s) are an extension Theano's types do not have: a float64 vector
    # of static size 3 is still a T.dvector.
    def __eq__(self, other):
        return isinstance(other, TensorType) and (self.dtype, self.broadcastable) == (other.dtype, other.broadcastable)

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash((self.dtype, self.broadcastable))

    def __str__(self):
        if self.name:
            return self.name
        if any(s > 1 or s == 0 for s in self.shape):  # static sizes Theano's types cannot say
            dims = ", ".join("?" if s < 0 else str(s) for s in self.shape)
            return f"TensorType({self.dtype}, ({dims}{',' if len(self.shape) == 1 else ''}))"
        bc = self.broadcastable
        pattern = _NAMED_BROADCASTABLE.get(bc) or (str(bc) if any(bc) else f"{len(bc)}D")
        return f"TensorType({self.dtype}, {pattern})"

    __repr__ = __str__


# One Python wrapper per live graph variable: TensorVariable(v) for a graph variable that already
# has a wrapper returns that wrapper, so attributes set on a variable (x.tag.test_value, a
# library's own metadata) are found wherever the variable comes back. Weak: the entry goes with
# the wrapper (whose Var keeps the graph variable, and so its id, alive until then).
_WRAPPERS = weakref.WeakValueDictionary()


class _Tag:
    """Theano's ``var.tag``: a scratchpad for anything. ``tag.test_value`` is checked as Theano's
    is: converted to the variable's dtype where no value changes, and of its rank."""

    def __init__(self, owner=None):
        object.__setattr__(self, "_owner", weakref.ref(owner) if owner is not None else None)

    def __setattr__(self, name, value):
        owner = self._owner() if self._owner is not None else None
        if name == "test_value" and owner is not None:
            value = _checked_test_value(owner, value)
        object.__setattr__(self, name, value)

    def __repr__(self):
        return "scratchpad" + repr({k: v for k, v in self.__dict__.items() if k != "_owner"})


def _checked_test_value(var, value):
    what = f"{var}.tag.test_value"
    a = value if isinstance(value, np.ndarray) else np.asarray(value)
    a = _theon_array(a, what, target=np.dtype(var.dtype))
    if a.dtype.name != var.dtype:
        # As Theano's TensorType.filter: a Python number or list converts when no value changes
        # (x.tag.test_value = 42 for a float32 x), a Python float to floatX always; an array
        # only by a safe cast.
        if not isinstance(value, np.ndarray) and not np.can_cast(a.dtype, var.dtype, "safe"):
            conv = a.astype(var.dtype)
            lossless = np.array_equal(conv, a, equal_nan=a.dtype.kind == "f" and conv.dtype.kind == "f")
            if lossless or (type(value) is float and var.dtype == _floatX()):
                a = conv
        if a.dtype.name != var.dtype and not np.can_cast(a.dtype, var.dtype, "safe"):
            raise TheonTypeError(f"{what}: a {a.dtype} value for a {var.dtype} variable would lose precision "
                                 f"(convert it first, e.g. value.astype('{var.dtype}'))")
        a = a.astype(var.dtype)
    if a.ndim != var.ndim:
        raise TheonTypeError(f"{what}: a value of shape {a.shape} for {var.type} (rank {var.ndim})")
    return a


_MISSING = object()
_computing_test_value = False


def _test_value_of(root):
    w = _WRAPPERS.get(root.id())
    tag = w.__dict__.get("tag") if w is not None else None
    return getattr(tag, "test_value", _MISSING) if tag is not None else _MISSING


def _compute_test_value(var, mode):
    """Theano's compute_test_value: the value of a new op result from the test values of the
    inputs it depends on (so a shape error shows now, not when a function runs). An input
    without one: ValueError with 'raise' (and 'pdb'), a warning with 'warn', nothing with 'ignore'."""
    global _computing_test_value
    roots = _core.symbolic_inputs([var._v])
    values = []
    for r in roots:
        v = _test_value_of(r)
        if v is _MISSING:
            name = r.name or f"<{r.type_str()}>"
            msg = (f"cannot compute the test value of {var}: its input {name} has no test value "
                   f"(set {name}.tag.test_value, or config.compute_test_value='off')")
            if mode == "warn":
                import warnings
                warnings.warn(msg, stacklevel=3)
            elif mode != "ignore":
                raise ValueError(msg)
            return
        values.append(v)
    from .compile import function
    _computing_test_value = True  # compiling makes variables too: they need no test value
    try:
        f = function([TensorVariable(r) for r in roots], var, mode="FAST_COMPILE", on_unused_input="ignore")
    finally:
        _computing_test_value = False
    var.tag.test_value = f(*values)


class Variable:
    """Theano's generic graph variable (``theano.Variable``, ``theano.gof.Variable``):
    ``Variable(type, owner=None, index=None, name=None)``, with Theano's fields ``type``,
    ``owner``, ``index``, ``name`` and ``tag``. Every Theon tensor variable (TensorVariable,
    constants, shared variables) is one, so ``isinstance(x, theano.Variable)`` holds for them.

    A Variable made directly is a graph leaf of the user's own type (Theano programs make them
    for their own ops' types); Theon's ops compute tensors, so giving one to a tensor op raises
    TypeError (make tensor inputs with ``T.matrix('x')`` or a TensorType: ``T.dmatrix('x')``)."""

    def __init__(self, type, owner=None, index=None, name=None):
        from .gof.graph import Apply
        if owner is not None and not isinstance(owner, Apply):
            raise TheonTypeError(f"Variable: owner must be an Apply node or None, got {owner!r}")
        if index is not None and not isinstance(index, int):
            raise TheonTypeError(f"Variable: index must be an int or None, got {index!r}")
        if name is not None and not isinstance(name, str):
            raise TheonTypeError(f"Variable: name must be a string or None, got {name!r}")
        self.__dict__.update(type=type, owner=owner, index=index, name=name)

    @property
    def tag(self):
        t = self.__dict__.get("tag")
        if t is None:
            t = self.__dict__["tag"] = _Tag()
        return t

    @tag.setter
    def tag(self, value):
        self.__dict__["tag"] = value

    def clone(self):
        """A new variable of the same type and name, without owner (Theano's Variable.clone)."""
        c = Variable(self.type, None, None, self.name)
        c.tag = _copy_tag(self.tag)
        return c

    def __str__(self):
        if self.name is not None:
            return self.name
        return f"<{self.type}>"

    __repr__ = __str__


def _copy_tag(tag):
    import copy
    c = _Tag()
    for k, v in tag.__dict__.items():
        if k != "_owner":
            object.__setattr__(c, k, copy.copy(v))
    return c


class TensorVariable(Variable):
    """A symbolic tensor (Theano's TensorVariable). Operators build graph nodes.

    Variables take any attribute (``x.my_info = ...``; ``x.tag`` is Theano's scratchpad), kept
    for as long as the variable is alive in Python. NumPy defers to them: ``numpy_array * x``
    is symbolic, as ``x * numpy_array`` is."""

    __array_ufunc__ = None  # numpy_array <op> x calls x.__r<op>__ (and np.add(a, x) refuses)
    __array_priority__ = 1000

    def __new__(cls, *args, **kwargs):
        v = args[0] if args else None
        if isinstance(v, _core.Var):
            known = _WRAPPERS.get(v.id())
            if known is not None and isinstance(known, cls):
                return known
        return super().__new__(cls)

    def __init__(self, v):
        if self.__dict__.get("_v") is not None:  # the wrapper this graph variable already had
            return
        self._v = v
        _WRAPPERS[v.id()] = self
        if not _computing_test_value and v.is_output:
            mode = _core.config.get("compute_test_value")
            if mode != "off":
                _compute_test_value(self, mode)

    @property
    def tag(self):
        t = self.__dict__.get("tag")
        if t is None:
            t = self.__dict__["tag"] = _Tag(self)
        return t

    @tag.setter
    def tag(self, value):
        self.__dict__["tag"] = value

    # ---- identity: one graph variable behind each wrapper ----
    def __eq__(self, other):
        return isinstance(other, TensorVariable) and other._v.id() == self._v.id()

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash(self._v.id())

    def __reduce__(self):  # pickle.dump: theon/_pickle.py
        from ._pickle import reduce_variable
        return reduce_variable(self)

    def __setstate__(self, state):  # pickle.load
        from ._pickle import set_state
        set_state(self, state)

    def __bool__(self):
        # As in Theano: a variable is true (`if not W:` tests that W was given), except the result
        # of <, <=, > or >=, which raises so that `a < b < c` (Python's (a < b) and (b < c),
        # silently b < c) is caught.
        if self.__dict__.get("_comparison"):
            raise TheonTypeError(f"{self} (a comparison a < b, a <= b, a > b or a >= b) has no truth value: "
                                 "`a < b < c` and `if a < b:` are not symbolic; use T.and_(a < b, b < c) "
                                 "or T.switch(a < b, ...)")
        return True

    def __len__(self):
        raise TheonTypeError("len() of a symbolic variable: use x.shape[0]")

    def __iter__(self):
        n = self._v.static_shape[0] if self.ndim else -1
        if n < 0:
            raise TheonTypeError("cannot iterate over a symbolic tensor without a static first dimension")
        for i in range(n):
            yield self[i]

    # ---- attributes ----
    @property
    def name(self):
        return self._v.name or None

    @name.setter
    def name(self, value):
        self._v.set_name(value or "")

    @property
    def dtype(self):
        return self._v.dtype

    @property
    def ndim(self):
        return self._v.ndim

    @property
    def broadcastable(self):
        return tuple(self._v.broadcastable)

    @property
    def type(self):
        return TensorType(self.dtype, shape=self._v.static_shape)

    @property
    def default_update(self):
        raise AttributeError(f"{self} has no default_update (only a shared variable has one)")

    @default_update.setter
    def default_update(self, value):
        # Theano keeps it and never uses it: a silent no-op; Theon says so.
        raise TheonTypeError(f"{self}.default_update = ...: only a shared variable has a default update "
                             "(function() applies it); this variable is not shared")

    @property
    def index(self):
        """Which output of its owner this variable is (None for a leaf), as in Theano."""
        info = _core.var_owner(self._v)
        return info.index if info is not None else None

    @property
    def owner(self):
        """The node computing this variable (theon.gof.graph.Apply: .op, .inputs, .outputs), or
        None for a symbolic input, a shared variable or a constant (Theano's ``var.owner``)."""
        from .gof.graph import owner
        return owner(self)

    @property
    def shape(self):
        return _shape_of(self)

    @property
    def size(self):
        return TensorVariable(_core.tensor.size(self._v))

    @property
    def T(self):
        return TensorVariable(self._v.T())

    def __str__(self):
        return self.name or f"<{type(self).__name__} {self._v.type_str()}>"

    def __repr__(self):
        # Theano's: with config.print_test_value, the test value follows on a second line.
        if _core.config.get("print_test_value"):
            tag = self.__dict__.get("tag")
            if tag is not None and "test_value" in tag.__dict__:
                return f"{self}\n{tag.test_value!r}"
        return str(self)

    # ---- operators ----
    def __add__(self, o): return _bin(_core.tensor.add, self, o)
    def __radd__(self, o): return _bin(_core.tensor.add, o, self)
    def __sub__(self, o): return _bin(_core.tensor.sub, self, o)
    def __rsub__(self, o): return _bin(_core.tensor.sub, o, self)
    def __mul__(self, o): return _bin(_core.tensor.mul, self, o)
    def __rmul__(self, o): return _bin(_core.tensor.mul, o, self)
    def __truediv__(self, o): return _bin(_core.tensor.true_div, self, o)
    def __rtruediv__(self, o): return _bin(_core.tensor.true_div, o, self)
    def __floordiv__(self, o): return _bin(_core.tensor.floor_div, self, o)
    def __rfloordiv__(self, o): return _bin(_core.tensor.floor_div, o, self)
    def __mod__(self, o): return _bin(_core.tensor.mod, self, o)
    def __rmod__(self, o): return _bin(_core.tensor.mod, o, self)
    def __pow__(self, o): return _bin(_core.tensor.pow, self, o)
    def __rpow__(self, o): return _bin(_core.tensor.pow, o, self)
    def __matmul__(self, o): return _bin(_core.tensor.matmul, self, o)
    def __rmatmul__(self, o): return _bin(_core.tensor.matmul, o, self)
    def __lt__(self, o): return _comparison(_core.tensor.lt, self, o)
    def __gt__(self, o): return _comparison(_core.tensor.gt, self, o)
    def __le__(self, o): return _comparison(_core.tensor.le, self, o)
    def __ge__(self, o): return _comparison(_core.tensor.ge, self, o)
    def __and__(self, o): return _bin(_core.tensor.and_, self, o)
    def __rand__(self, o): return _bin(_core.tensor.and_, o, self)
    def __or__(self, o): return _bin(_core.tensor.or_, self, o)
    def __ror__(self, o): return _bin(_core.tensor.or_, o, self)
    def __xor__(self, o): return _bin(_core.tensor.xor_, self, o)
    def __rxor__(self, o): return _bin(_core.tensor.xor_, o, self)
    def __neg__(self): return TensorVariable(_core.tensor.neg(self._v))
    def __pos__(self): return self
    def __abs__(self): return TensorVariable(_core.tensor.abs(self._v))
    def __invert__(self): return TensorVariable(_core.tensor.invert(self._v))

    # ---- indexing ----
    def __getitem__(self, args):
        # Theano (and NumPy before 1.23) read a list holding a slice, None or Ellipsis as a
        # tuple of indices: x[[slice(0, 2), 1]] is x[0:2, 1].
        if isinstance(args, list) and any(isinstance(a, slice) or a is None or a is Ellipsis for a in args):
            args = tuple(args)
        if not isinstance(args, tuple):
            args = (args,)
        ell = [k for k, a in enumerate(args) if a is Ellipsis]
        if len(ell) > 1:
            raise IndexError("an index can only have a single ellipsis ('...')")
        if ell:
            n_real = sum(1 for a in args if a is not None and a is not Ellipsis)
            k = ell[0]
            args = args[:k] + (slice(None),) * max(self.ndim - n_real, 0) + args[k + 1:]
        items, newaxes, out = [], [], 0
        for a in args:
            if a is None:
                newaxes.append(out)
                out += 1
                continue
            it = _index_item(a)
            items.append(it)
            if isinstance(it, slice):
                out += 1
            elif isinstance(it, _core.Var):
                out += it.ndim
        try:
            res = TensorVariable(self._v.getitem(items)) if items else self
        except _core.TheonIndexError:
            of = self.__dict__.get("_theon_shape_of")
            if of is None:
                raise
            # x.shape[i] with i beyond x's rank: Theano builds the graph and the index fails when
            # the function runs; so does Theon, indexing a view of the shape without its static length.
            dyn = TensorVariable(self._v.reshape_sym(_core.tensor.shape(self._v)))
            if of.name:
                dyn.name = f"{of.name}.shape"
            res = TensorVariable(dyn._v.getitem(items))
        if newaxes:
            pattern, d = [], 0
            for p in range(res.ndim + len(newaxes)):
                if p in newaxes:
                    pattern.append("x")
                else:
                    pattern.append(d)
                    d += 1
            res = res.dimshuffle(*pattern)
        return res

    # ---- shape methods ----
    def dimshuffle(self, *pattern):
        if len(pattern) == 1 and isinstance(pattern[0], (list, tuple)):
            pattern = pattern[0]
        return TensorVariable(self._v.dimshuffle([-1 if p == "x" else int(p) for p in pattern]))

    def transpose(self, *axes):
        if len(axes) == 1 and isinstance(axes[0], (list, tuple)):
            axes = axes[0]
        if len(axes) == 1 and axes[0] is None:
            axes = ()
        return TensorVariable(self._v.transpose([int(a) for a in axes]))

    def reshape(self, shape, ndim=None):
        from .tensor import reshape
        return reshape(self, shape, ndim)

    def flatten(self, ndim=1, outdim=None):
        return TensorVariable(self._v.flatten(outdim if outdim is not None else ndim))

    def astype(self, dtype):
        return TensorVariable(self._v.astype(dtype_name(dtype)))

    def clone(self):
        """A new symbolic input of this variable's type and name, without owner; the tag is
        copied (Theano's Variable.clone)."""
        c = self.type(self.name)
        c.tag = _copy_tag(self.tag)
        return c

    def copy(self, name=None):
        """A symbolic copy (a new variable with the same value), named `name`; attributes and
        the tag are not copied (Theano's x.copy())."""
        c = TensorVariable(self._v.getitem([slice(None)] * self.ndim))
        c.name = name
        return c

    def transfer(self, target):
        """This variable moved to the context `target` (Theano's ``x.transfer('dev1')``; ``'cpu'``
        and ``'cudaN'`` name devices' own contexts); the gradient flows back through it."""
        from ._contexts import transfer
        return transfer(self, target)

    # ---- reductions and friends (theon.tensor's functions) ----
    def sum(self, axis=None, dtype=None, keepdims=False, acc_dtype=None):
        from . import tensor
        return tensor.sum(self, axis, dtype=dtype, keepdims=keepdims, acc_dtype=acc_dtype)

    def mean(self, axis=None, dtype=None, keepdims=False, acc_dtype=None):
        from . import tensor
        return tensor.mean(self, axis, dtype=dtype, keepdims=keepdims, acc_dtype=acc_dtype)

    def prod(self, axis=None, dtype=None, keepdims=False, acc_dtype=None):
        from . import tensor
        return tensor.prod(self, axis, dtype=dtype, keepdims=keepdims, acc_dtype=acc_dtype)

    def max(self, axis=None, keepdims=False):
        from . import tensor
        return tensor.max(self, axis, keepdims)

    def min(self, axis=None, keepdims=False):
        from . import tensor
        return tensor.min(self, axis, keepdims)

    def any(self, axis=None, keepdims=False):
        from . import tensor
        return tensor.any(self, axis, keepdims)

    def all(self, axis=None, keepdims=False):
        from . import tensor
        return tensor.all(self, axis, keepdims)

    def argmax(self, axis=None, keepdims=False):
        from . import tensor
        return tensor.argmax(self, axis, keepdims)

    def argmin(self, axis=None, keepdims=False):
        from . import tensor
        return tensor.argmin(self, axis, keepdims)

    def var(self, axis=None, ddof=0, keepdims=False):
        from . import tensor
        return tensor.var(self, axis, ddof=ddof, keepdims=keepdims)

    def std(self, axis=None, ddof=0, keepdims=False):
        from . import tensor
        return tensor.std(self, axis, ddof=ddof, keepdims=keepdims)

    def norm(self, L, axis=None, keepdims=False):
        from . import tensor
        return tensor.norm(self, L, axis, keepdims)

    def dot(self, other):
        return _bin(_core.tensor.dot, self, other)

    def __rdot__(self, other):
        return _bin(_core.tensor.dot, other, self)

    def clip(self, a_min, a_max):
        from . import tensor
        return tensor.clip(self, a_min, a_max)

    def repeat(self, repeats, axis=None):
        from . import tensor
        return tensor.repeat(self, repeats, axis)

    def diagonal(self, offset=0, axis1=0, axis2=1):
        from . import tensor
        return tensor.diagonal(self, offset, axis1, axis2)

    def squeeze(self):
        from . import tensor
        return tensor.squeeze(self)

    def sort(self, axis=-1, kind="quicksort", order=None):
        from . import tensor
        return tensor.sort(self, axis, kind, order)

    def argsort(self, axis=-1, kind="quicksort", order=None):
        from . import tensor
        return tensor.argsort(self, axis, kind, order)

    def nonzero(self, return_matrix=False):
        from . import tensor
        return tensor.nonzero(self, return_matrix)

    def nonzero_values(self):
        from . import tensor
        return tensor.nonzero_values(self)

    def eval(self, inputs_to_values=None):
        """Compiles (once per set of inputs) and runs a function computing this variable."""
        from .compile import function
        inputs_to_values = inputs_to_values or {}
        keys = list(inputs_to_values)
        cache = _EVAL_CACHE.setdefault(self._v.id(), {})
        sig = tuple(k._v.id() for k in keys)
        if sig not in cache:
            cache[sig] = (function(keys, self, on_unused_input="ignore"), self)
        return cache[sig][0](*[inputs_to_values[k] for k in keys])


_EVAL_CACHE = {}


def _shape_of(x):
    """x.shape / T.shape(x): the int64 vector of x's sizes; indexing it beyond x's rank fails
    when the function runs (as in Theano), not when the graph is built."""
    s = TensorVariable(x._v.shape())
    s.__dict__.setdefault("_theon_shape_of", x)
    return s


def _bin(fn, a, b):
    return TensorVariable(fn(_v(a), _v(b)))


def _comparison(fn, a, b):
    r = _bin(fn, a, b)
    r._comparison = True  # no truth value (TensorVariable.__bool__)
    return r


class TensorConstant(TensorVariable):
    """A constant tensor; ``.value`` / ``.data`` hold a copy of its value."""

    def __init__(self, value, name=None):
        if self.__dict__.get("_v") is not None:  # TensorVariable(v) found this constant's wrapper
            return
        a = _as_array(value)
        super().__init__(_core.constant(a, name or ""))
        self.data = a.copy()

    @property
    def value(self):
        return self.data

    def clone(self):
        """A constant of the same value and name (Theano's Constant.clone)."""
        c = TensorConstant(self.data, self.name)
        c.tag = _copy_tag(self.tag)
        return c


class SharedVariable(TensorVariable):
    """A variable with a persistent value (``theon.shared``): get_value/set_value.

    ``default_update`` (Theano's): an expression function() uses as the variable's update when
    the function's graph reads the variable and neither ``updates`` names it nor
    ``no_default_updates`` skips it. It applies for as long as the variable lives in a graph,
    also after this Python object is gone (Lasagne sets it on a clone it then drops, leaving it
    in the graph), and does not keep the variable alive (the core keeps the update over a
    placeholder: include/theon/default_update.hpp)."""

    def __init__(self, v):
        if self.__dict__.get("_v") is not None:
            return
        if not isinstance(v, _core.SharedVar):  # met as a node's input or made by a clone
            v = _core.as_shared(v)
        super().__init__(v)

    @property
    def default_update(self):
        u = self.__dict__.get("_default_update")
        if u is not None:
            return u
        c = _core.default_update(self._v)  # a random stream's state has one from the core
        if c is None:
            raise AttributeError(f"shared variable {self} has no default_update")
        from .gof.graph import wrap
        return wrap(c)

    @default_update.setter
    def default_update(self, value):
        u = as_tensor_variable(value)
        _core.set_default_update(self._v, u._v)
        self.__dict__["_default_update"] = u  # the variable given, for the getter

    @default_update.deleter
    def default_update(self):
        _core.set_default_update(self._v, None)
        self.__dict__.pop("_default_update", None)

    def clone(self):
        """A new shared variable over the same value (Theano's SharedVariable.clone shares the
        container): set_value on either is seen by both."""
        from .gof.graph import wrap
        c = wrap(_core.clone([self._v], [], True, False)[0])
        c.tag = _copy_tag(self.tag)
        return c

    def get_value(self, borrow=False, return_internal_type=False):
        """The value as a NumPy array (a copy unless borrow=True; always a copy of a value that
        lives on the GPU)."""
        return self._v.get_value(borrow)

    def set_value(self, value, borrow=False):
        """A NumPy array or number, a :class:`theon.DeviceArray` or a CUDA DLPack array (torch,
        CuPy); copied unless borrow=True. A value on the GPU stays there (or goes there when
        the variable lives on the GPU)."""
        from ._device import DeviceArray, _is_cuda_dlpack
        if _is_cuda_dlpack(value):
            from ._dlpack import from_dlpack
            value = from_dlpack(value)  # a DeviceArray viewing it, or NoCudaDeviceError
        if isinstance(value, DeviceArray):
            if value.dtype.name != self.dtype and np.can_cast(value.dtype, self.dtype, "safe"):
                value = value.astype(self.dtype)
            self._v.set_value(value, borrow)
            return
        what = f"set_value of shared variable '{self}' ({self.dtype})"
        a = value if isinstance(value, np.ndarray) else np.asarray(value)
        if a.dtype == object and not isinstance(value, np.ndarray):
            raise TheonTypeError(f"{what}: cannot store a {type(value).__name__}")
        a = _theon_array(a, what, target=np.dtype(self.dtype))
        if a.dtype.name != self.dtype and np.can_cast(a.dtype, self.dtype, "safe"):
            a = a.astype(self.dtype)
        self._v.set_value(a, borrow)

    @property
    def value(self):
        return self.get_value()

    @value.setter
    def value(self, v):
        self.set_value(v)

    @property
    def target(self):
        """The context the variable was stored on by ``shared(..., target=name)`` (None: none)."""
        return _core.var_context(self._v) or None


TensorSharedVariable = SharedVariable


def shared(value, name=None, strict=False, allow_downcast=None, borrow=False, target=None, broadcastable=None):
    """Theano's theano.shared: a SharedVariable holding `value` (a NumPy array or a Python/NumPy
    scalar; copied unless borrow=True)."""
    if isinstance(value, TensorVariable):
        raise TheonTypeError("shared() takes a value (a NumPy array or a number), not a symbolic variable")
    if strict or allow_downcast is not None:
        from .errors import warn_ignored_once
        warn_ignored_once(f"shared({'strict=' + repr(strict) if strict else 'allow_downcast=' + repr(allow_downcast)})",
                          "set_value() keeps the variable's dtype and rank, converting a value only where "
                          "no number changes")
    from ._device import _is_cuda_dlpack
    if _is_cuda_dlpack(value):  # a torch/CuPy CUDA array: through a DeviceArray (NoCudaDeviceError without a GPU)
        from ._dlpack import from_dlpack
        value = from_dlpack(value)
    # A DeviceArray is copied to the host here (np.asarray); the value moves to the GPU when a
    # function that runs there uses the variable.
    a = value if isinstance(value, np.ndarray) else np.asarray(value)
    if a.dtype == object and not isinstance(value, np.ndarray):
        raise TheonTypeError(f"shared(): cannot store a {type(value).__name__}")
    a = _theon_array(a, "shared()")
    bc = [bool(b) for b in broadcastable] if broadcastable is not None else []
    if target is not None:  # a context name: the variable is stored and pinned there
        from ._contexts import _context_name
        target = _context_name(target, f"shared({name!r}, target={target!r})")
    return SharedVariable(_core.shared(a, name or "", bool(borrow), target or "", bc))
