"""The on-disk cache of compiled kernels (CPU modules and CUDA cubins).

    theon.cache.info()    # where it is, how many kernels, how many bytes, the size limit
    theon.cache.clear()   # removes every cached kernel; returns the bytes removed

From a shell: ``python -m theon.cache [info|clear]`` (Theano's ``theano-cache clear``).
The cache is a private folder (mode 0700) under ``config.compiledir`` (default
$XDG_CACHE_HOME/theon or ~/.cache/theon); entries are loaded only when their bytes match the
SHA-256 recorded when they were written; ``config.compiledir_max_mb`` bounds its size.
"""
import sys
from dataclasses import dataclass

from . import _core


@dataclass(frozen=True)
class CacheInfo:
    root: str          # the folder in use (a private temporary one when `refused` is set)
    refused: str       # the configured folder that was refused, and why ("" when none)
    entries: int       # cached kernels
    bytes: int         # their size on disk, records included
    limit_bytes: int   # config.compiledir_max_mb in bytes (0: no limit)

    def __str__(self):
        limit = f"{self.limit_bytes / 2**20:.0f} MiB" if self.limit_bytes else "no limit"
        text = f"kernel cache {self.root}: {self.entries} kernels, {self.bytes / 2**20:.1f} MiB (limit {limit})"
        if self.refused:
            text += f"\nrefused: {self.refused}"
        return text


def info():
    """Where the kernel cache is and how big it is."""
    return CacheInfo(**_core.kernel_cache.info())


def clear():
    """Removes every cached kernel, record, compiler log and stale temporary; kernels this
    process already loaded keep working. Returns the number of bytes removed."""
    return _core.kernel_cache.clear()


def main(argv=None):
    args = sys.argv[1:] if argv is None else argv
    command = args[0] if args else "info"
    if command == "info":
        print(info())
    elif command == "clear":
        root = info().root
        print(f"removed {clear() / 2**20:.1f} MiB from {root}")
    else:
        print("usage: python -m theon.cache [info|clear]", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
