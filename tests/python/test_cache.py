"""theon.cache: the kernel cache's info and clear, from Python and from a shell."""
import os
import stat
import subprocess
import sys

import numpy as np

import theon
import theon.tensor as T
from conftest import subprocess_env


def _compile_one():
    x = T.vector("x")
    f = theon.function([x], T.tanh(x) * 2 + T.exp(-x))
    v = np.linspace(-1, 1, 50).astype("float32")
    np.testing.assert_allclose(f(v), np.tanh(v) * 2 + np.exp(-v), rtol=1e-5)


def test_info_and_clear(tmp_path):
    root = tmp_path / "cache with space; $(x)"
    theon.config.compiledir = str(root)
    theon.config.cxx = "c++"
    _compile_one()
    info = theon.cache.info()
    assert info.root == str(root) and info.refused == ""
    assert info.entries >= 1 and info.bytes > 0
    assert info.limit_bytes == theon.config.compiledir_max_mb * 2**20
    assert stat.S_IMODE(os.stat(root).st_mode) == 0o700
    assert "kernels" in str(info)
    assert theon.cache.clear() > 0
    assert theon.cache.info().entries == 0


def test_refused_folder_is_reported(tmp_path):
    root = tmp_path / "shared"
    root.mkdir()
    os.chmod(root, 0o777)
    theon.config.compiledir = str(root)
    info = theon.cache.info()
    assert info.root != str(root)
    assert "writable by group or others" in info.refused


def test_command_line(tmp_path):
    env = subprocess_env()
    env["THEON_FLAGS"] = f"compiledir={tmp_path / 'c'}"
    out = subprocess.run([sys.executable, "-m", "theon.cache", "info"], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert str(tmp_path / "c") in out.stdout
    out = subprocess.run([sys.executable, "-m", "theon.cache", "clear"], env=env, capture_output=True, text=True)
    assert out.returncode == 0 and "removed" in out.stdout, out.stderr
    bad = subprocess.run([sys.executable, "-m", "theon.cache", "nonsense"], env=env, capture_output=True, text=True)
    assert bad.returncode == 2
