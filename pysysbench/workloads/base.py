"""Workload API: the seam where benchmarks plug in.

A workload is a class with a ``name``, a docstring (shown by ``help``), declared
``options``, a statement table (name -> SQL with ``?`` placeholders and
``{table}`` for the table number) and ``event(ctx)``.  Optional hooks:
``prepare``, ``cleanup``, ``prewarm`` (run once with an :class:`Env`),
``thread_init``, ``thread_done`` and ``before_restart`` (per connection, with a
:class:`ThreadContext`).  Per-connection state lives on ``ctx``, never in module
globals, so the engine can run thousands of connections per process.  What the
engine, the outputs and the CLI read from a workload beyond its hooks (``connects``,
``batched``, ``help_text``, ...) is a trait declared in workloads/contract.py.

A user workload is a ``.py`` file passed as the test name that defines one
subclass of :class:`Workload` (see ``examples/custom_workload.py``).
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import field
from typing import Any

from ..core.errors import MissingTableError, PySysbenchError, RunAborted, WorkloadError
from ..core.options import RawOption, Values
from ..core.rand import Rand
from ..core.record import record
from ..drivers.base import Connection, Counters, Driver
from .contract import Traits, check

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
    conn: Connection | None  # None when the workload opens its own connections
    rand: Rand
    counters: Counters
    values: Values
    driver: Driver
    stmts: dict[str, list[Any]] = field(default_factory=dict)
    state: dict[str, Any] = field(default_factory=dict)  # free for user workloads
    # called by the worker after each recorded event (--rand-compat=sysbench: the histogram draw)
    after_event: Callable[[], None] | None = None
    # --shard-nodes (engine/spans.py): the ids this thread's writes went to since its BEGIN
    written: list[int] | None = None
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


class Workload(Traits):
    """Base class of every workload; subclasses override what they need.  Its traits
    (``name``, ``options``, ``connects``, ``batched``, ...) are declared, with their
    defaults, in workloads/contract.py; a subclass is checked against them when it is made."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        check(cls, Workload)

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

    def prepared_per_thread(self) -> int | None:
        """The statements each thread prepares (``ThreadContext.prepare``), for the run's
        pre-flight check of the server's limit (max_prepared_stmt_count); None: not known
        before the threads run (the check is skipped)."""
        return None

    async def check_ready(self, conn, tables: list[str], target: str) -> None:
        """Before ``run`` (on the pre-flight connection): every table ``required_tables``
        named exists and none is flagged half-loaded by a killed prepare."""
        from ..load.marker import check_complete

        for table in tables:
            if not await conn.table_exists(table):
                raise MissingTableError(
                    f"table '{table}' does not exist in {target}: run prepare first "
                    f"(pysysbench {self.name} prepare with the same options)"
                )
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
    def after_parse(cls, values: Values, raw: list[RawOption], say: Say) -> None:
        """After the options are parsed (phase 2): adjust defaults and old names, warn
        through ``say`` (the 0.5 scripts); default: nothing."""

    @classmethod
    def dispatch(
        cls,
        values: Values,
        command: str | None,
        rest: list[RawOption],
        out: Say,
        driver_name: str,
        run: Callable[[Workload, Any], int],
    ) -> int:
        """Run ``command`` the test's own way when ``runs_own_commands`` (a Lua script:
        lua/commands.py); the exit code."""
        raise NotImplementedError

    def run_intro(self, say: Say) -> None:
        """The lines printed before the threads start (a built-in test's mode lines and
        shared state); default: nothing."""

    @classmethod
    def native_parts(cls) -> tuple[str, ...] | None:
        """The parts of an event the engine may run in C instead of ``event``
        (bundled OLTP compositions only); None: ``event`` runs as written."""
        return None

    def event_steps(self, ctx: ThreadContext, parts: tuple[str, ...]) -> list[tuple]:
        """The event made of ``parts`` (what ``native_parts`` returned) as the C event
        loop's steps (:func:`native_step`)."""
        raise NotImplementedError

    def io_error(self, exc: OSError) -> Exception:
        """What a ``batched`` run's OSError is raised as; default: itself."""
        return exc

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


def raised(workload: Workload | type[Workload], hook: str, exc: BaseException) -> PySysbenchError:
    """What to say when a workload's code raised ``exc`` (not a pysysbench error) in
    ``hook``.  A user's file raising is the user's bug: name the file, the function and
    the line.  A bundled workload raising is pysysbench's own: an internal error."""
    what = f"{type(exc).__name__}: {exc}"
    source = workload.source
    if not source.endswith(".py"):
        return RunAborted(
            f"internal error: workload '{workload.name}' raised {what} in {hook} (rerun with --debug "
            "for a traceback and please report it)"
        )
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if os.path.abspath(f.filename) == source]
    where = f"{frames[-1].name} (line {frames[-1].lineno})" if frames else hook
    return WorkloadError(
        f"workload file '{source}' raised {what} in {where}: fix the workload (rerun with --debug for the traceback)"
    )


@contextmanager
def user_code(workload: Workload | type[Workload], hook: str) -> Iterator[None]:
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
ID = "id"  # default(1, table_size)


def string(template: str) -> tuple[str, str]:
    """A draw of ``rand.string(template)``."""
    return ("string", template)


def plus(value: int, k: int | str) -> tuple[str, int, int | str]:
    """Not a draw: value number ``value`` + ``k`` (in a table of parts, ``k`` may be a name the
    workload resolves: oltp_common.PARTS)."""
    return ("plus", value, k)


def native_step(
    statements: tuple, count: int | str, draws: tuple = (), calls: tuple = ((0, ()),), per_table: bool = True
) -> tuple:
    """One part of an event as the engine's C loop runs it (``event_steps``): with
    ``per_table`` one table t = uniform(1, tables) is drawn first (even when ``count`` is 0)
    and each statement is ``statements[i][t]``, else ``statements[i]`` itself; then ``count``
    times the ``draws`` are made and each of ``calls`` -- (statement index, value indices)
    -- is awaited in turn."""
    return (tuple(statements), per_table, count, tuple(draws), tuple(calls))


# run_steps' codes of the draws
_ID, _STRING, _PLUS = 0, 1, 2


def compile_steps(steps: tuple) -> tuple:
    """``steps`` (``native_step``'s, each statement a name: a key of ``ctx.stmts``) in the form
    ``run_steps`` reads: (names, per_table, count, one_id, draws, calls), where ``one_id`` marks
    the step of one statement called with one id, each draw is (code, argument, argument) and
    a call's value indices are None when it takes every value in order."""

    def draw(d: Any) -> tuple:
        if d == ID:
            return (_ID, 0, 0)
        return (_STRING, d[1], 0) if d[0] == "string" else (_PLUS, d[1], d[2])

    def call(stmt: int, args: tuple, values: int) -> tuple:
        return (stmt, None if args == tuple(range(values)) else args)

    return tuple(
        (
            names,
            per_table,
            count,
            len(names) == 1 and draws == (ID,) and calls == ((0, (0,)),),
            tuple(draw(d) for d in draws),
            tuple(call(i, args, len(draws)) for i, args in calls),
        )
        for names, per_table, count, draws, calls in steps
    )


async def run_steps(program: tuple, stmts: dict[str, list[Any]], rand: Rand, tables: int, table_size: int) -> None:
    """The Python twin of the C loop's event (engine/event_loop.c): the steps of ``program``
    (``compile_steps``) with the same draws in the same order and the same calls; a statement
    is ``stmts[name][t]``, ``[0]`` when not per table."""
    default, string = rand.default, rand.string
    for names, per_table, count, one_id, draws, calls in program:
        t = rand.uniform(1, tables) if per_table else 0
        if one_id:  # point selects, index updates: the most frequent step, kept short
            stmt = stmts[names[0]][t]
            for _ in range(count):
                await stmt(default(1, table_size))
            continue
        handles = [stmts[name][t] for name in names]
        for _ in range(count):
            values: list[Any] = []
            for code, a, b in draws:
                if code == _ID:
                    values.append(default(1, table_size))
                elif code == _STRING:
                    values.append(string(a))
                else:
                    values.append(values[a] + b)
            for i, args in calls:
                if args is None:
                    await handles[i](*values)
                else:
                    await handles[i](*[values[j] for j in args])


REGISTRY: dict[str, type[Workload]] = {}
# Workload.source of a Lua script (pysysbench.lua): worker processes resolve it again; here,
# so that resolving a bundled name never imports the Lua engine
LUA_SOURCE_PREFIX = "lua:"


def register(cls: type[Workload]) -> type[Workload]:
    REGISTRY[cls.name] = cls
    return cls
