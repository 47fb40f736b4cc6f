"""``theon.config``: Theano's ``theano.config`` over the C++ ``theon::config()``.

Attribute access reads and writes the process-wide C++ configuration, which read
``~/.theonrc``, ``THEANO_FLAGS`` and ``THEON_FLAGS`` on first use. Values are checked by the
C++ side: an unknown key or a bad value raises :class:`theon.errors.ConfigError` (a
ValueError); reading an unknown attribute raises AttributeError. Options are read when
``theon.function`` is called, so setting one afterwards affects only later functions.
"""
import contextlib

from . import _core

_cfg = _core.config

# Theano option sections (theano.config.gpuarray.preallocate, ...): the C++ side accepts these
# keys and warns once that Theon ignores them.
_SECTIONS = frozenset(["gpuarray", "lib", "dnn", "nvcc", "gcc", "blas", "warn", "tensor", "compile", "scan",
                       "cuda", "optimizer", "metaopt", "profiling", "cmodule", "numba", "elemwise", "magma",
                       "nanguardmode", "DebugMode", "linker"])


# Theano 1.0's warn.* keys and their defaults (warn_default of the version that fixed each bug,
# with ignore_bug_before='0.8'): each asks Theano to warn about one of its own old bugs, which
# Theon never had, so there is never anything to warn about. Reading one that was not set gives
# Theano's default (rnnrbm and other programs read them); setting one warns once that it is
# ignored (the C++ flag parser).
_THEANO_WARN_DEFAULTS = {
    "ignore_bug_before": "0.8", "argmax_pushdown_bug": False, "gpusum_01_011_0111_bug": False,
    "sum_sum_bug": False, "sum_div_dimshuffle_bug": False, "subtensor_merge_bug": False,
    "gpu_set_subtensor1": False, "vm_gc_bug": False, "signal_conv2d_interface": False, "reduce_join": False,
    "inc_set_subtensor1": False, "round": True,
}

# Theano options that only the Python package acts on and THEANO_FLAGS cannot set, kept here:
# name -> value (Theano's default to start). None now: print_test_value, which repr(var) reads
# (TensorVariable.__repr__), is a row of include/theon/options.def.
_PYTHON_OPTIONS = {}


def _python_option(key, value):
    """The checked value for a _PYTHON_OPTIONS key (all are booleans)."""
    if isinstance(value, str) and value.lower() in ("true", "false", "1", "0", "yes", "no", "on", "off"):
        return value.lower() in ("true", "1", "yes", "on")
    if isinstance(value, (bool, int)) and value in (0, 1):
        return bool(value)
    from .errors import ConfigError
    raise ConfigError(f"config option '{key}': expected a boolean (True/False), got {value!r}")


def _get_text(key):
    if key in _PYTHON_OPTIONS:
        return _PYTHON_OPTIONS[key]
    return _cfg.get_text(key)


def _set_text(key, value):
    if key in _PYTHON_OPTIONS:
        _PYTHON_OPTIONS[key] = _python_option(key, value)
    else:
        _cfg.set(key, _text(value))


def _text(value):
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, str):
        return value
    if isinstance(value, type) or type(value).__name__ == "dtype":
        import numpy as np
        return np.dtype(value).name
    return str(value)


def _set(key, value):
    """Sets a Theon option; a Theano option Theon does not use (exception_verbosity,
    gpuarray.preallocate, warn.*, ...) goes through the flag parser, which warns once and
    ignores it. None is never a value (``config.mode = None`` would otherwise mean mode none)."""
    if key in _PYTHON_OPTIONS:
        _PYTHON_OPTIONS[key] = _python_option(key, value)
        return
    if value is None:
        from .errors import ConfigError
        raise ConfigError(f"theon.config.{key} = None: config options take a value "
                          f"(currently {_cfg.get_text(key) if key in _cfg.keys() else 'unset'!r})")
    if key in _cfg.keys():
        _cfg.set(key, _text(value))
    else:
        _cfg.apply_flags(f"{key}={_text(value)}", "theon.config")


class _Section:
    def __init__(self, prefix):
        object.__setattr__(self, "_prefix", prefix)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        key = f"{self._prefix}.{name}"
        if name in _SECTIONS:
            return _Section(key)
        try:
            return _cfg.get_text(key)
        except ValueError as e:
            if self._prefix == "warn" and name in _THEANO_WARN_DEFAULTS:
                return _THEANO_WARN_DEFAULTS[name]
            raise AttributeError(str(e)) from None

    def __setattr__(self, name, value):
        _set(f"{self._prefix}.{name}", value)


class TheonConfigParser:
    """The configuration; ``theon.config.floatX``, ``theon.config.device = 'cuda'``."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        if name in _PYTHON_OPTIONS:
            return _PYTHON_OPTIONS[name]
        try:
            return _cfg.get(name)
        except ValueError as e:
            if name in _SECTIONS:
                return _Section(name)
            raise AttributeError(str(e)) from None

    def __setattr__(self, name, value):
        _set(name, value)

    def get(self, key):
        return _PYTHON_OPTIONS[key] if key in _PYTHON_OPTIONS else _cfg.get(key)

    def set(self, key, value):
        _set(key, value)

    def keys(self):
        return list(_cfg.keys()) + list(_PYTHON_OPTIONS)

    def __dir__(self):
        return sorted(set(self.keys()) | {"change_flags", "get", "set", "keys", "describe"})

    def describe(self):
        return _cfg.describe()

    __str__ = describe

    def __repr__(self):
        return "<theon.config: " + ", ".join(f"{k}={_cfg.get_text(k)}" for k in _cfg.keys()) + ">"

    def change_flags(self, *args, **kwargs):
        return change_flags(*args, **kwargs)


class change_flags(contextlib.ContextDecorator):
    """``with theon.config.change_flags(floatX='float64'): ...`` (also a decorator).
    Sets the options on entry and restores the previous values on exit."""

    def __init__(self, *args, **kwargs):
        flags = {}
        for a in args:
            flags.update(a)
        flags.update(kwargs)
        self._flags = flags
        self._saved = []

    def __enter__(self):
        saved = []
        try:
            for k, v in self._flags.items():
                saved.append((k, _get_text(k)))
                _set_text(k, v)
        except BaseException:
            for k, old in reversed(saved):
                _set_text(k, old)
            raise
        self._saved.append(saved)
        return self

    def __exit__(self, *exc):
        for k, old in reversed(self._saved.pop()):
            _set_text(k, old)
        return False


config = TheonConfigParser()

# THEON_FLAGS, THEANO_FLAGS and ~/.theonrc are read now, so that a rejected flag string is
# reported when theon is imported (a ConfigError naming the entry; nothing of it applied),
# not as an AttributeError on theon.config.floatX later.
_cfg.get_text("floatX")
