"""The stop bounds of an event loop that a Lua function may hold (lua/bridge.c's watchdog).

A Lua callback that computes without yielding (``while true do end`` in ``event()`` or
``thread_init()``) holds the thread of the event loop: the engine's timers (the forced
shutdown, the stop grace, ``--thread-init-timeout``) and Python's signal handlers never
run.  The watchdog is a thread of C that keeps those bounds for the loop: the engine
tells it each bound as it sets its own (:meth:`LoopWatch.bound`) and takes it back when
it acts itself (``bound(0)``); the loop answers stop requests (SIGINT, SIGTERM, a worker's
parent's SIGURG) with :meth:`ack`.  When a bound passes with nobody acting, the Lua
running on the loop is interrupted (lua/bridge.c says how); the call that took the
interrupt waits for the engine's cancel (workloads/held.py), so the run ends as it would with
a hung server: the report, the result file, the same exit code.  Only for workloads that
run Lua (``Workload.holds_loop``) and with the C extension; otherwise every call is a no-op.
"""

from __future__ import annotations

import time

from ..runtime.native import lua_watch

MARGIN_S = 0.1  # past the engine's own bound: a loop that is not held acts first


class LoopWatch:
    def __init__(self, active: bool):
        self.on = bool(active and lua_watch is not None)
        self.at = 0.0  # the bound told (time.monotonic(); 0: none)

    def start(self, signals: bool) -> None:
        """From the calling thread's loop on (``signals``: SIGINT/SIGTERM are requests)."""
        if self.on:
            self.on = bool(lua_watch.lua_watch_start(signals))

    def bound(self, delay_s: float, message: str = "", code: int = 2, earlier: bool = False) -> None:
        """Interrupt the loop's Lua ``delay_s`` (+ MARGIN_S) from now; 0: no bound (the
        engine has acted).  ``message`` and ``code``: how the process ends if nothing
        answers the interrupt either.  ``earlier``: only if that comes before the bound set."""
        if not self.on:
            return
        at = time.monotonic() + delay_s if delay_s > 0 else 0.0
        if earlier and self.at and (not at or self.at <= at):
            return
        self.at = at
        lua_watch.lua_watch_bound(delay_s + MARGIN_S if delay_s > 0 else 0.0, message + "\n" if message else "", code)

    def ack(self) -> None:
        if self.on:
            lua_watch.lua_watch_ack()

    def stop(self) -> None:
        if self.on:
            lua_watch.lua_watch_stop()


__all__ = ["LoopWatch", "MARGIN_S"]
