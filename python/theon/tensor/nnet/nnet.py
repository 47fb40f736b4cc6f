"""theon.tensor.nnet.nnet: Theano's ``theano.tensor.nnet.nnet`` module path (``from
theano.tensor.nnet.nnet import softmax``): the functions of theon.tensor.nnet and the Softmax
op classes."""
from . import (binary_crossentropy, categorical_crossentropy, elu, logsoftmax, relu, sigmoid,
               sigmoid_binary_crossentropy, softmax, softplus, softsign)
from ..._op_classes import LogSoftmax, Softmax

__all__ = ["softmax", "logsoftmax", "relu", "elu", "softsign", "binary_crossentropy", "categorical_crossentropy",
           "sigmoid_binary_crossentropy", "sigmoid", "softplus", "Softmax", "LogSoftmax"]
