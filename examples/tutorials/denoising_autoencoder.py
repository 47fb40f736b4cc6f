# A denoising autoencoder on the digits data, written as the Theano tutorial writes it
# (deeplearning.net "Denoising Autoencoders (dA)"): tied weights, sigmoid units, the input
# corrupted by a RandomStreams binomial mask, cross-entropy reconstruction cost, SGD through
# updates over minibatches selected by givens. Only the imports differ from a Theano program.
#
#   python examples/tutorials/denoising_autoencoder.py [--epochs N] [--check]
#
# --check fails unless the reconstruction cost fell.
import argparse
import os
import sys

import numpy

import theon as theano
import theon.tensor as T
from theon.tensor.shared_randomstreams import RandomStreams

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data", "digits.csv")


class dA(object):
    def __init__(self, numpy_rng, theano_rng=None, input=None, n_visible=64, n_hidden=32):
        self.n_visible = n_visible
        self.n_hidden = n_hidden
        if not theano_rng:
            theano_rng = RandomStreams(numpy_rng.randint(2 ** 30))
        bound = 4 * numpy.sqrt(6.0 / (n_hidden + n_visible))
        initial_W = numpy.asarray(numpy_rng.uniform(low=-bound, high=bound, size=(n_visible, n_hidden)),
                                  dtype=theano.config.floatX)
        self.W = theano.shared(value=initial_W, name="W", borrow=True)
        self.b = theano.shared(value=numpy.zeros(n_hidden, dtype=theano.config.floatX), name="b", borrow=True)
        self.b_prime = theano.shared(value=numpy.zeros(n_visible, dtype=theano.config.floatX), name="bvis",
                                     borrow=True)
        self.W_prime = self.W.T
        self.theano_rng = theano_rng
        self.x = T.dmatrix(name="input") if input is None else input
        self.params = [self.W, self.b, self.b_prime]

    def get_corrupted_input(self, input, corruption_level):
        return self.theano_rng.binomial(size=input.shape, n=1, p=1 - corruption_level,
                                        dtype=theano.config.floatX) * input

    def get_hidden_values(self, input):
        return T.nnet.sigmoid(T.dot(input, self.W) + self.b)

    def get_reconstructed_input(self, hidden):
        return T.nnet.sigmoid(T.dot(hidden, self.W_prime) + self.b_prime)

    def get_cost_updates(self, corruption_level, learning_rate):
        tilde_x = self.get_corrupted_input(self.x, corruption_level)
        y = self.get_hidden_values(tilde_x)
        z = self.get_reconstructed_input(y)
        L = -T.sum(self.x * T.log(z) + (1 - self.x) * T.log(1 - z), axis=1)
        cost = T.mean(L)
        gparams = T.grad(cost, self.params)
        updates = [(param, param - learning_rate * gparam) for param, gparam in zip(self.params, gparams)]
        return cost, updates


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    raw = numpy.loadtxt(DATA, delimiter=",")
    train_set_x = theano.shared(numpy.asarray(raw[:, :64] / 16.0, dtype=theano.config.floatX), borrow=True)
    batch_size, learning_rate = 20, 0.1
    n_train_batches = train_set_x.get_value(borrow=True).shape[0] // batch_size

    index = T.lscalar()
    x = T.matrix("x")
    rng = numpy.random.RandomState(123)
    theano_rng = RandomStreams(rng.randint(2 ** 30))
    da = dA(numpy_rng=rng, theano_rng=theano_rng, input=x, n_visible=64, n_hidden=32)
    cost, updates = da.get_cost_updates(corruption_level=0.3, learning_rate=learning_rate)
    train_da = theano.function([index], cost, updates=updates,
                               givens={x: train_set_x[index * batch_size:(index + 1) * batch_size]})
    first = last = None
    for epoch in range(args.epochs):
        c = float(numpy.mean([train_da(i) for i in range(n_train_batches)]))
        first = c if first is None else first
        last = c
        print(f"training epoch {epoch + 1}, cost {c:.4f}")
    if args.check and not last < first:
        print(f"check failed: cost {first:.4f} -> {last:.4f}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
