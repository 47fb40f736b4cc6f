"""Gradients: verify_grad over a representative set of ops, grad options, jacobian/hessian."""
import numpy as np
import pytest

import theon
import theon.tensor as T
from theon.gradient import GradientError


def pts(rng, *shapes, positive=False):
    return [np.abs(rng.standard_normal(s)) + 0.5 if positive else rng.standard_normal(s) for s in shapes]


CASES = [
    ("add_bcast", lambda a, b: a + b, [(3, 4), (4,)], False),
    ("mul_div", lambda a, b: a * b / (b * b + 1.0), [(3, 4), (3, 1)], False),
    ("tanh_exp", lambda a: T.tanh(a) * T.exp(a * 0.3), [(2, 5)], False),
    ("log_sqrt", lambda a: T.log(a) + T.sqrt(a), [(4,)], True),
    ("pow", lambda a, b: a ** b, [(3,), (3,)], True),
    ("sigmoid_softplus", lambda a: T.nnet.sigmoid(a) + T.nnet.softplus(a), [(3, 3)], False),
    ("dot", lambda a, b: T.dot(a, b), [(3, 4), (4, 2)], False),
    ("dot_vec", lambda a, b: T.dot(a, b), [(4,), (4, 3)], False),
    ("sum_mean_axis", lambda a: a.sum(axis=0) * a.mean(axis=1).sum(), [(3, 4)], False),
    ("max", lambda a: T.max(a, axis=1), [(3, 5)], False),
    ("softmax", lambda a: T.nnet.softmax(a), [(3, 4)], False),
    ("logsoftmax", lambda a: T.nnet.logsoftmax(a), [(3, 4)], False),
    ("dimshuffle", lambda a: a.dimshuffle(1, 'x', 0) * 2.0, [(3, 4)], False),
    ("reshape", lambda a: a.reshape((4, 3)) * 2.0, [(3, 4)], False),
    ("dimshuffle_x_then_reshape", lambda a: a.dimshuffle(1, "x", 0).reshape((4, 3)), [(3, 4)], False),
    ("subtensor", lambda a: a[1:, ::2] * a[0, 0], [(3, 4)], False),
    ("set_subtensor", lambda a, b: T.set_subtensor(a[1], b) * a, [(3, 4), (4,)], False),
    ("inc_subtensor", lambda a, b: T.inc_subtensor(a[:, 1:3], b), [(3, 4), (3, 2)], False),
    ("concatenate", lambda a, b: T.concatenate([a, b], axis=1), [(2, 3), (2, 2)], False),
    ("stack", lambda a, b: T.stack([a, b], axis=1), [(3,), (3,)], False),
    ("switch", lambda a, b: T.switch(a > 0, a * b, b), [(4,), (4,)], False),
    ("maximum_relu", lambda a, b: T.maximum(a, b) + T.nnet.relu(a), [(5,), (5,)], False),
    ("crossentropy_onehot", lambda a: T.nnet.categorical_crossentropy(T.nnet.softmax(a), np.eye(4)[[0, 2, 1]]),
     [(3, 4)], False),
]


@pytest.mark.parametrize("name,fn,shapes,positive", CASES, ids=[c[0] if isinstance(c, tuple) else None for c in CASES])
def test_verify_grad(name, fn, shapes, positive, rng):
    T.verify_grad(fn, pts(rng, *shapes, positive=positive), rng=np.random.RandomState(0))


def test_verify_grad_reports_wrong_gradient(rng):
    wrong = lambda a: theon.gradient.zero_grad(a) * a  # noqa: E731 (gradient off by a factor)
    with pytest.raises(GradientError) as e:
        theon.gradient.verify_grad(wrong, pts(rng, (3,)))
    assert isinstance(e.value, T.verify_grad.E_grad)
    assert isinstance(e.value, RuntimeError)


def test_verify_grad_accepts_numbers_and_lists():
    T.verify_grad(lambda a: a * a, [np.array(1.5)])
    T.verify_grad(lambda a: T.exp(a), [[0.1, 0.2]])


def test_grad_values():
    x = T.dvector("x")
    w = theon.shared(np.array([1.0, 2.0, 3.0]), "w")
    cost = T.sum(T.sqr(x * w))
    gx, gw = theon.grad(cost, [x, w])
    assert theon.grad(cost, w).ndim == 1
    f = theon.function([x], [gx, gw])
    xv = np.array([0.5, -1.0, 2.0])
    gxv, gwv = f(xv)
    np.testing.assert_allclose(gxv, 2 * xv * w.get_value() ** 2)
    np.testing.assert_allclose(gwv, 2 * w.get_value() * xv ** 2)
    assert gx.name == "(d<TensorVariable float64 ()>/dx)" or gx.name is None or gx.name.startswith("(d")


def test_grad_options():
    x, y = T.dscalar("x"), T.dscalar("y")
    z = x * y
    cost = z * x
    f = theon.function([x, y], theon.grad(cost, x, consider_constant=[z]))
    assert f(2.0, 3.0) == pytest.approx(6.0)  # d(z*x)/dx with z constant = z
    with pytest.raises(ValueError):
        theon.grad(x * 2, y)
    g = theon.grad(x * 2, y, disconnected_inputs="ignore")
    assert theon.function([x, y], g, on_unused_input="ignore")(1.0, 1.0) == 0
    # known_grads: d cost / d z given, cost omitted
    gz = theon.grad(None, [x, y], known_grads={z: T.constant(1.0, dtype="float64")})
    np.testing.assert_allclose(theon.function([x, y], gz)(2.0, 3.0), [3.0, 2.0])
    q = theon.gradient.disconnected_grad(x) * y
    assert theon.function([x, y], theon.grad(q, x, disconnected_inputs="ignore"),
                          on_unused_input="ignore")(2.0, 3.0) == 0


def test_grad_with_respect_to_an_integer_is_a_float():
    # Theano differentiates an integer as if it were real (through its cast to float).
    i = T.iscalar()
    g = theon.grad(T.cast(i, "float64") * 2, i)
    assert g.dtype == "float64"
    assert theon.function([i], g)(5) == 2.0


def test_second_derivative_jacobian_hessian():
    x = T.dscalar()
    g = theon.grad(x ** 3, x)
    gg = theon.grad(g, x)
    assert theon.function([x], gg)(2.0) == pytest.approx(12.0)
    v = T.tensor("float64", shape=(3,))
    jac = T.jacobian(T.exp(v) * v, v)
    hes = T.hessian(T.sum(v ** 3), v)
    a = np.array([0.1, 0.2, 0.3])
    jv, hv = theon.function([v], [jac, hes])(a)
    np.testing.assert_allclose(jv, np.diag(np.exp(a) * (1 + a)))
    np.testing.assert_allclose(hv, np.diag(6 * a))
    assert isinstance(theon.gradient.jacobian(v * 2, [v]), list)
