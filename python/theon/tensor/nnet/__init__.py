"""theon.tensor.nnet: Theano's ``T.nnet`` neural-network ops."""
from ... import _core
from ..._variable import TensorVariable, _v, as_tensor_variable

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
    """max(x, 0); with alpha, the leaky form (Theano's relu(x, alpha))."""
    if isinstance(alpha, (int, float)) and alpha == 0:
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


def conv2d(*args, **kwargs):
    from ...errors import not_available
    raise not_available("T.nnet.conv2d", "convolutions are a later issue")
