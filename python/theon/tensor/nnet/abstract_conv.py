"""theon.tensor.nnet.abstract_conv: Theano 1.0's abstract convolution interface.

conv2d, separable_conv2d, conv2d_grad_wrt_inputs and conv2d_grad_wrt_weights with Theano's
signatures, and
get_conv_output_shape. Layouts: input (batch, channels, rows, cols), filters (out_channels,
channels // num_groups, rows, cols). float32 and float64; on the CPU float32 runs oneDNN and
float64 im2col + BLAS; on CUDA cuDNN (docs/guide/conv.md).
"""
import numbers

from ... import _core
from ..._variable import TensorVariable, _v, as_tensor_variable

_t = _core.tensor

__all__ = ["conv2d", "conv2d_grad_wrt_inputs", "conv2d_grad_wrt_weights", "separable_conv2d",
           "get_conv_output_shape", "get_conv_shape_1axis"]


def _pair(value, name):
    if isinstance(value, numbers.Integral):
        return (int(value), int(value))
    try:
        a, b = value
    except (TypeError, ValueError):
        raise ValueError("%s must be a pair of ints, got %r" % (name, value)) from None
    if not isinstance(a, numbers.Integral) or not isinstance(b, numbers.Integral):
        raise ValueError("%s must be a pair of ints, got %r" % (name, value))
    return (int(a), int(b))


def _border(border_mode):
    """(mode, pads) for the C++ builder: 'valid'/'full'/'half' or ('', (ph, pw))."""
    if isinstance(border_mode, str):
        if border_mode not in ("valid", "full", "half"):
            raise ValueError("invalid border_mode %r: expected 'valid', 'full', 'half', an int or a pair of ints"
                             % (border_mode,))
        return border_mode, (0, 0)
    if isinstance(border_mode, numbers.Integral):
        return "", (int(border_mode), int(border_mode))
    if isinstance(border_mode, tuple) and len(border_mode) == 2 and all(
            isinstance(p, numbers.Integral) for p in border_mode):
        return "", (int(border_mode[0]), int(border_mode[1]))
    raise ValueError("invalid border_mode %r: expected 'valid', 'full', 'half', an int or a pair of ints"
                     % (border_mode,))


def _hint(shape, name):
    """A shape hint (4 entries; None or a symbolic entry: unknown, -1) or None."""
    if shape is None:
        return None
    shape = tuple(shape)
    if len(shape) != 4:
        raise ValueError("%s must have 4 entries, got %r" % (name, shape))
    return [int(s) if isinstance(s, numbers.Integral) else -1 for s in shape]


def _shape_arg(shape, name):
    """input_shape / filter_shape of the gradients: a list of ints (the last two known) or a
    symbolic integer vector (or a tuple mixing ints and symbolic scalars)."""
    if isinstance(shape, TensorVariable):
        return shape
    if hasattr(shape, "ndim") and not isinstance(shape, (tuple, list)):
        return as_tensor_variable(shape)
    shape = tuple(shape)
    if len(shape) not in (2, 4):
        raise ValueError("%s must have 4 (or 2) entries, got %r" % (name, shape))
    last = shape[-2:]
    if all(isinstance(s, numbers.Integral) for s in last):
        return as_tensor_variable([int(s) for s in last]).astype("int64")
    from .. import stack
    return stack([as_tensor_variable(s) for s in last])


def _common(border_mode, subsample, filter_flip, filter_dilation, num_groups):
    border, pads = _border(border_mode)
    return dict(border=border, pads=pads, subsample=_pair(subsample, "subsample"), filter_flip=bool(filter_flip),
                filter_dilation=_pair(filter_dilation, "filter_dilation"), num_groups=int(num_groups))


def conv2d(input, filters, input_shape=None, filter_shape=None, border_mode="valid", subsample=(1, 1),
           filter_flip=True, filter_dilation=(1, 1), num_groups=1):
    """A 2-d convolution (filter_flip=True) or cross-correlation of a 4-d input with 4-d filters.

    border_mode: 'valid' (no padding), 'full' (pad by the dilated filter size - 1), 'half' (pad
    by half the dilated filter size), an int or a pair of ints. input_shape and filter_shape are
    optional hints (None entries unknown), checked against the variables' static shapes.
    """
    opts = _common(border_mode, subsample, filter_flip, filter_dilation, num_groups)
    return TensorVariable(_t.conv2d(_v(input), _v(filters), input_shape=_hint(input_shape, "input_shape"),
                                    filter_shape=_hint(filter_shape, "filter_shape"), **opts))


def separable_conv2d(input, depthwise_filters, pointwise_filters, num_channels, input_shape=None,
                     depthwise_filter_shape=None, pointwise_filter_shape=None, border_mode="valid",
                     subsample=(1, 1), filter_flip=True, filter_dilation=(1, 1)):
    """Theano 1.0's separable_conv2d: a depthwise convolution (conv2d with
    num_groups=num_channels) of the (batch, num_channels, rows, cols) input with
    depthwise_filters (depth_multiplier * num_channels, 1, rows, cols), then a pointwise
    'valid' conv2d with pointwise_filters (out_channels, depth_multiplier * num_channels, 1, 1).

    border_mode, subsample and filter_dilation apply to the depthwise convolution only;
    filter_flip to both. The shapes are optional hints (None entries unknown).
    """
    if isinstance(num_channels, bool) or not isinstance(num_channels, numbers.Integral) or num_channels < 1:
        raise ValueError("separable_conv2d: num_channels must be an int >= 1, got %r" % (num_channels,))
    depthwise = conv2d(input, depthwise_filters, input_shape=input_shape, filter_shape=depthwise_filter_shape,
                       border_mode=border_mode, subsample=subsample, filter_flip=filter_flip,
                       filter_dilation=filter_dilation, num_groups=int(num_channels))
    depthwise_shape = None
    if input_shape is not None and depthwise_filter_shape is not None:
        border = tuple(border_mode) if isinstance(border_mode, (tuple, list)) else border_mode
        depthwise_shape = get_conv_output_shape(tuple(input_shape), tuple(depthwise_filter_shape), border,
                                                tuple(subsample), tuple(filter_dilation))
    return conv2d(depthwise, pointwise_filters, input_shape=depthwise_shape, filter_shape=pointwise_filter_shape,
                  border_mode="valid", subsample=(1, 1), filter_flip=filter_flip, filter_dilation=(1, 1),
                  num_groups=1)


def conv2d_grad_wrt_inputs(output_grad, filters, input_shape, filter_shape=None, border_mode="valid",
                           subsample=(1, 1), filter_flip=True, filter_dilation=(1, 1), num_groups=1):
    """The gradient of conv2d with respect to its input, given the output's gradient.

    input_shape: the input's shape (4 entries: the first two may be None, the last two ints
    or symbolic scalars), or a symbolic integer vector.
    """
    opts = _common(border_mode, subsample, filter_flip, filter_dilation, num_groups)
    return TensorVariable(_t.conv2d_grad_wrt_inputs(_v(output_grad), _v(filters),
                                                    _v(_shape_arg(input_shape, "input_shape")),
                                                    filter_shape=_hint(filter_shape, "filter_shape"), **opts))


def conv2d_grad_wrt_weights(input, output_grad, filter_shape, input_shape=None, border_mode="valid",
                            subsample=(1, 1), filter_flip=True, filter_dilation=(1, 1), num_groups=1):
    """The gradient of conv2d with respect to its filters, given the output's gradient.

    filter_shape: the filters' shape (4 entries: the first two may be None, the last two ints
    or symbolic scalars), or a symbolic integer vector.
    """
    opts = _common(border_mode, subsample, filter_flip, filter_dilation, num_groups)
    return TensorVariable(_t.conv2d_grad_wrt_weights(_v(input), _v(output_grad),
                                                     _v(_shape_arg(filter_shape, "filter_shape")),
                                                     input_shape=_hint(input_shape, "input_shape"), **opts))


def get_conv_shape_1axis(image_shape, kernel_shape, border_mode, subsample, dilation=1):
    """The output size along one axis (Theano's rule); None when an input is None."""
    if None in (image_shape, kernel_shape, border_mode, subsample, dilation):
        return None
    dil_kernel = (kernel_shape - 1) * dilation + 1
    if border_mode == "half":
        pad = dil_kernel // 2
    elif border_mode == "full":
        pad = dil_kernel - 1
    elif border_mode == "valid":
        pad = 0
    else:
        pad = border_mode
        if pad < 0:
            raise ValueError("border_mode must be >= 0")
    return (image_shape + 2 * pad - dil_kernel) // subsample + 1


def get_conv_output_shape(image_shape, kernel_shape, border_mode, subsample, filter_dilation=None):
    """Theano's get_conv_output_shape: (batch, out_channels, rows, cols) of a convolution."""
    bsize, imshp = image_shape[0], image_shape[2:]
    nkern, kshp = kernel_shape[0], kernel_shape[-2:]
    if filter_dilation is None:
        filter_dilation = (1,) * len(subsample)
    if isinstance(border_mode, tuple):
        out = tuple(get_conv_shape_1axis(imshp[i], kshp[i], border_mode[i], subsample[i], filter_dilation[i])
                    for i in range(len(subsample)))
    else:
        out = tuple(get_conv_shape_1axis(imshp[i], kshp[i], border_mode, subsample[i], filter_dilation[i])
                    for i in range(len(subsample)))
    return (bsize, nkern) + out
