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

``mallopt`` is called through the C extension (memory.c) when it is used, else
through ctypes, imported then: ctypes' import was 6 M instructions of every run's start-up
(bench/journal/2026-12-02.md, "Start-up").
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from .native import heap_hugepages as _c_heap_hugepages
from .native import mallopt as _c_mallopt

M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter
MMAP_THRESHOLD_BYTES = 128 * 1024  # glibc's initial value, kept

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


def _mallopt() -> Callable[[int, int], int]:
    """glibc's ``mallopt(int, int)``: the C extension's, else through ctypes (AttributeError
    or OSError where the C library has none)."""
    if _c_mallopt is not None:
        return _c_mallopt
    import ctypes

    mallopt = ctypes.CDLL(None).mallopt
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    return mallopt


HEAP_PAD_BYTES = 128 * 1024 * 1024  # the heap's steps while huge pages are asked for
THP_ENABLED = "/sys/kernel/mm/transparent_hugepage/enabled"

_huge: bool | None = None


def huge_heap() -> None:
    """Transparent huge pages for the C heap's growth since the last call (Lua states).

    Each Lua state's heap is C ``malloc`` memory (lua/state.py).  With hundreds of states
    in a worker, an event touches a cold state's bytecode, tables and strings spread over
    a few hundred 4 KiB pages, and the address translations miss the TLB (in a VM, a
    two-level page walk each): with 2 MiB pages the same events cost the client about 10 %
    less CPU at 1000 threads (bench/journal/2026-12-03.md, "Lua: huge pages for the states'
    heaps").  The kernel gives them to memory that asks (``madvise``), which glibc's
    heap does only with the ``glibc.malloc.hugetlb`` tunable, read at process start; so
    the first call makes the heap grow in 128 MiB steps (``M_TOP_PAD``) and every call
    asks for huge pages on what it grew by.  Only where the kernel's setting is
    ``madvise`` (with ``always`` the heap has them already, with ``never`` it cannot),
    with the C extension and glibc, and not when the user set ``GLIBC_TUNABLES``
    (their choice stands)."""
    global _huge
    if _huge is None:
        _huge = (
            _c_heap_hugepages is not None
            and sys.platform.startswith("linux")
            and "GLIBC_TUNABLES" not in os.environ
            and _thp_mode() == "madvise"
        )
    if _huge and _c_heap_hugepages is not None and _c_heap_hugepages(HEAP_PAD_BYTES) < 0:
        _huge = False


def _thp_mode() -> str:
    """The kernel's transparent huge page setting (the bracketed word), "" if unknown."""
    try:
        with open(THP_ENABLED) as f:
            text = f.read()
    except OSError:
        return ""
    start, end = text.find("["), text.find("]")
    return text[start + 1 : end] if 0 <= start < end else ""


__all__ = ["huge_heap", "pin_mmap_threshold"]
