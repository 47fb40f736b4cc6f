"""theon.tensor.nnet.bn: Theano's ``theano.tensor.nnet.bn`` batch normalization, built from
elementwise ops and reductions (gradients of every order follow; the optimizer fuses it)."""
from ... import _core
from ..._variable import TensorVariable, _v

_b = _core.bn

__all__ = ["batch_normalization", "batch_normalization_train", "batch_normalization_test"]


def _axes(axes):
    if isinstance(axes, str):
        return axes, []
    try:
        return "", [int(a) for a in axes]
    except TypeError:
        return "", [int(axes)]


def batch_normalization(inputs, gamma, beta, mean, std, mode='low_mem'):
    """(inputs - mean) * (gamma / std) + beta, broadcasting (mode 'low_mem' or 'high_mem')."""
    return TensorVariable(_b.batch_normalization(_v(inputs), _v(gamma), _v(beta), _v(mean), _v(std), str(mode)))


def batch_normalization_train(inputs, gamma, beta, axes='per-activation', epsilon=1e-4,
                              running_average_factor=0.1, running_mean=None, running_var=None):
    """Normalizes inputs by its mean and variance over axes ('per-activation': 0, 'spatial':
    all but 1, or a tuple). Returns (out, mean, invstd) and, given running_mean and
    running_var, also their updated values (Theano's: the variance term scaled by m / (m - 1)).
    """
    name, ax = _axes(axes)
    if (running_mean is None) != (running_var is None):
        raise ValueError("running_mean and running_var must either both be given or both be None")
    outs = _b.batch_normalization_train(_v(inputs), _v(gamma), _v(beta), name, ax, float(epsilon),
                                        float(running_average_factor),
                                        None if running_mean is None else _v(running_mean),
                                        None if running_var is None else _v(running_var))
    return tuple(TensorVariable(o) for o in outs)


def batch_normalization_test(inputs, gamma, beta, mean, var, axes='per-activation', epsilon=1e-4):
    """(inputs - mean) * gamma / sqrt(var + epsilon) + beta, the parameters broadcast over axes."""
    name, ax = _axes(axes)
    return TensorVariable(_b.batch_normalization_test(_v(inputs), _v(gamma), _v(beta), _v(mean), _v(var), name, ax,
                                                      float(epsilon)))
