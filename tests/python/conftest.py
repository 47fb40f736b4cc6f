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


# ---- the simulated GPU (tests/gpu_sim; THEON_GPU_SIM=1) --------------------------------
# Under the simulator, test_cuda.py must run every test: a skip there (no device found, a
# broken simulator) is reported as a failure. The session also checks that the CUDA runtime
# loaded is the simulator's (its libcudart exports theon_gpu_sim_marker).

GPU_SIM = os.environ.get("THEON_GPU_SIM") == "1"
_MUST_NOT_SKIP = {"test_cuda.py"}


def loaded_cudart():
    """The libcudart.so.13 loaded in this process (ctypes.CDLL), or None."""
    import ctypes
    try:
        return ctypes.CDLL("libcudart.so.13", mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
    except (OSError, AttributeError):
        pass
    # Pythons whose ctypes does not pass RTLD_NOLOAD through: the path mapped in this process.
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split()[-1] if len(line.split()) >= 6 else ""
                if os.path.basename(path).startswith("libcudart.so"):
                    return ctypes.CDLL(path)
    except OSError:
        pass
    return None


def gpu_sim_problem():
    """None when the loaded CUDA runtime is the simulator's; else why not."""
    theon.cuda_status()  # loads libtheon_cuda, and with it libcudart
    lib = loaded_cudart()
    if lib is None:
        return "THEON_GPU_SIM=1 but no libcudart.so.13 is loaded in this process"
    if not hasattr(lib, "theon_gpu_sim_marker"):
        return ("THEON_GPU_SIM=1 but the loaded libcudart.so.13 is not the simulator's (no theon_gpu_sim_marker; "
                "is the simulator's library folder first on LD_LIBRARY_PATH?)")
    return None


def pytest_sessionstart(session):
    if GPU_SIM:
        problem = gpu_sim_problem()
        if problem:
            pytest.exit(problem, returncode=1)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if GPU_SIM and report.skipped and os.path.basename(str(item.fspath)) in _MUST_NOT_SKIP:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"skipped under THEON_GPU_SIM=1, which must not skip: {reason}"


@pytest.fixture
def on_gpu():
    """Every function compiled in the test runs on the GPU (and fails rather than fall back)."""
    with theon.config.change_flags(device="cuda", on_fallback="raise"):
        yield
