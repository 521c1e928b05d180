"""One Lua state (sysbench's per-thread ``lua_State``) and the bridge to asyncio.

Every state gets sysbench's API (``sysbench.lua`` beside this file) and then the
user's script.  Lua code runs as Lua coroutines driven from Python: an API
function that needs the database or a timer yields a request (``OP_*``), the
driver loop here awaits the driver's coroutine and resumes the Lua coroutine with
the answer.  A script's ``con:query(sql)`` therefore reads as a plain call while
the event loop keeps serving every other state.  Statements go through the
ordinary driver :class:`~pysysbench.drivers.base.Connection` (``prepare`` /
``query_rows`` / ``reconnect``): counted read / write / other by the driver, errors
classified at the edge.

The event of a benchmark thread is the hot path: a persistent runner coroutine
calls the global ``event`` each time it is resumed, so an event costs one resume
plus one per statement (about 2 us each with lupa).
"""

from __future__ import annotations

import asyncio
import atexit
import os
import sys
import time
import weakref
from collections.abc import Callable
from typing import Any

from ..core import switches
from ..core.errors import ConnectError, DatabaseError, IgnorableError, ReconnectError, SQLError, WorkloadError
from ..core.files import private_file
from ..core.rand import XORO_SYSBENCH, Xoroshiro128Plus
from ..core.rand_compat import words_state
from ..drivers.base import Connection, Counters, Driver
from ..runtime.aio import close_quietly
from ..runtime.memory import huge_heap
from ..runtime.native import FILE as NATIVE_PATH
from ..runtime.native import LuaEvents, lua_bind, lua_watch
from ..version import SYSBENCH_RELEASES
from ..workloads.held import is_interrupt, park
from ..workloads.stock import package_path
from .log import ALERT, DEBUG, FATAL, Log
from .runtime import loaded_module, luajit_command, runtime_module

(
    OP_DONE,
    OP_EXEC,
    OP_QUERY,
    OP_PREPARE,
    OP_CONNECT,
    OP_DISCONNECT,
    OP_RECONNECT,
    OP_SLEEP,
    OP_CLOSE_STMT,
    OP_DRIVER,
    OP_NEXT_RESULT,
    OP_MORE_RESULTS,
) = range(12)
# the drivers whose con:reconnect() only says it is not supported, by face: sysbench 1.0.20's
# PostgreSQL driver has no reconnect, 1.1.0's closes and re-opens the connection
NO_RECONNECT = {"1.0": frozenset({"pgsql"}), "1.1": frozenset()}
RECONNECT_TRIES = 100  # lost connection in the ignore list: reconnect attempts (1 ms apart, doubling)
API_SOURCE = os.path.join(os.path.dirname(__file__), "sysbench.lua")
# LuaJIT's JIT parameters for a state (None: LuaJIT's defaults), by how many states its process
# holds.  Every state warms up on its own: a loop is compiled after 56 passes (LuaJIT's
# hotloop, kept: at 1000 threads point select's client CPU per query rose by a fifth with
# hotloop=300 or more, read_write's fell by a sixth), and an exit taken from a trace 10 times
# gets a side trace of its own.  With few states, side traces pay: an OLTP event runs as one
# trace with its statements (stackful events, lua/bridge.c), and a branch it takes now and then
# would otherwise leave the rest of the event to the interpreter.  From HUGE_PAGE_STATES states
# on (1000 threads: a state runs a few hundred events in a 10-s run), none: they were memory
# compiled for a handful of uses (read_write: about 5-12 MB of RSS per worker of 500 states,
# bench/journal/2026-12-03.md, "Lua at 1000 threads: which traces pay").  `hotexit=1000` is "never":
# LuaJIT counts a snapshot's exits in 8 bits, which stop at 255 (until 2026-12-04 every state
# had it, so no state compiled a side trace; `maxside=0` still lets some through).  hotloop=10
# once paid off while an interpreted draw boxed about ten uint64 cdata objects; with
# sysbench.rand's generator in C it only compiled more traces.  A script's own jit.opt.start wins.
JIT_OPTIONS: str | None = None
JIT_OPTIONS_MANY: str | None = "hotexit=1000"
# A benchmark thread's state among them also starts with the JIT off (JIT_HOLD_ENV=off: not).
# Each state compiles for itself, and at 1000 threads a read_write state runs 7-11 events in a
# 10-s run, in which it started 12-14 traces (5-7 aborted): compiling cost more than it saved
# (client CPU per query about 10 % more than with the JIT off, 3 alternating rounds; write_only
# alike, read_only even) and kept 15-35 MB of traces.  A point select state runs about 250 events
# in the same run (PostgreSQL's, slower, about 110), and its compiled event costs a third less.
# So after half a second (or 64 events) a state turns the JIT on when, at the rate it ran them,
# it has JIT_MIN_EVENTS more before the run's end (100 held PostgreSQL's point select states
# back; bench/journal/2026-12-04.md, "Lua: compile what the run repays").
JIT_HOLD_ENV = switches.LUA_JIT_HOLD.name  # off: those states compile from the start
JIT_PROBE_NS = 500_000_000  # the state's rate: over its events of the first half second...
JIT_PROBE_EVENTS = 64  # ... or its first 64
JIT_MIN_EVENTS = 30
# ... and then compiles what is hot after 4 more passes, not LuaJIT's 56: a point select state
# of a 1000-thread PostgreSQL run (about 15 events a second) ran its runner loop interpreted
# for another 4 s of its 10, every statement an interpreted FFI call (client user CPU per
# query 15-20 % less with it at 1000 threads, point select and read_write, both servers)
JIT_ON_OPTIONS: str | None = "hotloop=4"
# Stackful events (lua/bridge.c): a benchmark thread's state runs on a C stack of its own and
# its prepared statements reach the C event loop from an FFI call, without a coroutine yield;
# PYSYSBENCH_LUA_STACKS=off yields every statement instead (the path the stacks fall back to
# where the platform has none), for comparison.
STACKS_ENV = switches.LUA_STACKS.name
# Python code a script reaches through lupa runs on the state's stack: up to 3.13 Python counts
# its C recursion; 3.14 checks the stack pointer against the thread's own stack
STACKS_PYTHON = sys.version_info < (3, 14)

# MySQL errors whose SQLSTATE the library does not hand over (the wire does)
MYSQL_SQLSTATE = {
    "1048": "23000",
    "1062": "23000",
    "1406": "22001",
    "1051": "42S02",
    "1146": "42S02",
    "1064": "42000",
    "1213": "40001",
    "1205": "HY000",
    "1054": "42S22",
    "1050": "42S01",
    "1452": "23000",
    "1451": "23000",
    "1364": "HY000",
    "1366": "HY000",
    "2013": "HY000",
    "2006": "HY000",
}

_WRAP = """
local pcall, yield = pcall, coroutine.yield
local loadstring = loadstring or load
local unpack = unpack or table.unpack
local registry = debug and debug.getregistry and debug.getregistry()
local jit_on = jit and jit.on
local jit_start = jit and jit.opt and jit.opt.start
local jit_held = false     -- the loader turned the JIT off, and the script has not said otherwise
local on_options = nil     -- applied with the probe's jit.on() (JIT_ON_OPTIONS)
-- An error raised inside sysbench's API (sysbench.lua, loaded from a temporary .luac without
-- line numbers) or by a host function of Python is told at the script's line that called
-- it, as sysbench tells an FFI call's error at the caller's line: the first frame that is
-- neither C, the API, nor this file
local getinfo = debug and debug.getinfo
local wrap_source = getinfo and getinfo(1, "S").source
local api_source = nil
local function where(level)
   while true do
      local info = getinfo(level, "Sl")
      if info == nil then return nil end
      if info.what ~= "C" and info.source ~= api_source and info.source ~= wrap_source
            and info.currentline > 0 then
         return info.short_src .. ":" .. info.currentline .. ": "
      end
      level = level + 1
   end
end
local function relocate(e)
   local t = type(e)
   if api_source == nil or (t ~= "string" and t ~= "userdata") then return e end
   if t == "userdata" then e = tostring(e)     -- a host function's Python exception
   else
      local api = api_source:sub(2)
      if e:sub(1, #api + 1) ~= api .. ":" then return e end
      e = e:gsub("^[^:]*:%-?%d+: ", "", 1)
   end
   local at = where(2)
   return at and at .. e or e
end
local xpcall_args = jit ~= nil and getinfo ~= nil   -- LuaJIT's xpcall passes arguments
local function protected(fn, ...)
   if xpcall_args then return xpcall(fn, relocate, ...) end
   return pcall(fn, ...)
end
return function(fn, ...)
   local ok, r = protected(fn, ...)
   return 0, ok, r
end, function(tid, probe)
   local after, done = sysbench.after_event, sysbench.event_done
   yield(0, true, false)     -- started: each resume from here on runs one event
   -- a state held off the JIT (JIT_HOLD_ENV): probe(n) before each event until it decides
   -- (nil: not yet; true: the rest of the run repays compiling)
   local n = 0
   if not jit_held then probe = nil end
   while true do
      if probe then
         local on = probe(n)
         if on ~= nil or not jit_held then
            if on and jit_held then
               jit_held = false
               if on_options then jit_start(on_options) end
               jit_on()
            end
            probe = nil
         end
         n = n + 1
      end
      local ok, r
      if xpcall_args then ok, r = xpcall(event, relocate, tid) else ok, r = pcall(event, tid) end
      if ok and not r then after() end
      -- on a state's own C stack (lua/bridge.c) the event's end goes to the C loop in a call
      if done == nil or done(ok, r) < 0 then yield(0, ok, r) end
   end
end, function(path, H, jit_options, hold, options_on)
   -- path: sysbench.lua's bytecode (compiled once per process) or its source
   if jit and jit.opt and jit_options then jit.opt.start(jit_options) end
   on_options = options_on
   if jit and hold then
      -- off until the runner's probe turns it on, unless the script decides: its jit.on() or
      -- jit.off() stands (jit.on(f) / jit.off(f) are a function's, not the state's), and its
      -- jit.opt.start turns the JIT on with its options
      jit.off()
      jit_held = true
      local off = jit.off
      jit.on = function(...) if select("#", ...) == 0 then jit_held = false end; return jit_on(...) end
      jit.off = function(...) if select("#", ...) == 0 then jit_held = false end; return off(...) end
      jit.opt.start = function(...)
         if jit_held then jit_held = false; jit_on() end
         return jit_start(...)
      end
   end
   local f = assert(loadfile(path))
   if getinfo then api_source = getinfo(f, "S").source end
   return f(H)
end, function(path, modname)
   local f, err
   if path == nil then
      f, err = loadstring(io.read("*a"), "=stdin")
   else
      f, err = loadfile(path)
   end
   if not f then return nil, err end
   if modname then
      return function()
         local r = f(modname)
         if package.loaded[modname] == nil then package.loaded[modname] = (r == nil) and true or r end
      end, nil
   end
   return f, nil
end, function()
   -- the finalizers of what the script no longer references run while the host is there
   -- (a full collection; lua_close, when lupa frees the runtime right after, runs the rest
   -- with the globals in place, as sysbench's lua_close): only where something was given a
   -- finalizer (sysbench.lua marks the registry), as it is a full collection of a cache-cold
   -- heap per state
   if registry and jit and not registry["pysysbench.finalizers"] then return false end
   collectgarbage("collect")
   return true
end, function(src, legacy)
   -- a fresh table at every export, as sysbench (src: the options as a Lua table constructor)
   local opts = assert(loadstring(src, "=sysbench.opt"))()
   sysbench.opt = opts
   if legacy then
      for k, v in pairs(opts) do
         if type(_G[k]) ~= "function" then _G[k] = v end
      end
   end
end, function()
   -- what lua/bridge.c left for Python: n, then the values the event coroutine yielded
   local t = registry[HELD]
   registry[HELD] = nil
   return t.n, unpack(t, 1, t.n)
end, function(path)
   -- lua/bridge.c's function naming a coroutine's lua_State (nil where it cannot load)
   local ok, f = pcall(package.loadlib, path, "pysysbench_lua_thread_address")
   if ok then return f end
end, function()
   -- a held state whose events the runner does not run (the script's own thread_run)
   if jit_held then jit_held = false; jit_on() end
end
""".replace("HELD", '"pysysbench.held"')


_api_file: str | None = None
_bound: bool | None = None


def implementation() -> dict[str, str]:
    """The Lua runtime this process loaded (none loaded: {}) and who runs a benchmark
    state's events: lua/bridge.c (LuaJIT 2.1 with the C extension) or lupa's calls."""
    module = loaded_module()
    if module is None:
        return {}
    jit = module.__name__.endswith("luajit21")
    bridged = bool(NATIVE_PATH and jit and _bind(module))
    return {
        "lua": f"{module.__name__.rpartition('.')[2]} ({module.LuaRuntime().lua_implementation})",
        "lua_events": "C (lua/bridge.c)" if bridged else "Python (lupa)",
    }


def _bind(module: Any) -> bool:
    """Whether lua/bridge.c runs this Lua runtime's events (LuaJIT 2.1 with the C extension)."""
    global _bound
    if _bound is None:
        _bound = bool(lua_bind is not None and lua_bind(module))
    return _bound


def _api(rt: Any) -> str:
    """The file each state loads sysbench.lua from: its bytecode, compiled once per
    process (a state loads it ~3x faster than it parses the source) and read through
    loadfile (a 60 KB Lua string per state would stay in its heap's pages)."""
    global _api_file
    if _api_file is None:
        with open(API_SOURCE, "rb") as fh:
            source = fh.read()
        try:  # a runtime without a text encoding hands the bytecode over as bytes
            code = type(rt)(encoding=None).eval(
                "function(src) return string.dump(assert(loadstring(src, '=sysbench.lua')), true) end"
            )(source)
        except Exception:  # no string.dump of chunks in this Lua: parse the source
            return API_SOURCE
        fd, path = private_file(
            os.environ.get("TMPDIR") or "/tmp", "pysysbench-sysbench-", "sysbench.lua's bytecode", ".luac"
        )
        with os.fdopen(fd, "wb") as fh:
            fh.write(code)
        atexit.register(_remove, path)
        _api_file = path
    return _api_file


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def lua_literal(value: Any) -> str:
    """A Python option value as a Lua expression (numbers, strings, booleans, lists)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(float(value)) if isinstance(value, float) else str(value)
    if isinstance(value, (list, tuple)):
        return "{" + ",".join(lua_literal(v) for v in value) + "}"
    if value is None:
        return "nil"
    text = str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return '"' + text.replace("\0", "\\0") + '"'


def options_source(options: dict[str, Any]) -> str:
    """``sysbench.opt`` as one Lua table constructor."""
    return "return {" + ",".join(f"[{lua_literal(k)}]={lua_literal(v)}" for k, v in options.items()) + "}"


class SqlFailure:
    """How a driver's failed statement is logged, as sysbench's C drivers log it."""

    @staticmethod
    def codes(driver: str, exc: SQLError) -> tuple[int, str]:
        if driver == "pgsql":
            return 0, exc.sqlstate or exc.code
        code = exc.code if str(exc.code).isdigit() else "0"
        return int(code), exc.sqlstate or MYSQL_SQLSTATE.get(str(code), "HY000")

    @staticmethod
    def lines(driver: str, exc: SQLError, sql: str, prepared: bool) -> list[str]:
        msg = exc.errmsg
        if driver == "mysql":
            fn = "mysql_stmt_execute" if prepared else "mysql_drv_query"
            return [f"{fn}() returned error {exc.code} ({msg}) for query '{sql}'"]
        if driver == "pgsql":
            if prepared:
                return [f"PQexecPrepared() failed: 7 {msg}"]
            return [f"PQexec() failed: 7 {msg}", f"failed query was: {sql}"]
        return [f"{driver} error {exc.code} ({msg}) for query '{sql}'"]

    @staticmethod
    def prepare_lines(driver: str, exc: SQLError) -> list[str]:
        if driver == "mysql":
            return ["mysql_stmt_prepare() failed", f'MySQL error: {exc.code} "{exc.errmsg}"']
        if driver == "pgsql":  # libpq's PQerrorMessage: ends with a newline (a blank line follows)
            return [f"PQprepare() failed: {exc.client_text or exc.errmsg}"]
        return [f"prepare failed: {exc.errmsg}"]


class Services:
    """What the Lua states of one process share: options, the log, drivers by name,
    the unique() sequence, seeds and the engine's event accounting."""

    def __init__(
        self,
        values: Any,
        log: Log,
        driver_name: str,
        drivers: dict[str, type[Driver]],
        unique: Callable[[], int],
        seeds: Any,
        driver: Driver | None = None,
    ):
        self.values = values
        self.log = log
        self.driver_name = driver_name
        self.registry = drivers
        self.unique = unique
        self.seeds = seeds
        self.drivers: dict[str, Driver] = {}
        if driver is not None:
            self.drivers[driver.name] = driver
        self.used_driver = False  # any sysbench.sql.driver() call in this process
        self.print_options: Callable[[], None] = lambda: None
        self.options: dict[str, Any] = {}  # sysbench.opt as plain Python values
        self.legacy_globals = False

    def driver(self, name: str) -> Driver | None:
        drv = self.drivers.get(name)
        if drv is None:
            cls = self.registry.get(name)
            if cls is None:
                self.log(FATAL, f"invalid database driver name: '{name}'")
                return None
            drv = cls(self.values)
            drv.check()
            self.drivers[name] = drv
        self.used_driver = True
        return drv


class EventHooks:
    """The engine's side of ``ffi.C.sb_more_events / sb_event_start / sb_event_stop``
    for a script that runs its own ``thread_run``; the default answers for states
    outside a benchmark run."""

    def more(self, tid: int) -> bool:
        return False

    def start(self, tid: int) -> None:
        pass

    def stop(self, tid: int) -> None:
        pass

    def remaining_ns(self, now_ns: int) -> int | None:
        """Nanoseconds left of the run at ``now_ns`` (perf_counter_ns), None: no time limit."""
        return None


class JitProbe:
    """Whether a state held off the JIT (``JIT_HOLD_ENV``) turns it on.  Its runner calls it
    before each event with the events run so far, until it answers: None while the state has
    run for less than ``JIT_PROBE_NS`` (and fewer than ``JIT_PROBE_EVENTS`` events), then
    whether, at the rate it ran them, the state has at least ``JIT_MIN_EVENTS`` more events
    before the run's end (``hooks.remaining_ns``; no time limit: true)."""

    __slots__ = ("hooks", "t0")

    def __init__(self, hooks: EventHooks):
        self.hooks = hooks
        self.t0 = 0

    def __call__(self, n: int) -> bool | None:
        now = time.perf_counter_ns()
        if n == 0:
            self.t0 = now
            return None
        took = now - self.t0
        if took < JIT_PROBE_NS and n < JIT_PROBE_EVENTS:
            return None
        left = self.hooks.remaining_ns(now)
        if left is None:
            return True
        return left * n >= JIT_MIN_EVENTS * max(took, 1)


_open_states: weakref.WeakSet[LuaState] = weakref.WeakSet()
# From this many states in a process on, their heaps take 2 MiB pages (memory.py's
# huge_heap): 32 states' heaps (about 10 MB) are more than the TLB covers in 4 KiB pages
# (1,536 entries: 6 MiB); at 8 threads huge pages gained nothing (bench/journal/2026-12-03.md)
HUGE_PAGE_STATES = 32


# the runtimes (and C stacks) of closed states whose lua_close can wait: LuaState.release
_parked: list[tuple[Any, Any]] = []
PARK_STATES = True
# the states the watchdog left inside a trace (LuaState.abandon): never freed
_abandoned: list[LuaState] = []


@atexit.register
def _release_open_states() -> None:
    """Before the interpreter's final garbage collection, drop the Lua side of every
    state a run left open (a cancelled thread never reaches thread_done) and of the
    parked ones: a lupa runtime freed by that collection can crash the process in
    lua_close."""
    for st in list(_open_states):
        st.release()
    release_parked()


class LuaState:
    """One Lua state: ``tid`` as sysbench numbers it, statements counted in ``counters``."""

    def __init__(
        self,
        services: Services,
        tid: int,
        counters: Counters | None = None,
        hooks: EventHooks | None = None,
        script_path: str | None = None,
        argv: list[str] | None = None,
        command: str | None = None,
    ):
        module, self.jit = runtime_module()
        self.services = services
        self.tid = tid
        self.counters = counters if counters is not None else Counters()
        self.hooks = hooks or EventHooks()
        self.conns: dict[int, Connection] = {}
        self.stmts: list[Any] = [None]
        self.stmt_sql: list[str] = [""]
        self.stmt_conn: list[int] = [0]
        self._closing: set[asyncio.Task] = set()
        # at the run's end (LuaWorkload.thread_done): where the script's disconnects go, to be
        # closed once the run has been measured (the engine's Worker.close_later), or None
        self.close_later: Callable[[Connection], None] | None = None
        many = len(_open_states) >= HUGE_PAGE_STATES
        if many:
            huge_heap()  # the states' heaps in 2 MiB pages (memory.py)
        self.rt = rt = self._open_runtime(module)
        jit_cmd = services.values.get("luajit_cmd") or None
        if jit_cmd is not None and (failed := luajit_command(rt, jit_cmd)) is not None:
            raise WorkloadError(failed)  # sysbench 1.1: before the state has its API
        # (a benchmark thread's state only, whose runner probes: a command's states have no
        # hooks); --luajit-cmd leaves the JIT to the user
        self._held = bool(many and self.jit and hooks is not None and switches.LUA_JIT_HOLD.on() and not jit_cmd)
        self.dead = False  # abandon(): left by the watchdog inside a trace
        self._address: Any = None  # lua/bridge.c's function naming a coroutine's lua_State (False: none)
        self._load_api(
            _api(rt),
            self._host(script_path, argv or [], command),
            JIT_OPTIONS_MANY if many else JIT_OPTIONS,
            self._held,
            JIT_ON_OPTIONS,
        )
        self.sysbench = rt.globals().sysbench
        if many:
            huge_heap()
        self._runner = None
        self._native: Any = None  # the LuaEvents of native_events: its runner may wait inside a statement
        _open_states.add(self)
        self._ops = self._op_table()

    def _open_runtime(self, module: Any) -> Any:
        """The state's LuaRuntime with the wrappers the Python side calls, the C bridge bound
        when it can be, and the script search path set."""
        # max_memory=0 (no limit): lupa's allocator, the C library's malloc, instead of
        # LuaJIT's own, which maps each state's heap in segments of its own: 1000 states
        # took about 32 MB less this way (bench/journal/2026-12-03.md, "Lua at 1000 threads")
        rt = module.LuaRuntime(unpack_returned_tuples=True, max_memory=0)
        (
            self._call,
            self._runner_fn,
            self._load_api,
            self._loader,
            self._finish,
            self._export,
            self._take_held,
            self._address_loader,
            self._jit_release,
        ) = rt.execute(_WRAP)
        self._bridged = bool(NATIVE_PATH and self.jit and _bind(module))
        path, cpath = package_path()
        package = rt.globals().package
        package.path, package.cpath = path, cpath
        return rt

    def _op_table(self) -> dict[int, Any]:
        """The Python half of each operation the Lua API asks for, by its code."""
        return {
            OP_QUERY: self._query,
            OP_PREPARE: self._prepare,
            OP_CONNECT: self._connect,
            OP_DISCONNECT: self._disconnect,
            OP_RECONNECT: self._reconnect,
            OP_SLEEP: self._sleep,
            OP_CLOSE_STMT: self._close_stmt,
            OP_DRIVER: self._driver,
            OP_NEXT_RESULT: self._next_result,
            OP_MORE_RESULTS: self._more_results,
        }

    def _host(self, script_path: str | None, argv: list[str], command: str | None) -> Any:
        s, v, rt = self.services, self.services.values, self.rt
        c = self.counters
        seed = s.seeds.for_tid(self.tid)
        fields = ("others", "reads", "writes", None, "errors", "reconnects")  # sb_counter_type order

        def counter_inc(tid: int, kind: int) -> None:
            name = fields[int(kind)] if 0 <= int(kind) < len(fields) else None
            if name is not None:
                setattr(c, name, getattr(c, name) + 1)

        def counter_val(tid: int, kind: int) -> int:
            name = fields[int(kind)] if 0 <= int(kind) < len(fields) else None
            return getattr(c, name) if name is not None else 0

        h = self.hooks
        rng = {}
        if not self.jit:  # no FFI uint64 arithmetic: sysbench's generator in Python
            xo = Xoroshiro128Plus(*words_state(seed), XORO_SYSBENCH)
            rng = {"rng_u64": xo.next, "rng_double": xo.double}
        return rt.table_from(
            {
                **rng,
                "tid": self.tid,
                "seed": rt.table_from(list(seed)),
                "log": s.log,
                "counter_inc": counter_inc,
                "counter_val": counter_val,
                "unique": s.unique,
                "more_events": h.more,
                "event_start": h.start,
                "event_stop": h.stop,
                "print_test_options": lambda: s.print_options(),
                "gc_conn": self._collected,
                "rand_type": v.get("rand_type", "special"),
                "rand_spec_iter": v.get("rand_spec_iter", 12),
                "rand_spec_pct": float(v.get("rand_spec_pct", 1.0)),
                "rand_spec_res": float(v.get("rand_spec_res", 75.0)),
                "rand_pareto_h": float(v.get("rand_pareto_h", 0.2)),
                "rand_zipfian_exp": float(v.get("rand_zipfian_exp", 0.8)),
                "db_driver": s.driver_name,
                "percentile": v.get("percentile", 95),
                "sysbench_version": SYSBENCH_RELEASES[v.get("sysbench_compat", "1.0") or "1.0"],
                "argv": rt.table_from({i: a for i, a in enumerate(argv)}),
                "command": command,
                "script_path": script_path,
                # sysbench.rand's generator in C through the FFI (lua/bridge.c), where the extension is on
                "native_path": NATIVE_PATH if self.jit else None,
            }
        )

    # --- loading and calling -------------------------------------------------------

    def loader(self, path: str | None, modname: str | None = None) -> tuple[Any, str | None]:
        """(chunk function, None) or (None, the syntax error)."""
        f, err = self._loader(path, modname)
        return f, (None if f is not None else str(err))

    def _unwind(self) -> None:
        """Before Python enters the state through lupa: a stackful event waiting inside a
        statement or at its end (a live trace: lua/bridge.c) goes to an ordinary yield."""
        if self._native is not None and not self.dead:
            self._native.unwind()

    def global_(self, name: str) -> Any:
        self._unwind()
        return self.rt.globals()[name]

    async def call(self, fn: Any, *args: Any) -> tuple[bool, Any]:
        """Run ``fn(*args)`` to the end as a coroutine: (ok, result or error value).  A call
        the watchdog interrupted (engine/loopwatch.py) waits for the engine's cancel."""
        if self.dead:
            await park()
        self._unwind()
        co = self._call.coroutine(fn, *args)
        ok, r = await self._drive(co, None, watched=True)
        if not ok and is_interrupt(r):
            co = r = None
            await park()
        return ok, r

    def _watched(self, co: Any) -> Callable[[Any], Any]:
        """``co.send`` telling the watchdog (lua/bridge.c) which state runs Lua meanwhile."""
        send = co.send
        if lua_watch is None or not self._bridged:
            return send
        if self._address is None:
            self._address = self._address_loader(NATIVE_PATH) or False
        if not self._address:
            return send
        address = int(self._address(co))
        running = lua_watch.lua_watch_running

        def watched(value: Any) -> Any:
            prev = running(address)
            try:
                return send(value)
            finally:
                running(prev)

        return watched

    def abandon(self) -> None:
        """The watchdog left this state inside compiled code (lua/bridge.c): nothing may
        enter it again, nor free it (its runtime is kept until the process ends)."""
        self.dead = True

    def _events(self) -> Any:
        """The runner coroutine, started (suspended where each resume runs one event), at
        an ordinary yield: a stackful event waiting inside its statement yields it first."""
        self._unwind()
        runner = self._runner
        if runner is None:
            probe = JitProbe(self.hooks) if self._held else None
            runner = self._runner = self._runner_fn.coroutine(self.tid, probe)
            runner.send(None)
        return runner

    def event(self, failed: Callable[[Any], Any]) -> Any:
        """One call of the global ``event(tid)`` (the runner coroutine persists), as the
        coroutine to await -- ``_drive``'s own, so an event is one Python coroutine: whether
        it returned a true value (its thread stops); a failed event is handed to
        ``await failed(error value)``, whose result is returned."""
        return self._drive(self._events(), None, failed)

    def jit_release(self) -> None:
        """End the JIT hold of a state whose events its runner does not run (the script's own
        ``thread_run``): such a state compiles from here on, as without the hold."""
        if self._held:
            self._held = False
            self._jit_release()

    def native_events(self) -> Any:
        """The runner as lua/bridge.c's event source for the engine's C event loop (its
        events' prepared statements without a Python frame each), or None: no C extension,
        not LuaJIT.  What it leaves to Python, :meth:`finish_event` finishes."""
        # loaded here, not with every state: only a benchmark thread's state needs it
        address = self._address_loader(NATIVE_PATH) if self._bridged else None
        if address is None:
            return None
        runner = self._events()
        stacked = STACKS_PYTHON and switches.LUA_STACKS.on()
        self._native = LuaEvents(runner, int(address(runner)), self.stmts, self.counters, stacked)
        return self._native

    async def finish_event(self, source: Any, outcome: Any, failed: Callable[[Any], Any]) -> Any:
        """The rest of an event the C event loop of ``source`` (:meth:`native_events`) left to
        Python: ``outcome`` the exception its statement ended with, or ``...`` (what the
        coroutine yielded is in the registry: a request the C does not serve, or a failed
        event); the event's result as :meth:`event` gives it."""
        runner = self._events()
        if isinstance(outcome, BaseException):
            if not isinstance(outcome, SQLError):
                raise outcome
            outcome.__traceback__ = None
            req = runner.send(await self._exec_failed(outcome, source.last))
        else:
            req = self._take_held()[1:]
        return await self._drive(runner, req, failed)

    def export(self, source: str, legacy: bool) -> None:
        """Set ``sysbench.opt`` (a fresh table; also the globals of a script without
        declared options) from :func:`options_source`."""
        self._export(source, legacy)
        self.rt.eval("collectgarbage")()

    def table(self, value: Any) -> Any:
        """A Python value as a Lua value (dicts and lists as tables, recursively)."""
        if isinstance(value, dict):
            return self.rt.table_from({k: self.table(v) for k, v in value.items()})
        if isinstance(value, (list, tuple)):
            return self.rt.table_from([self.table(v) for v in value])
        return value

    async def _drive(
        self, co: Any, req: tuple | None, failed: Callable[[Any], Any] | None = None, watched: bool = False
    ) -> Any:
        """Serve the Lua coroutine ``co``'s requests (``req``: its first, or None to start it)
        until it is done: (ok, value), or with ``failed`` an event's outcome (see event);
        ``watched``: the watchdog knows the state while it runs (not the events' hot path)."""
        send = self._watched(co) if watched else co.send
        if req is None:
            req = send(None)
        stmts, c, ops = self.stmts, self.counters, self._ops
        while True:
            op = req[0]
            if op == OP_EXEC:
                reads = c.reads
                try:
                    await stmts[req[1]](*req[2:])
                    req = send(1 if c.reads != reads else 0)
                except SQLError as exc:
                    req = send(await self._exec_failed(exc, req[1]))
                continue
            if op == OP_DONE:
                if failed is None:
                    return req[1], req[2]
                if req[1]:
                    ret = req[2]
                    return ret is not None and ret is not False
                # the raising frames keep no Lua value (see release())
                failure, req, co, send = failed(req[2]), None, None, None
                return await failure
            req = send(await ops[op](req))

    # --- requests -------------------------------------------------------------------

    def _driver_of(self, conn_id: int) -> str:
        conn = self.conns.get(conn_id)
        drv = getattr(conn, "driver", None)
        return getattr(drv, "name", self.services.driver_name)

    async def _failed(self, exc: SQLError, sql: str, prepared: bool, conn_id: int) -> tuple:
        driver = self._driver_of(conn_id)
        ignorable = isinstance(exc, (IgnorableError, ReconnectError))
        log = self.services.log
        if isinstance(exc, ReconnectError) and not await self._reopen(conn_id):
            ignorable = False
        if ignorable:
            log(DEBUG, f"Ignoring error {exc.code} {exc.errmsg}, ")
        else:
            for line in SqlFailure.lines(driver, exc, sql, prepared):
                log(FATAL, line)
        errno, state = SqlFailure.codes(driver, exc)
        return False, errno, state, exc.errmsg, ignorable

    def _exec_failed(self, exc: SQLError, stmt_id: int) -> Any:
        """``_failed`` for prepared statement ``stmt_id``: what Lua gets back from its execute."""
        return self._failed(exc, self.stmt_sql[stmt_id], True, self.stmt_conn[stmt_id])

    async def _reopen(self, conn_id: int) -> bool:
        delay = 0.001
        conn = self.conns[conn_id]
        for _ in range(RECONNECT_TRIES):
            try:
                await conn.reconnect()
                return True
            except DatabaseError:
                await asyncio.sleep(delay)
                delay = min(delay * 2, 0.5)
        return False

    async def _query(self, req: tuple) -> Any:
        conn_id, sql = req[1], req[2]
        try:
            res = await self.conns[conn_id].query_rows(sql)
        except SQLError as exc:
            return await self._failed(exc, sql, False, conn_id)
        if res is None:
            return 0
        columns, rows = res
        flat = [v for row in rows for v in row]
        return 1, columns, len(rows), self.rt.table_from(flat)

    async def _next_result(self, req: tuple) -> Any:
        """sysbench 1.1's con:next_result() / stmt:next_result(): the next result the
        connection's last statement left (it is counted like a statement)."""
        conn = self.conns.get(req[1])
        res = conn.next_result() if conn is not None else None
        if res is None:
            return 0
        columns, rows = res
        return 1, columns, len(rows), self.rt.table_from([v for row in rows for v in row])

    async def _more_results(self, req: tuple) -> Any:
        conn = self.conns.get(req[1])
        return conn is not None and conn.more_results()

    async def _prepare(self, req: tuple) -> Any:
        conn_id, sql = req[1], req[2]
        try:
            stmt = await self.conns[conn_id].prepare(sql)
        except SQLError as exc:
            for line in SqlFailure.prepare_lines(self._driver_of(conn_id), exc):
                self.services.log(FATAL, line)
            return False
        self.stmts.append(stmt)
        self.stmt_sql.append(sql)
        self.stmt_conn.append(conn_id)
        if self._names_statement(conn_id):
            draw = self.sysbench.rand.uniform_uint64
            draw(), draw()
        return len(self.stmts) - 1

    def _names_statement(self, conn_id: int) -> bool:
        """Whether sysbench 1.1.0 would name this statement with two draws of the thread's
        generator (its PostgreSQL driver: "sbstmt" and two sb_rand_uniform_uint64(), for
        every server-side prepared statement), which the 1.1 face then takes too."""
        if self.services.values.get("sysbench_compat") != "1.1":
            return False
        drv = getattr(self.conns.get(conn_id), "driver", None)
        return getattr(drv, "name", "") == "pgsql" and getattr(drv, "ps_mode", "") != "disable"

    async def _driver(self, req: tuple) -> Any:
        drv = self.services.driver(req[1])
        if drv is None:
            return False
        return True, drv.description

    async def _connect(self, req: tuple) -> Any:
        drv = self.services.driver(req[1])
        if drv is None:
            return False
        try:
            conn = await drv.connect(self.counters, index=self.tid)
        except ConnectError as exc:  # sysbench's driver's lines where the driver knows them
            for line in exc.sysbench_lines or str(exc).splitlines():
                self.services.log(FATAL, line)
            return False
        conn.driver = drv
        conn_id = len(self.conns) + 1
        while conn_id in self.conns:
            conn_id += 1
        self.conns[conn_id] = conn
        return conn_id

    def _collected(self, conn_id: int) -> None:
        """A connection the script no longer references (called from Lua's garbage
        collector, so it must not touch the state): closed in the background."""
        conn = self.conns.pop(conn_id, None)
        if conn is None:
            return
        try:
            task = asyncio.get_running_loop().create_task(close_quietly(conn))
        except RuntimeError:
            return
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def _disconnect(self, req: tuple) -> Any:
        conn = self.conns.pop(req[1], None)
        if conn is not None:
            await self._end(conn)
        return True

    async def _end(self, conn: Connection) -> None:
        """Close a connection the script is done with.  At the run's end it waits for the
        engine's close (close_later): 1000 sessions ending together while the last events
        are in flight cost the server about a second (a PostgreSQL backend's exit, a
        MariaDB thread's), which went into the run's "total time" and slowed the events
        still in flight; the native workloads' sessions end after the run too."""
        if self.close_later is not None:
            self.close_later(conn)
        else:
            await close_quietly(conn)

    async def _reconnect(self, req: tuple) -> Any:
        if self._driver_of(req[1]) in NO_RECONNECT[self.services.values.get("sysbench_compat", "1.0") or "1.0"]:
            self.services.log(ALERT, "reconnect is not supported by the current driver")
            return True
        if req[1] not in self.conns:  # disconnected by the script
            self.services.log(ALERT, "attempt to close an already closed connection")
            return True
        ok = await self._reopen(req[1])
        if ok:
            self.counters.reconnects += 1
        else:
            self.counters.errors += 1
        return ok

    async def _sleep(self, req: tuple) -> Any:
        await asyncio.sleep(max(float(req[1]), 0.0))
        return 0

    async def _close_stmt(self, req: tuple) -> Any:
        if 0 < req[1] < len(self.stmts):
            stmt, self.stmts[req[1]] = self.stmts[req[1]], None
            # sysbench 1.1.0's MySQL driver closes it on the server (COM_STMT_CLOSE)
            if stmt is not None and self.services.values.get("sysbench_compat") == "1.1":
                close = getattr(self.conns.get(self.stmt_conn[req[1]]), "close_statement", None)
                if close is not None:
                    await close(stmt)
        return 0

    async def close(self) -> None:
        """Close the state's connections (sysbench closes them with the state)."""
        conns, self.conns = list(self.conns.values()), {}
        await asyncio.gather(*(self._end(c) for c in conns))
        self.release()

    def release(self) -> None:
        """The Lua side of close(): the script's globals go, __gc handlers run, every
        proxy of the runtime is dropped.  A thread's state closed at the run's end
        (close_later set) whose script gave nothing a finalizer (nor opened a file:
        sysbench.lua marks both) has nothing left to run at its lua_close, which frees
        every object of a cache-cold heap (a few ms a state: a second at the end of a
        1000-thread run, inside its "total time" and ahead of its final report): its
        runtime is parked until release_parked(), after the run has been reported, or
        until a forked worker process exits without freeing it."""
        self.stmts = [None]
        _open_states.discard(self)
        if self.dead:  # kept as it is, with its runtime: its Lua stopped inside a trace
            if self not in _abandoned:
                _abandoned.append(self)
                # never freed, not even at the interpreter's exit: lua_close (lupa's runtime
                # freed) or a proxy's unref would walk a VM left in the middle of a trace
                import ctypes  # (here: a dead state is rare, and ctypes costs every run's start-up)

                ctypes.pythonapi.Py_IncRef(ctypes.py_object(self))
            return
        native = self._native
        if native is not None:  # a thread stopped inside an event: out of it before lua_close
            self._unwind()
            self._native = None
        if self.rt is not None:
            self._runner = None
            try:
                collected = self._finish()
            except Exception:  # a failing __gc handler of the script: the state is gone anyway
                collected = True
            if collected is False and self.close_later is not None and PARK_STATES:  # the run's end
                _parked.append((self.rt, native))  # freed last to first: the stack, then the runtime
            native = None
            # drop every proxy of this runtime, so that it is freed now (or when parked), by
            # reference count: lupa objects left to the cycle collector at interpreter exit can
            # outlive their runtime's teardown and crash the process (SIGSEGV)
            self._call = self._runner_fn = self._load_api = self._loader = self._finish = self._export = None
            self._take_held = self._address_loader = self._jit_release = self._address = None
            self.sysbench = None
            self.rt = None


def release_parked() -> None:
    """lua_close for the states release() parked (the run has been reported)."""
    while _parked:
        _parked.pop()
