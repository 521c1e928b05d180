"""The client's memory after a reconnect storm: glibc's mmap threshold, pinned.

Every MySQL connection starts with asyncmy's 256 KiB receive buffer, which the
driver shrinks right after the handshake (drivers/mysql/session.py).  glibc serves a
block that large with mmap (threshold 128 KiB at start) and gives it back on
free, but the first such free raises the threshold ("dynamic mmap threshold")
above the block's size: from then on the buffers come from the heap, and freed
between the connections' small objects they stay resident.  In the soak
(bench/soak.py, 2,000 threads, two workers) the client's RSS went from 326 MB
to 979 MB at the first server restart and stayed there.
Setting the threshold explicitly turns the dynamic adjustment off, so those
blocks are mapped and unmapped each time (a few thousand mmap calls per
reconnect storm, nothing per event).  Where the C library has no ``mallopt``
(not glibc) or the user set ``MALLOC_MMAP_THRESHOLD_`` this does nothing.

``mallopt`` is called through the C extension (engine/memory.c) when it is used, else
through ctypes, imported then: ctypes' import was 6 M instructions of every run's start-up
(docs/performance.md, "Start-up").
"""

from __future__ import annotations

import os
import sys

from ..native import mallopt as _c_mallopt

M_MMAP_THRESHOLD = -3                 # glibc's mallopt parameter
MMAP_THRESHOLD_BYTES = 128 * 1024     # glibc's initial value, kept

_pinned: bool | None = None


def pin_mmap_threshold() -> bool:
    """Pin glibc's mmap threshold for this process (once); True when it was pinned."""
    global _pinned
    if _pinned is None:
        _pinned = False
        if sys.platform.startswith("linux") and "MALLOC_MMAP_THRESHOLD_" not in os.environ:
            try:
                _pinned = bool(_mallopt()(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES))
            except (OSError, AttributeError):
                pass
    return _pinned


def _mallopt():
    """glibc's ``mallopt(int, int)``: the C extension's, else through ctypes (AttributeError
    or OSError where the C library has none)."""
    if _c_mallopt is not None:
        return _c_mallopt
    import ctypes
    mallopt = ctypes.CDLL(None).mallopt
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    return mallopt


__all__ = ["pin_mmap_threshold"]
