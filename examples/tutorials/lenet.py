# A LeNet convolutional network on the digits data, written as the Theano tutorial writes it
# (deeplearning.net "Convolutional Neural Networks (LeNet)", convolutional_mlp.py): two
# LeNetConvPoolLayer (conv2d with filter_shape/input_shape, pool_2d with ignore_border, a
# tanh over the bias broadcast by dimshuffle('x', 0, 'x', 'x')), a tanh HiddenLayer and a
# LogisticRegression on top, SGD through updates over minibatches selected by givens. The
# sizes are scaled to 8x8 images; only the imports differ from a Theano program.
#
#   python examples/tutorials/lenet.py [--epochs N] [--check]
#
# --check fails unless the training cost fell and the held-out accuracy is at least 97%.
# The data file is ordered by writer, so it is shuffled (fixed seed) before the split.
import argparse
import os
import sys

import numpy

import theon as theano
import theon.tensor as T
from theon.tensor.nnet import conv2d
from theon.tensor.signal import pool

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data", "digits.csv")


def load_digits(path=DATA):
    raw = numpy.loadtxt(path, delimiter=",")
    raw = raw[numpy.random.RandomState(1234).permutation(len(raw))]
    x = (raw[:, :64] / 16.0).astype(theano.config.floatX)
    y = raw[:, 64].astype("int64")
    n_train = 1500

    def shared_dataset(xs, ys):
        return (theano.shared(numpy.asarray(xs, dtype=theano.config.floatX), borrow=True),
                theano.shared(numpy.asarray(ys, dtype="int64"), borrow=True))
    return shared_dataset(x[:n_train], y[:n_train]), shared_dataset(x[n_train:], y[n_train:])


class LogisticRegression(object):
    def __init__(self, input, n_in, n_out):
        self.W = theano.shared(value=numpy.zeros((n_in, n_out), dtype=theano.config.floatX), name="W", borrow=True)
        self.b = theano.shared(value=numpy.zeros((n_out,), dtype=theano.config.floatX), name="b", borrow=True)
        self.p_y_given_x = T.nnet.softmax(T.dot(input, self.W) + self.b)
        self.y_pred = T.argmax(self.p_y_given_x, axis=1)
        self.params = [self.W, self.b]

    def negative_log_likelihood(self, y):
        return -T.mean(T.log(self.p_y_given_x)[T.arange(y.shape[0]), y])

    def errors(self, y):
        return T.mean(T.neq(self.y_pred, y))


class HiddenLayer(object):
    def __init__(self, rng, input, n_in, n_out, activation=T.tanh):
        W_values = numpy.asarray(rng.uniform(low=-numpy.sqrt(6.0 / (n_in + n_out)),
                                             high=numpy.sqrt(6.0 / (n_in + n_out)), size=(n_in, n_out)),
                                 dtype=theano.config.floatX)
        self.W = theano.shared(value=W_values, name="W", borrow=True)
        self.b = theano.shared(value=numpy.zeros((n_out,), dtype=theano.config.floatX), name="b", borrow=True)
        self.output = activation(T.dot(input, self.W) + self.b)
        self.params = [self.W, self.b]


class LeNetConvPoolLayer(object):
    def __init__(self, rng, input, filter_shape, image_shape, poolsize=(2, 2), border_mode="valid"):
        assert image_shape[1] == filter_shape[1]
        fan_in = numpy.prod(filter_shape[1:])
        fan_out = filter_shape[0] * numpy.prod(filter_shape[2:]) // numpy.prod(poolsize)
        W_bound = numpy.sqrt(6.0 / (fan_in + fan_out))
        self.W = theano.shared(numpy.asarray(rng.uniform(low=-W_bound, high=W_bound, size=filter_shape),
                                             dtype=theano.config.floatX), borrow=True)
        self.b = theano.shared(numpy.zeros((filter_shape[0],), dtype=theano.config.floatX), borrow=True)
        conv_out = conv2d(input=input, filters=self.W, filter_shape=filter_shape, input_shape=image_shape,
                          border_mode=border_mode)
        pooled_out = pool.pool_2d(input=conv_out, ws=poolsize, ignore_border=True)
        self.output = T.tanh(pooled_out + self.b.dimshuffle("x", 0, "x", "x"))
        self.params = [self.W, self.b]
        self.input = input


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    learning_rate, batch_size, nkerns = 0.1, 50, [20, 50]
    rng = numpy.random.RandomState(23455)
    (train_set_x, train_set_y), (test_set_x, test_set_y) = load_digits()
    n_train_batches = train_set_x.get_value(borrow=True).shape[0] // batch_size

    index = T.lscalar()
    x = T.matrix("x")
    y = T.lvector("y")
    layer0_input = x.reshape((batch_size, 1, 8, 8))
    # 8x8 -> conv 3x3 ('half': same size) -> 8x8 -> pool 2x2 -> 4x4
    layer0 = LeNetConvPoolLayer(rng, input=layer0_input, image_shape=(batch_size, 1, 8, 8),
                                filter_shape=(nkerns[0], 1, 3, 3), poolsize=(2, 2), border_mode="half")
    # 4x4 -> conv 3x3 ('half') -> 4x4 -> pool 2x2 -> 2x2
    layer1 = LeNetConvPoolLayer(rng, input=layer0.output, image_shape=(batch_size, nkerns[0], 4, 4),
                                filter_shape=(nkerns[1], nkerns[0], 3, 3), poolsize=(2, 2), border_mode="half")
    layer2 = HiddenLayer(rng, input=layer1.output.flatten(2), n_in=nkerns[1] * 2 * 2, n_out=100,
                         activation=T.tanh)
    layer3 = LogisticRegression(input=layer2.output, n_in=100, n_out=10)
    cost = layer3.negative_log_likelihood(y)

    n_test = test_set_x.get_value(borrow=True).shape[0] // batch_size
    test_model = theano.function([index], layer3.errors(y), givens={
        x: test_set_x[index * batch_size:(index + 1) * batch_size],
        y: test_set_y[index * batch_size:(index + 1) * batch_size]})
    params = layer3.params + layer2.params + layer1.params + layer0.params
    grads = T.grad(cost, params)
    updates = [(param_i, param_i - learning_rate * grad_i) for param_i, grad_i in zip(params, grads)]
    train_model = theano.function([index], cost, updates=updates, givens={
        x: train_set_x[index * batch_size:(index + 1) * batch_size],
        y: train_set_y[index * batch_size:(index + 1) * batch_size]})

    first = last = None
    for epoch in range(args.epochs):
        mean = float(numpy.mean([float(train_model(i)) for i in range(n_train_batches)]))
        first = mean if first is None else first
        last = mean
        error = float(numpy.mean([float(test_model(i)) for i in range(n_test)]))
        print(f"epoch {epoch + 1}: training cost {mean:.4f}, held-out error {error * 100:.2f}%")
    accuracy = 1.0 - error
    if args.check and not (last < first and accuracy >= 0.97):
        print(f"check failed: cost {first:.4f} -> {last:.4f}, held-out accuracy {accuracy:.3f}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
