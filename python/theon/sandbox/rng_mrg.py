"""theon.sandbox.rng_mrg: Theano's MRG_RandomStreams with its signatures, on the engine of
theon.tensor.shared_randomstreams (Philox4x32-10, the same numbers on the CPU and the GPU).
The numbers differ from Theano's MRG31k3p generator; ``nstreams`` is accepted and ignored with
one warning (a counter-based generator needs no streams per thread)."""
from ..tensor.shared_randomstreams import RandomStreams, _no_nstreams

__all__ = ["MRG_RandomStreams"]


class MRG_RandomStreams(RandomStreams):
    """Theano's theano.sandbox.rng_mrg.MRG_RandomStreams(seed=12345)."""

    def __init__(self, seed=12345):
        super().__init__(seed)

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
