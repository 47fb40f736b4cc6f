"""theon.tensor.nnet: Theano's ``T.nnet`` neural-network ops."""
import numpy as np

from ... import _core
from ..._variable import TensorVariable, Variable, _v, as_tensor_variable

_t = _core.tensor


def sigmoid(x):
    return TensorVariable(_t.sigmoid(_v(x)))


ultra_fast_sigmoid = sigmoid


def hard_sigmoid(x):
    from .. import clip
    return clip(as_tensor_variable(x) * 0.2 + 0.5, 0.0, 1.0)


def softplus(x):
    return TensorVariable(_t.softplus(_v(x)))


def softsign(x):
    """x / (1 + |x|) (Theano's nnet.softsign)."""
    return TensorVariable(_t.softsign(_v(x)))


def relu(x, alpha=0):
    """max(x, 0); with alpha, the leaky form (Theano's relu(x, alpha)).

    As Theano's, it is plain arithmetic (0.5 * (x + abs(x))) when alpha is 0: a NumPy array or a
    number gives a NumPy array or number, not a variable (the other functions here build nodes,
    as Theano's do)."""
    if not isinstance(alpha, Variable) and np.ndim(alpha) == 0 and alpha == 0:
        if isinstance(x, (np.ndarray, np.generic, int, float)) and not isinstance(x, bool):
            return 0.5 * (x + abs(x))
        return TensorVariable(_t.relu(_v(x)))
    from .. import abs as _abs
    x = as_tensor_variable(x)
    f1 = 0.5 * (1 + alpha)
    f2 = 0.5 * (1 - alpha)
    return f1 * x + f2 * _abs(x)


def elu(x, alpha=1):
    from .. import exp, switch
    x = as_tensor_variable(x)
    return switch(x > 0, x, alpha * (exp(x) - 1))


def softmax(c, axis=-1):
    return TensorVariable(_t.softmax(_v(c), int(axis)))


def logsoftmax(c, axis=-1):
    return TensorVariable(_t.log_softmax(_v(c), int(axis)))


log_softmax = logsoftmax


def categorical_crossentropy(coding_dist, true_dist):
    """-sum(true_dist * log(coding_dist)) per row; true_dist: class indices or one-hot rows."""
    return TensorVariable(_t.categorical_crossentropy(_v(coding_dist), _v(true_dist)))


def binary_crossentropy(output, target):
    from .. import log
    output, target = as_tensor_variable(output), as_tensor_variable(target)
    return -(target * log(output) + (1.0 - target) * log(1.0 - output))


def sigmoid_binary_crossentropy(output, target):
    from .. import log1p, exp, maximum, abs as _abs
    output, target = as_tensor_variable(output), as_tensor_variable(target)
    return maximum(output, 0.0) - output * target + log1p(exp(-_abs(output)))


def conv2d(input, filters, input_shape=None, filter_shape=None, border_mode="valid", subsample=(1, 1),
           filter_flip=True, image_shape=None, filter_dilation=(1, 1), num_groups=1, unshared=False, **kwargs):
    """Theano's T.nnet.conv2d: a 2-d convolution (filter_flip=True) or cross-correlation of a
    (batch, channels, rows, cols) input with (out_channels, channels // num_groups, rows, cols)
    filters; border_mode 'valid', 'full', 'half', an int or a pair of ints. image_shape is the
    deprecated name of input_shape. See theon.tensor.nnet.abstract_conv."""
    if kwargs:
        raise TypeError("conv2d() got an unexpected keyword argument %r" % (next(iter(kwargs)),))
    if unshared:
        from ...errors import not_available
        raise not_available("T.nnet.conv2d(unshared=True)", "unshared convolutions are not implemented")
    if image_shape is not None:
        if input_shape is not None:
            raise ValueError("conv2d: give input_shape or its deprecated name image_shape, not both")
        input_shape = image_shape
    return abstract_conv.conv2d(input, filters, input_shape=input_shape, filter_shape=filter_shape,
                                border_mode=border_mode, subsample=subsample, filter_flip=filter_flip,
                                filter_dilation=filter_dilation, num_groups=num_groups)


from . import abstract_conv, conv  # noqa: E402
from .abstract_conv import conv2d_grad_wrt_inputs, conv2d_grad_wrt_weights  # noqa: E402,F401
from .abstract_conv import separable_conv2d  # noqa: E402,F401
from . import bn  # noqa: E402,F401  (theano.tensor.nnet.bn)
from .bn import batch_normalization  # noqa: E402,F401


from ..._op_classes import LogSoftmax, Softmax  # noqa: E402  (op classes, for isinstance(node.op, ...))
from . import nnet  # noqa: E402  (theano.tensor.nnet.nnet)
