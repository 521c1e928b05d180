"""Which Lua runs the scripts, and the process-wide pieces every Lua state shares.

sysbench 1.0.20 embeds LuaJIT 2.1; so does pysysbench, through ``lupa``'s
``luajit21`` module (its manylinux wheels carry it).  Where a wheel has no LuaJIT,
the newest Lua 5.x module of the same wheel runs scripts that do not use ``ffi``,
with one warning (:func:`runtime_module`).

Also here: the C ``stdout`` made unbuffered (Lua's ``print``/``io.write`` and the
CLI's lines then reach the terminal in program order, as in sysbench), the
``package.path`` sysbench builds (spec 1.1), the process-wide ``random.unique()``
sequence and sysbench's per-thread seeds (glibc ``random()`` after
``srandom(--rand-seed)``, four calls per state, spec sysbench.md 4.3).
"""

from __future__ import annotations

import ctypes
import importlib
import os
import time
import weakref
from typing import Any

from ..core.errors import WorkloadError
from ..core.switches import LUA as LUA_SWITCH
from ..core.rand_compat import GlibcRandom

# LuaJIT first; then Lua 5.1, whose dialect sysbench's scripts are written in
LUA_MODULES = ("lupa.luajit21", "lupa.luajit20", "lupa.lua51", "lupa.lua52", "lupa.lua53", "lupa.lua54")
RUNTIME_ENV = LUA_SWITCH.name     # e.g. lua51: use that module (tests of the fallback)
_UNIQUE_P = 4294967291            # largest prime below 2**32 (spec sysbench.md 4.5)
_M32 = 0xFFFFFFFF

_module: Any = None
_warned = False


def runtime_module() -> tuple[Any, bool]:
    """(lupa module, has LuaJIT).  Raises WorkloadError when lupa is missing."""
    global _module
    if _module is None:
        wanted = LUA_SWITCH.raw()
        for name in ([f"lupa.{wanted}"] if wanted else []) + list(LUA_MODULES):
            try:
                _module = importlib.import_module(name)
                break
            except ImportError:
                continue
        else:
            raise WorkloadError("running a Lua script needs the 'lupa' package (pip install 'lupa>=2.8'), "
                                "which is not installed")
        _unbuffer_c_stdout()
    return _module, _module.__name__.endswith("luajit21")


def loaded_module() -> Any:
    """The lupa module :func:`runtime_module` loaded, or None (not asked yet)."""
    return _module


def fallback_warning() -> str | None:
    """The one warning of a run without LuaJIT (None: LuaJIT is there, or it was said)."""
    global _warned
    module, jit = runtime_module()
    if jit or _warned:
        return None
    _warned = True
    return (f"WARNING: this lupa has no LuaJIT; scripts run on {module.__name__.split('.')[-1]} "
            "without 'ffi' (scripts that use ffi fail)")


def _unbuffer_c_stdout() -> None:
    try:
        libc = ctypes.CDLL(None)
        stream = ctypes.c_void_p.in_dll(libc, "stdout")
        libc.setvbuf(stream, None, 2, 0)     # _IONBF
    except (OSError, ValueError, AttributeError):
        pass


def _permute(x: int) -> int:
    if x >= _UNIQUE_P:
        return x
    r = x * x % _UNIQUE_P
    return r if x <= _UNIQUE_P // 2 else _UNIQUE_P - r


class Unique:
    """sysbench's ``random.unique()``: one permutation of the 32-bit numbers per process
    (a forked worker process starts its own, as a spawned one does: a copy of the parent's
    would give every worker the same numbers)."""

    def __init__(self, seed: int | None = None):
        self.reseed(seed)
        _UNIQUES.add(self)

    def reseed(self, seed: int | None = None) -> None:
        libc = GlibcRandom(seed if seed is not None else time.time_ns() & _M32)
        offset, index = libc.random(), libc.random()
        self.index = _permute((_permute(index) + 0x682F0161) & _M32)
        self.offset = _permute((_permute(offset) + 0x46790905) & _M32)

    def __call__(self) -> int:
        i = self.index
        self.index = (i + 1) & _M32
        return _permute((((_permute(i) + self.offset) & _M32) ^ 0x5BF03635))


_UNIQUES: "weakref.WeakSet[Unique]" = weakref.WeakSet()


def process_seed() -> int:
    """A seed of this process's own (the clock and the pid): Unique's, here and after a fork."""
    return (time.time_ns() ^ os.getpid() << 16) & _M32


def _reseed_uniques() -> None:
    for u in list(_UNIQUES):
        u.reseed(process_seed())


os.register_at_fork(after_in_child=_reseed_uniques)


class Seeds:
    """Per-state xoroshiro128+ seeds: four glibc ``random()`` words each, drawn in the
    order sysbench's threads take them (background threads, then workers 0..N-1)."""

    def __init__(self, seed: int, background: int, threads: int):
        libc = GlibcRandom(seed)
        self.background = [self._take(libc) for _ in range(background)]
        self.workers = [self._take(libc) for _ in range(threads)]
        self.extra = libc

    @staticmethod
    def _take(libc: GlibcRandom) -> tuple[int, int, int, int]:
        return tuple(libc.random() for _ in range(4))   # (s0 high, s0 low, s1 high, s1 low)

    def for_tid(self, tid: int) -> tuple[int, int, int, int]:
        if 0 <= tid < len(self.workers):
            return self.workers[tid]
        return self._take(self.extra)
