"""Names from Theano's tutorial, used as Theano programs use them (``import theon as theano``,
``import theon.tensor as T``): plural constructors, TensorType, the Variable classes for
isinstance checks, test values, arange, rounding, and the products built from other ops."""
import warnings

import numpy as np
import pytest

import theon as theano
import theon.tensor as T
from theon.errors import ShapeError
from theon.tensor.var import TensorVariable as TheanoVarModuleTensorVariable  # theano.tensor.var's


def test_plural_constructors_follow_theanos_fns():
    x, y = T.dmatrices("x", "y")
    assert (x.name, y.name) == ("x", "y")
    assert x.type == T.dmatrix and y.type == T.dmatrix
    a, b, c = T.fvectors("a", "b", "c")
    assert a.type == T.fvector and c.name == "c"
    assert T.iscalars("i").type == T.iscalar  # one name: one variable, not a list
    assert [v.type for v in T.lmatrices(2)] == [T.lmatrix, T.lmatrix]  # an int n: n unnamed ones
    assert [v.name for v in T.dscalars("uv")] == ["u", "v"]  # Theano iterates a single string's letters
    assert T.dscalars(["p", "q"])[1].name == "q"
    assert T.ftensor3s("t", "u")[0].type == T.ftensor3
    assert T.dtensor4s("t", "u")[1].type == T.dtensor4
    assert T.imatrices("m", "n")[0].dtype == "int32"
    assert T.bvectors("m", "n")[0].dtype == "int8"
    assert T.drows("r", "s")[0].broadcastable == (True, False)
    assert T.fcols("r", "s")[0].broadcastable == (False, True)
    m1, m2 = T.matrices("m1", "m2")
    assert m1.dtype == theano.config.floatX and m2.ndim == 2
    assert T.scalars("s", "t")[0].ndim == 0 and T.vectors("v", "w")[0].ndim == 1
    assert T.tensor3s("a", "b")[0].ndim == 3 and T.tensor4s("a", "b")[0].ndim == 4
    f = theano.function([x, y], x + y)
    np.testing.assert_array_equal(f(np.ones((2, 2)), np.ones((2, 2))), 2 * np.ones((2, 2)))


def test_tensor_type_is_callable_and_variables_pass_isinstance_checks():
    col = T.TensorType("float64", (False, True))("x")
    assert col.broadcastable == (False, True) and col.dtype == "float64" and col.name == "x"
    assert T.TensorType("int32", ())().type == T.iscalar
    c = T.constant(np.ones(2))
    s = theano.shared(np.zeros(3))
    for v in (col, col * 2, c, s):
        assert isinstance(v, theano.gof.Variable)
        assert isinstance(v, T.Variable)
        assert isinstance(v, T.TensorVariable)
        assert isinstance(v, TheanoVarModuleTensorVariable)
    assert isinstance(c, theano.gof.Constant)
    assert not isinstance(np.ones(2), theano.gof.Variable)
    assert callable(T.var)  # the module theano.tensor.var does not hide T.var (variance)


# ---- test values -------------------------------------------------------------------------


def test_test_values_are_computed_when_building_and_shape_errors_show_then():
    with theano.config.change_flags(compute_test_value="raise"):
        x = T.dmatrix("x")
        x.tag.test_value = np.ones((2, 3))
        w = T.dmatrix("w")
        w.tag.test_value = np.ones((4, 5))
        y = T.tanh(x) * 2
        np.testing.assert_allclose(y.tag.test_value, 2 * np.tanh(np.ones((2, 3))))
        with pytest.raises(ShapeError, match="(?i)dot"):
            T.dot(x, w)  # (2, 3) . (4, 5): at graph-build time, not when a function runs
        n = T.lscalar("n")
        with pytest.raises(ValueError, match="n has no test value"):
            T.arange(n)
    with theano.config.change_flags(compute_test_value="warn"):
        with pytest.warns(UserWarning, match="has no test value"):
            T.arange(T.lscalar("m"))
    with theano.config.change_flags(compute_test_value="ignore"):
        assert not hasattr(T.arange(T.lscalar("k")).tag, "test_value")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        z = T.dot(x, w)  # off (the default): nothing is computed
    assert not hasattr(z.tag, "test_value")


def test_test_values_are_checked_like_theanos():
    x = T.fmatrix("x")
    x.tag.test_value = np.ones((2, 2), dtype=np.int8)  # converts where no value changes
    assert x.tag.test_value.dtype == np.float32
    with pytest.raises(TypeError, match="lose precision"):
        x.tag.test_value = np.ones((2, 2))  # float64 into float32
    with pytest.raises(TypeError, match="rank 2"):
        x.tag.test_value = np.ones(3, dtype=np.float32)
    with pytest.raises(theano.errors.ConfigError):
        theano.config.compute_test_value = "sometimes"


# ---- arange --------------------------------------------------------------------------------


def test_arange_with_symbolic_bounds_and_theanos_dtypes():
    n = T.lscalar("n")
    f = theano.function([n], T.arange(n))
    np.testing.assert_array_equal(f(5), np.arange(5))
    assert f(5).dtype == np.int64
    assert f(-2).shape == (0,)
    start, stop, step = T.iscalars("start", "stop", "step")
    g = theano.function([start, stop, step], T.arange(start, stop, step))
    for args in [(2, 11, 3), (10, -1, -2), (5, 5, 1), (7, 3, 1)]:
        np.testing.assert_array_equal(g(*args), np.arange(*args))
    assert T.arange(T.fscalar("x")).dtype == "float32"
    assert T.arange(T.iscalar("i"), T.dscalar("d")).dtype == "float64"
    assert T.arange(0.0, 1.0, 0.25).dtype == theano.config.floatX
    assert T.arange(3, dtype="float64").dtype == "float64"
    x = T.dscalar("x")
    np.testing.assert_allclose(theano.function([x], T.arange(0.0, x, 0.1, dtype="float64"))(1.0),
                               np.arange(0.0, 1.0, 0.1))


def test_arange_step_of_zero_is_a_clear_error():
    with pytest.raises(ValueError, match="step is 0"):
        T.arange(0, 5, 0)
    s = T.lscalar("s")
    f = theano.function([s], T.arange(0, 5, s))
    with pytest.raises(ValueError, match=r"ARange\{dtype=int64\}\(0, 5, s\): the step is 0 \(start=0, stop=5, step=0\)"):
        f(0)


def test_arange_gradient_and_the_tutorial_index():
    start, step = T.dscalars("start", "step")
    y = T.arange(start, 10.0, step)
    cost = (y ** 2).sum()
    gs, gst = theano.grad(cost, [start, step])
    f = theano.function([start, step], [gs, gst])
    v = np.arange(1.0, 10.0, 2.0)
    got = f(1.0, 2.0)
    np.testing.assert_allclose(got[0], (2 * v).sum())
    np.testing.assert_allclose(got[1], (2 * v * np.arange(len(v))).sum())
    X = T.dmatrix("X")
    rows = X[T.arange(X.shape[0])]  # one integer-array index built from arange
    np.testing.assert_array_equal(theano.function([X], rows)(np.eye(3)), np.eye(3))


# ---- rounding ------------------------------------------------------------------------------


def test_round_defaults_to_half_to_even_and_other_rounding_names():
    x = T.dvector("x")
    v = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.4, 3.7])
    assert np.array_equal(theano.function([x], T.round(x))(v), np.round(v))
    np.testing.assert_array_equal(theano.function([x], T.round(x, mode="half_away_from_zero"))(v),
                                  np.sign(v) * np.floor(np.abs(v) + 0.5))
    np.testing.assert_array_equal(theano.function([x], T.round_half_to_even(x))(v), np.round(v))
    for name, ref in [("floor", np.floor), ("ceil", np.ceil), ("trunc", np.trunc), ("sgn", np.sign),
                      ("square", np.square), ("sqr", np.square)]:
        np.testing.assert_array_equal(theano.function([x], getattr(T, name)(x))(v), ref(v), err_msg=name)
    with pytest.raises(ValueError, match="mode"):
        T.round(x, mode="up")
    assert T.floor(T.ivector("i")).dtype == "float64"  # Theano's upgrade to float
    g = theano.function([x], theano.grad(T.floor(x).sum() + T.round(x).sum(), x))(v)
    np.testing.assert_array_equal(g, np.zeros_like(v))


# ---- products --------------------------------------------------------------------------------


def test_dot_of_nd_tensors_and_tensordot_match_numpy():
    rng = np.random.default_rng(0)
    a, b = T.dtensor3s("a", "b")
    av, bv = rng.normal(size=(2, 3, 4)), rng.normal(size=(5, 4, 6))
    np.testing.assert_allclose(theano.function([a, b], T.dot(a, b))(av, bv), np.tensordot(av, bv, [[2], [1]]))
    np.testing.assert_allclose(theano.function([a, b], a.dot(b))(av, bv), np.dot(av, bv))
    cv = rng.normal(size=(3, 4, 7))
    c = T.dtensor3("c")
    np.testing.assert_allclose(theano.function([a, c], T.tensordot(a, c, 0))(av, cv), np.tensordot(av, cv, 0))
    np.testing.assert_allclose(theano.function([a, c], T.tensordot(a, c, [[1, 2], [0, 1]]))(av, cv),
                               np.tensordot(av, cv, [[1, 2], [0, 1]]))
    np.testing.assert_allclose(theano.function([a, c], T.tensordot(a, c, [1, 0]))(av, cv),
                               np.tensordot(av, cv, [1, 0]))
    m = T.dmatrix("m")
    mv = rng.normal(size=(4, 3))
    np.testing.assert_allclose(theano.function([a, m], T.tensordot(a, m, axes=[[1], [1]]))(av, mv),
                               np.tensordot(av, mv, [[1], [1]]))
    with pytest.raises(ShapeError, match="tensordot"):
        T.tensordot(a, m, [[0, 1], [0]])


def test_batched_dot_outer_and_shape_padding():
    rng = np.random.default_rng(1)
    x, y = T.dtensor3s("x", "y")
    xv, yv = rng.normal(size=(4, 2, 3)), rng.normal(size=(4, 3, 5))
    np.testing.assert_allclose(theano.function([x, y], T.batched_dot(x, y))(xv, yv), np.einsum("bij,bjk->bik", xv, yv))
    m = T.dmatrix("m")
    mv = rng.normal(size=(4, 3))
    np.testing.assert_allclose(theano.function([x, m], T.batched_dot(x, m))(xv, mv), np.einsum("bij,bj->bi", xv, mv))
    np.testing.assert_allclose(theano.function([x, y], T.batched_tensordot(x, y, [[2], [1]]))(xv, yv),
                               np.einsum("bij,bjk->bik", xv, yv))
    u, w = T.dvectors("u", "w")
    np.testing.assert_allclose(theano.function([u, w], T.outer(u, w))(np.arange(3.0), np.arange(4.0)),
                               np.outer(np.arange(3.0), np.arange(4.0)))
    assert T.shape_padleft(m).broadcastable == (True, False, False)
    assert T.shape_padright(m, 2).broadcastable == (False, False, True, True)
    assert T.shape_padaxis(m, 1).broadcastable == (False, True, False)
    assert theano.function([m], T.shape_padaxis(m, -1))(mv).shape == (4, 3, 1)
