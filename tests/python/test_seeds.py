"""The seed document's three programs (examples/seeds/) run on the CPU; results vs NumPy."""
import os
import runpy

import numpy as np
import pytest

import theon

SEEDS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "examples",
                     "seeds")


def run_seed(name, capsys):
    g = runpy.run_path(os.path.join(SEEDS, name), run_name="__main__")
    return g, capsys.readouterr()


def test_seed1_dot_bias(capsys):
    g, out = run_seed("seed1_dot_bias.py", capsys)
    w, b = g["w"].get_value(), g["b"].get_value()
    np.testing.assert_allclose(g["result"], g["x_data"] @ w + b, rtol=1e-5, atol=1e-5)
    assert out.out.strip() == "(100, 5)"
    assert g["result"].dtype == np.dtype(theon.config.floatX)


def test_seed2_device_cuda_runs_on_cpu(capsys):
    g, out = run_seed("seed2_transfer_overhead.py", capsys)
    assert theon.config.device == "cuda"  # restored after the test by conftest
    w, b = g["w"].get_value(), g["b"].get_value()
    np.testing.assert_allclose(g["result_small"], g["x_data_small"] @ w + b, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(g["result_large"], g["x_data_large"] @ w + b, rtol=1e-5, atol=1e-5)
    assert "Small input execution time" in out.out and "Large input execution time" in out.out
    assert all(n.device == "cpu" for n in g["f"].maker.fgraph.toposort())


def test_seed3_relu_exp_log(capsys):
    g, out = run_seed("seed3_relu_exp_log.py", capsys)
    w, b = g["w"].get_value(), g["b"].get_value()
    r = np.maximum(g["x_data"] @ w + b, 0)
    with np.errstate(over="ignore"):
        want = np.log(np.exp(r))
    np.testing.assert_allclose(g["result"], want, rtol=1e-4, atol=1e-5)
    assert g["result"].shape == (10000, 5) and g["result"].dtype == np.float32
    assert "Execution time" in out.out
