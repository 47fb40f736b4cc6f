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


def jacobian(expression, wrt, consider_constant=None, disconnected_inputs="raise"):
    """d expression[i] / d wrt for a vector expression of static length."""
    _no_consider_constant(consider_constant, "jacobian")
    ws, single = _wrt_list(wrt)
    out = [TensorVariable(_core.jacobian(_v(expression), _v(w))) for w in ws]
    return out[0] if single else out


def hessian(cost, wrt, consider_constant=None, disconnected_inputs="raise"):
    """The Hessian of scalar cost with respect to vector(s) wrt of static length."""
    _no_consider_constant(consider_constant, "hessian")
    ws, single = _wrt_list(wrt)
    out = [TensorVariable(_core.hessian(_v(cost), _v(w))) for w in ws]
    return out[0] if single else out


def disconnected_grad(x):
    return TensorVariable(_core.disconnected_grad(_v(x)))


def zero_grad(x):
    return TensorVariable(_core.zero_grad(_v(x)))


def verify_grad(fun, pt, n_tests=2, rng=None, eps=None, out_type=None, abs_tol=None, rel_tol=None, mode=None,
                cast_to_output_type=False, no_debug_ref=True):
    """Checks the symbolic gradient of sum(fun(*pt) * R), R random, against central finite
    differences in float64, n_tests times. Raises GradientError (verify_grad.E_grad) naming
    the input and the worst element. `pt`: a list of NumPy arrays (or numbers)."""
    if not isinstance(pt, (list, tuple)):
        raise TypeError("verify_grad: pt must be a list of NumPy arrays")
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

__all__ = ["grad", "jacobian", "hessian", "disconnected_grad", "zero_grad", "verify_grad", "GradientError"]
