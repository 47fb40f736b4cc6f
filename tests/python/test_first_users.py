"""What the first users hit (issue 11): Theano programs that ran differently under Theon.

Each test is a behaviour of Theano that Theon now matches: NumPy dtypes at the boundary,
integer results of NumPy's standard types, NumPy operands on the left of an operator,
variables that take attributes, typed variable constructors that are types, debugprint's
layout and return value, gradients that are constants or of integers, and x.shape[i]
checked when the function runs.
"""
import io
import operator

import numpy as np
import pytest

import theon
import theon.tensor as T
from theon import errors

# ---- dtypes at the boundary ----------------------------------------------------------


@pytest.mark.parametrize("dtype", ["uint16", "uint32", "uint64", ">f8", ">i4", ">u2"])
def test_function_inputs_of_other_integer_dtypes_and_byte_orders(dtype):
    a = np.array([1, 2, 3], dtype=dtype)
    x = T.dvector("x")
    np.testing.assert_array_equal(theon.function([x], x * 2)(a), [2, 4, 6])
    if a.dtype.kind in "iu":
        i = T.lvector("i")
        r = theon.function([i], i + 1)(a)
        assert r.dtype == np.int64
        np.testing.assert_array_equal(r, [2, 3, 4])


def test_unsigned_values_keep_their_values():
    # uint16 -> int32, uint32 -> int64, uint64 -> int64 when every value fits (docs/guide/python.md)
    big16, big32 = np.array([65535], np.uint16), np.array([4294967295], np.uint32)
    for a, want in [(big16, "int32"), (big32, "int64"), (np.array([2 ** 63 - 1], np.uint64), "int64")]:
        s = theon.shared(a)
        assert s.dtype == want
        assert s.get_value()[0] == a[0]
        c = T.constant(a)
        assert c.dtype == want
        assert theon.function([], c * 1)()[0] == a[0]
        assert T.as_tensor_variable(a).dtype == want
        assert theon.to_device(a, "cpu").dtype == want
    i = T.ivector("i")
    assert theon.function([i], i)(big16)[0] == 65535  # uint16 into an int32 input: safe
    with pytest.raises(TypeError, match="could lose information"):
        theon.function([i], i)(big32)  # uint32 into int32: lossy, as for int64 data
    huge = np.array([1, 2 ** 63], np.uint64)
    n = T.lvector("n")
    f = theon.function([n], n + 1)
    for make in (theon.shared, T.constant, f):
        with pytest.raises(TypeError, match="uint64 value 9223372036854775808 does not fit in int64"):
            make(huge)


def test_big_endian_arrays_convert_to_native_order():
    a = np.arange(6, dtype=">f4").reshape(2, 3)
    s = theon.shared(a)
    assert s.dtype == "float32" and s.get_value().dtype.isnative
    np.testing.assert_array_equal(s.get_value(), a)
    s.set_value(a[::-1])
    np.testing.assert_array_equal(s.get_value(), a[::-1])
    x = T.fmatrix()
    np.testing.assert_array_equal(theon.function([x], x + T.constant(a))(a), 2 * a)


def test_set_value_converts_unsigned_to_the_variable_dtype():
    s = theon.shared(np.zeros(2, np.int32))
    s.set_value(np.array([7, 65535], np.uint16))
    assert s.get_value().dtype == np.int32 and list(s.get_value()) == [7, 65535]
    f = theon.shared(np.zeros(2))
    f.set_value(np.array([1, 2], np.uint64))
    assert f.get_value().dtype == np.float64 and list(f.get_value()) == [1, 2]


BAD = {
    "complex128": np.array([1 + 2j, 3]),
    "complex64": np.array([1j], np.complex64),
    "object": np.array([1, "a"], dtype=object),
    "<U3": np.array(["abc"]),
    "datetime64[s]": np.array(["2024-01-01"], dtype="datetime64[s]"),
    "timedelta64[s]": np.array([5], dtype="timedelta64[s]"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_unsupported_dtypes_are_type_errors_naming_the_dtype(name):
    a = BAD[name]
    x = T.dvector("x")
    f = theon.function([x], x * 2)
    s = theon.shared(np.zeros(2))
    calls = [lambda: f(a), lambda: theon.shared(a), lambda: s.set_value(a), lambda: T.constant(a),
             lambda: T.as_tensor_variable(a), lambda: x + a, lambda: theon.to_device(a, "cpu")]
    if name.startswith("complex"):  # verify_grad used to drop the imaginary part
        calls.append(lambda: T.verify_grad(T.exp, [a]))
    for call in calls:
        with pytest.raises(TypeError) as e:
            call()
        assert isinstance(e.value, errors.TheonTypeError)
        assert name in str(e.value) and "supported: bool, int8" in str(e.value), str(e.value)


def test_set_value_refuses_complex_and_masked_arrays():
    s = theon.shared(np.zeros(3))
    with pytest.raises(TypeError, match="complex128"):
        s.set_value(np.array([1 + 1j, 2, 3]))
    np.testing.assert_array_equal(s.get_value(), [0, 0, 0])  # not silently stored as its real part
    m = np.ma.array([1.0, 2.0, 3.0], mask=[0, 1, 0])
    v = T.dvector("v")
    f = theon.function([v], v * 2)
    for call in (lambda: s.set_value(m), lambda: theon.shared(m), lambda: T.constant(m), lambda: f(m)):
        with pytest.raises(TypeError, match="masked array"):
            call()
    np.testing.assert_array_equal(s.get_value(), [0, 0, 0])


# ---- integer results are NumPy's standard types -----------------------------------------


def test_integer_results_are_numpy_int64_not_longlong():
    i = T.lvector("i")
    f = theon.function([i], [i * 2, i.sum(), T.cast(i, "int32"), T.argmax(i)])
    v, total, i32, am = f(np.array([1, 2, 3]))
    assert v.dtype.type is np.int64 and total.dtype.type is np.int64 and am.dtype.type is np.int64
    assert i32.dtype.type is np.int32
    assert repr(v) == "array([2, 4, 6])"  # as NumPy prints its default integer: no "dtype=int64"
    assert type(total[()]) is np.int64
    assert theon.shared(np.arange(3)).get_value().dtype.type is np.int64


# ---- NumPy defers to symbolic variables --------------------------------------------------

OPS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv, operator.mod,
       operator.pow, operator.lt, operator.le, operator.gt, operator.ge]


@pytest.mark.parametrize("op", OPS, ids=lambda o: o.__name__)
def test_numpy_array_on_the_left_gives_a_symbolic_variable(op):
    a = np.array([1.0, 2.0, 4.0])
    x = T.dvector("x")
    xv = np.array([2.0, 3.0, 0.5])
    for left in (a, np.float64(2.0)):
        y = op(left, x)
        assert isinstance(y, T.TensorVariable), type(y)
        np.testing.assert_allclose(theon.function([x], y)(xv), op(left, xv))


def test_numpy_on_the_left_of_matmul_and_bitwise_ops():
    m = np.arange(6.0).reshape(2, 3)
    x = T.dvector("x")
    y = m @ x
    assert isinstance(y, T.TensorVariable)
    np.testing.assert_allclose(theon.function([x], y)(np.ones(3)), m @ np.ones(3))
    b = np.array([True, False, True])
    c = T.bvector("c")
    cv = np.array([1, 1, 0], np.int8)
    for op in (operator.and_, operator.or_, operator.xor):
        r = op(b.astype(np.int8), c)
        assert isinstance(r, T.TensorVariable)
        np.testing.assert_array_equal(theon.function([c], r)(cv), op(b.astype(np.int8), cv))
    assert (np.ones(3) == x) is False  # == is identity, as in Theano: never elementwise on the NumPy side


# ---- variables take attributes; copy(); TensorSharedVariable --------------------------


def test_variables_take_attributes_and_keep_them():
    x = T.dmatrix("x")
    x.my_library_info = {"role": "input"}
    x.tag.test_value = np.ones((2, 2))
    assert x.my_library_info["role"] == "input"
    assert x.tag.test_value.shape == (2, 2)
    y = T.tanh(x)
    y.role = "hidden"
    w = theon.shared(np.zeros(3), name="w")
    w.regularizable = True
    c = T.constant(np.ones(2))
    c.note = "c"
    # the same graph variable seen again (here: a cast to its own dtype) is the same object
    assert T.cast(x, "float64").my_library_info["role"] == "input"
    assert T.cast(y, "float64").role == "hidden"
    assert T.cast(w, "float64").regularizable and isinstance(T.cast(w, "float64"), T.sharedvar.TensorSharedVariable)
    assert theon.function([x], y)(np.zeros((1, 1))).shape == (1, 1)


def test_copy_is_a_new_variable_with_the_same_value():
    x = T.dvector("x")
    x.info = 1
    y = x.copy()
    z = x.copy(name="z")
    assert y is not x and y != x and y.name is None and z.name == "z"
    assert not hasattr(y, "info")
    np.testing.assert_array_equal(theon.function([x], [y, z])(np.array([1.0, 2.0]))[1], [1.0, 2.0])
    s = T.dscalar("s")
    g = theon.grad(s.copy() * 3, s)
    assert theon.function([s], g)(2.0) == 3.0


def test_tensor_shared_variable_class():
    from theon.tensor.sharedvar import TensorSharedVariable
    s = theon.shared(np.zeros((2, 2)))
    assert isinstance(s, TensorSharedVariable)
    assert isinstance(s, T.sharedvar.TensorSharedVariable)
    assert isinstance(s, theon.SharedVariable)
    assert not isinstance(T.dvector(), TensorSharedVariable)


# ---- typed constructors are types ------------------------------------------------------


def test_typed_constructors_are_types():
    x = T.dscalar("x")
    assert x.type == T.dscalar and x.type != T.fscalar
    assert isinstance(T.dscalar, T.TensorType)
    assert T.dscalar().name is None and x.name == "x"
    assert str(T.dscalar) == "TensorType(float64, scalar)"
    assert str(T.fmatrix) == "TensorType(float32, matrix)"
    assert str(T.drow) == "TensorType(float64, row)" and str(T.icol) == "TensorType(int32, col)"
    assert str(T.ltensor3) == "TensorType(int64, 3D)"
    for prefix, dtype in [("f", "float32"), ("d", "float64"), ("b", "int8"), ("w", "int16"), ("i", "int32"),
                          ("l", "int64")]:
        for kind, ndim in [("scalar", 0), ("vector", 1), ("matrix", 2), ("tensor3", 3), ("tensor4", 4)]:
            t = getattr(T, prefix + kind)
            v = t("v")
            assert (t.dtype, t.ndim, v.dtype, v.ndim) == (dtype, ndim, dtype, ndim)
            assert v.type == t
    assert T.matrix("m").type == T.TensorType(theon.config.floatX, (False, False))
    assert T.constant(np.ones(3)).type == T.dvector  # equal as in Theano: dtype and broadcastable
    assert (np.ones(3) * T.dvector()).type == T.dvector and T.constant(np.ones(1)).type != T.dvector
    assert T.drow("r").broadcastable == (True, False)


# ---- x.shape[i] beyond the rank: a run-time error ---------------------------------------


def test_shape_index_beyond_the_rank_fails_when_the_function_runs():
    x = T.dvector("x")
    s = x.shape[1]  # builds, as in Theano
    assert s.ndim == 0 and s.dtype == "int64"
    f = theon.function([x], s)
    with pytest.raises(IndexError) as e:
        f(np.ones(3))
    msg = str(e.value)
    assert "Subtensor" in msg and "index 1 is out of bounds" in msg and "(1,)" in msg and "x.shape" in msg, msg
    assert theon.function([x], x.shape[0])(np.ones(3)) == 3
    assert theon.function([x], T.shape(x)[-1])(np.ones(4)) == 4
    with pytest.raises(IndexError):
        theon.function([x], T.shape(x)[2])(np.ones(3))
    with pytest.raises(IndexError):
        x[5, 1]  # indexing a tensor beyond its rank stays a build-time error


# ---- debugprint ---------------------------------------------------------------------------


def test_debugprint_prints_theano_layout_and_returns_none(capsys):
    x = T.dvector("x")
    y = x * 2
    assert theon.printing.debugprint(y) is None
    assert capsys.readouterr().out == "Elemwise{mul} [id A] ''   \n |x [id B]\n |TensorConstant{2.0} [id C]\n"
    assert theon.debugprint(y, file="str") == "Elemwise{mul} [id A] ''   \n |x [id B]\n |TensorConstant{2.0} [id C]\n"
    buf = io.StringIO()
    assert theon.printing.debugprint(y, file=buf) is buf
    assert buf.getvalue().startswith("Elemwise{mul} [id A]")


def test_debugprint_nesting_shared_subgraphs_and_options():
    x, w = T.dvector("x"), theon.shared(np.ones(2), name="w")
    h = T.tanh(x * w)
    h.name = "h"
    y = T.exp(h) + h
    want = ("Elemwise{add} [id A] ''   \n"
            " |Elemwise{exp} [id B] ''   \n"
            " | |Elemwise{tanh} [id C] 'h'   \n"
            " |   |Elemwise{mul} [id D] ''   \n"
            " |     |x [id E]\n"
            " |     |w [id F]\n"
            " |Elemwise{tanh} [id C] 'h'   \n")
    assert theon.debugprint(y, file="str") == want
    assert theon.debugprint(y, file="str", depth=2) == ("Elemwise{add} [id A] ''   \n"
                                                         " |Elemwise{exp} [id B] ''   \n"
                                                         " |Elemwise{tanh} [id C] 'h'   \n")
    assert theon.debugprint(y, file="str", stop_on_name=True, ids="int") == (
        "Elemwise{add} [id 0] ''   \n |Elemwise{exp} [id 1] ''   \n | |Elemwise{tanh} [id 2] 'h'   \n"
        " |Elemwise{tanh} [id 2] 'h'   \n")
    typed = theon.debugprint(T.dmatrix() + 1, file="str", print_type=True)
    assert typed.splitlines()[1] == " |<TensorType(float64, matrix)> [id B] <TensorType(float64, matrix)>"


def test_debugprint_of_a_function_shows_the_run_order():
    x = T.dvector("x")
    f = theon.function([x], T.dot(x, x) + x.shape[0], mode="FAST_COMPILE")
    text = theon.printing.debugprint(f, file="str")
    lines = text.splitlines()
    assert lines[0].startswith("Elemwise{add} [id A] ''   ")
    order = {line.split(" [id ")[0].strip(" |"): line.rsplit(" ", 1)[1] for line in lines if "''" in line}
    nodes = [str(n.op) for n in f.maker.fgraph.toposort()]
    for op, k in order.items():
        assert nodes[int(k)] == op, (op, k, nodes)


# ---- gradients ------------------------------------------------------------------------------


def test_grad_of_a_linear_cost_is_a_function_of_its_input():
    x = T.dscalar("x")
    f = theon.function([x], T.grad(3 * x, x))  # Theano: array(3.0), x is not "unused"
    r = f(5.0)
    assert r == 3.0 and r.dtype == np.float64
    y = T.dscalar("y")
    assert theon.function([x, y], T.grad(x * y + y, x))(2.0, 7.0) == 7.0
    v = T.dvector("v")
    np.testing.assert_array_equal(theon.function([v], T.grad(T.sum(2 * v), v))(np.ones(3)), [2, 2, 2])


def test_grad_of_an_integer_cost_is_zero_as_in_theano():
    n = T.iscalar("n")
    g = T.grad(n * 2, n)
    assert g.dtype == theon.config.floatX  # a gradient is never an integer
    assert theon.function([n], g)(3) == 0
    x = T.dvector("x")
    gx = T.grad(T.sum(T.cast(x, "int64")), x)
    assert gx.dtype == "float64"
    np.testing.assert_array_equal(theon.function([x], gx)(np.array([1.5, 2.5])), [0, 0])
    i = T.lvector("i")
    gi = T.grad(T.sum(x) + T.sum(i), i)
    np.testing.assert_array_equal(theon.function([x, i], gi)(np.ones(2), np.arange(3)), [0, 0, 0])
    with pytest.raises(ValueError, match="does not depend on 'x'"):
        T.grad(T.sum(i), x)  # disconnected stays disconnected
    with pytest.raises(ValueError, match="no gradient"):
        T.grad(T.sum(T.take(x, i)), i)  # an index has none (Theano: disconnected)
