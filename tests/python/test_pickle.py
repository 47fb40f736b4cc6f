"""pickle.dump/load of shared variables, graphs and compiled functions (issue 30), as Theano
programs use it: DeepLearningTutorials logistic_sgd's `pickle.dump(classifier, f)` and its
predict(), word for word; a function saved by another process; training resumed from a
pickle; tampered pickles refused."""
import os
import pickle
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import theon as theano
import theon.tensor as T
from theon._variable import SharedVariable

from conftest import THEON_PATH


# ---- shared variables ----

def test_shared_variable_round_trip():
    w = theano.shared(np.arange(6, dtype="float32").reshape(3, 2), name="W")
    b = theano.shared(np.zeros((1, 4), dtype="int64"), name="b", broadcastable=(True, False))
    w.tag.test_value = np.ones((3, 2), dtype="float32")
    w.my_info = {"layer": 3}
    w2, b2 = pickle.loads(pickle.dumps((w, b)))
    assert isinstance(w2, SharedVariable) and w2 is not w
    assert w2.name == "W" and w2.dtype == "float32" and w2.broadcastable == (False, False)
    np.testing.assert_array_equal(w2.get_value(), w.get_value())
    assert b2.dtype == "int64" and b2.broadcastable == (True, False) and b2.type == b.type
    assert w2.my_info == {"layer": 3}
    np.testing.assert_array_equal(w2.tag.test_value, np.ones((3, 2)))
    w2.set_value(np.zeros((3, 2), dtype="float32"))  # a variable of its own, not the original's value
    assert w.get_value()[2, 1] == 5


def test_shared_variable_keeps_its_default_update():
    # Lasagne's batch normalization keeps its running mean by a default update.
    mean = theano.shared(np.zeros(3), name="running_mean")
    x = T.dvector("x")
    mean.default_update = 0.5 * mean + 0.5 * x
    mean2, x2 = pickle.loads(pickle.dumps((mean, x)))
    f = theano.function([x2], mean2 * 1.0)
    f(np.full(3, 4.0))
    np.testing.assert_allclose(mean2.get_value(), np.full(3, 2.0))
    np.testing.assert_allclose(mean.get_value(), np.zeros(3))


def test_shared_variable_context(monkeypatch):
    # A variable on context 'cpu' comes back on it; one saved on a context this process does
    # not have (here 'dev7', as another machine's pickle says) loads on the CPU, with a warning.
    w = theano.shared(np.ones(2), name="w", target="cpu")
    w2 = pickle.loads(pickle.dumps(w))
    assert getattr(w2, "target", None) == getattr(w, "target", None)
    monkeypatch.setattr(SharedVariable, "target", property(lambda self: "dev7"), raising=False)
    data = pickle.dumps(w)
    monkeypatch.undo()
    with pytest.warns(UserWarning, match="'w' was saved on context 'dev7'.*loaded on the CPU"):
        w3 = pickle.loads(data)
    np.testing.assert_array_equal(w3.get_value(), np.ones(2))
    assert getattr(w3, "target", None) in (None, "cpu")


def test_a_graph_over_contexts_keeps_its_contexts():
    # Transfers and nodes pinned by a context scope come back pinned where the contexts exist;
    # where one does not, the node loads unpinned, with a warning naming the context.
    saved = (theano.config.contexts, theano.config.print_active_device)
    theano.config.print_active_device = False
    theano.config.contexts = "dev0->cpu;dev1->cpu"
    try:
        x = T.fvector("x")
        w = theano.shared(np.arange(3, dtype="float32"), name="w", target="dev0")
        with theano.context("dev1"):
            doubled = x * 2
        y = doubled.transfer("dev0") + w
        y2 = pickle.loads(pickle.dumps(y))
        x2 = [v for v in theano.gof.graph.inputs([y2]) if v.name == "x"][0]
        contexts = sorted(theano._core.var_context(v._v) for v in theano.gof.graph.ancestors([y2])
                          if v.owner is not None)
        assert contexts == sorted(theano._core.var_context(v._v) for v in theano.gof.graph.ancestors([y])
                                  if v.owner is not None)
        assert "dev1" in contexts
        f = theano.function([x2], y2)
        np.testing.assert_allclose(f(np.ones(3, dtype="float32")), 2 + np.arange(3))
        data = pickle.dumps(doubled)
        theano.config.contexts = "dev0->cpu"
        with pytest.warns(UserWarning, match="pinned to context 'dev1'.*loaded unpinned"):
            d3 = pickle.loads(data)
        assert theano._core.var_context(d3._v) == ""
    finally:
        theano.config.contexts, theano.config.print_active_device = saved


# ---- graphs ----

def test_expression_round_trip_keeps_its_graph():
    x = T.matrix("x")
    W = theano.shared(np.arange(6, dtype=x.dtype).reshape(3, 2), name="W")
    y = T.nnet.softmax(T.dot(x, W) + 1.5).sum(axis=1).dimshuffle(0, "x") * 2
    y.name = "y"
    y2 = pickle.loads(pickle.dumps(y))
    assert y2.name == "y" and y2.type == y.type
    x2 = [v for v in theano.gof.graph.inputs([y2]) if v.name == "x"][0]
    data = np.random.RandomState(0).rand(4, 3).astype(x.dtype)
    np.testing.assert_allclose(theano.function([x2], y2)(data), theano.function([x], y)(data), rtol=1e-6)


def test_shared_variable_identity_within_one_pickle():
    x = T.dvector("x")
    W = theano.shared(np.ones(3), name="W")
    e1, e2 = x * W, (W ** 2).sum()
    W2, e1b, e2b, x2 = pickle.loads(pickle.dumps((W, e1, e2, x)))
    # two expressions over one shared variable load over ONE shared variable: the saved W
    assert W2 in theano.gof.graph.inputs([e1b]) and W2 in theano.gof.graph.inputs([e2b])
    W2.set_value(np.full(3, 2.0))
    f = theano.function([x2], [e1b, e2b])
    np.testing.assert_allclose(f(np.ones(3))[0], np.full(3, 2.0))
    assert f(np.ones(3))[1] == 12.0


def test_variables_the_program_holds_keep_their_identity():
    x = T.dvector("x")
    h = T.tanh(x) + 1
    y = h * 2
    h2, y2 = pickle.loads(pickle.dumps((h, y)))
    assert h2 in theano.gof.graph.ancestors([y2])  # y's graph is built over the loaded h itself


def test_constants_and_literals():
    x = T.fvector("x")
    y = x * 2.5 + np.float32(1)  # a weak literal keeps float32
    c = T.constant(np.array([1, 2, 3]), name="c")
    y2, c2 = pickle.loads(pickle.dumps((y, c)))
    assert y2.dtype == "float32"
    np.testing.assert_array_equal(c2.data, [1, 2, 3])
    assert c2.name == "c"
    x2 = theano.gof.graph.inputs([y2])[0]
    np.testing.assert_allclose(theano.function([x2], y2)(np.ones(2, dtype="float32")), [3.5, 3.5])


# ---- functions ----

def test_function_round_trip():
    x = T.dvector("x")
    acc = theano.shared(0.0, name="acc")
    f = theano.function([x], x.sum() + acc, updates=[(acc, acc + x.sum())], name="f")
    g = pickle.loads(pickle.dumps(f))
    assert g.name == "f"
    assert g(np.ones(3)) == 3.0 and g(np.ones(3)) == 6.0
    assert f(np.ones(3)) == 3.0  # the original's state is its own


def test_function_with_givens():
    index = T.lscalar("index")
    x = T.dmatrix("x")
    data = theano.shared(np.arange(12.0).reshape(6, 2), name="data")
    f = theano.function([index], x.sum(), givens={x: data[index * 2:(index + 1) * 2]})
    g = pickle.loads(pickle.dumps(f))
    assert g(1) == f(1) == 4 + 5 + 6 + 7


def test_function_saved_by_another_process(tmp_path):
    path = tmp_path / "f.pkl"
    script = textwrap.dedent(f"""
        import pickle, numpy as np
        import theon as theano, theon.tensor as T
        x = T.dmatrix('x')
        W = theano.shared(np.arange(6.0).reshape(3, 2), name='W')
        f = theano.function([x], T.nnet.sigmoid(T.dot(x, W)), updates=[(W, W + 1)], name='layer')
        f(np.ones((1, 3)))
        with open({str(path)!r}, 'wb') as fh:
            pickle.dump(f, fh)
    """)
    env = dict(os.environ, PYTHONPATH=THEON_PATH)
    subprocess.run([sys.executable, "-c", script], check=True, env=env, timeout=120)
    with open(path, "rb") as fh:
        f = pickle.load(fh)
    W = np.arange(6.0).reshape(3, 2) + 1  # the saved value: after one call
    np.testing.assert_allclose(f(np.ones((2, 3))), 1 / (1 + np.exp(-np.ones((2, 3)) @ W)))
    np.testing.assert_allclose(f(np.ones((2, 3))), 1 / (1 + np.exp(-np.ones((2, 3)) @ (W + 1))))


# ---- DeepLearningTutorials logistic_sgd.py ----

class LogisticRegression(object):
    """logistic_sgd.py's class (its docstrings left out)."""

    def __init__(self, input, n_in, n_out):
        self.W = theano.shared(
            value=np.zeros(
                (n_in, n_out),
                dtype=theano.config.floatX
            ),
            name='W',
            borrow=True
        )
        self.b = theano.shared(
            value=np.zeros(
                (n_out,),
                dtype=theano.config.floatX
            ),
            name='b',
            borrow=True
        )
        self.p_y_given_x = T.nnet.softmax(T.dot(input, self.W) + self.b)
        self.y_pred = T.argmax(self.p_y_given_x, axis=1)
        self.params = [self.W, self.b]
        self.input = input

    def negative_log_likelihood(self, y):
        return -T.mean(T.log(self.p_y_given_x)[T.arange(y.shape[0]), y])


def _data(n=60, n_in=5, n_out=3, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, n_in).astype(theano.config.floatX)
    Y = (X[:, 0] > 0).astype("int32") + (X[:, 1] > 0.5).astype("int32")
    return X, Y


def _train_model(classifier, x, y, train_set_x, train_set_y, batch_size=10, learning_rate=0.13):
    index = T.lscalar()
    cost = classifier.negative_log_likelihood(y)
    g_W = T.grad(cost=cost, wrt=classifier.W)
    g_b = T.grad(cost=cost, wrt=classifier.b)
    updates = [(classifier.W, classifier.W - learning_rate * g_W),
               (classifier.b, classifier.b - learning_rate * g_b)]
    return theano.function(
        inputs=[index],
        outputs=cost,
        updates=updates,
        givens={
            x: train_set_x[index * batch_size: (index + 1) * batch_size],
            y: train_set_y[index * batch_size: (index + 1) * batch_size]
        }
    )


def test_logistic_sgd_save_best_model_and_predict(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    X, Y = _data()
    train_set_x = theano.shared(X, borrow=True)
    train_set_y = T.cast(theano.shared(Y.astype(theano.config.floatX), borrow=True), 'int32')
    x = T.matrix('x')
    y = T.ivector('y')
    classifier = LogisticRegression(input=x, n_in=5, n_out=3)
    train_model = _train_model(classifier, x, y, train_set_x, train_set_y)
    for minibatch_index in range(6):
        train_model(minibatch_index)
    # sgd_optimization_mnist: save the best model
    with open('best_model.pkl', 'wb') as f:
        pickle.dump(classifier, f)

    # predict():
    # load the saved model
    classifier = pickle.load(open('best_model.pkl', 'rb'))

    # compile a predictor function
    predict_model = theano.function(
        inputs=[classifier.input],
        outputs=classifier.y_pred)

    predicted_values = predict_model(X[:10])
    W, b = classifier.W.get_value(), classifier.b.get_value()
    np.testing.assert_array_equal(predicted_values, np.argmax(X[:10] @ W + b, axis=1))
    assert np.abs(W).sum() > 0  # the trained values, not the initial zeros


def test_training_resumed_from_a_pickle_matches_uninterrupted_training():
    X, Y = _data()

    def build():
        train_set_x = theano.shared(X, borrow=True)
        train_set_y = T.cast(theano.shared(Y.astype(theano.config.floatX), borrow=True), 'int32')
        x, y = T.matrix('x'), T.ivector('y')
        classifier = LogisticRegression(input=x, n_in=5, n_out=3)
        return classifier, _train_model(classifier, x, y, train_set_x, train_set_y)

    classifier, train_model = build()
    straight = [float(train_model(i % 6)) for i in range(12)]

    classifier, train_model = build()
    costs = [float(train_model(i % 6)) for i in range(5)]
    classifier, train_model = pickle.loads(pickle.dumps((classifier, train_model)))
    costs += [float(train_model(i % 6)) for i in range(5, 12)]
    np.testing.assert_array_equal(costs, straight)
    classifier_straight, train_straight = build()
    for i in range(12):
        train_straight(i % 6)
    np.testing.assert_array_equal(classifier.W.get_value(), classifier_straight.W.get_value())


# ---- what a pickle cannot do ----

def _tampered(data, old, new):
    assert len(old) == len(new) and data.count(old) >= 1
    return data.replace(old, new)


def test_tampered_pickle_is_refused_clearly():
    x = T.lvector("x")
    data = pickle.dumps(T.exp(x) * 2)  # exp of int64: float64, a dtype only the nodes record
    with pytest.raises(theano.errors.TheonValueError, match="cannot load a theon pickle.*unknown op kind 'NoSuchOp'"):
        pickle.loads(_tampered(data, b"Elemwise", b"NoSuchOp"))
    with pytest.raises(theano.errors.TheonValueError, match=r"make_op\(Elemwise\).*unknown dtype 'float99'"):
        pickle.loads(_tampered(data, b"float64", b"float99"))
    with pytest.raises(theano.errors.TheonValueError, match=r"make_op\(Elemwise\).*unknown scalar op 'exq'"):
        pickle.loads(_tampered(data, b"exp", b"exq"))
    data = pickle.dumps(T.dvector("v").sum(axis=0))
    with pytest.raises(theano.errors.TheonValueError, match=r"make_op\(Sum\): a Reduce's result dtype is not"):
        pickle.loads(_tampered(data, b"dtype", b"dtypf"))


def test_gradient_blocks_and_transforms_round_trip():
    # zero_grad, disconnected_grad, grad_clip and grad_scale (autodiff's ops, registered with
    # make_op from there) come back as themselves: the gradient through them is unchanged.
    x = T.dvector("x")
    G = theano.gradient
    y = (G.zero_grad(x) * x).sum() + (G.grad_clip(x, -0.5, 0.5) ** 2).sum() + G.grad_scale(x * 3, 0.25).sum() \
        + (G.disconnected_grad(x) * 2).sum()
    y2 = pickle.loads(pickle.dumps(y))
    x2 = [v for v in theano.gof.graph.inputs([y2]) if v.name == "x"][0]
    v = np.array([-2.0, 0.1, 3.0])
    g = theano.function([x], T.grad(y, x))(v)
    g2 = theano.function([x2], T.grad(y2, x2))(v)
    np.testing.assert_allclose(g2, g)
    np.testing.assert_allclose(g, v + np.clip(2 * v, -0.5, 0.5) + 0.75)


def test_deepcopy_of_a_model_is_independent():
    import copy
    x = T.dmatrix("x")
    W = theano.shared(np.ones((2, 2)), name="W")
    model = {"W": W, "out": T.dot(x, W), "x": x}
    clone = copy.deepcopy(model)
    clone["W"].set_value(np.zeros((2, 2)))
    f = theano.function([clone["x"]], clone["out"])
    np.testing.assert_array_equal(f(np.ones((1, 2))), [[0.0, 0.0]])
    np.testing.assert_array_equal(W.get_value(), np.ones((2, 2)))


def test_random_stream_function_continues_from_its_saved_state():
    rng = T.shared_randomstreams.RandomStreams(1)
    u = rng.uniform((2,))
    f = theano.function([], u)
    f()
    g = pickle.loads(pickle.dumps(f))
    for _ in range(2):  # the state's default update came along: the copy draws what f draws
        np.testing.assert_array_equal(g(), f())


def test_gradient_graph_round_trip():
    x = T.dmatrix("x")
    gx = T.grad((T.nnet.sigmoid(x) ** 2).sum(), x)
    x2, gx2 = pickle.loads(pickle.dumps((x, gx)))
    data = np.linspace(-2, 2, 6).reshape(2, 3)
    np.testing.assert_allclose(theano.function([x2], gx2)(data), theano.function([x], gx)(data), rtol=1e-12)
