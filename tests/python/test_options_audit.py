"""The audit of values accepted and then ignored (issue 29): every keyword of the Python API
that used to do nothing is now implemented, refused, or warned about once (the list is in
docs/guide/config.md, "Keywords accepted for Theano compatibility")."""
import numpy as np
import pytest

import theon
import theon.gpuarray
import theon.sandbox.cuda
import theon.tensor as T
import theon.tensor.extra_ops
import theon.tensor.shared_randomstreams
from theon import errors
from theon.errors import IgnoredArgumentWarning


@pytest.fixture(autouse=True)
def _fresh_ignored_warnings():
    errors._warned_ignored.clear()  # each test sees the first warning of its own
    yield
    errors._warned_ignored.clear()


def _warned_once(make):
    with pytest.warns(IgnoredArgumentWarning) as first:
        make()
    with __import__("warnings").catch_warnings():
        __import__("warnings").simplefilter("error", IgnoredArgumentWarning)
        make()  # the second time says nothing
    return str(first[0].message)


# ---- config -----------------------------------------------------------------------------------

def test_compiledir_max_mb_refuses_negatives_and_takes_zero():
    with pytest.raises(ValueError, match=r"'compiledir_max_mb' must be 0 \(no limit\) or more.*got -1"):
        theon.config.compiledir_max_mb = -1
    assert theon.config.compiledir_max_mb == 1024
    theon.config.compiledir_max_mb = 0
    assert theon.config.compiledir_max_mb == 0
    assert "optimizer_requiring" in theon.config.keys()
    assert "narrowed" in theon._core.config.doc("optimizer_requiring")


# ---- implemented --------------------------------------------------------------------------------

def test_acc_dtype_reduces_in_the_accumulator_dtype_and_keeps_the_result_dtype():
    x = T.fvector("x")
    for reduce in (T.sum, T.prod, T.mean, lambda v, **kw: v.sum(**kw), lambda v, **kw: v.mean(**kw)):
        plain, acc = reduce(x), reduce(x, acc_dtype="float64")
        assert acc.dtype == plain.dtype == "float32"
        assert "float64" in theon.printing.debugprint(acc, file="str")  # the reduction runs in float64
        assert "float64" not in theon.printing.debugprint(plain, file="str")
    xv = np.array([1.5, 2.25, 4.0], dtype=np.float32)
    np.testing.assert_allclose(theon.function([x], T.sum(x, acc_dtype="float64"))(xv), 7.75)
    assert T.sum(x, dtype="float64", acc_dtype="float64").dtype == "float64"
    with pytest.raises(TypeError, match="acc_dtype='int8'.*lose precision"):
        T.sum(x, acc_dtype="int8")


def test_var_and_std_corrected_use_the_corrected_two_pass_formula():
    x = T.dvector("x")
    plain, corrected = (theon.printing.debugprint(T.var(x, corrected=c), file="str") for c in (False, True))
    assert plain != corrected  # corrected=True used to build the same graph
    assert corrected.count("Sum{") > plain.count("Sum{"), corrected
    xv = np.random.RandomState(3).randn(101) + 1000.0
    f = theon.function([x], [T.var(x, corrected=True), T.std(x, ddof=1, corrected=True)])
    v, s1 = f(xv)
    d = xv - xv.mean()
    want = (np.sum(d ** 2) - np.sum(d) ** 2 / d.size) / d.size
    np.testing.assert_allclose(v, want, rtol=1e-12)
    np.testing.assert_allclose(s1, np.sqrt(want * d.size / (d.size - 1)), rtol=1e-12)
    np.testing.assert_allclose(v, xv.var(), rtol=1e-10)


def test_reshape_ndim_must_agree():
    x = T.matrix("x")
    assert T.reshape(x, (6,), ndim=1).ndim == 1
    with pytest.raises(TypeError, match="ndim=3.*2 dimension"):
        T.reshape(x, (2, 3), ndim=3)
    n = T.lscalar("n")
    with pytest.raises(TypeError, match="ndim=1"):
        T.reshape(x, (n, 3), ndim=1)


def test_jacobian_and_hessian_follow_disconnected_inputs(capfd):
    x, z = T.tensor("float64", shape=(3,), name="x"), T.tensor("float64", shape=(2,), name="z")
    with pytest.raises(ValueError, match="(?i)disconnected|not part of the computational graph"):
        theon.gradient.jacobian(x * 2, z)  # used to give zeros whatever disconnected_inputs said
    jx, jz = theon.gradient.jacobian(x * 2, [x, z], disconnected_inputs="ignore")
    f = theon.function([x, z], jz, on_unused_input="ignore")
    np.testing.assert_array_equal(f(np.ones(3), np.ones(2)), np.zeros((3, 2)))
    with pytest.raises(ValueError, match="(?i)disconnected|not part of the computational graph"):
        theon.gradient.hessian(T.sum(x ** 2), z)
    capfd.readouterr()
    theon.gradient.hessian(T.sum(x ** 2), [x, z], disconnected_inputs="warn")
    assert "the cost does not depend on 'z'" in capfd.readouterr().err


def test_verify_grad_runs_in_the_mode_given():
    seen = []

    def fun(a):
        seen.append(theon.config.mode.lower())
        return T.tanh(a) * 2

    before = theon.config.mode
    theon.gradient.verify_grad(fun, [np.array([0.1, -0.3])], n_tests=1, mode="FAST_COMPILE")
    assert seen and set(seen) == {"fast_compile"}
    assert theon.config.mode == before
    with pytest.raises(TypeError, match="mode must be a mode name"):
        theon.gradient.verify_grad(fun, [np.array([0.1])], mode=object())


# ---- refused -------------------------------------------------------------------------------------

def test_refused_keywords_say_why():
    x, y = T.vector("x"), T.vector("y")
    refused = {
        "set_subtensor(inplace": lambda: T.set_subtensor(x[:2], y, inplace=True),
        "inc_subtensor(inplace": lambda: T.inc_subtensor(x[:2], y, tolerate_inplace_aliasing=True),
        "function(rebuild_strict=False)": lambda: theon.function([x], x * 2, rebuild_strict=False),
        "In(implicit=True": lambda: theon.In(x, implicit=True),
        "grad(null_gradients='return_zero')": lambda: theon.grad(T.sum(x), x, null_gradients="return_zero"),
        "verify_grad(out_type='complex64')": lambda: theon.gradient.verify_grad(T.tanh, [np.ones(2)],
                                                                                  out_type="complex64"),
        "debugprint(done=...)": lambda: theon.printing.debugprint(x, file="str", done={}),
        "debugprint(print_storage=True": lambda: theon.printing.debugprint(x, file="str", print_storage=True),
        "bincount(assert_nonneg=True)": lambda: T.extra_ops.bincount(T.lvector("i"), assert_nonneg=True),
        "multinomial(size=(2,)": lambda: T.shared_randomstreams.RandomStreams(1).multinomial(
            size=(2,), pvals=[[0.5, 0.5], [0.1, 0.9]]),
        "theano.gpuarray.use(default_to_move_computation_to_gpu=True, move_shared_to_gpu=False)":
            lambda: theon.gpuarray.use("cuda", move_shared_to_gpu=False),
        "theano.sandbox.cuda.use(default_to_move_computation_to_gpu=False":
            lambda: theon.sandbox.cuda.use("gpu", default_to_move_computation_to_gpu=False),
    }
    for what, call in refused.items():
        with pytest.raises(NotImplementedError) as e:
            call()
        assert what in str(e.value), (what, str(e.value))
        assert "not available" in str(e.value)
    with pytest.raises(ValueError, match="null_gradients must be"):
        theon.grad(T.sum(x), x, null_gradients="sometimes")
    with pytest.raises(ValueError, match="enable_cuda=False"):
        theon.sandbox.cuda.use("gpu", enable_cuda=False)
    with pytest.raises(TypeError, match="permutation"):
        T.shared_randomstreams.RandomStreams(1).permutation(n=4, ndim=2)
    with pytest.raises(TypeError, match="unexpected keyword argument 'use_cuda'"):
        T.shared_randomstreams.RandomStreams(1, use_cuda=True)  # used to be swallowed


# ---- warned about once ------------------------------------------------------------------------------

def test_ignored_keywords_warn_once():
    v = np.ones(3, dtype=theon.config.floatX)
    srng = T.shared_randomstreams.RandomStreams(1)
    from theon.sandbox.rng_mrg import MRG_RandomStreams
    mrg = MRG_RandomStreams(1)
    cases = {
        "shared(strict=True)": lambda: theon.shared(v, strict=True),
        "shared(allow_downcast=True)": lambda: theon.shared(v, allow_downcast=True),
        "uniform(nstreams=...)": lambda: srng.uniform((2,), nstreams=4),
        "normal(nstreams=...)": lambda: srng.normal((2,), nstreams=4),
        "binomial(nstreams=...)": lambda: mrg.binomial((2,), nstreams=4),
        "multinomial(nstreams=...)": lambda: mrg.multinomial(pvals=[[0.5, 0.5]], nstreams=4),
        "choice(nstreams=...)": lambda: mrg.choice(size=(2,), a=3, nstreams=4),
        "verify_grad(cast_to_output_type=True)": lambda: theon.gradient.verify_grad(
            T.tanh, [np.array([0.2])], n_tests=1, cast_to_output_type=True),
        "verify_grad(no_debug_ref=False)": lambda: theon.gradient.verify_grad(
            T.tanh, [np.array([0.2])], n_tests=1, no_debug_ref=False),
        "theano.gpuarray.use(preallocate=...)": lambda: theon.gpuarray.use("cuda", preallocate=0.5),
        "theano.tensor.nnet.conv.conv2d(imshp=...)": lambda: T.nnet.conv.conv2d(
            T.tensor4("img"), T.tensor4("w"), imshp=(1, 5, 5)),
    }
    for what, call in cases.items():
        message = _warned_once(call)
        assert message.startswith(what + " is accepted for Theano compatibility and ignored: "), message
