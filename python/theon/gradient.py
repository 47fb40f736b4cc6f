"""theon.gradient: Theano's ``theano.gradient`` (grad, jacobian, hessian, verify_grad)."""
import numpy as np

from . import _core
from ._variable import TensorVariable, _theon_array, _v, as_tensor_variable
from .errors import GradientError, TheonNotImplementedError


def _wrt_list(wrt):
    if isinstance(wrt, (list, tuple)):
        return list(wrt), False
    return [wrt], True


def _pairs(d):
    if d is None:
        return []
    items = d.items() if hasattr(d, "items") else d
    return [(_v(k), _v(v)) for k, v in items]


def grad(cost, wrt, consider_constant=None, disconnected_inputs="raise", add_names=True, known_grads=None,
         return_disconnected="zero", null_gradients="raise"):
    """d cost / d wrt (a variable or a list of them), symbolically. cost may be None with
    known_grads. disconnected_inputs: raise | warn | ignore (warn/ignore give zeros)."""
    if return_disconnected not in ("zero", "Zero"):
        raise TheonNotImplementedError(f"grad(return_disconnected={return_disconnected!r}) is not available yet: "
                                       "disconnected inputs get zeros")
    if null_gradients == "return_zero":
        raise TheonNotImplementedError("grad(null_gradients='return_zero') is not available yet: an undefined "
                                       "gradient raises")
    if null_gradients != "raise":
        raise ValueError(f"grad: null_gradients must be 'raise' or 'return_zero', got {null_gradients!r}")
    ws, single = _wrt_list(wrt)
    c = _core.undefined_var() if cost is None else _v(cost)
    gs = _core.grad(c, [_v(w) for w in ws], disconnected_inputs,
                    [_v(x) for x in (consider_constant or [])], _pairs(known_grads))
    out = [TensorVariable(g) for g in gs]
    if add_names and cost is not None:
        cname = as_tensor_variable(cost).name
        for g, w in zip(out, ws):
            if cname and getattr(w, "name", None) and not g.name:
                g.name = f"(d{cname}/d{w.name})"
    return out[0] if single else out


def _no_consider_constant(consider_constant, what):
    if consider_constant:
        raise TheonNotImplementedError(f"{what}(consider_constant=...) is not available yet")


def _check_connected(cost, ws, disconnected_inputs):
    """Theano's disconnected_inputs for jacobian/hessian: an input the expression does not depend
    on raises, warns or is ignored (zeros) as grad() does (its gradient graph is only built)."""
    _core.grad(_v(cost), [_v(w) for w in ws], disconnected_inputs, [], [])


def jacobian(expression, wrt, consider_constant=None, disconnected_inputs="raise"):
    """d expression[i] / d wrt for a vector expression of static length."""
    _no_consider_constant(consider_constant, "jacobian")
    ws, single = _wrt_list(wrt)
    _check_connected(as_tensor_variable(expression).sum(), ws, disconnected_inputs)
    out = [TensorVariable(_core.jacobian(_v(expression), _v(w))) for w in ws]
    return out[0] if single else out


def hessian(cost, wrt, consider_constant=None, disconnected_inputs="raise"):
    """The Hessian of scalar cost with respect to vector(s) wrt of static length."""
    _no_consider_constant(consider_constant, "hessian")
    ws, single = _wrt_list(wrt)
    _check_connected(cost, ws, disconnected_inputs)
    out = [TensorVariable(_core.hessian(_v(cost), _v(w))) for w in ws]
    return out[0] if single else out


def disconnected_grad(x):
    return TensorVariable(_core.disconnected_grad(_v(x)))


def zero_grad(x):
    return TensorVariable(_core.zero_grad(_v(x)))


def _as_list(x):
    return (list(x), False) if isinstance(x, (list, tuple)) else ([x], True)


def Lop(f, wrt, eval_points, consider_constant=None, disconnected_inputs="raise"):
    """Theano's L-operator: ``eval_points · df/dwrt`` (a vector-Jacobian product) for each of
    ``wrt``, summed over the outputs ``f`` (a variable or a list of them; ``eval_points`` has
    one variable per output, of its shape). It is ``grad`` with known output gradients:
    ``grad(None, wrt, known_grads={f: eval_points})``. Returns a variable for a single
    ``wrt``, else a list."""
    fs, _ = _as_list(f)
    evs, _ = _as_list(eval_points)
    if len(fs) != len(evs):
        raise ValueError(f"Lop: {len(fs)} output(s) but {len(evs)} eval point(s)")
    known = []
    for k, (y, e) in enumerate(zip(fs, evs)):
        y, e = as_tensor_variable(y), as_tensor_variable(e)
        if y.ndim != e.ndim:
            raise ValueError(f"Lop: eval point {k} ({e.type}) must have the rank of output {k} ({y.type})")
        known.append((y, e))
    return grad(None, wrt, consider_constant=consider_constant, disconnected_inputs=disconnected_inputs,
                known_grads=known)


def Rop(f, wrt, eval_points, disconnected_outputs="raise", return_disconnected="zero"):
    """Theano's R-operator: ``df/dwrt · eval_points`` (a Jacobian-vector product) for each of the
    outputs ``f``, summed over ``wrt`` (``eval_points``: one variable per ``wrt``, of its
    shape). Returns a variable for a single ``f``, else a list.

    Theon computes it with the double-L trick rather than per-op R_ops: with ``u`` a new
    variable of f's type, ``g(u) = Lop(f, wrt, u)`` is linear in ``u``, and
    ``Rop = d/du [sum(g(u) · eval_points)]``; ``u`` is then replaced by zeros (the result does
    not depend on it), so the graph reads only f's inputs and the eval points. Every op with a
    gradient works (twice differentiable ones: the second pass differentiates the gradient's
    graph); the rewrites remove most of the extra work. An output that does not depend on
    ``wrt`` gets zeros (``disconnected_outputs='raise'`` raises instead, as Theano does)."""
    from . import tensor as T
    from .gof.graph import clone_replace as clone
    if return_disconnected not in ("zero", "Zero"):
        raise TheonNotImplementedError(f"Rop(return_disconnected={return_disconnected!r}): disconnected outputs "
                                       "get zeros")
    fs, single = _as_list(f)
    ws, _ = _as_list(wrt)
    evs, _ = _as_list(eval_points)
    if len(ws) != len(evs):
        raise ValueError(f"Rop: {len(ws)} wrt variable(s) but {len(evs)} eval point(s)")
    fs = [as_tensor_variable(y) for y in fs]
    ws = [as_tensor_variable(w) for w in ws]
    evs = [as_tensor_variable(e) for e in evs]
    for k, (w, e) in enumerate(zip(ws, evs)):
        if w.ndim != e.ndim:
            raise ValueError(f"Rop: eval point {k} ({e.type}) must have the rank of wrt {k} ({w.type})")
    from .gof.graph import ancestors
    if disconnected_outputs == "raise":
        wanted = {w._v.id() for w in ws}
        for k, y in enumerate(fs):
            if not any(a._v.id() in wanted for a in ancestors([y])):
                raise ValueError(f"Rop: output {k} ({y}) does not depend on any of wrt "
                                 "(disconnected_outputs='ignore' gives zeros)")
    elif disconnected_outputs not in ("ignore", "warn"):
        raise ValueError(f"Rop: disconnected_outputs must be 'raise', 'warn' or 'ignore', got {disconnected_outputs!r}")
    us = []
    for k, y in enumerate(fs):
        fdt = y.dtype if y.dtype.startswith("float") else "float64"
        us.append(T.TensorType(fdt, shape=y.type.shape)(f"rop_u{k}"))
    gs = Lop(fs, ws, us, disconnected_inputs="ignore")
    gs = gs if isinstance(gs, list) else [gs]
    total = None
    for g, e in zip(gs, evs):
        term = T.sum(g * e)
        total = term if total is None else total + term
    outs = grad(total, us, disconnected_inputs="ignore")
    zeros = [(u, T.zeros_like(y, dtype=u.dtype)) for u, y in zip(us, fs)]
    outs = clone(outs, replace=zeros, strict=False)
    return outs[0] if single else outs


def consider_constant(x):
    """Theano's consider_constant(x): x in the forward pass, no gradient through it (zeros:
    the same op as zero_grad, as Theano's ConsiderConstant gives zeros too)."""
    return zero_grad(x)


def grad_clip(x, lower_bound, upper_bound):
    """Theano's grad_clip: x in the forward pass; the gradient flowing back through it is
    clipped to [lower_bound, upper_bound] elementwise (numbers; ValueError when lower > upper)."""
    return TensorVariable(_core.grad_clip(_v(x), float(lower_bound), float(upper_bound)))


def grad_scale(x, multiplier):
    """Theano's grad_scale: x in the forward pass; the gradient flowing back through it is
    multiplied by ``multiplier`` (a number)."""
    return TensorVariable(_core.grad_scale(_v(x), float(multiplier)))


def verify_grad(fun, pt, n_tests=2, rng=None, eps=None, out_type=None, abs_tol=None, rel_tol=None, mode=None,
                cast_to_output_type=False, no_debug_ref=True):
    """Checks the symbolic gradient of sum(fun(*pt) * R), R random, against central finite
    differences in float64, n_tests times. Raises GradientError (verify_grad.E_grad) naming
    the input and the worst element. `pt`: a list of NumPy arrays (or numbers)."""
    if not isinstance(pt, (list, tuple)):
        raise TypeError("verify_grad: pt must be a list of NumPy arrays")
    if out_type is not None:
        raise TheonNotImplementedError(f"verify_grad(out_type={out_type!r}) is not available: Theon has no complex "
                                       "dtypes; the check runs in float64")
    if cast_to_output_type:
        from .errors import warn_ignored_once
        warn_ignored_once("verify_grad(cast_to_output_type=True)", "the check runs in float64 throughout")
    if not no_debug_ref:
        from .errors import warn_ignored_once
        warn_ignored_once("verify_grad(no_debug_ref=False)", "Theon has no DebugMode reference implementation")
    if mode is not None:  # the functions the check compiles run in this mode
        from .configparser import config
        if isinstance(mode, str):
            mode_name = mode
        elif hasattr(mode, "optimizer_mode"):  # a MonitorMode: its optimizer's mode (None: the default)
            mode_name = mode.optimizer_mode() or config.mode
        else:
            raise TypeError(f"verify_grad: mode must be a mode name (e.g. 'FAST_COMPILE'), got {mode!r}")
        with config.change_flags(mode=mode_name):
            return verify_grad(fun, pt, n_tests, rng, eps, None, abs_tol, rel_tol, None, cast_to_output_type,
                               no_debug_ref)
    points = [np.ascontiguousarray(_theon_array(np.asarray(p), f"verify_grad: point {k}"), dtype=np.float64)
              for k, p in enumerate(pt)]

    def build(vs):
        out = fun(*[TensorVariable(v) for v in vs])
        if isinstance(out, (list, tuple)):
            if len(out) != 1:
                raise TypeError("verify_grad: fun must return a single variable")
            out = out[0]
        return _v(out)

    kw = {}
    if eps is not None:
        kw["eps"] = float(eps)
    if rel_tol is not None:
        kw["rtol"] = float(rel_tol)
    if abs_tol is not None:
        kw["atol"] = float(abs_tol)
    base = int(rng.randint(2 ** 31)) if rng is not None and hasattr(rng, "randint") else 42
    for k in range(max(int(n_tests), 1)):
        _core.verify_grad(build, points, seed=base + k, **kw)


verify_grad.E_grad = GradientError

__all__ = ["grad", "jacobian", "hessian", "disconnected_grad", "zero_grad", "verify_grad", "GradientError", "Lop",
           "Rop", "grad_clip", "grad_scale",
           "consider_constant"]
