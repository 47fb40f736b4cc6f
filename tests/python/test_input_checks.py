"""Input checks of issue 29, as Python users meet them: sizes computed from user values (eye,
repeat, conv2d's dilation) are refused when negative or past int64 instead of giving an empty
array, and RandomStreams refuses a negative std (a constant when the variable is made, a
symbolic one when the function runs, leaving the random state as it was) and a size that is
not an integer.
"""
import numpy as np
import pytest

import theon
import theon.tensor as T
from theon.errors import ShapeError
from theon.sandbox.rng_mrg import MRG_RandomStreams
from theon.tensor.shared_randomstreams import RandomStreams

BIG = 2 ** 62


# ---- sizes ----

def test_eye_refuses_negative_dimensions():
    with pytest.raises(ValueError, match=r"eye\(-1, -1, k=0\): negative dimensions are not allowed, got -1"):
        T.eye(-1)
    with pytest.raises(ValueError, match="negative dimensions are not allowed, got -2"):
        T.eye(3, -2)
    n = T.lscalar("n")
    f = theon.function([n], T.eye(n, 3))
    assert f(2).shape == (2, 3)
    with pytest.raises(ShapeError, match=r"eye\(n, 3, k=0\): negative dimensions are not allowed, got n = -1"):
        f(-1)


def test_repeat_counts_that_sum_past_int64():
    x = T.dvector("x")
    r = T.lvector("r")
    f = theon.function([x, r], T.repeat(x, r))
    np.testing.assert_array_equal(f([1.0, 2.0], [2, 1]), [1.0, 1.0, 2.0])
    with pytest.raises(ShapeError, match=r"repeat\(x, r\): the counts sum past the largest possible array"):
        f([1.0, 2.0], [BIG, BIG])
    with pytest.raises(ValueError, match="repeats may not contain negative values, got min\\(r\\) = -1"):
        f([1.0, 2.0], [1, -1])
    with pytest.raises(ShapeError, match="the counts sum past the largest possible array"):
        T.repeat(x, [BIG, BIG])


def test_conv2d_dilation_whose_filter_size_overflows():
    x = T.tensor4("x")
    w = T.tensor4("w")
    y = T.nnet.conv2d(x, w, filter_dilation=(BIG, 1))
    f = theon.function([x, w], y)
    xv = np.zeros((1, 1, 5, 5), theon.config.floatX)
    wv = np.zeros((1, 1, 3, 3), theon.config.floatX)
    with pytest.raises(ShapeError, match=r"the dilated filter along the rows, \(3 - 1\) \* 4611686018427387904 \+ 1"):
        f(xv, wv)


# ---- random streams ----

@pytest.fixture(params=[RandomStreams, MRG_RandomStreams], ids=["RandomStreams", "MRG_RandomStreams"])
def Streams(request):
    return request.param


def test_negative_std_is_refused(Streams):
    srng = Streams(seed=3)
    with pytest.raises(ValueError, match="std must be >= 0, got -1"):
        srng.normal((2, 3), std=-1.0)
    s = T.dscalar("s")
    z = srng.normal((4,), std=s, dtype="float64")
    f = theon.function([s], z)
    f(1.0)
    before = z.rng.get_value()
    with pytest.raises(ValueError, match=r"std must be >= 0, got s = -2"):
        f(-2.0)
    np.testing.assert_array_equal(z.rng.get_value(), before)  # the failed call drew nothing
    f(0.5)
    assert not np.array_equal(z.rng.get_value(), before)


@pytest.mark.parametrize("size", [(2.5, 3), (2.0, 3), np.array([2.5, 3.0]), 2.5])
def test_non_integral_size_is_an_error(Streams, size):
    srng = Streams(seed=3)
    with pytest.raises(TypeError, match="not an integer"):
        srng.uniform(size)
    assert srng.uniform((np.int64(2), 3)).eval().shape == (2, 3)
