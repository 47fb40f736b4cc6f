"""Random streams (issue 15): Theano's RandomStreams and MRG_RandomStreams on Theon's Philox
engine: Theano-style usage, reproducibility after seed(), the state advancing through the
function's default updates, get_value/set_value of the state, no_default_updates, errors
naming the call, and the two programs that need random numbers most (a dropout layer, a
denoising autoencoder's corruption step) trained a few steps with a falling loss.
"""
import numpy as np
import pytest

import theon
import theon.tensor as T
from theon.sandbox.rng_mrg import MRG_RandomStreams
from theon.tensor.shared_randomstreams import RandomStreams


@pytest.fixture(params=[RandomStreams, MRG_RandomStreams], ids=["RandomStreams", "MRG_RandomStreams"])
def Streams(request):
    return request.param


def test_theano_style_draws(Streams):
    srng = Streams(seed=234)
    rv_u = srng.uniform((2, 2))
    rv_n = srng.normal((2, 2))
    f = theon.function([], rv_u)
    g = theon.function([], rv_n, no_default_updates=True)
    nearly_zeros = theon.function([], rv_u + rv_u - 2 * rv_u)
    a, b = f(), f()
    assert a.shape == (2, 2) and a.dtype == theon.config.floatX
    assert not np.array_equal(a, b)
    assert ((0 < a) & (a < 1)).all()
    np.testing.assert_array_equal(g(), g())  # no default updates: the same numbers each call
    np.testing.assert_allclose(nearly_zeros(), 0, atol=1e-6)


def test_each_distribution_has_the_right_shape_dtype_and_range(Streams):
    srng = Streams(seed=1)
    x = T.matrix("x")
    outs = [srng.uniform(x.shape, low=-1, high=1), srng.normal(size=(3, 4), avg=5.0, std=0.5, dtype="float64"),
            srng.binomial(size=(1000,), p=0.25), srng.multinomial(pvals=[[0.1, 0.9], [1.0, 0.0]]),
            srng.uniform(size=(3,), ndim=1, nstreams=4)]
    if Streams is RandomStreams:
        outs += [srng.random_integers((500,), 3, 6), srng.choice((5,), a=10, replace=False),
                 srng.permutation(n=8)]
    f = theon.function([x], outs)
    r = f(np.zeros((2, 3), theon.config.floatX))
    assert r[0].shape == (2, 3) and ((-1 < r[0]) & (r[0] < 1)).all()
    assert r[1].shape == (3, 4) and r[1].dtype == np.float64
    assert r[2].dtype == np.int64 and set(np.unique(r[2])) <= {0, 1} and 150 < r[2].sum() < 350
    np.testing.assert_array_equal(r[3].sum(axis=1), [1, 1])
    np.testing.assert_array_equal(r[3][1], [1, 0])
    assert r[4].shape == (3,)
    if Streams is RandomStreams:
        assert set(np.unique(r[5])) == {3, 4, 5, 6}
        assert len(set(r[6].tolist())) == 5 and ((0 <= r[6]) & (r[6] < 10)).all()
        assert sorted(r[7].tolist()) == list(range(8))


def test_seed_reproduces_and_the_state_advances_per_call(Streams):
    srng = Streams(seed=42)
    u = srng.uniform((5,))
    f = theon.function([], u)
    first, second = f(), f()
    np.testing.assert_array_equal(u.rng.get_value(), [42, 2])  # [seed, calls]
    srng.seed(42)
    np.testing.assert_array_equal(f(), first)
    np.testing.assert_array_equal(f(), second)
    # Theano's idiom: save the state, draw, restore, draw again.
    saved = u.rng.get_value(borrow=True).copy()
    a = f()
    u.rng.set_value(saved, borrow=True)
    np.testing.assert_array_equal(f(), a)
    # state_updates lists (state, next state) pairs a function can use explicitly.
    (state, nxt), = srng.state_updates
    h = theon.function([], u, updates=[(state, nxt)], no_default_updates=True)
    before = state.get_value()[1]
    h()
    assert state.get_value()[1] == before + 1


def test_no_default_updates_for_a_list_of_states():
    srng = RandomStreams(3)
    a, b = srng.uniform((2,)), srng.uniform((2,))
    f = theon.function([], [a, b], no_default_updates=[a.rng])
    f()
    assert a.rng.get_value()[1] == 0 and b.rng.get_value()[1] == 1


def test_bad_input_is_a_clear_error_naming_the_call():
    srng = RandomStreams(0)
    with pytest.raises(ValueError, match=r"binomial.*p must be in \[0, 1\], got 1.5"):
        srng.binomial((3,), p=1.5)
    with pytest.raises(ValueError, match="negative size -1"):
        srng.uniform((2, -1))
    with pytest.raises(ValueError, match="cannot take 4 values from 3 without replacement"):
        srng.choice((4,), a=3, replace=False)
    with pytest.raises(ValueError, match="pvals.*sums to 0.5"):
        srng.multinomial(pvals=[[0.25, 0.25]])
    p = T.dvector("p")
    f = theon.function([p], srng.binomial((2,), p=p))
    f(np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match=r"binomial\(size=\(2,\), n=1, p=p\): p must be in \[0, 1\]"):
        f(np.array([0.5, 1.5]))
    n = T.lscalar("n")
    g = theon.function([n], srng.normal((n, 2)))
    assert g(3).shape == (3, 2)
    with pytest.raises(theon.errors.ShapeError, match="negative size -3"):
        g(-3)


def test_draws_are_identical_on_the_cpu_and_the_simulated_or_real_gpu():
    if not theon.cuda_status().ok:
        pytest.skip("no CUDA device (tests/cpp/backends/cuda/random_gpu_test.cpp compares on the simulated one)")
    results = []
    for device in ["cpu", "cuda0"]:
        with theon.change_flags(device=device):
            srng = RandomStreams(7)
            f = theon.function([], [srng.uniform((101,)), srng.normal((101,), dtype="float64"),
                                     srng.binomial((50,), p=0.4)])
        results.append(f())
    for c, g in zip(*results):
        np.testing.assert_array_equal(c, g)


# ---- the programs that need random numbers ----------------------------------------------


def test_dropout_layer_trains_with_a_falling_loss():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((256, 20)).astype(theon.config.floatX)
    w_true = rng.standard_normal((20, 1))
    y = (X @ w_true > 0).astype(theon.config.floatX).ravel()
    srng = MRG_RandomStreams(seed=1)
    x, t = T.matrix("x"), T.vector("t")
    W1 = theon.shared((rng.standard_normal((20, 32)) * 0.3).astype(theon.config.floatX), name="W1")
    W2 = theon.shared((rng.standard_normal((32,)) * 0.3).astype(theon.config.floatX), name="W2")
    h = T.tanh(T.dot(x, W1))
    keep = srng.binomial(size=h.shape, p=0.8, dtype=theon.config.floatX)
    h_drop = h * keep / 0.8
    p = T.nnet.sigmoid(T.dot(h_drop, W2))
    loss = T.mean(T.nnet.binary_crossentropy(p, t)) if hasattr(T.nnet, "binary_crossentropy") else \
        -T.mean(t * T.log(p) + (1 - t) * T.log(1 - p))
    gW1, gW2 = theon.grad(loss, [W1, W2])
    train = theon.function([x, t], loss, updates=[(W1, W1 - 0.5 * gW1), (W2, W2 - 0.5 * gW2)])
    losses = [float(train(X, y)) for _ in range(40)]
    assert np.mean(losses[-5:]) < 0.8 * np.mean(losses[:5])
    state = keep.rng.get_value()
    assert state[1] == 40  # one mask per step


def test_denoising_autoencoder_corruption_trains_with_a_falling_loss():
    rng = np.random.default_rng(1)
    X = (rng.random((200, 30)) > 0.5).astype(theon.config.floatX)
    srng = RandomStreams(seed=2)
    x = T.matrix("x")
    W = theon.shared((rng.standard_normal((30, 12)) * 0.1).astype(theon.config.floatX), name="W")
    b = theon.shared(np.zeros(12, theon.config.floatX), name="b")
    c = theon.shared(np.zeros(30, theon.config.floatX), name="c")
    # The corruption step of the dA tutorial: zero a random 30% of the inputs.
    corrupted = srng.binomial(size=x.shape, n=1, p=0.7, dtype=theon.config.floatX) * x
    hidden = T.nnet.sigmoid(T.dot(corrupted, W) + b)
    z = T.nnet.sigmoid(T.dot(hidden, W.T) + c)
    cost = T.mean(-T.sum(x * T.log(z) + (1 - x) * T.log(1 - z), axis=1))
    params = [W, b, c]
    grads = theon.grad(cost, params)
    train = theon.function([x], cost, updates=[(p, p - 0.1 * g) for p, g in zip(params, grads)])
    costs = [float(train(X)) for _ in range(30)]
    assert costs[-1] < costs[0]
    assert np.mean(costs[-5:]) < np.mean(costs[:5])
