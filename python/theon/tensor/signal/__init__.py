"""theon.tensor.signal: Theano's ``theano.tensor.signal`` (pooling: :mod:`.pool`)."""
from . import pool  # noqa: F401
