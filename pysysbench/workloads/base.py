"""Workload API: the seam where benchmarks plug in.

A workload is a class with a ``name``, a docstring (shown by ``help``), declared
``options``, a statement table (name -> SQL with ``?`` placeholders and
``{table}`` for the table number) and ``event(ctx)``.  Optional hooks:
``prepare``, ``cleanup``, ``prewarm`` (run once with an :class:`Env`),
``thread_init``, ``thread_done`` and ``before_restart`` (per connection, with a
:class:`ThreadContext`).  Per-connection state lives on ``ctx``, never in module
globals, so the engine can run thousands of connections per process.

A user workload is a ``.py`` file passed as the test name that defines one
subclass of :class:`Workload` (see ``examples/custom_workload.py``).
"""

from __future__ import annotations

import os
import traceback
from contextlib import contextmanager
from dataclasses import field
from typing import Any, Callable, Iterator

from ..drivers.base import Connection, Counters, Driver
from ..core.errors import MissingTableError, PySysbenchError, RunAborted, WorkloadError
from ..core.options import Option, Values
from ..core.rand import Rand
from ..core.record import record

Say = Callable[[str], None]


@record
class Env:
    """What ``prepare``/``cleanup``/``prewarm`` get: the driver, the options and
    a ``say`` function for the progress lines sysbench prints."""

    driver: Driver
    values: Values
    say: Say
    seed: int | None = None
    # prepare's progress display (pysysbench.load.prepare: say() + update(LoadSnapshot));
    # None: messages go to ``say``, progress is not shown
    observer: Any = None


@record(eq=False)
class ThreadContext:
    """Per-connection state of one benchmark thread."""

    tid: int
    threads: int
    conn: Connection | None      # None when the workload opens its own connections
    rand: Rand
    counters: Counters
    values: Values
    driver: Driver
    stmts: dict[str, list[Any]] = field(default_factory=dict)
    state: dict[str, Any] = field(default_factory=dict)   # free for user workloads
    # called by the worker after each recorded event (--rand-compat=sysbench: the histogram draw)
    after_event: Callable[[], None] | None = None
    # the engine's worker running this thread (limits, recorder): for a workload that runs
    # its own event loop (a Lua script's thread_run)
    engine: Any = None

    async def prepare(self, name: str, sql: str, tables: int | None = None) -> None:
        """Prepare ``sql`` once, or once per table 1..tables when ``tables`` is
        given (``{table}`` in the SQL); handles land in ``self.stmts[name]``,
        indexed by table number (index 0 unused)."""
        if tables is None:
            self.stmts[name] = [await self.conn.prepare(sql)]
            return
        handles: list[Any] = [None]
        for t in range(1, tables + 1):
            handles.append(await self.conn.prepare(sql.format(table=t)))
        self.stmts[name] = handles


class Workload:
    """Base class of every workload; subclasses override what they need."""

    name: str = ""
    options: list[Option] = []
    commands: tuple[str, ...] = ("prepare", "run", "cleanup", "help")
    source: str = ""            # how find_workload() found it (a name or a file path)
    connects: bool = True       # the engine opens each thread's connection (False: the workload does)
    holds_loop: bool = False    # its code may hold the event loop (Lua): engine/loopwatch.py keeps the stop bounds
    ready_notes: tuple[str, ...] = ()   # warnings check_ready found (the run prints them before it starts)

    def __init__(self, values: Values, driver: Driver):
        self.values = values
        self.driver = driver
        self.configure()

    @classmethod
    def derived_options(cls, values: Values, driver: Driver) -> dict[str, Any]:
        """Values the options imply beyond themselves, derived once when the options are
        frozen (``Values.freeze``) and seen as those options from then on."""
        return {}

    def configure(self) -> None:
        """Read options into attributes once (the hot path never parses)."""

    def required_tables(self) -> list[str]:
        return []

    async def check_ready(self, conn, tables: list[str], target: str) -> None:
        """Before ``run`` (on the pre-flight connection): every table ``required_tables``
        named exists and none is flagged half-loaded by a killed prepare."""
        from ..load.marker import check_complete
        for table in tables:
            if not await conn.table_exists(table):
                raise MissingTableError(f"table '{table}' does not exist in {target}: run prepare first "
                                        f"(pysysbench {self.name} prepare with the same options)")
        await check_complete(conn, tables, target)

    async def prepare(self, env: Env) -> None:
        raise WorkloadError(f"'{self.name}' test does not implement the 'prepare' command.")

    async def cleanup(self, env: Env) -> None:
        raise WorkloadError(f"'{self.name}' test does not implement the 'cleanup' command.")

    async def prewarm(self, env: Env) -> None:
        raise WorkloadError(f"'{self.name}' test does not implement the 'prewarm' command.")

    async def thread_init(self, ctx: ThreadContext) -> None:
        """Prepare statements; default: nothing."""

    @classmethod
    def native_parts(cls) -> tuple[str, ...] | None:
        """The parts of an event the engine may run in C instead of ``event``
        (bundled OLTP compositions only); None: ``event`` runs as written."""
        return None

    def native_source(self, ctx: ThreadContext) -> Any:
        """An event source for the engine's C event loop (native_runtime.h: the workload hands out
        each event's statements itself, lua/bridge.c), with ``finish(outcome)``, the
        coroutine that finishes an event the source left to Python; None: ``event`` runs."""
        return None

    def implementation(self) -> dict[str, str]:
        """What the result file's ``implementation`` says beyond the C extension on or off
        (results.implementation_dict): a Lua script names its Lua runtime."""
        return {}

    def connections(self, ctx: ThreadContext) -> list[Any]:
        """The connections the thread's events use, once ``thread_init`` has run (the
        engine reads their responses in C where it can: engine/worker.py's WirePump)."""
        return [ctx.conn] if ctx.conn is not None else []

    async def event(self, ctx: ThreadContext) -> Any:
        """One event (a "transaction" in the report).  Return a true value to
        stop this thread."""
        raise NotImplementedError

    async def thread_done(self, ctx: ThreadContext) -> None:
        """Flush per-thread buffers; the engine closes the connection."""

    async def before_restart(self, ctx: ThreadContext, error: Exception) -> None:
        """Called before an event is restarted after an ignorable error."""


def raised(workload: "Workload | type[Workload]", hook: str, exc: BaseException) -> PySysbenchError:
    """What to say when a workload's code raised ``exc`` (not a pysysbench error) in
    ``hook``.  A user's file raising is the user's bug: name the file, the function and
    the line.  A bundled workload raising is pysysbench's own: an internal error."""
    what = f"{type(exc).__name__}: {exc}"
    source = workload.source
    if not source.endswith(".py"):
        return RunAborted(f"internal error: workload '{workload.name}' raised {what} in {hook} (rerun with --debug "
                          "for a traceback and please report it)")
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if os.path.abspath(f.filename) == source]
    where = f"{frames[-1].name} (line {frames[-1].lineno})" if frames else hook
    return WorkloadError(f"workload file '{source}' raised {what} in {where}: fix the workload "
                         "(rerun with --debug for the traceback)")


@contextmanager
def user_code(workload: "Workload | type[Workload]", hook: str) -> Iterator[None]:
    """Run a workload's hook; an exception that is not a pysysbench error becomes :func:`raised`'s."""
    try:
        yield
    except PySysbenchError:
        raise
    except Exception as exc:
        raise raised(workload, hook, exc) from exc


# --- events as data, for the engine's C loop (engine/event_loop.c) -------------------------

# the draws of a step, made left to right into values 0, 1, ... (the same calls of the
# thread's Rand as the Python event makes, in the same order)
ID = "id"                   # default(1, table_size)


def string(template: str) -> tuple[str, str]:
    """A draw of ``rand.string(template)``."""
    return ("string", template)


def plus(value: int, k: int) -> tuple[str, int, int]:
    """Not a draw: value number ``value`` + ``k``."""
    return ("plus", value, k)


def native_step(statements: tuple, count: int, draws: tuple = (), calls: tuple = ((0, ()),),
                per_table: bool = True) -> tuple:
    """One part of an event as the engine's C loop runs it (``event_steps``): with
    ``per_table`` one table t = uniform(1, tables) is drawn first (even when ``count`` is 0)
    and each statement is ``statements[i][t]``, else ``statements[i]`` itself; then ``count``
    times the ``draws`` are made and each of ``calls`` -- (statement index, value indices)
    -- is awaited in turn."""
    return (tuple(statements), per_table, count, tuple(draws), tuple(calls))


REGISTRY: dict[str, type[Workload]] = {}
# Workload.source of a Lua script (pysysbench.lua): worker processes resolve it again; here,
# so that resolving a bundled name never imports the Lua engine
LUA_SOURCE_PREFIX = "lua:"


def register(cls: type[Workload]) -> type[Workload]:
    REGISTRY[cls.name] = cls
    return cls
