"""theon.config: attribute access over the C++ config, change_flags, THEON_FLAGS/THEANO_FLAGS."""
import subprocess
import sys

import pytest

import theon
import theon.tensor as T
from conftest import subprocess_env


def test_attributes():
    assert theon.config.floatX in ("float32", "float64")
    assert theon.config.device == "cpu"
    assert theon.config.print_active_device is True
    assert isinstance(theon.config.on_fallback, str)
    assert "floatX" in theon.config.keys() and "floatX" in dir(theon.config)
    assert "floatX" in str(theon.config)


def test_set_and_read_back():
    theon.config.floatX = "float64"
    assert theon.config.floatX == "float64"
    assert T.matrix().dtype == "float64"
    theon.config.floatX = "float32"
    assert T.matrix().dtype == "float32"
    theon.config.deterministic = True
    assert theon.config.deterministic is True
    theon.config.mode = "FAST_COMPILE"
    assert theon.config.mode.lower() == "fast_compile"
    import numpy as np
    theon.config.floatX = np.float64
    assert theon.config.floatX == "float64"


def test_bad_values_leave_option_unchanged():
    before = theon.config.floatX
    with pytest.raises(ValueError):
        theon.config.floatX = "int32"
    assert theon.config.floatX == before
    with pytest.raises(AttributeError):
        theon.config.no_such_option
    assert not hasattr(theon.config, "no_such_option")


def test_change_flags():
    with theon.config.change_flags(floatX="float64", mode="FAST_COMPILE"):
        assert theon.config.floatX == "float64"
        assert T.vector().dtype == "float64"
    assert theon.config.floatX == "float32" or theon.config.floatX != "float64"

    @theon.change_flags(floatX="float64")
    def inner():
        return theon.config.floatX
    before = theon.config.floatX
    assert inner() == "float64" and theon.config.floatX == before
    with pytest.raises(ValueError):
        with theon.config.change_flags(floatX="float64", mode="turbo"):
            pass
    assert theon.config.floatX == before


def test_theano_sections_accepted():
    theon.config.gpuarray.preallocate = 0.9  # a Theano key Theon ignores (warns once)
    theon.config.lib.cnmem = 0.5


def run(code, **env):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=subprocess_env(**env),
                          timeout=60)


def test_flags_from_environment():
    r = run("import theon; print(theon.config.floatX, theon.config.mode.lower())",
            THEON_FLAGS="floatX=float64,mode=FAST_COMPILE")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["float64", "fast_compile"]
    r = run("import theon; print(theon.config.floatX)", THEANO_FLAGS="floatX=float64,lib.cnmem=0.5")
    assert r.stdout.strip() == "float64"
    assert "lib.cnmem" in r.stderr
    r = run("import theon; print(theon.config.floatX)", THEANO_FLAGS="floatX=float64", THEON_FLAGS="floatX=float32")
    assert r.stdout.strip() == "float32"


def test_bad_flags_from_environment():
    r = run("import theon; print(theon.config.floatX)", THEON_FLAGS="nonsense_key=1")
    assert r.returncode != 0
    assert "nonsense_key" in r.stderr


def test_import_is_fast():
    r = run("import time; t = time.perf_counter(); import theon, theon.tensor; print(time.perf_counter() - t)")
    assert r.returncode == 0, r.stderr
    assert float(r.stdout) < 1.0


def test_rejected_flags_are_reported_at_import():
    # Not later, as an AttributeError on theon.config.floatX: the import itself fails,
    # naming the entry, and nothing of the string applies.
    r = run("import theon", THEON_FLAGS="floatX=float64,mode=turbo")
    assert r.returncode != 0
    assert "ConfigError" in r.stderr and "turbo" in r.stderr and "THEON_FLAGS" in r.stderr, r.stderr
    assert "AttributeError" not in r.stderr
    r = run("import theon", THEANO_FLAGS="floatX=int32")
    assert r.returncode != 0 and "floatX" in r.stderr and "THEANO_FLAGS" in r.stderr, r.stderr


def test_rejected_flag_string_applies_nothing():
    before = theon.config.floatX, theon.config.mode
    with pytest.raises(theon.errors.ConfigError, match="nothing"):
        from theon import _core
        _core.config.apply_flags("floatX=float64,mode=turbo", "test")
    assert (theon.config.floatX, theon.config.mode) == before


def test_theano_warn_keys_are_accepted_and_ignored():
    r = run("import theon as theano\n"
            "theano.config.warn.subtensor_merge_bug = False\n"
            "theano.config.warn.sum_div_dimshuffle_bug = False\n"
            "print(theano.config.warn.subtensor_merge_bug)")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"
    assert r.stderr.count("warn.subtensor_merge_bug") == 1, r.stderr


def test_options_not_implemented_yet_warn():
    r = run("import theon; theon.config.profile = True; theon.config.profile = True")
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("'profile' is not implemented yet") == 1, r.stderr


def test_none_is_not_a_value():
    before = theon.config.mode
    with pytest.raises(theon.errors.ConfigError, match="None"):
        theon.config.mode = None
    assert theon.config.mode == before


def test_nonexistent_device_is_refused():
    theon.config.device = "cuda999"
    x = T.vector("x")
    with pytest.raises(theon.errors.ConfigError, match="cuda999 does not exist"):
        theon.function([x], x * 2)
