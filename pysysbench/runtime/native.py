"""The one place that decides whether pysysbench's C code is used.

Role: every piece of the hot path written in C (the random draws, the latency
recorder, the event loop of the bundled OLTP events, the wire's response
scanners and statement, the strand's core) has a Python twin that is both its
contract and its fallback.  This module decides ONCE, at import, which of the
two runs, and every other module takes its C symbols from here (each symbol is
``None`` when the C is not used, and the caller then uses its Python twin).

The C is used when the optional extension was built (``pip install`` builds it
when a compiler is there) and the environment does not switch it off:
``PYSYSBENCH_NATIVE=off`` runs every twin in Python (slower, the same results);
``on`` (or unset) uses the C when it is built.  Worker processes inherit the
setting with the environment, Ray actors are passed it (engine/raygroup.py).
CI runs the unit tests and one integration run per driver both ways.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ..core import rand as _rand
from ..core.switches import NATIVE as _SWITCH
from ..core.switches import OFF, ON

if TYPE_CHECKING:
    from .. import _native

ENV = _SWITCH.name


def _setting() -> tuple[bool, str | None]:
    """(whether the C is wanted, the one-line problem with the setting or None)."""
    value = _SWITCH.value()
    if value in OFF:
        return False, None
    if value in ON:
        return True, None
    return True, (
        f"invalid value of the environment variable {ENV}: '{_SWITCH.raw()}' "
        "(use 'off' to run without the C extension, or 'on')"
    )


def _load(wanted: bool) -> ModuleType | None:
    """The C extension (pysysbench._native, its C layers in native_runtime.h), or None."""
    if not wanted:
        return None
    try:
        from .. import _native
    except ImportError:  # pragma: no cover - depends on the build
        return None
    return _native


WANTED, PROBLEM = _setting()
_c = _load(WANTED)
ENABLED = _c is not None
FILE = getattr(_c, "__file__", None)  # the extension's file (lua/bridge.c's functions are loaded from it by Lua)


def check() -> None:
    """Raise ConfigError for an unusable value of ``PYSYSBENCH_NATIVE`` (the CLI asks
    first thing; the C is then used, as with ``on``)."""
    if PROBLEM is not None:
        from ..core.errors import ConfigError

        raise ConfigError(PROBLEM)


def describe() -> str:
    """One line for --version-like diagnostics and the result file."""
    if ENABLED:
        return "C extension"
    return "Python (PYSYSBENCH_NATIVE=off)" if not WANTED else "Python (the C extension is not built)"


# --- the C symbols (None: use the Python twin) -------------------------------------

# core/rand.py (core/rand.c): sysbench's uniform / special / string draws, handed down
# (the ground floor imports nothing above it)
_rand.use_c(None if _c is None else _rand.CDraws(_c.Draw, _c.UNIFORM, _c.SPECIAL, _c.STRING, _c.Xoro))
# rand.py's Xoroshiro128Plus (rand.c's xoro_*): its C twin, for the test that runs both
xoro_draws: Callable[..., tuple[int, ...]] | None = getattr(_c, "xoro_draws", None)
splitmix64_state: Callable[[int], tuple[int, int]] | None = getattr(_c, "splitmix64_state", None)
# stats/recorder.py (stats/recorder.c): the latency recorder
Recorder: type[_native.Recorder] | None = getattr(_c, "Recorder", None)
# engine/worker.py (engine/event_loop.c): the event loop of events given as steps (workloads/base.py)
EventLoop: type[_native.EventLoop] | None = getattr(_c, "EventLoop", None)
# engine/worker.py (engine/arrivals.c): rate mode's Poisson arrivals, handed to threads' tickets
Arrivals: type[_native.Arrivals] | None = getattr(_c, "Arrivals", None)
# runtime/limits.py (native_util.c): the event-limit rule, as every C loop asks it
limits_admit: Callable[[Any, int, int], int] | None = getattr(_c, "limits_admit", None)
# engine/budget.py (engine/event_loop.c): the --events counter, an atomic over shared memory
Budget: type[_native.Budget] | None = getattr(_c, "Budget", None)
# drivers/wire.py (drivers/wire.c): the wire's receiving half and the prepared statement
WireCore: type[_native.WireCore] | None = getattr(_c, "WireCore", None)
Statement: type[_native.Statement] | None = getattr(_c, "Statement", None)
# engine/worker.py (drivers/wire.c): the worker's wires read with epoll (WirePump; None: the event loop reads them)
WirePoll: type[_native.WirePoll] | None = getattr(_c, "WirePoll", None)
# drivers/mysql/scan.py, drivers/pgsql/scan.py and pgsql/wire.py (drivers/mysql/wire.c,
# drivers/pgsql/wire.c): the response scanners and PostgreSQL's Bind
mysql_scan: Callable[..., tuple[Any, ...] | None] | None = getattr(_c, "mysql_scan", None)
pg_scan: Callable[..., tuple[Any, ...] | None] | None = getattr(_c, "pg_scan", None)
pg_bind: Callable[[bytes, Any, bytes], bytes] | None = getattr(_c, "pg_bind", None)
# engine/strand.py (engine/strand.c): the strand's driving half
StrandCore: type[_native.StrandCore] | None = getattr(_c, "StrandCore", None)
strand_setup: Callable[..., Any] | None = getattr(_c, "strand_setup", None)
# lua/state.py (lua/bridge.c): a Lua state's events as the C event loop's source
LuaEvents: type[_native.LuaEvents] | None = getattr(_c, "LuaEvents", None)
lua_bind: Callable[[Any], bool] | None = getattr(_c, "lua_bind", None)
# engine/loopwatch.py (lua/bridge.c): the watchdog that stops Lua holding the event loop
LuaInterrupted: type[Exception] | None = getattr(_c, "LuaInterrupted", None)
LUA_INTERRUPT_MARKER: str | None = getattr(_c, "LUA_INTERRUPT_MARKER", None)
lua_watch: Any = getattr(_c, "lua_watch_start", None) and _c
# workloads/builtin_core.py (workloads/builtin.c): the built-in tests' inner loops
Builtin: type[_native.Builtin] | None = getattr(_c, "Builtin", None)
# memory.py (memory.c): glibc's mallopt (None elsewhere: memory.py's ctypes path)
mallopt: Callable[[int, int], int] | None = getattr(_c, "mallopt", None)
heap_hugepages: Callable[..., Any] | None = getattr(_c, "heap_hugepages", None)
