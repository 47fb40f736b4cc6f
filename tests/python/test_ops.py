"""Every op of theon.tensor against NumPy in float64: random shapes, broadcasting, size-0
dims and non-contiguous inputs."""
import numpy as np
import pytest

import theon
import theon.tensor as T

F = "float64"


def run(inputs, out, *values):
    return theon.function(inputs, out, on_unused_input="ignore")(*values)


def rand(rng, shape, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, size=shape)


def var(ndim, dtype=F, name=None):
    return T.tensor(dtype, shape=(None,) * ndim, name=name)


SHAPES = [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((2, 3, 4), (4,)), ((5,), ()), ((0, 3), (1, 3)), ((2, 0), (2, 1))]

BINARY = [
    (T.add, np.add, None), (T.sub, np.subtract, None), (T.mul, np.multiply, None),
    (T.true_div, np.true_divide, "nonzero"), (T.floor_div, np.floor_divide, "nonzero"), (T.mod, np.mod, "nonzero"),
    (T.pow, np.power, "positive"), (T.maximum, np.maximum, None), (T.minimum, np.minimum, None),
    (T.lt, np.less, None), (T.gt, np.greater, None), (T.le, np.less_equal, None), (T.ge, np.greater_equal, None),
    (T.eq, np.equal, None), (T.neq, np.not_equal, None),
]


@pytest.mark.parametrize("sa,sb", SHAPES)
@pytest.mark.parametrize("op,ref,domain", BINARY, ids=[b[0].__name__ for b in BINARY])
def test_binary(op, ref, domain, sa, sb, rng):
    a, b = rand(rng, sa), rand(rng, sb)
    if domain == "nonzero":
        b = np.where(np.abs(b) < 0.3, 0.7, b)
    if domain == "positive":
        a = np.abs(a) + 0.1
    x, y = var(len(sa)), var(len(sb))
    got = run([x, y], op(x, y), a, b)
    want = ref(a, b)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


OPERATORS = [
    (lambda a, b: a + b), (lambda a, b: a - b), (lambda a, b: a * b), (lambda a, b: a / b),
    (lambda a, b: a // b), (lambda a, b: a % b), (lambda a, b: abs(a) ** b), (lambda a, b: a < b),
    (lambda a, b: a > b), (lambda a, b: a <= b), (lambda a, b: a >= b), (lambda a, b: -a + b),
    (lambda a, b: 2.5 - a * 3 + b / 1.5), (lambda a, b: 1 / (a + 10.0)), (lambda a, b: 2.0 ** a),
]


@pytest.mark.parametrize("k", range(len(OPERATORS)))
def test_operators(k, rng):
    fn = OPERATORS[k]
    a, b = rand(rng, (3, 4)), rand(rng, (4,))
    b = np.where(np.abs(b) < 0.3, 0.7, b)
    x, y = T.dmatrix("x"), T.dvector("y")
    np.testing.assert_allclose(run([x, y], fn(x, y), a, b), fn(a, b), rtol=1e-12)


def test_bitwise_operators(rng):
    a, b = rng.integers(-50, 50, (3, 4)).astype(np.int32), rng.integers(-50, 50, (4,)).astype(np.int32)
    x, y = T.imatrix(), T.ivector()
    f = theon.function([x, y], [x & y, x | y, x ^ y, ~x, x & 7])
    for got, want in zip(f(a, b), [a & b, a | b, a ^ b, ~a, a & 7]):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    p, q = T.tensor("bool", shape=(None,)), T.tensor("bool", shape=(None,))
    bp, bq = np.array([True, False, True, False]), np.array([True, True, False, False])
    for got, want in zip(theon.function([p, q], [p & q, p | q, p ^ q, ~p, T.and_(p, q), T.invert(q)])(bp, bq),
                         [bp & bq, bp | bq, bp ^ bq, ~bp, bp & bq, ~bq]):
        np.testing.assert_array_equal(got, want)


UNARY = [
    (T.neg, np.negative, None), (T.abs, np.abs, None), (T.abs_, np.abs, None), (T.sgn, np.sign, None),
    (T.sqr, np.square, None), (T.exp, np.exp, None), (T.log, np.log, "positive"), (T.log1p, np.log1p, "positive"),
    (T.expm1, np.expm1, None), (T.sqrt, np.sqrt, "positive"), (T.tanh, np.tanh, None), (T.sin, np.sin, None),
    (T.cos, np.cos, None), (T.nnet.sigmoid, lambda a: 1 / (1 + np.exp(-a)), None),
    (T.nnet.softplus, lambda a: np.log1p(np.exp(a)), None), (T.nnet.relu, lambda a: np.maximum(a, 0), None),
    (T.log2, np.log2, "positive"), (T.log10, np.log10, "positive"), (T.inv, np.reciprocal, "positive"),
    (lambda v: T.nnet.relu(v, 0.1), lambda a: np.where(a > 0, a, 0.1 * a), None),
    (T.nnet.elu, lambda a: np.where(a > 0, a, np.expm1(a)), None),
    (T.nnet.hard_sigmoid, lambda a: np.clip(0.2 * a + 0.5, 0, 1), None),
]


@pytest.mark.parametrize("shape", [(3, 4), (0, 4), (2, 3, 2), ()])
@pytest.mark.parametrize("op,ref,domain", UNARY, ids=[str(i) for i in range(len(UNARY))])
def test_unary(op, ref, domain, shape, rng):
    a = rand(rng, shape)
    if domain == "positive":
        a = np.abs(a) + 0.1
    x = var(len(shape))
    got = run([x], op(x), a)
    np.testing.assert_allclose(got, ref(a), rtol=1e-12, atol=1e-14)
    assert got.shape == np.shape(ref(a))


def test_noncontiguous_inputs(rng):
    base = rand(rng, (6, 8))
    views = [base[::2, 1::3], base.T, base[::-1, ::-2], np.broadcast_to(base[0], (3, 8)), np.asfortranarray(base)]
    x = T.dmatrix()
    f = theon.function([x], T.exp(x) * 2 + x.sum(axis=0))
    for v in views:
        np.testing.assert_allclose(f(v), np.exp(v) * 2 + v.sum(axis=0), rtol=1e-12)


def test_clip_switch_cast(rng):
    a = rand(rng, (4, 5))
    x = T.dmatrix()
    f = theon.function([x], [T.clip(x, -0.5, 0.5), T.switch(x > 0, x, -x), T.where(x < 0, 0.0, x),
                             T.cast(x, "int32"), x.astype("float32"), T.cast(x > 0, "floatX")])
    c, s, w, i, f32, fx = f(a)
    np.testing.assert_allclose(c, np.clip(a, -0.5, 0.5))
    np.testing.assert_allclose(s, np.abs(a))
    np.testing.assert_allclose(w, np.where(a < 0, 0, a))
    np.testing.assert_array_equal(i, a.astype(np.int32))
    assert f32.dtype == np.float32 and fx.dtype == np.dtype(theon.config.floatX)


REDUCTIONS = [(T.sum, np.sum), (T.mean, np.mean), (T.prod, np.prod), (T.max, np.max), (T.min, np.min)]


@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 2), [1]])
@pytest.mark.parametrize("op,ref", REDUCTIONS, ids=[r[0].__name__ for r in REDUCTIONS])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions(op, ref, axis, keepdims, rng):
    a = rand(rng, (3, 4, 5))
    x = T.dtensor3()
    got = run([x], op(x, axis=axis, keepdims=keepdims), a)
    want = ref(a, axis=tuple(axis) if isinstance(axis, list) else axis, keepdims=keepdims)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_reduction_methods_and_size0(rng):
    a = rand(rng, (0, 4))
    x = T.dmatrix()
    s, m = run([x], [x.sum(axis=0), x.prod(axis=0)], a)
    np.testing.assert_array_equal(s, np.zeros(4))
    np.testing.assert_array_equal(m, np.ones(4))
    b = rand(rng, (3, 4))
    out = run([x], [x.sum(), x.mean(axis=1), x.max(axis=0), x.min(), x.argmax(axis=1), x.argmin(),
                    x.var(axis=0), x.std(), T.var(x, axis=1, ddof=1), x.norm(2, axis=1), x.norm(1),
                    T.any(x > 1), T.all(x > -3, axis=1)], b)
    want = [b.sum(), b.mean(axis=1), b.max(axis=0), b.min(), b.argmax(axis=1), b.argmin(), b.var(axis=0), b.std(),
            b.var(axis=1, ddof=1), np.linalg.norm(b, axis=1), np.abs(b).sum(), np.any(b > 1), np.all(b > -3, axis=1)]
    for g, w in zip(out, want):
        np.testing.assert_allclose(g, w, rtol=1e-10)
    assert out[4].dtype == np.int64


def test_argmax_argmin(rng):
    a = rand(rng, (4, 6))
    x = T.dmatrix()
    got = run([x], [T.argmax(x), T.argmax(x, axis=0), T.argmin(x, axis=-1, keepdims=True), T.argmax(x, axis=[1])], a)
    for g, w in zip(got, [a.argmax(), a.argmax(0), a.argmin(-1)[:, None], a.argmax(1)]):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("sa,sb", [((3, 4), (4, 5)), ((4,), (4, 2)), ((3, 4), (4,)), ((5,), (5,)), ((0, 3), (3, 2))])
def test_dot(sa, sb, rng):
    a, b = rand(rng, sa), rand(rng, sb)
    x, y = var(len(sa)), var(len(sb))
    np.testing.assert_allclose(run([x, y], T.dot(x, y), a, b), np.dot(a, b), rtol=1e-12)
    np.testing.assert_allclose(run([x, y], x.dot(y), a, b), np.dot(a, b), rtol=1e-12)


def test_matmul_and_float32_dot(rng):
    a, b = rand(rng, (2, 3, 4)), rand(rng, (2, 4, 5))
    x, y = T.dtensor3(), T.dtensor3()
    np.testing.assert_allclose(run([x, y], x @ y, a, b), a @ b, rtol=1e-12)
    np.testing.assert_allclose(run([x, y], T.batched_dot(x, y), a, b), a @ b, rtol=1e-12)
    p, q = T.fmatrix(), T.fmatrix()
    a32, b32 = rand(rng, (5, 6)).astype(np.float32), rand(rng, (6, 3)).astype(np.float32)
    got = run([p, q], T.dot(p, q), a32, b32)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, a32 @ b32, rtol=1e-5)
    np.testing.assert_allclose(run([x.dimshuffle(0, 1, 2)], T.outer(x[0, 0], x[1, 0]), a),
                               np.outer(a[0, 0], a[1, 0]))


def test_shape_ops(rng):
    a = rand(rng, (2, 3, 4))
    x = T.dtensor3()
    f = theon.function([x], [x.T, x.transpose(1, 0, 2), T.transpose(x, (2, 0, 1)), x.dimshuffle(2, 'x', 0, 1),
                             x.dimshuffle((0, 1, 2, 'x')), x.reshape((6, 4)), x.reshape((-1,)), x.reshape(24),
                             x.flatten(), x.flatten(2), T.flatten(x, outdim=2), x.shape, T.shape(x), x.size,
                             x.reshape((x.shape[0], -1)), T.reshape(x, x.shape[::-1]),
                             x[0].dimshuffle('x', 0, 1), T.broadcast_to(x[0, 0], (3, 4))])
    got = f(a)
    want = [a.T, a.transpose(1, 0, 2), a.transpose(2, 0, 1), a.transpose(2, 0, 1)[:, None], a[..., None],
            a.reshape(6, 4), a.reshape(-1), a.reshape(24), a.ravel(), a.reshape(2, 12), a.reshape(2, 12),
            np.array(a.shape), np.array(a.shape), np.array(a.size), a.reshape(2, -1), a.reshape(4, 3, 2),
            a[0][None], np.broadcast_to(a[0, 0], (3, 4))]
    for k, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape, k
        np.testing.assert_allclose(g, w, err_msg=str(k))


def test_join_stack(rng):
    a, b = rand(rng, (2, 3)), rand(rng, (4, 3))
    x, y = T.dmatrix(), T.dmatrix()
    got = run([x, y], [T.concatenate([x, y]), T.concatenate([x.T, y.T], axis=1), T.join(0, x, y),
                       T.stack([x[0], y[0]]), T.stack([x[0], y[0]], axis=1), T.stack(x[0], y[1], x[1])], a, b)
    want = [np.concatenate([a, b]), np.concatenate([a.T, b.T], axis=1), np.concatenate([a, b]),
            np.stack([a[0], b[0]]), np.stack([a[0], b[0]], axis=1), np.stack([a[0], b[1], a[1]])]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w)


def test_indexing(rng):
    a = rand(rng, (5, 6, 3))
    x = T.dtensor3()
    i, j = T.lscalar("i"), T.lscalar("j")
    idx = T.lvector("idx")
    f = theon.function([x, i, j, idx], [x[1], x[-1, 2], x[1:4], x[::2, ::-1], x[:, 1:5:2, 0], x[i:j], x[i],
                                        x[:, i], x[idx], x[[0, 2, 2]], x[np.array([4, 1])], x[..., 0],
                                        x[None, 0], x[:, None, 1], x[1, ..., None], x[i:, :j, -2]],
                       on_unused_input="ignore")
    iv = np.array([3, 0, 3])
    got = f(a, 1, 4, iv)
    want = [a[1], a[-1, 2], a[1:4], a[::2, ::-1], a[:, 1:5:2, 0], a[1:4], a[1], a[:, 1], a[iv], a[[0, 2, 2]],
            a[[4, 1]], a[..., 0], a[None, 0], a[:, None, 1], a[1, ..., None], a[1:, :4, -2]]
    for k, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape, k
        np.testing.assert_allclose(g, w, err_msg=str(k))


def test_set_inc_subtensor(rng):
    a = rand(rng, (5, 4))
    x = T.dmatrix()
    y = T.dvector()
    idx = T.lvector()
    f = theon.function([x, y, idx], [T.set_subtensor(x[1], y), T.inc_subtensor(x[1:3], y), T.set_subtensor(x[:, 0], 0.0),
                                     T.inc_subtensor(x[idx], y)])
    v = rand(rng, (4,))
    iv = np.array([0, 2, 0])
    got = f(a, v, iv)
    w0 = a.copy(); w0[1] = v
    w1 = a.copy(); w1[1:3] += v
    w2 = a.copy(); w2[:, 0] = 0
    w3 = a.copy(); np.add.at(w3, iv, v)
    for g, w in zip(got, [w0, w1, w2, w3]):
        np.testing.assert_allclose(g, w)


def test_construction(rng):
    a = rand(rng, (2, 3))
    x = T.dmatrix()
    n = T.lscalar()
    f = theon.function([x, n], [T.zeros_like(x), T.ones_like(x, dtype="int32"), T.alloc(1.5, 2, 3), T.alloc(x[0, 0], n, 2),
                                T.zeros((2, 2)), T.ones((n,), dtype="int64"), T.fill(x, 3.0),
                                T.extra_ops.to_one_hot(T.cast(x[0] > 0, "int64"), 2)])
    got = f(a, 3)
    want = [np.zeros_like(a), np.ones_like(a, dtype=np.int32), np.full((2, 3), 1.5), np.full((3, 2), a[0, 0]),
            np.zeros((2, 2)), np.ones(3, dtype=np.int64), np.full((2, 3), 3.0), np.eye(2)[(a[0] > 0).astype(int)]]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w)
    assert got[1].dtype == np.int32 and got[5].dtype == np.int64


def test_take(rng):
    a = rand(rng, (4, 5))
    x = T.dmatrix()
    got = run([x], [T.take(x, [3, 1]), T.take(x, np.array([0, 4]), axis=1)], a)
    np.testing.assert_allclose(got[0], np.take(a, [3, 1]))
    np.testing.assert_allclose(got[1], np.take(a, [0, 4], axis=1))


def test_nnet(rng):
    a = rand(rng, (4, 5))
    y = np.array([0, 3, 4, 1])
    x = T.dmatrix()
    t = T.lvector()
    sm = np.exp(a - a.max(1, keepdims=True))
    sm /= sm.sum(1, keepdims=True)
    got = run([x, t], [T.nnet.softmax(x), T.nnet.logsoftmax(x), T.nnet.categorical_crossentropy(T.nnet.softmax(x), t),
                       T.nnet.categorical_crossentropy(T.nnet.softmax(x), T.extra_ops.to_one_hot(t, 5, "float64")),
                       T.nnet.binary_crossentropy(T.nnet.sigmoid(x), 0.25)], a, y)
    want = [sm, np.log(sm), -np.log(sm[np.arange(4), y]), -np.log(sm[np.arange(4), y])]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10)
    s = 1 / (1 + np.exp(-a))
    np.testing.assert_allclose(got[4], -(0.25 * np.log(s) + 0.75 * np.log(1 - s)), rtol=1e-10)


def test_isnan_isinf():
    x = T.dvector()
    a = np.array([1.0, np.nan, np.inf, -np.inf])
    n, i = run([x], [T.isnan(x), T.isinf(x)], a)
    np.testing.assert_array_equal(n, np.isnan(a))
    np.testing.assert_array_equal(i, np.isinf(a))


def test_nep50_literals():
    x = T.fvector()
    i8 = T.bvector()
    assert (x * 2.0).dtype == "float32"
    assert (x + 1).dtype == "float32"
    assert (i8 + 3).dtype == "int8"
    assert (x + np.float64(2.0)).dtype == "float64"  # NumPy scalars are strong
    assert (T.dvector() * 2).dtype == "float64"
    assert (T.ivector() * 1.5).dtype == theon.config.floatX
    got = theon.function([x], x * 2.5)(np.array([1, 2], dtype=np.float32))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, [2.5, 5.0])


def test_typed_constructors():
    for prefix, dt in [("f", "float32"), ("d", "float64"), ("b", "int8"), ("w", "int16"), ("i", "int32"),
                       ("l", "int64")]:
        for k, kind in enumerate(["scalar", "vector", "matrix", "tensor3", "tensor4"]):
            v = getattr(T, prefix + kind)("v")
            assert v.dtype == dt and v.ndim == k and v.name == "v"
    assert T.matrix().dtype == theon.config.floatX
    assert T.scalar(dtype="int32").dtype == "int32"
    assert T.row().broadcastable == (True, False) and T.col().broadcastable == (False, True)
    assert T.tensor("float64", (False, True, False)).broadcastable == (False, True, False)
    assert T.TensorType("float32", (False,))("z").type == T.fvector().type


def test_variable_protocol():
    x = T.dvector("x")
    assert x.ndim == 1 and x.dtype == "float64" and x.name == "x" and str(x) == "x"
    with pytest.raises(TypeError):
        bool(x > 0)
    with pytest.raises(TypeError):
        len(x)
    with pytest.raises(TypeError):
        list(x)
    v = T.tensor("float64", shape=(3,))
    assert len(list(v)) == 3
    assert x == x and hash(x) == hash(x) and x != T.dvector("x")
    assert {x: 1}[x] == 1
    np.testing.assert_allclose((x * 2).eval({x: np.array([1.0, 2.0])}), [2, 4])
    assert T.as_tensor_variable(3.0).ndim == 0
    assert T.constant([1.0, 2.0]).dtype == theon.config.floatX
    c = T.constant(np.arange(3), name="c")
    np.testing.assert_array_equal(c.value, np.arange(3))


# ---- builders generated from the op registry ----------------------------------------------

def test_every_generated_builder_has_a_theon_tensor_name():
    from theon import _core
    import keyword
    names = _core.tensor.generated_builders()
    assert ("erf", "Elemwise1") in names and ("cumsum", "AxisScan") in names and ("sum", "Reduce") in names
    for name, _signature in names:
        public = name[:-1] if name.endswith("_") and not keyword.iskeyword(name[:-1]) else name
        # Theano keeps a few in a submodule only: T.nnet.softsign, T.xlogx.xlogx / xlogy0.
        module = {"softsign": T.nnet, "xlogx": T.xlogx, "xlogy0": T.xlogx}.get(public, T)
        assert callable(getattr(module, public, None)), f"{module.__name__} has no {public} (registry builder {name})"


@pytest.mark.parametrize("shape,axis", [((3, 4), 1), ((3, 4), 0), ((3, 4), None), ((2, 0, 3), 2), ((5,), -1)])
@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
def test_cumulative_matches_numpy(name, shape, axis, rng):
    x = var(len(shape))
    a = rand(rng, shape, 0.5, 1.5)[..., ::-1] if shape[-1] else rand(rng, shape)  # non-contiguous input
    want = getattr(np, name)(a, axis=axis)
    for fn in (getattr(T, name), getattr(T.extra_ops, name)):
        got = run([x], fn(x, axis=axis), a)
        np.testing.assert_allclose(got, want, rtol=1e-12)
    # integers widen to int64 as numpy does on 64-bit Linux
    xi = var(len(shape), "int32")
    got = run([xi], getattr(T, name)(xi, axis=axis), (a * 3).astype("int32"))
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, getattr(np, name)((a * 3).astype("int32"), axis=axis))


def test_erf_erfc_and_cumsum_gradients():
    x = var(2)
    xv = np.linspace(-1.5, 1.5, 12).reshape(3, 4)
    g = theon.function([x], T.grad(T.sum(T.erf(x) + T.erfc(x) * 2 + T.cumsum(x, axis=1) * x), x))(xv)
    d = 2 / np.sqrt(np.pi) * np.exp(-xv * xv)
    cs = np.cumsum(xv, axis=1)
    rev = np.cumsum(xv[:, ::-1], axis=1)[:, ::-1]  # d/dx_j sum_i x_i * cumsum_i = cumsum_j + sum_{i>=j} x_i
    np.testing.assert_allclose(g, d - 2 * d + cs + rev, rtol=1e-12)
