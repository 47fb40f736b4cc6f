"""Theon's exceptions. Each is a subclass of :class:`TheonError` and of the builtin that
Python code expects, so ``except TypeError`` catches :class:`TheonTypeError`:

========================  =========================================================
TheonTypeError            TypeError: wrong dtype, lossy input cast, bad arguments
ShapeError                ValueError: shapes or ranks that do not agree, bad axis
TheonValueError           ValueError: other bad values
ConfigError               ValueError: unknown config key or malformed value
TheonIndexError           IndexError: an index out of range
TheonNotImplementedError  NotImplementedError: not available (yet)
DeviceError               RuntimeError: a device missing or failing
NoCudaDeviceError         DeviceError (and NotImplementedError): a CUDA array without a usable GPU
InternalError             RuntimeError: a bug in Theon
TheonMemoryError          MemoryError: an allocation failed (the message gives the bytes and device)
TheonRuntimeError         RuntimeError: any other error from the core
GradientError             RuntimeError: verify_grad found a wrong gradient
========================  =========================================================

Warnings: :class:`IgnoredArgumentWarning` (a UserWarning, not an error) says once that a
Theano keyword argument is accepted and ignored (docs/guide/config.md lists them).
"""
from ._core import (ConfigError, DeviceError, GradientError, InternalError, ShapeError, TheonError,
                    TheonIndexError, TheonMemoryError, TheonNotImplementedError, TheonRuntimeError,
                    TheonTypeError, TheonValueError)

__all__ = ["TheonError", "TheonTypeError", "ShapeError", "TheonValueError", "ConfigError", "TheonIndexError",
           "TheonNotImplementedError", "DeviceError", "NoCudaDeviceError", "InternalError", "TheonRuntimeError",
           "GradientError", "TheonMemoryError"]


class NoCudaDeviceError(DeviceError, TheonNotImplementedError):
    """A CUDA array was given (or a GPU asked for) but no CUDA device is usable; the message
    says "no CUDA device available" and why (``theon.cuda_status().reason``). A DeviceError;
    also a NotImplementedError, which is what CUDA arrays raised before Theon had a CUDA
    backend, so handlers written then still catch it."""

    __module__ = "theon.errors"


def not_available(what, why=None):
    """A NotImplementedError (TheonNotImplementedError) saying `what` is not available yet (and why)."""
    return TheonNotImplementedError(f"{what} is not available yet" + (f": {why}" if why else ""))


class IgnoredArgumentWarning(UserWarning):
    """A Theano keyword argument Theon accepts but does not act on (it would change nothing
    Theon computes, or Theon has no counterpart); warned once per argument and process."""

    __module__ = "theon.errors"


_warned_ignored = set()


def warn_ignored_once(what, why, stacklevel=3):
    """Warns once per `what` (e.g. "shared(strict=True)") that Theon ignores it, and why;
    `stacklevel` as for warnings.warn, counted from the caller of this function."""
    if what in _warned_ignored:
        return
    _warned_ignored.add(what)
    import warnings
    warnings.warn(f"{what} is accepted for Theano compatibility and ignored: {why}", IgnoredArgumentWarning,
                  stacklevel=stacklevel)
