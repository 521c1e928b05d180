"""A sysbench Lua script as a pysysbench workload, and sysbench's command dispatch.

:func:`script_class` finds a script as sysbench does (a file path, else a module
on the Lua path, else standard input) and makes a :class:`LuaWorkload` subclass
for it.  ``run`` goes through the ordinary engine: each benchmark thread's
``thread_init`` builds that thread's own Lua state (the chunk re-runs, globals are
per thread), ``event`` calls the script's ``event`` in it, ``thread_done`` closes
it; counters, histograms, intervals, result files, worker processes and campaigns
are the engine's.  Everything sysbench runs in its main state (the chunk, option
declarations, ``init``/``done``, ``prepare``/``cleanup``/``help``, custom commands,
report hooks) runs in a main state served by an event loop of its own in a helper
thread (:class:`MainHost`), so it outlives the benchmark's event loop; the dispatch
itself is commands.py's, handed this class (:meth:`LuaWorkload.dispatch`).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from time import perf_counter_ns
from typing import Any

from ..core.errors import IgnorableError, RunAborted, WorkloadError
from ..core.options import RawOption, Values
from ..workloads.base import LUA_SOURCE_PREFIX, ThreadContext, Workload
from ..workloads.held import is_interrupt, park
from ..workloads.stock import find_module
from . import options as lua_options
from .commands import Dispatcher
from .host import load, make_services, program_argv, stdout_line
from .log import FATAL, error_text, init_failed
from .state import EventHooks, LuaState, Services, implementation, options_source

PREFIX = LUA_SOURCE_PREFIX  # Workload.source of a script: worker processes resolve it again


# --- finding the script ---------------------------------------------------------------


class ScriptRef:
    """Where a script comes from: ``path`` None = standard input."""

    def __init__(self, name: str | None):
        self.name = name
        self.modname: str | None = None
        if name is None or name == "-":
            self.path, self.sname, self.script_path = None, "<stdin>", None
            return
        self.script_path = name
        self.sname = os.path.basename(name)
        if os.path.isfile(name):
            self.path = name
            return
        found = find_module(name)
        if found is None:
            raise WorkloadError(f"Cannot find benchmark '{name}': no such built-in test, file or module")
        self.path, self.modname = found, name


def script_class(name: str | None) -> type[LuaWorkload]:
    ref = ScriptRef(name)
    return type("LuaScript", (LuaWorkload,), {"name": ref.sname, "script": ref, "source": PREFIX + (name or "-")})


def is_restart(err: Any) -> bool:
    try:
        return err is not None and not isinstance(err, (str, int, float, bool)) and err["errcode"] == 1
    except (TypeError, KeyError, AttributeError):
        return False


class LuaRestart(IgnorableError):
    """A Lua error table with ``errcode = sysbench.error.RESTART_EVENT``: restart the event."""

    def __init__(self, err: Any):
        super().__init__("restart requested by the script", "lua")
        self.lua_error = err


class EngineHooks(EventHooks):
    """``sb_more_events`` / ``sb_event_start`` / ``sb_event_stop`` of a script's own
    ``thread_run``, on the engine's limits and recorder."""

    def __init__(self, ctx: ThreadContext):
        self.ctx = ctx
        self.t0 = 0

    def more(self, tid: int) -> bool:
        """The engine's rule (runtime/limits.py): another event may start, taken from --events."""
        return self.ctx.engine.limits.admit(perf_counter_ns()) == 1

    def start(self, tid: int) -> None:
        self.t0 = perf_counter_ns()

    def remaining_ns(self, now_ns: int) -> int | None:
        deadline = self.ctx.engine.limits.deadline_ns
        return max(deadline - now_ns, 0) if deadline else None

    def stop(self, tid: int) -> None:
        self.ctx.engine.recorder.record(self.ctx.tid, perf_counter_ns() - self.t0)


class LuaSource:
    """What the engine's source loop takes (Workload.native_source): the C event source and
    the coroutine finishing an event it left to Python."""

    def __init__(self, st: LuaState, events: Any, failed: Any):
        self.st, self.events, self.failed = st, events, failed

    def finish(self, outcome: Any) -> Any:
        return self.st.finish_event(self.events, outcome, self.failed)

    def abandon(self) -> None:
        """The watchdog stopped the state inside compiled code (LuaInterrupted)."""
        self.st.abandon()


class LuaWorkload(Workload):
    """A sysbench Lua script (``sysbench.cmdline.options`` declares its options)."""

    script: ScriptRef
    connects = False  # the script opens its own connections (drv:connect())
    runs_own_commands = True  # sysbench's command dispatch (dispatch below)
    holds_loop = True  # Lua may compute without yielding: engine/loopwatch.py keeps the bounds
    services: Services | None = None  # set by dispatch in the process that parsed the command line
    commands = ("prepare", "run", "cleanup", "help")

    def configure(self) -> None:
        if self.services is None:
            type(self).services = make_services(self.values, stdout_line, self.driver.name)
            self.services.drivers.setdefault(self.driver.name, self.driver)
        self.legacy: bool | None = None
        self.options_source = options_source(lua_options.exported(self.values))

    async def _state(self, ctx: ThreadContext) -> LuaState:
        st = LuaState(
            self.services, ctx.tid, ctx.counters, EngineHooks(ctx), self.script.script_path, program_argv(), "run"
        )
        ok, err = await load(st, self.script.path, self.script.modname)
        if not ok:
            raise WorkloadError(f"{error_text(err)}\n{init_failed(self.values.get('sysbench_compat'))}")
        if self.legacy is None:
            self.legacy = st.sysbench.cmdline.options is None
        st.export(self.options_source, self.legacy)
        return st

    async def thread_init(self, ctx: ThreadContext) -> None:
        st = await self._state(ctx)
        ctx.state["lua"] = st
        ctx.state["own_loop"] = bool(st.sysbench.own_thread_run())
        if ctx.state["own_loop"]:
            st.jit_release()
        ctx.state["event_failed"] = functools.partial(self._event_failed, ctx)
        fn = st.global_("thread_init")
        if fn is not None:
            ok, err = await st.call(fn, ctx.tid)
            if not ok:
                message, err = error_text(err), None
                await self._close(ctx)
                failed = init_failed(self.values.get("sysbench_compat"))
                raise WorkloadError(f"`thread_init' function failed: {message}\n{failed}")

    async def _close(self, ctx: ThreadContext) -> None:
        st = ctx.state.pop("lua", None)
        if st is not None:
            await st.close()

    async def _failed(self, ctx: ThreadContext, message: str) -> RunAborted:
        """A thread whose thread_run raised: no thread_done, its state is closed (sysbench)."""
        await self._close(ctx)
        return RunAborted(f"`thread_run' function failed: {message}")

    def event(self, ctx: ThreadContext) -> Any:
        """The engine's ``await workload.event(ctx)``: the state's own coroutine (one
        Python coroutine per event: ``LuaState.event``, with ``_event_failed`` for a
        failed event)."""
        st = ctx.state["lua"]
        if ctx.state["own_loop"]:
            return self._own_loop(ctx, st)
        return st.event(ctx.state["event_failed"])

    def implementation(self) -> dict[str, str]:
        return implementation()

    def connections(self, ctx: ThreadContext) -> list[Any]:
        """The connections the script's thread_init opened (those an event opens later are
        read by the event loop)."""
        st = ctx.state.get("lua")
        return list(st.conns.values()) if st is not None else []

    def native_source(self, ctx: ThreadContext) -> Any:
        """The state's events as lua/bridge.c's source for the engine's C event loop (see
        LuaState.native_events), or None: the state's own thread_run, no C, not LuaJIT."""
        if ctx.state["own_loop"]:
            return None
        st = ctx.state["lua"]
        events = st.native_events()
        if events is None:
            return None
        return LuaSource(st, events, ctx.state["event_failed"])

    async def _own_loop(self, ctx: ThreadContext, st: LuaState) -> Any:
        ok, err = await st.call(st.global_("thread_run"), ctx.tid)
        if not ok:
            message, err = error_text(err), None
            raise await self._failed(ctx, message)
        return True

    async def _event_failed(self, ctx: ThreadContext, ret: Any) -> Any:
        if is_interrupt(ret):  # the watchdog's (engine/loopwatch.py): the engine's cancel is due
            ret = None
            await park()
        if is_restart(ret):
            # not left in this frame: a traceback keeping a Lua object keeps its runtime
            # alive past the state's close, to be freed by the cycle collector at exit,
            # which crashes lupa (SIGSEGV in lua_close)
            exc, ret = LuaRestart(ret), None
            raise exc
        message, ret = error_text(ret), None
        raise await self._failed(ctx, message)

    async def before_restart(self, ctx: ThreadContext, error: Exception) -> None:
        st = ctx.state["lua"]
        hook = st.sysbench.hooks.before_restart_event
        if hook is None:
            error.lua_error = None
            return
        err = getattr(error, "lua_error", None)
        if err is not None:
            error.lua_error = None  # no Lua object outlives its call in a Python exception
        ok, ret = await st.call(hook, err)
        if not ok:
            message, ret, err, hook = error_text(ret), None, None, None
            raise await self._failed(ctx, message)

    async def thread_done(self, ctx: ThreadContext) -> None:
        st = ctx.state.get("lua")
        if st is None:
            return
        worker = ctx.engine
        if worker is not None and worker.over():  # the run's end: its sessions end after it
            st.close_later = worker.close_later
        fn = st.global_("thread_done")
        if fn is not None:
            ok, err = await st.call(fn, ctx.tid)
            if not ok:
                self.services.log(FATAL, f"`thread_done' function failed: {error_text(err)}")
        await self._close(ctx)

    @classmethod
    def dispatch(
        cls,
        values: Values,
        command: str | None,
        rest: list[RawOption],
        out: Callable[[str], None],
        driver_name: str,
        run: Callable[[Workload, Any], int],
    ) -> int:
        return Dispatcher(cls, values, command, rest, out, driver_name, run).execute()


__all__ = ["LuaWorkload", "ScriptRef", "script_class"]
