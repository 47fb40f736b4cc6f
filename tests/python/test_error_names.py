"""Errors name what the user wrote (issue 11).

Builders add values the user never wrote (the casts of type promotion, DimShuffles aligning
ranks, the flatten of ``take(x, i)`` with no axis, fused regions); broadcast, take and reshape
errors used to name those ("<float32 matrix #11> (1, 4)") where the user wrote ``y`` of shape
(4,). They name the user's variables with their own shapes, or the expression that made an
unnamed value.
"""
import re

import numpy as np
import pytest

import theon
import theon.tensor as T


def _internal(msg):
    return re.search(r"<(float|int|bool|uint)\w* \w+ #\d+>", msg)


@pytest.mark.parametrize("mode", ["FAST_COMPILE", "FAST_RUN"])
def test_broadcast_names_the_users_variables_and_shapes(mode):
    x, y = T.matrix("x"), T.vector("y")
    f = theon.function([x, y], T.exp(x) * y + 1, mode=mode)
    with pytest.raises(ValueError) as e:
        f(np.ones((3, 5), np.float32), np.ones(4, np.float32))
    msg = str(e.value)
    # Fused: x and y meet in one kernel; unfused: exp(x) meets y.
    assert re.search(r"shapes cannot be broadcast together: (exp\()?x\)? \(3, 5\), y \(4,\)", msg), msg
    assert not _internal(msg), msg


def test_take_without_axis_names_the_flattened_variable():
    x, i = T.matrix("x"), T.lvector("i")
    f = theon.function([x, i], T.take(x, i))
    with pytest.raises(IndexError) as e:
        f(np.ones((2, 2), np.float32), np.array([7]))
    msg = str(e.value)
    assert "index 7 is out of bounds for axis 0 of flatten(x) with size 4" in msg, msg
    assert not _internal(msg), msg


def test_reshape_names_the_reshaped_expression():
    y = T.vector("y")
    f = theon.function([y], (y * 2).reshape((3, 3)))
    with pytest.raises(ValueError) as e:
        f(np.ones(4, np.float32))
    msg = str(e.value)
    assert "cannot reshape an array of shape (4,) (size 4) into shape (3, 3)" in msg, msg
    assert "mul(y, 2" in msg, msg
    assert not _internal(msg), msg
