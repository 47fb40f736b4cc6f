"""theon.tensor.subtensor: Theano's ``theano.tensor.subtensor`` op classes (indexing nodes)."""
from .._op_classes import AdvancedIncSubtensor1, AdvancedSubtensor1, IncSubtensor, Subtensor

__all__ = ["Subtensor", "IncSubtensor", "AdvancedSubtensor1", "AdvancedIncSubtensor1"]
