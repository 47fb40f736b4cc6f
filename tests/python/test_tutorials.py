"""Theano tutorial programs (examples/tutorials/), unchanged but for their imports, train on the
digits data with a falling loss."""
import importlib.util
import os

TUTORIALS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "examples",
                         "tutorials")


def load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(TUTORIALS, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_denoising_autoencoder_with_random_streams_corruption_trains(capsys):
    assert load("denoising_autoencoder").main(["--epochs", "4", "--check"]) == 0
    costs = [float(line.rsplit(" ", 1)[1]) for line in capsys.readouterr().out.splitlines() if "cost" in line]
    assert len(costs) == 4 and costs[-1] < costs[0] * 0.9, costs


def test_logistic_regression_with_arange_label_indexing_trains(capsys):
    # -T.mean(T.log(p_y_given_x)[T.arange(y.shape[0]), y]): indexing by two integer arrays.
    assert load("logistic_regression").main(["--epochs", "10", "--check"]) == 0
    losses = [float(line.split("training loss ")[1].split(",")[0]) for line in capsys.readouterr().out.splitlines()]
    assert len(losses) == 10 and losses[-1] < losses[0] * 0.5, losses


def test_lenet_with_conv2d_and_pool_2d_reaches_97_percent(capsys):
    # Theano's convolutional_mlp.py: LeNetConvPoolLayer (conv2d, pool_2d, dimshuffle'd bias).
    assert load("lenet").main(["--epochs", "20", "--check"]) == 0
    costs = [float(line.split("training cost ")[1].split(",")[0]) for line in capsys.readouterr().out.splitlines()]
    assert len(costs) == 20 and costs[-1] < costs[0] * 0.5, costs
