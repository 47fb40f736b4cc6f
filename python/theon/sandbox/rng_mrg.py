"""theon.sandbox.rng_mrg: Theano's MRG_RandomStreams with its signatures, on the engine of
theon.tensor.shared_randomstreams (Philox4x32-10, the same numbers on the CPU and the GPU).
The numbers differ from Theano's MRG31k3p generator; ``nstreams`` is accepted and ignored with
one warning (a counter-based generator needs no streams per thread)."""
import numpy as np

from ..errors import TheonTypeError
from ..tensor.shared_randomstreams import RandomStreams, _no_nstreams

__all__ = ["MRG_RandomStreams"]


class MRG_RandomStreams(RandomStreams):
    """Theano's theano.sandbox.rng_mrg.MRG_RandomStreams(seed=12345)."""

    def __init__(self, seed=12345):
        super().__init__(seed)

    @property
    def rstate(self):
        """Theano's state for the streams made next: here the seed they start from (an int64
        array of one element; Theano's is MRG31k3p's six int32 numbers)."""
        return np.array([self._seed], dtype=np.int64)

    @rstate.setter
    def rstate(self, value):
        # The tutorial's copy_random_state: `g2.rng.rstate = g1.rng.rstate`, then each stream's
        # state. Streams made from now on start from the new seed; those made already keep theirs.
        a = np.asarray(value)
        if a.shape != (1,) or a.dtype.kind not in "iu":
            raise TheonTypeError(f"MRG_RandomStreams.rstate = {value!r}: expected the rstate of a Theon "
                                 "MRG_RandomStreams (an int64 array [seed]); Theano's MRG31k3p state does not apply")
        kept = [(s, s.get_value()) for s, _ in self.state_updates]
        self.seed(int(a[0]))  # sets the seed of new streams, and resets the existing ones: restored next
        for s, v in kept:
            s.set_value(v)

    def binomial(self, size=None, p=0.5, ndim=None, dtype="int64", nstreams=None, n=1):
        return super().binomial(size=size, n=n, p=p, ndim=ndim, dtype=dtype, nstreams=nstreams)

    def multinomial(self, size=None, n=1, pvals=None, ndim=None, dtype="int64", nstreams=None):
        if pvals is None:
            raise TypeError("MRG_RandomStreams.multinomial: pvals is required (a matrix of probability rows)")
        return super().multinomial(size=size, n=n, pvals=pvals, ndim=ndim, dtype=dtype, nstreams=nstreams)

    def choice(self, size=1, a=None, replace=True, p=None, ndim=None, dtype="int64", nstreams=None):
        if a is None:
            raise NotImplementedError("MRG_RandomStreams.choice(p=<matrix>) (weighted draws without replacement) "
                                      "is not available in Theon; pass a (an int) for draws from range(a)")
        _no_nstreams("choice", nstreams)
        return super().choice(size=size, a=a, replace=replace, p=p, ndim=ndim, dtype=dtype)
