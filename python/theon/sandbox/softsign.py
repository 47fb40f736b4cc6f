"""theon.sandbox.softsign: Theano's ``theano.sandbox.softsign`` module path (``from
theano.sandbox.softsign import softsign``): x / (1 + |x|), theon.tensor.nnet.softsign."""
from ..tensor.nnet import softsign

__all__ = ["softsign"]
