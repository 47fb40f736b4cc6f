"""Issue 29: softmax, log-softmax and cross-entropy stay finite where a probability underflows.

The `stabilize` rewrites (docs/guide/optimizer.md) turn a hand-written softmax into softmax,
log(softmax) into log_softmax and the gradients grad() built for them into forms that never
divide by a probability, in fast_run and fast_compile. Each case is checked against a float64
NumPy reference: the cost, and the gradient softmax(x) - y.
"""
import numpy as np
import pytest

import theon
import theon.tensor as T

# Row 0 is the issue's: softmax(x)[2] = e^-400 underflows to 0 in float32 and float64.
X = np.array([[0.0, 200.0, -200.0], [1.0, 2.0, 3.0]])
LABELS = np.array([2, 1], dtype=np.int32)
Y = np.eye(3)[LABELS]


def reference(x, y):
    """float64: the cost -sum(y * log_softmax(x)) and its gradient softmax(x) - y."""
    z = x - x.max(axis=1, keepdims=True)
    lsm = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return -(y * lsm).sum(), np.exp(lsm) - y


def handwritten_softmax(x):
    """The tutorials' softmax: exp(x - max) / sum(exp(x - max))."""
    e = T.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def theano_style_softmax(x):
    """The same with Theano-era dimshuffles instead of keepdims."""
    e = T.exp(x - T.max(x, axis=1).dimshuffle(0, "x"))
    return e / T.sum(e, axis=1).dimshuffle(0, "x")


# (name, cost(x, y, labels), scale of the reference: the tutorial's cost is a mean over rows)
FORMS = [
    ("categorical_crossentropy_onehot", lambda x, y, l: T.nnet.categorical_crossentropy(T.nnet.softmax(x), y).sum(), 1),
    ("log_softmax_by_hand", lambda x, y, l: -T.sum(y * T.log(T.nnet.softmax(x))), 1),
    ("handwritten_softmax", lambda x, y, l: -T.sum(y * T.log(handwritten_softmax(x))), 1),
    ("theano_style_softmax", lambda x, y, l: -T.sum(y * T.log(theano_style_softmax(x))), 1),
    ("handwritten_crossentropy_onehot",
     lambda x, y, l: T.nnet.categorical_crossentropy(handwritten_softmax(x), y).sum(), 1),
    ("tutorial_mean_log_p_at_labels",
     lambda x, y, l: -T.mean(T.log(handwritten_softmax(x))[T.arange(l.shape[0]), l]), 1 / len(LABELS)),
    ("handwritten_softmax_integer_labels",
     lambda x, y, l: T.nnet.categorical_crossentropy(handwritten_softmax(x), l).mean(), 1 / len(LABELS)),
]


@pytest.mark.parametrize("mode", ["FAST_RUN", "FAST_COMPILE"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,cost_of,scale", FORMS, ids=[f[0] for f in FORMS])
def test_underflowing_probability_gives_finite_cost_and_gradient(name, cost_of, scale, dtype, mode):
    x, y, labels = T.matrix("x", dtype=dtype), T.matrix("y", dtype=dtype), T.ivector("labels")
    cost = cost_of(x, y, labels)
    gx = T.grad(cost, x)
    f = theon.function([x, y, labels], [cost, gx], mode=mode, on_unused_input="ignore")
    c, g = f(X.astype(dtype), Y.astype(dtype), LABELS)
    ref_cost, ref_grad = reference(X, Y)
    tol = 1e-5 if dtype == "float32" else 1e-12
    assert np.isfinite(c) and np.isfinite(g).all(), (c, g)
    np.testing.assert_allclose(c, ref_cost * scale, rtol=tol)
    np.testing.assert_allclose(g, ref_grad * scale, rtol=tol, atol=tol)


def test_mode_none_keeps_the_unstable_graph():
    # What the rewrites fix: unoptimized, the hand-written form's cost and gradient are NaN.
    x, y = T.matrix("x"), T.matrix("y")
    cost = -T.sum(y * T.log(handwritten_softmax(x)))
    c, g = theon.function([x, y], [cost, T.grad(cost, x)], mode="NONE")(X.astype("float32"), Y.astype("float32"))
    assert np.isnan(c) and np.isnan(g).any()


def test_training_with_a_handwritten_softmax_stays_finite():
    # The tutorial in small: softmax regression with the hand-written softmax on
    # separable data, plain SGD with a large step, so the logits grow until probabilities
    # underflow. Unoptimized the weights turn NaN; stabilized they stay finite and fit.
    rng = np.random.RandomState(0)
    centers = np.array([[4.0, 0.0], [-4.0, 4.0], [-4.0, -4.0]])
    labels = rng.randint(0, 3, size=60).astype(np.int32)
    data = (centers[labels] + rng.standard_normal((60, 2))).astype("float32")

    def train(mode):
        w = theon.shared(np.zeros((2, 3), dtype="float32"), "w")
        b = theon.shared(np.zeros(3, dtype="float32"), "b")
        x, l = T.matrix("x"), T.ivector("l")
        p = handwritten_softmax(T.dot(x, w) + b)
        cost = -T.mean(T.log(p)[T.arange(l.shape[0]), l])
        gw, gb = T.grad(cost, [w, b])
        step = theon.function([x, l], cost, updates=[(w, w - 50.0 * gw), (b, b - 50.0 * gb)], mode=mode)
        for _ in range(40):
            step(data, labels)
        predict = theon.function([x], T.argmax(p, axis=1), mode=mode)
        return w.get_value(), (predict(data) == labels).mean()

    w_none, _ = train("NONE")
    assert not np.isfinite(w_none).all()
    for mode in ("FAST_RUN", "FAST_COMPILE"):
        w, accuracy = train(mode)
        assert np.isfinite(w).all(), mode
        assert accuracy > 0.9, (mode, accuracy)
