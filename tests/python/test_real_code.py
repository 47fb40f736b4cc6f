"""Real Theano programs run unchanged (issue 30): the Python semantics of variables (truth
value, theano.Variable, graph walks over any iterable, relu on NumPy) and Theano state that
must act: shared_var.default_update, clones of shared variables. Client lines are quoted
word for word (DeepLearningTutorials dA.py, Lasagne's BatchNormLayer and utils)."""
import numpy as np
import pytest

import theon as theano
import theon.tensor as T
from theon.errors import TheonTypeError


# ---- truth value ----

def test_if_not_W_of_a_shared_variable_dA():
    # DeepLearningTutorials dA.py (and rbm.py): W is None or a shared variable given by SdA/DBN.
    def make_W(W=None):
        if not W:
            W = theano.shared(value=np.zeros((3, 2)), name='W', borrow=True)
        return W

    given = theano.shared(np.ones((3, 2)), name="W_given")
    assert make_W(given) is given
    assert make_W().name == "W"
    x = T.dmatrix("x")
    assert bool(x) and bool(x * 2) and bool(T.lt(x, 1))  # Theano: only the operators' results raise


def test_chained_comparison_still_raises():
    a, b, c = T.dscalar("a"), T.dscalar("b"), T.dscalar("c")
    with pytest.raises(TypeError, match="a < b < c"):
        a < b < c
    for r in (a < b, a <= b, a > b, a >= b, a < 1.0, 1.0 < a):
        with pytest.raises(TheonTypeError, match="no truth value"):
            bool(r)


# ---- theano.Variable ----

def test_generic_variable():
    v = theano.Variable("x")
    assert v.type == "x" and v.owner is None and v.index is None and v.name is None
    assert theano.gof.Variable is theano.Variable and T.Variable is theano.Variable
    w = theano.gof.Variable(T.dmatrix, name="w")
    assert str(w) == "w" and w.type == T.dmatrix
    w.tag.note = 1
    c = w.clone()
    assert c is not w and c.name == "w" and c.type == T.dmatrix and c.tag.note == 1
    x = T.dmatrix("x")
    assert isinstance(x, theano.Variable) and isinstance(theano.shared(1.0), theano.gof.Variable)
    assert not isinstance(v, T.TensorVariable)
    assert x.index is None and (x * 2).index == 0
    with pytest.raises(TypeError, match="generic Variable"):
        x + w
    with pytest.raises(TypeError, match="name must be a string"):
        theano.Variable("x", name=3)


def test_clone_of_variables():
    x = T.dmatrix("x")
    x.tag.test_note = "n"
    c = x.clone()
    assert c is not x and c.type == x.type and c.name == "x" and c.owner is None and c.tag.test_note == "n"
    s = theano.shared(np.arange(3.0), name="s")
    sc = s.clone()
    assert sc is not s and sc.name == "s"
    sc.set_value(np.zeros(3))  # Theano's SharedVariable.clone shares the container
    assert np.array_equal(s.get_value(), np.zeros(3))
    k = T.constant(np.arange(2.0))
    assert np.array_equal(k.clone().data, k.data)


# ---- graph walks over any iterable ----

def test_inputs_of_reversed_exprs_lasagne():
    x, y = T.dmatrix("x"), T.dvector("y")
    s = theano.shared(np.ones(2), name="s")
    exprs = [x.sum(), y * s]
    found = theano.gof.graph.inputs(reversed(exprs))
    assert found == theano.gof.graph.inputs(list(reversed(exprs)))
    assert x in found and y in found and s in found
    gen = (e for e in exprs)
    assert theano.gof.graph.ancestors(gen) == theano.gof.graph.ancestors(exprs)
    assert theano.gof.graph.io_toposort(iter([x, y]), iter(exprs)) == theano.gof.graph.io_toposort([x, y], exprs)


# ---- relu on NumPy: plain arithmetic, as Theano's ----

def test_relu_of_numpy_is_numpy():
    a = np.array([-1.0, 0.5, 2.0], dtype="float32")
    r = T.nnet.relu(a)
    assert isinstance(r, np.ndarray) and r.dtype == np.float32 and np.array_equal(r, [0.0, 0.5, 2.0])
    assert T.nnet.relu(-3.0) == 0.0 and T.nnet.relu(np.float64(2.0)) == 2.0
    assert isinstance(T.nnet.relu(a, alpha=0.1), T.TensorVariable)  # Theano: as_tensor_variable(alpha)
    assert isinstance(T.nnet.sigmoid(a), T.TensorVariable)  # an op: a node, as in Theano
    assert isinstance(T.nnet.relu(T.dvector("v")), T.TensorVariable)


# ---- default_update (Lasagne's BatchNormLayer) and clones of shared variables ----

class _BatchNorm:
    """The running-average part of Lasagne's BatchNormLayer.get_output_for, word for word."""

    def __init__(self, n, alpha=0.5):
        self.alpha = alpha
        self.mean = theano.shared(np.zeros(n), name="mean")
        self.inv_std = theano.shared(np.ones(n), name="inv_std")

    def get_output_for(self, input, update_averages=True):
        input_mean = input.mean(0)
        input_inv_std = T.inv(T.sqrt(input.var(0) + 1e-4))
        mean, inv_std = input_mean, input_inv_std
        # Decide whether to update the stored averages
        if update_averages:
            # Trick: To update the stored statistics, we create memory-aliased
            # clones of the stored statistics:
            running_mean = theano.clone(self.mean, share_inputs=False)
            running_inv_std = theano.clone(self.inv_std, share_inputs=False)
            # set a default update for them:
            running_mean.default_update = ((1 - self.alpha) * running_mean +
                                           self.alpha * input_mean)
            running_inv_std.default_update = ((1 - self.alpha) *
                                              running_inv_std +
                                              self.alpha * input_inv_std)
            # and make sure they end up in the graph without participating in
            # the computation (this way their default_update will be collected
            # and applied, but the computation will be optimized away):
            mean += 0 * running_mean
            inv_std += 0 * running_inv_std
        return (input - mean) * inv_std


def test_batch_norm_running_mean_default_update_lasagne():
    bn = _BatchNorm(2)
    x = T.dmatrix("x")
    out = bn.get_output_for(x)
    data = np.array([[1.0, 2.0], [3.0, 6.0]])
    f = theano.function([x], out)
    f(data)
    assert np.allclose(bn.mean.get_value(), [1.0, 2.0])  # 0.5 * 0 + 0.5 * [2, 4]
    f(data)
    assert np.allclose(bn.mean.get_value(), [1.5, 3.0])
    assert not np.allclose(bn.inv_std.get_value(), 1.0)
    frozen = theano.function([x], out, no_default_updates=True)
    before = bn.mean.get_value()
    frozen(data)
    assert np.array_equal(bn.mean.get_value(), before)
    only_std = theano.function([x], out, no_default_updates=[v for v in theano.gof.graph.inputs([out])
                                                             if isinstance(v, theano.SharedVariable)
                                                             and v.name == "mean"])
    only_std(data)
    assert np.array_equal(bn.mean.get_value(), before)
    # an explicit update of the variable wins over its default update
    rm = [v for v in theano.gof.graph.inputs([out]) if isinstance(v, theano.SharedVariable) and v.name == "mean"][0]
    g = theano.function([x], out, updates=[(rm, rm * 0 + 7.0)])
    g(data)
    assert np.allclose(bn.mean.get_value(), 7.0)


def test_clone_of_a_graph_with_shared_variables():
    W = theano.shared(np.ones((2, 2)), name="W")
    x = T.dmatrix("x")
    y = T.dot(x, W)
    y2 = theano.clone(y, share_inputs=False)
    (W2,) = [v for v in theano.gof.graph.inputs([y2]) if isinstance(v, theano.SharedVariable)]
    assert W2 is not W and W2.name == "W"
    assert np.array_equal(W2.get_value(), np.ones((2, 2)))  # the clone reads the same value
    (x2,) = [v for v in theano.gof.graph.inputs([y2]) if v.name == "x" and not isinstance(v, theano.SharedVariable)]
    f = theano.function([x2], y2, updates=[(W2, W2 * 2)])  # an update target
    assert np.array_equal(f(np.eye(2)), np.ones((2, 2)))
    assert np.array_equal(W.get_value(), 2 * np.ones((2, 2)))  # memory-aliased, as in Theano
    W2.set_value(np.zeros((2, 2)))
    assert np.array_equal(W.get_value(), np.zeros((2, 2)))


def test_default_update_attribute():
    s = theano.shared(np.float64(0.0), name="s")
    assert not hasattr(s, "default_update")  # Theano's pfunc tests hasattr
    s.default_update = s + 1
    assert str(s.default_update.owner.op) == "Elemwise{add}"
    f = theano.function([], s * 10)
    assert f() == 0.0 and f() == 10.0 and s.get_value() == 2.0
    del s.default_update
    assert not hasattr(s, "default_update")
    theano.function([], s * 10)()
    assert s.get_value() == 2.0
    with pytest.raises(TypeError, match="dtype and rank"):
        s.default_update = T.dvector("v")
    with pytest.raises(TypeError, match="not shared"):
        T.dscalar("x").default_update = 1.0
    # a random stream's state shows its default update
    rng = T.shared_randomstreams.RandomStreams(1)
    u = rng.uniform((2,))
    (state,) = [v for v in theano.gof.graph.inputs([u]) if isinstance(v, theano.SharedVariable)]
    assert isinstance(state.default_update, T.TensorVariable)


def test_a_default_update_does_not_keep_its_variable_alive():
    # A model built and dropped in a loop (Lasagne's batch norm layers) is freed: the update's
    # graph reads the variable, and nothing holds the pair once the program drops both.
    import gc
    import weakref
    x = T.dvector("x")
    s = theano.shared(np.zeros(3), name="running_mean")
    s.default_update = 0.5 * s + 0.5 * x
    gone = weakref.ref(s)
    del s
    gc.collect()
    assert gone() is None
    # Dropping the Python object while a graph still reads the variable keeps the update.
    s = theano.shared(np.zeros(3), name="m")
    s.default_update = s + x
    out = s * 2.0
    del s
    gc.collect()
    theano.function([x], out)(np.ones(3))
    (s,) = [v for v in theano.gof.graph.inputs([out]) if isinstance(v, theano.SharedVariable)]
    np.testing.assert_array_equal(s.get_value(), np.ones(3))


# ---- op classes: isinstance(node.op, T.Elemwise), Gemv in compiled graphs ----

def test_op_classes_of_symbolic_nodes():
    x = T.dmatrix("x")
    assert isinstance((x + 1).owner.op, T.Elemwise) and type((x + 1).owner.op).__name__ == "Elemwise"
    assert isinstance(x.dimshuffle(1, 0).owner.op, T.DimShuffle)
    assert isinstance(x.sum(0).owner.op, T.CAReduce) and isinstance(x.sum(0).owner.op, T.elemwise.Sum)
    assert isinstance(x.max(0).owner.op, T.CAReduce) and not isinstance(x.max(0).owner.op, T.Elemwise)
    assert isinstance(x[1:].owner.op, T.subtensor.Subtensor)
    assert isinstance(T.nnet.softmax(x).owner.op, T.nnet.Softmax)
    assert isinstance((x + 1).owner.op, theano.gof.graph.Op)
    with pytest.raises(NotImplementedError, match="making an op from its class"):
        T.Elemwise("add")


def test_did_it_use_the_gpu_script(capsys):
    # The Theano tutorial's using_gpu script, word for word but for the sizes.
    from theon import function, config, shared, tensor
    import numpy
    import time

    vlen = 10 * 3  # 10 x #cores x # threads per core
    iters = 2

    rng = numpy.random.RandomState(22)
    x = shared(numpy.asarray(rng.rand(vlen), config.floatX))
    f = function([], tensor.exp(x))
    print(f.maker.fgraph.toposort())
    t0 = time.time()
    for i in range(iters):
        r = f()
    t1 = time.time()
    print("Looping %d times took %f seconds" % (iters, t1 - t0))
    print("Result is %s" % (r,))
    if numpy.any([isinstance(x.op, tensor.Elemwise) and
                  ('Gpu' not in type(x.op).__name__)
                  for x in f.maker.fgraph.toposort()]):
        print('Used the cpu')
    else:
        print('Used the gpu')
    assert capsys.readouterr().out.endswith("Used the cpu\n")


def test_compiled_products_are_gemv_and_dot22():
    A, B, v = T.dmatrix("A"), T.dmatrix("B"), T.dvector("v")
    f = theano.function([A, v], T.dot(A, v))
    ops = [n.op for n in f.maker.fgraph.toposort()]
    assert any(isinstance(op, T.blas.Gemv) and type(op).__name__ == "CGemv" for op in ops)
    assert any(isinstance(op, T.blas_c.CGemv) for op in ops)
    g = theano.function([A, B], T.dot(A, B))
    assert any(type(n.op).__name__ == "Dot22" for n in g.maker.fgraph.toposort())
    h = theano.function([v], T.dot(v, v))
    assert not any(isinstance(n.op, T.blas.Gemv) for n in h.maker.fgraph.toposort())
    assert np.allclose(f(np.eye(2), np.array([1.0, 2.0])), [1.0, 2.0])


def test_module_paths():
    from theon.tensor.nnet.nnet import softmax, relu  # noqa: F401
    from theon.sandbox.softsign import softsign
    assert softsign is T.nnet.softsign
    import theon.tensor.nnet.nnet as nn
    assert nn.sigmoid is T.nnet.sigmoid


# ---- RandomStreams state as Theano's RandomState (the tutorial's idioms) ----

def test_rng_value_is_a_randomstate_tutorial():
    from theon.tensor.shared_randomstreams import RandomStreams
    srng = RandomStreams(seed=234)
    rv_u = srng.uniform((2, 2))
    f = theano.function([], rv_u)
    rng_val = rv_u.rng.get_value(borrow=True)   # Get the rng for rv_u
    rng_val.seed(89234)                         # seeds the generator
    rv_u.rng.set_value(rng_val, borrow=True)    # Assign back seeded rng
    first = f()
    rng_val.seed(89234)
    rv_u.rng.set_value(rng_val, borrow=True)
    assert np.array_equal(f(), first)

    state_after_v0 = rv_u.rng.get_value().get_state()
    f()       # this affects rv_u's generator
    v1 = f()
    rng = rv_u.rng.get_value(borrow=True)
    rng.set_state(state_after_v0)
    rv_u.rng.set_value(rng, borrow=True)
    v2 = f()             # v2 != v1
    v3 = f()             # v3 == v1
    assert not np.array_equal(v1, v2) and np.array_equal(v1, v3)
    with pytest.raises(TypeError, match="state from get_state"):
        rng.set_state(np.random.RandomState(0).get_state())


def test_copy_random_state_between_graphs_tutorial():
    from theon.sandbox.rng_mrg import MRG_RandomStreams
    from theon.tensor.shared_randomstreams import RandomStreams

    class Graph():
        def __init__(self, seed=123):
            self.rng = RandomStreams(seed)
            self.y = self.rng.uniform(size=(1,))

    g1 = Graph(seed=123)
    f1 = theano.function([], g1.y)
    g2 = Graph(seed=987)
    f2 = theano.function([], g2.y)
    assert f1() != f2()

    def copy_random_state(g1, g2):
        if isinstance(g1.rng, MRG_RandomStreams):
            g2.rng.rstate = g1.rng.rstate
        for (su1, su2) in zip(g1.rng.state_updates, g2.rng.state_updates):
            su2[0].set_value(su1[0].get_value())

    copy_random_state(g1, g2)
    assert f1() == f2()


def test_copy_random_state_between_mrg_graphs_tutorial():
    from theon.sandbox.rng_mrg import MRG_RandomStreams

    class Graph():
        def __init__(self, seed=123):
            self.rng = MRG_RandomStreams(seed)
            self.y = self.rng.uniform(size=(1,))

    g1, g2 = Graph(seed=123), Graph(seed=987)
    f1, f2 = theano.function([], g1.y), theano.function([], g2.y)
    assert f1() != f2()

    def copy_random_state(g1, g2):
        if isinstance(g1.rng, MRG_RandomStreams):
            g2.rng.rstate = g1.rng.rstate
        for (su1, su2) in zip(g1.rng.state_updates, g2.rng.state_updates):
            su2[0].set_value(su1[0].get_value())

    copy_random_state(g1, g2)
    assert f1() == f2()
    z1, z2 = g1.rng.normal((3,)), g2.rng.normal((3,))  # streams made after the copy agree too
    assert np.array_equal(theano.function([], z1)(), theano.function([], z2)())


def test_truncated_normal_keras():
    from theon.sandbox.rng_mrg import MRG_RandomStreams as RandomStreams
    rng = RandomStreams(seed=7)
    x = rng.normal(size=(4000,), avg=1.0, std=0.5, dtype="float32", truncate=True)
    assert x.dtype == "float32" and hasattr(x, "rng")
    v = theano.function([], x)()
    assert v.shape == (4000,) and v.min() >= 0.0 and v.max() <= 2.0  # within 2 std of the mean
    assert abs(v.mean() - 1.0) < 0.03 and 0.40 < v.std() < 0.46  # a 2-sigma truncated normal's std is 0.88 std
    assert v.min() < 0.1 and v.max() > 1.9


# ---- config: warn.* keys, print_test_value ----

def test_theano_warn_keys_read_their_defaults():
    # rnnrbm and others read and set them; each is about an old Theano bug Theon never had.
    assert theano.config.warn.round is True and theano.config.warn.reduce_join is False
    assert theano.config.warn.ignore_bug_before == "0.8"
    with pytest.raises(AttributeError):
        theano.config.warn.no_such_bug


def test_print_test_value_debug_faq():
    x = T.scalar('x')
    # Assigning test value
    x.tag.test_value = 42
    try:
        # Enable test value printing
        theano.config.print_test_value = True
        assert x.__repr__() == "x\n" + repr(np.array(42.0, dtype=theano.config.floatX))
        # Disable test value printing
        theano.config.print_test_value = False
        assert x.__repr__() == "x"
        with theano.config.change_flags(print_test_value=True):
            assert theano.config.print_test_value is True and "\n" in repr(x)
        assert theano.config.print_test_value is False and str(x) == "x"
        with pytest.raises(ValueError, match="boolean"):
            theano.config.print_test_value = "maybe"
    finally:
        theano.config.print_test_value = False


def test_print_test_value_from_theano_flags():
    # The debug FAQ's option set as its readers set options: in THEANO_FLAGS.
    import os
    import subprocess
    import sys
    from conftest import THEON_PATH
    script = ("import theon as theano, theon.tensor as T\n"
              "x = T.scalar('x'); x.tag.test_value = 42\n"
              "print(theano.config.print_test_value); print(repr(x))")
    env = dict(os.environ, PYTHONPATH=THEON_PATH, THEANO_FLAGS="print_test_value=True,floatX=float64")
    env.pop("THEON_FLAGS", None)
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.splitlines() == ["True", "x", "array(42.)"], out.stdout + out.stderr


def test_nodes_that_run_on_a_gpu_have_theanos_gpu_names():
    # What f.maker.fgraph.toposort() makes of a node the C++ side placed on cuda0 (no GPU here).
    from theon.compile import _op
    op = _op("Elemwise{exp}", "cuda0", "float32 (?,)")
    assert type(op).__name__ == "GpuElemwise" and isinstance(op, T.Elemwise) and str(op) == "Elemwise{exp}"
    gemv = _op("Dot", "cuda0", "float32 (?,)")
    assert type(gemv).__name__ == "GpuGemv" and isinstance(gemv, T.blas.Gemv)
    assert type(_op("Dot", "cpu", "float32 (?, ?)")).__name__ == "Dot22"
