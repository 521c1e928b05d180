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

import importlib
import os
import time
import weakref
from typing import Any

from ..core.errors import WorkloadError
from ..core.rand_compat import GlibcRandom, thread_words
from ..core.switches import LUA as LUA_SWITCH

# LuaJIT first; then Lua 5.1, whose dialect sysbench's scripts are written in
LUA_MODULES = ("lupa.luajit21", "lupa.luajit20", "lupa.lua51", "lupa.lua52", "lupa.lua53", "lupa.lua54")
RUNTIME_ENV = LUA_SWITCH.name  # e.g. lua51: use that module (tests of the fallback)
_UNIQUE_P = 4294967291  # largest prime below 2**32 (spec sysbench.md 4.5)
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
            raise WorkloadError(
                "running a Lua script needs the 'lupa' package (pip install 'lupa>=2.8'), which is not installed"
            )
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
    return (
        f"WARNING: this lupa has no LuaJIT; scripts run on {module.__name__.split('.')[-1]} "
        "without 'ffi' (scripts that use ffi fail)"
    )


def _permute(x: int) -> int:
    if x >= _UNIQUE_P:
        return x
    r = x * x % _UNIQUE_P
    return r if x <= _UNIQUE_P // 2 else _UNIQUE_P - r


class Unique:
    """sysbench's ``random.unique()``: one permutation of the 32-bit numbers per process
    (a forked worker process starts its own, as a spawned one does: a copy of the parent's
    would give every worker the same numbers)."""

    def __init__(self, seed: int | None = None, skip: int = 0):
        self.reseed(seed, skip)
        _UNIQUES.add(self)

    def reseed(self, seed: int | None = None, skip: int = 0) -> None:
        libc = GlibcRandom(seed if seed is not None else time.time_ns() & _M32)
        for _ in range(skip):
            libc.random()
        offset, index = libc.random(), libc.random()
        self.index = _permute((_permute(index) + 0x682F0161) & _M32)
        self.offset = _permute((_permute(offset) + 0x46790905) & _M32)

    def __call__(self) -> int:
        i = self.index
        self.index = (i + 1) & _M32
        return _permute(((_permute(i) + self.offset) & _M32) ^ 0x5BF03635)


_UNIQUES: weakref.WeakSet[Unique] = weakref.WeakSet()


def unique_11() -> Unique:
    """sysbench 1.1.0's sequence: it seeds it before ``srandom(--rand-seed)``, from glibc's
    unseeded ``random()`` (seed 1) after the main thread's four words, so every run draws the
    same numbers (a forked worker process still starts its own)."""
    return Unique(1, skip=4)


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
        self.background = [thread_words(libc) for _ in range(background)]
        self.workers = [thread_words(libc) for _ in range(threads)]
        self.extra = libc

    def for_tid(self, tid: int) -> tuple[int, int, int, int]:
        if 0 <= tid < len(self.workers):
            return self.workers[tid]
        return thread_words(self.extra)


class CommandSeeds11:
    """sysbench 1.1.0's seeds for a command other than ``run`` (prepare, cleanup, a script's
    own): it calls ``srandom(--rand-seed)`` only when ``run`` starts, so a command draws from
    glibc's unseeded ``random()`` (seed 1) whatever the seed: the main thread's four words,
    the unique() sequence's two, then a parallel command's worker threads', in order.  The
    first state made (the main one) takes the main thread's words, the states made after it
    a worker's, so ``prepare`` writes the 1.1.0 binary's rows."""

    def __init__(self, threads: int):
        libc = GlibcRandom(1)
        self.main = thread_words(libc)
        libc.random(), libc.random()
        self.workers = [thread_words(libc) for _ in range(threads)]
        self.extra = libc
        self.main_taken = False

    def for_tid(self, tid: int) -> tuple[int, int, int, int]:
        if not self.main_taken:
            self.main_taken = True
            return self.main
        if 0 <= tid < len(self.workers):
            return self.workers[tid]
        return thread_words(self.extra)


# --luajit-cmd (sysbench 1.1): `luajit -j CMD` in each new state -- jit.CMD(args), else the
# add-on module jit.CMD's start(args); CMD=a,b,c passes "a", "b", "c" (an empty one: nil).
# Returns nil, or the error line without "FATAL: ".
_JIT_COMMAND = """
local cmd = ...
local jit = package.loaded.jit
if type(jit) ~= "table" then return "--luajit-cmd needs LuaJIT, which this Lua is not" end
local eq = cmd:find("=", 1, true)
local f = jit[eq and cmd:sub(1, eq - 1) or cmd]
if type(f) ~= "function" then
   local ok, m = pcall(require, "jit." .. (eq and cmd:sub(1, eq - 1) or cmd))
   if not ok then
      if type(m) == "string" and m:sub(1, 7) == "module " then
         return "unknown luaJIT command or jit.* modules not installed"
      end
      return "`require' function failed: " .. tostring(m)
   end
   f = type(m) == "table" and m.start or nil
   if f == nil then return "unknown luaJIT command or jit.* modules not installed" end
end
local args, n = {}, 0
local opt = eq and cmd:sub(eq + 1) or ""
if opt ~= "" then
   while true do
      local p = opt:find(",", 1, true)
      n = n + 1
      if not p then break end
      if p > 1 then args[n] = opt:sub(1, p - 1) end
      opt = opt:sub(p + 1)
   end
   if opt ~= "" then args[n] = opt end
end
local ok, err = pcall(f, unpack(args, 1, n))
if not ok then return "`lua_pcall' function failed: " .. tostring(err) end
return nil
"""


def luajit_command(rt: Any, cmd: str) -> str | None:
    """Run --luajit-cmd's ``cmd`` in the LuaRuntime ``rt`` (as ``luajit -j cmd``): None, or
    what failed, in sysbench 1.1.0's words."""
    result = rt.execute(_JIT_COMMAND, cmd)
    return None if result is None else str(result)


def check_luajit_command(cmd: str) -> str | None:
    """--luajit-cmd for a bundled workload that runs natively (sysbench 1.1 runs it in Lua,
    so a bad command fails there): the command tried in a scratch state; None when it works
    or no Lua is installed to try it in."""
    try:
        module, _ = runtime_module()
    except WorkloadError:
        return None
    return luajit_command(module.LuaRuntime(), cmd)
