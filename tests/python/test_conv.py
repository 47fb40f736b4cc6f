"""theon.tensor.nnet.conv2d and abstract_conv's gradients against a float64 NumPy reference
written here (direct loops over the definition; no SciPy)."""
import numpy as np
import pytest

import theon
import theon.tensor as T
from theon.tensor.nnet import abstract_conv, conv as legacy_conv


def _pads(border_mode, kh, kw, dil):
    eh, ew = (kh - 1) * dil[0] + 1, (kw - 1) * dil[1] + 1
    if border_mode == "valid":
        return 0, 0
    if border_mode == "full":
        return eh - 1, ew - 1
    if border_mode == "half":
        return eh // 2, ew // 2
    if isinstance(border_mode, int):
        return border_mode, border_mode
    return border_mode


def ref_conv(x, w, border_mode="valid", subsample=(1, 1), filter_flip=True, filter_dilation=(1, 1), num_groups=1):
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    ph, pw = _pads(border_mode, kh, kw, filter_dilation)
    sh, sw = subsample
    dh, dw = filter_dilation
    oh = (h + 2 * ph - ((kh - 1) * dh + 1)) // sh + 1
    ow = (wd + 2 * pw - ((kw - 1) * dw + 1)) // sw + 1
    xp = np.zeros((n, c, h + 2 * ph, wd + 2 * pw))
    xp[:, :, ph:ph + h, pw:pw + wd] = x
    wf = w[:, :, ::-1, ::-1] if filter_flip else w
    mg = m // num_groups
    out = np.zeros((n, m, oh, ow))
    for o in range(m):
        g = o // mg
        for y in range(oh):
            for xx in range(ow):
                for i in range(kh):
                    for j in range(kw):
                        patch = xp[:, g * cg:(g + 1) * cg, y * sh + i * dh, xx * sw + j * dw]
                        out[:, o, y, xx] += patch @ wf[o, :, i, j]
    return out


def _numeric_grads(x, w, gz, **kw):
    """Gradients of sum(gz * conv(x, w)): the reference is linear, so evaluate it on basis vectors."""
    gx = np.zeros_like(x)
    for idx in np.ndindex(*x.shape):
        e = np.zeros_like(x)
        e[idx] = 1
        gx[idx] = np.sum(gz * ref_conv(e, w, **kw))
    gw = np.zeros_like(w)
    for idx in np.ndindex(*w.shape):
        e = np.zeros_like(w)
        e[idx] = 1
        gw[idx] = np.sum(gz * ref_conv(x, e, **kw))
    return gx, gw


PARAMS = [
    dict(),
    dict(border_mode="full", filter_flip=False),
    dict(border_mode="half", subsample=(2, 1)),
    dict(border_mode=1, filter_dilation=(2, 1), num_groups=2),
    dict(border_mode=(2, 1), subsample=(2, 3), filter_flip=False, num_groups=2),
]


@pytest.mark.parametrize("kw", PARAMS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_forward_and_gradients(kw, dtype):
    rng = np.random.default_rng(0)
    groups = kw.get("num_groups", 1)
    xv = rng.standard_normal((2, 4, 6, 7))
    wv = rng.standard_normal((4, 4 // groups, 3, 2))
    ref = ref_conv(xv, wv, **kw)
    x = T.tensor4("x", dtype=dtype)
    w = T.tensor4("w", dtype=dtype)
    y = T.nnet.conv2d(x, w, **kw)
    gzv = rng.standard_normal(ref.shape)
    gz = T.tensor4("gz", dtype=dtype)
    cost = T.sum(y * gz)
    gx, gw = theon.grad(cost, [x, w])
    f = theon.function([x, w, gz], [y, gx, gw])
    out, gxo, gwo = f(xv.astype(dtype), wv.astype(dtype), gzv.astype(dtype))
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == "float32" else dict(rtol=1e-10, atol=1e-10)
    assert out.dtype == dtype
    np.testing.assert_allclose(out, ref, **tol)
    rgx, rgw = _numeric_grads(xv, wv, gzv, **kw)
    np.testing.assert_allclose(gxo, rgx, **tol)
    np.testing.assert_allclose(gwo, rgw, **tol)


def test_abstract_conv_gradient_functions():
    rng = np.random.default_rng(1)
    kw = dict(border_mode="half", subsample=(2, 2), filter_flip=True)
    xv = rng.standard_normal((2, 3, 7, 6))
    wv = rng.standard_normal((5, 3, 3, 3))
    gzv = rng.standard_normal(ref_conv(xv, wv, **kw).shape)
    rgx, rgw = _numeric_grads(xv, wv, gzv, **kw)
    gz, w, x = T.tensor4("gz", dtype="float64"), T.tensor4("w", dtype="float64"), T.tensor4("x", dtype="float64")
    gi = abstract_conv.conv2d_grad_wrt_inputs(gz, w, input_shape=(None, None, 7, 6), **kw)
    gwt = abstract_conv.conv2d_grad_wrt_weights(x, gz, filter_shape=(5, 3, 3, 3), **kw)
    # A symbolic input shape (the stride leaves the input's size open).
    rows = T.lscalar("rows")
    gi_sym = T.nnet.conv2d_grad_wrt_inputs(gz, w, input_shape=(None, None, rows, 6), **kw)
    f = theon.function([gz, w, x, rows], [gi, gwt, gi_sym])
    a, b, c = f(gzv, wv, xv, 7)
    np.testing.assert_allclose(a, rgx, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(b, rgw, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(c, rgx, rtol=1e-10, atol=1e-10)
    # Rows 7 and 8 give the same output size at stride 2: the extra row gets no gradient.
    c8 = f(gzv, wv, xv, 8)[2]
    assert c8.shape == (2, 3, 8, 6)


def test_legacy_conv_module_and_output_shape():
    rng = np.random.default_rng(2)
    xv = rng.standard_normal((1, 2, 5, 5))
    wv = rng.standard_normal((3, 2, 2, 3))
    x, w = T.tensor4("x", dtype="float64"), T.tensor4("w", dtype="float64")
    f = theon.function([x, w], legacy_conv.conv2d(x, w, border_mode="full", image_shape=(1, 2, 5, 5)))
    np.testing.assert_allclose(f(xv, wv), ref_conv(xv, wv, border_mode="full"), rtol=1e-12)
    assert abstract_conv.get_conv_output_shape((1, 2, 5, 5), (3, 2, 2, 3), "full", (1, 1)) == (1, 3, 6, 7)
    assert abstract_conv.get_conv_output_shape((1, 2, 5, 5), (3, 2, 3, 3), "half", (2, 2)) == (1, 3, 3, 3)


def test_verify_grad():
    rng = np.random.default_rng(3)
    T.verify_grad(lambda a, b: T.nnet.conv2d(a, b, border_mode="half", num_groups=2),
                  [rng.standard_normal((1, 4, 4, 5)), rng.standard_normal((2, 2, 3, 3))], rng=rng)


def test_errors_name_the_variables_and_shapes():
    x, w = T.tensor4("images"), T.tensor4("kernels")
    f = theon.function([x, w], T.nnet.conv2d(x, w))
    with pytest.raises(ValueError, match=r"conv2d\(images, kernels, border_mode=valid.*3 channels.*\(1, 3, 5, 5\)"):
        f(np.zeros((1, 3, 5, 5), "float32"), np.zeros((2, 2, 3, 3), "float32"))
    with pytest.raises(ValueError, match=r"larger than the padded input"):
        f(np.zeros((1, 2, 2, 2), "float32"), np.zeros((2, 2, 3, 3), "float32"))
    with pytest.raises(ValueError, match="border_mode"):
        T.nnet.conv2d(x, w, border_mode="same")
    xs = T.tensor("float32", shape=(1, 3, 5, 5), name="xs")
    ws = T.tensor("float32", shape=(2, 2, 3, 3), name="ws")
    with pytest.raises(ValueError, match=r"xs .* has 3 channels"):
        T.nnet.conv2d(xs, ws)
    with pytest.raises(TypeError, match="float32 or float64"):
        T.nnet.conv2d(T.tensor4("i", dtype="int32"), w)


@pytest.mark.parametrize("wrt", [0, 1])
def test_second_order(wrt):
    """Gradients of gradients: the gradient ops' own L_op (grad_wrt_inputs and _weights are
    linear in both tensor inputs) checked by finite differences of the first gradient."""
    rng = np.random.default_rng(4)

    def first_grad(a, b):
        y = T.nnet.conv2d(a, b, border_mode=1, subsample=(2, 1), filter_flip=False)
        return theon.grad(T.sum(y ** 2), [a, b][wrt])

    T.verify_grad(first_grad, [rng.standard_normal((1, 2, 5, 4)), rng.standard_normal((3, 2, 2, 3))], rng=rng)


def test_partly_static_shapes():
    """Known spatial sizes with unknown channels: checked where known, no false errors."""
    x = T.tensor("float64", shape=(None, None, 5, 5), name="x")
    w = T.tensor("float64", shape=(None, None, 3, 3), name="w")
    y = T.nnet.conv2d(x, w, num_groups=2, border_mode="half")
    rng = np.random.default_rng(5)
    xv, wv = rng.standard_normal((1, 4, 5, 5)), rng.standard_normal((2, 2, 3, 3))
    np.testing.assert_allclose(theon.function([x, w], y)(xv, wv),
                               ref_conv(xv, wv, border_mode="half", num_groups=2), rtol=1e-12, atol=1e-12)
    small = T.tensor("float64", shape=(None, None, 2, 2), name="small")
    with pytest.raises(ValueError, match=r"larger than the padded input"):
        T.nnet.conv2d(small, w)


def ref_separable(x, dw, pw, num_channels, border_mode="valid", subsample=(1, 1), filter_flip=True,
                  filter_dilation=(1, 1)):
    """Theano's separable_conv2d written out with numpy: depthwise (groups = channels), then pointwise."""
    mid = ref_conv(x, dw, border_mode=border_mode, subsample=subsample, filter_flip=filter_flip,
                   filter_dilation=filter_dilation, num_groups=num_channels)
    return ref_conv(mid, pw, filter_flip=filter_flip)


@pytest.mark.parametrize("kw", [dict(), dict(border_mode="half", subsample=(2, 1), filter_flip=False),
                                dict(border_mode=(1, 2), filter_dilation=(2, 1))])
def test_separable_conv2d(kw):
    rng = np.random.default_rng(11)
    xv = rng.standard_normal((2, 3, 7, 6))
    dwv = rng.standard_normal((6, 1, 3, 2))     # depth multiplier 2
    pwv = rng.standard_normal((4, 6, 1, 1))
    x, dw, pw = (T.tensor4(n, dtype="float64") for n in ("x", "dw", "pw"))
    y = T.nnet.separable_conv2d(x, dw, pw, 3, input_shape=(None, 3, 7, 6), depthwise_filter_shape=(6, 1, 3, 2),
                                pointwise_filter_shape=(4, 6, 1, 1), **kw)
    assert y is not None and abstract_conv.separable_conv2d is T.nnet.separable_conv2d
    np.testing.assert_allclose(theon.function([x, dw, pw], y)(xv, dwv, pwv), ref_separable(xv, dwv, pwv, 3, **kw),
                               rtol=1e-11, atol=1e-11)
    T.verify_grad(lambda a, b, c: T.nnet.separable_conv2d(a, b, c, 3, **kw), [xv, dwv, pwv], rng=rng)


def test_separable_conv2d_errors():
    x, dw, pw = (T.tensor4(n, dtype="float64") for n in ("x", "dw", "pw"))
    with pytest.raises(ValueError, match=r"num_channels must be an int >= 1"):
        T.nnet.separable_conv2d(x, dw, pw, 0)
    f = theon.function([x, dw, pw], T.nnet.separable_conv2d(x, dw, pw, 3))
    with pytest.raises(ValueError, match=r"channels"):
        f(np.zeros((1, 2, 5, 5)), np.zeros((6, 1, 2, 2)), np.zeros((4, 6, 1, 1)))
