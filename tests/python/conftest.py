"""pytest set-up: makes `theon` importable from a build tree when it is not installed.

Looks in $THEON_PYTHONPATH, then <repo>/build/python, then any <repo>/build*/python that
has the compiled module. Every test runs with the configuration restored afterwards.
"""
import glob
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _candidates():
    env = os.environ.get("THEON_PYTHONPATH")
    if env:
        yield env
    yield os.path.join(ROOT, "build", "python")
    yield from sorted(glob.glob(os.path.join(ROOT, "build*", "python")))


try:
    import theon  # noqa: F401
except ImportError:
    for path in _candidates():
        if glob.glob(os.path.join(path, "theon", "_core*.so")):
            sys.path.insert(0, path)
            break
    import theon  # noqa: F401,E402

THEON_PATH = os.path.dirname(os.path.dirname(os.path.abspath(theon.__file__)))


@pytest.fixture(autouse=True)
def _restore_config():
    from theon import _core
    saved = {k: _core.config.get_text(k) for k in _core.config.keys()}
    yield
    for k, v in saved.items():
        if _core.config.get_text(k) != v:
            _core.config.set(k, v)


@pytest.fixture
def rng():
    import numpy as np
    return np.random.default_rng(1234)


def subprocess_env(**extra):
    env = dict(os.environ)
    env["PYTHONPATH"] = THEON_PATH + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("THEON_FLAGS", None)
    env.pop("THEANO_FLAGS", None)
    env.update(extra)
    return env
