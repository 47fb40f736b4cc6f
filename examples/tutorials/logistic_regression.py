# Logistic regression on the digits data, written as the Theano tutorial writes it
# (deeplearning.net "Classifying MNIST digits using Logistic Regression"): a LogisticRegression
# class, the negative log-likelihood indexed by T.arange, data in shared variables, minibatches
# through givens, SGD through updates. Only the imports differ from a Theano program.
#
#   python examples/tutorials/logistic_regression.py [--epochs N] [--check]
#
# --check fails unless the training loss fell and the held-out error is below 10%. The data file
# is ordered by writer, so it is shuffled (fixed seed) before the train/held-out split.
import argparse
import os
import sys

import numpy

import theon as theano
import theon.tensor as T

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data", "digits.csv")


def load_digits(path=DATA):
    raw = numpy.loadtxt(path, delimiter=",")
    raw = raw[numpy.random.RandomState(1234).permutation(len(raw))]  # the file is ordered by writer
    x = (raw[:, :64] / 16.0).astype(theano.config.floatX)
    y = raw[:, 64].astype("int64")
    n_train = 1500
    def shared_dataset(xs, ys):
        shared_x = theano.shared(numpy.asarray(xs, dtype=theano.config.floatX), borrow=True)
        shared_y = theano.shared(numpy.asarray(ys, dtype="int64"), borrow=True)
        return shared_x, shared_y
    return shared_dataset(x[:n_train], y[:n_train]), shared_dataset(x[n_train:], y[n_train:])


class LogisticRegression(object):
    def __init__(self, input, n_in, n_out):
        self.W = theano.shared(value=numpy.zeros((n_in, n_out), dtype=theano.config.floatX), name="W", borrow=True)
        self.b = theano.shared(value=numpy.zeros((n_out,), dtype=theano.config.floatX), name="b", borrow=True)
        self.p_y_given_x = T.nnet.softmax(T.dot(input, self.W) + self.b)
        self.y_pred = T.argmax(self.p_y_given_x, axis=1)
        self.params = [self.W, self.b]
        self.input = input

    def negative_log_likelihood(self, y):
        return -T.mean(T.log(self.p_y_given_x)[T.arange(y.shape[0]), y])

    def errors(self, y):
        if y.ndim != self.y_pred.ndim:
            raise TypeError("y should have the same shape as self.y_pred", ("y", y.type, "y_pred", self.y_pred.type))
        return T.mean(T.neq(self.y_pred, y))


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    learning_rate, batch_size = 0.13, 50
    (train_set_x, train_set_y), (test_set_x, test_set_y) = load_digits()
    n_train_batches = train_set_x.get_value(borrow=True).shape[0] // batch_size

    index = T.lscalar()
    x = T.matrix("x")
    y = T.lvector("y")
    classifier = LogisticRegression(input=x, n_in=64, n_out=10)
    cost = classifier.negative_log_likelihood(y)

    test_model = theano.function(inputs=[], outputs=classifier.errors(y), givens={x: test_set_x, y: test_set_y})
    g_W = T.grad(cost=cost, wrt=classifier.W)
    g_b = T.grad(cost=cost, wrt=classifier.b)
    updates = [(classifier.W, classifier.W - learning_rate * g_W), (classifier.b, classifier.b - learning_rate * g_b)]
    train_model = theano.function(
        inputs=[index], outputs=cost, updates=updates,
        givens={x: train_set_x[index * batch_size:(index + 1) * batch_size],
                y: train_set_y[index * batch_size:(index + 1) * batch_size]})

    first = last = None
    for epoch in range(args.epochs):
        losses = [float(train_model(i)) for i in range(n_train_batches)]
        mean = float(numpy.mean(losses))
        first = mean if first is None else first
        last = mean
        print(f"epoch {epoch + 1}: training loss {mean:.4f}, held-out error {float(test_model()) * 100:.2f}%")
    error = float(test_model())
    if args.check and not (last < first and error < 0.10):
        print(f"check failed: loss {first:.4f} -> {last:.4f}, held-out error {error:.3f}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
