"""The C ``EventLoop`` (engine/event_loop.c): the worker's time-limited loop of the bundled OLTP events
in C (engine/worker.py ``_c_loop``) against the Python events it replaces
(workloads/oltp.py): the same statements with the same values in the same order
from the same seed, for every workload that lists its ``parts`` and
the options that change the parts; one recorded latency per event; errors that end
the await unrecorded with the event's start kept; cancellation; the stop flag and
the deadline.  Statements here record their SQL with the values substituted and
really suspend on the event loop (the server path is in tests/integration)."""

from __future__ import annotations

import asyncio
import time

import pytest

from pysysbench.command.cmdline import parse
from pysysbench.core.errors import IgnorableError
from pysysbench.core.rand import Rand
from pysysbench.drivers.base import Counters, substitute
from pysysbench.engine.worker import Limits
from pysysbench.runtime import native
from pysysbench.stats.recorder import make_recorder
from pysysbench.workloads import find_workload
from pysysbench.workloads.base import ID, ThreadContext, native_step, plus, string
from pysysbench.workloads.oltp import OltpPointSelect, OltpReadOnly, OltpUpdateIndex

if not native.ENABLED:
    pytest.skip(f"the C extension is not in use: {native.describe()}", allow_module_level=True)
EventLoop = native.EventLoop

SEED = 42


class Conn:
    """Prepared statements that record their SQL (values substituted) and suspend once
    (raise ``exc`` at statement number ``fail_at``; wait ``wait`` seconds each)."""

    def __init__(self, fail_at: int | None = None, exc: BaseException | None = None, wait: float = 0.0):
        self.sql: list[str] = []
        self.fail_at, self.exc, self.wait = fail_at, exc, wait

    async def prepare(self, sql):
        parts = sql.split("?")

        async def stmt(*args):
            self.sql.append(substitute(parts, args))
            await asyncio.sleep(self.wait)
            if self.fail_at is not None and len(self.sql) == self.fail_at:
                raise self.exc

        return stmt


class Driver:
    name = "dry"
    caps = type("Caps", (), {"auto_inc_insert_omits_id": False})()


def setup(workload: str, *options: str, conn: Conn | None = None):
    values = parse([workload, "--tables=3", "--table-size=1000", *options, "run"]).values
    w = find_workload(workload)(values, Driver())
    ctx = ThreadContext(
        tid=0, threads=1, conn=conn or Conn(), rand=Rand(SEED), counters=Counters(), values=values, driver=Driver()
    )
    asyncio.run(w.thread_init(ctx))
    return w, ctx


def c_steps(w, ctx):
    return w.event_steps(ctx, type(w).native_parts())


def run_c(w, ctx, record, ms: int = 40) -> None:
    r = ctx.rand

    async def main():
        await EventLoop(
            c_steps(w, ctx),
            r.uniform,
            r.default,
            r.string,
            w.tables,
            w.table_size,
            record,
            0,
            Limits(deadline_ns=time.perf_counter_ns() + ms * 1_000_000),
        )

    asyncio.run(main())


def run_python(workload: str, options: tuple[str, ...], events: int) -> list[str]:
    w, ctx = setup(workload, *options)

    async def main():
        for _ in range(events):
            await w.event(ctx)

    asyncio.run(main())
    return ctx.conn.sql


CASES = [
    ("oltp_read_write", ()),
    ("oltp_read_write", ("--range-selects=off", "--delete-inserts=3", "--index-updates=0")),
    ("oltp_read_write", ("--skip-trx=on", "--point-selects=0", "--simple-ranges=2", "--range-size=7")),
    ("oltp_read_only", ()),
    ("oltp_read_only", ("--distinct-ranges=0", "--rand-type=uniform")),
    ("oltp_write_only", ()),
    ("oltp_point_select", ()),
    ("oltp_point_select", ("--rand-type=pareto",)),
    ("oltp_update_index", ("--index-updates=2",)),
    ("oltp_update_non_index", ()),
]


@pytest.mark.parametrize("workload,options", CASES)
def test_same_statements_and_values_as_the_python_event(workload, options):
    w, ctx = setup(workload, *options)
    prepared = len(ctx.conn.sql)
    assert prepared == 0
    lat = []
    run_c(w, ctx, lambda tid, ns: lat.append(ns))
    events = len(lat)
    assert events > 3 and all(ns > 0 for ns in lat)
    expected = run_python(workload, options, events)
    assert ctx.conn.sql[: len(expected)] == expected
    assert len(ctx.conn.sql) == len(expected)  # the last event started before the deadline ends


def test_records_into_the_c_recorder():
    w, ctx = setup("oltp_read_only")
    rec = make_recorder(Counters(), range(0, 2))
    run_c(w, ctx, rec.core, ms=20)
    snap = rec.snapshot()
    assert snap.events > 0 and snap.thread_events == {0: snap.events}
    assert sum(snap.hist) == snap.events and 0 < snap.lat_min_ns <= snap.lat_max_ns
    assert len(ctx.conn.sql) == snap.events * 16


def test_an_error_ends_the_await_unrecorded_and_the_loop_goes_on_after_it():
    # statement 30 is the second event's 10th (20 statements an event: BEGIN, 10 points, 4 ranges,
    # 2 updates, DELETE, INSERT, COMMIT)
    w, ctx = setup("oltp_read_write", conn=Conn(fail_at=30, exc=IgnorableError("deadlock", code="1213")))
    lat = []
    r = ctx.rand

    async def main():
        loop = EventLoop(
            c_steps(w, ctx),
            r.uniform,
            r.default,
            r.string,
            w.tables,
            w.table_size,
            lambda t, ns: lat.append(ns),
            0,
            Limits(deadline_ns=time.perf_counter_ns() + 30_000_000),
        )
        before = time.perf_counter_ns()
        with pytest.raises(IgnorableError):
            await loop
        assert len(lat) == 1 and before <= loop.start <= time.perf_counter_ns()
        await loop  # the next event, from its first statement, with the next draws

    asyncio.run(main())
    assert ctx.conn.sql[20] == "BEGIN" and ctx.conn.sql[29].startswith("SELECT c FROM")
    assert ctx.conn.sql[30] == "BEGIN"


def test_stop_flag_and_past_deadline_run_no_event():
    w, ctx = setup("oltp_point_select")
    r = ctx.rand

    async def main():
        await EventLoop(
            c_steps(w, ctx),
            r.uniform,
            r.default,
            r.string,
            w.tables,
            w.table_size,
            lambda *a: None,
            0,
            Limits(stop=True, deadline_ns=time.perf_counter_ns() + 10**9),
        )
        await EventLoop(
            c_steps(w, ctx),
            r.uniform,
            r.default,
            r.string,
            w.tables,
            w.table_size,
            lambda *a: None,
            0,
            Limits(deadline_ns=time.perf_counter_ns() - 1),
        )

    asyncio.run(main())
    assert ctx.conn.sql == []


def test_awaited_under_a_tracer():
    """With a trace function set (coverage, pdb, a profiler) CPython 3.11 drives an await through
    the iterator's __next__ rather than its send: the loop's end must come back as StopIteration
    there too (it once read the returned value before it was set, and crashed)."""
    import sys

    w, ctx = setup("oltp_point_select")
    r = ctx.rand
    done = []

    async def main():
        await EventLoop(
            c_steps(w, ctx),
            r.uniform,
            r.default,
            r.string,
            w.tables,
            w.table_size,
            lambda *a: None,
            0,
            Limits(stop=True),
        )
        done.append(True)

    def tracer(frame, event, arg):
        return tracer

    sys.settrace(tracer)
    try:
        asyncio.run(main())
    finally:
        sys.settrace(None)
    assert done == [True] and ctx.conn.sql == []


def test_stop_set_during_the_run_ends_it_after_the_current_event():
    w, ctx = setup("oltp_read_only")
    lim, lat = Limits(), []

    def record(tid, ns):
        lat.append(ns)
        if len(lat) == 3:
            lim.stop = True

    r = ctx.rand

    async def main():  # no deadline
        await EventLoop(c_steps(w, ctx), r.uniform, r.default, r.string, w.tables, w.table_size, record, 0, lim)

    asyncio.run(main())
    assert len(lat) == 3 and len(ctx.conn.sql) == 3 * 16


def test_cancel_while_a_statement_waits():
    w, ctx = setup("oltp_point_select", conn=Conn(wait=10.0))
    r = ctx.rand

    async def main():
        loop = EventLoop(
            c_steps(w, ctx), r.uniform, r.default, r.string, w.tables, w.table_size, lambda *a: None, 0, Limits()
        )
        task = asyncio.ensure_future(loop)
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert len(ctx.conn.sql) == 1


def test_bad_steps_and_statements():
    r = Rand(1)
    args = (r.uniform, r.default, r.string, 3, 1000, lambda *a: None, 0, Limits())
    ok = native_step(([None],), 1, (ID,), ((0, (0,)),))
    assert EventLoop([ok], *args) is not None
    for bad in [
        native_step(([None],), -1),  # a negative count
        native_step(([None],), 1, ("idd",)),  # an unknown draw
        native_step(([None],), 1, (plus(0, 1),)),  # "plus" of a value not drawn yet
        native_step(([None],), 1, (string(5),)),  # a template that is no string
        native_step(([None],), 1, (ID,), ((1, (0,)),)),  # a statement that is not there
        native_step(([None],), 1, (ID,), ((0, (1,)),)),  # a value that is not there
        native_step(([None],) * 5, 1),  # too many statements
        ([None], True, 1, (), ()),
        "step",
    ]:
        with pytest.raises((ValueError, TypeError)):
            EventLoop([bad], *args)

    async def main():
        await EventLoop([native_step((lambda: 5,), 1, per_table=False)], *args)

    with pytest.raises(TypeError, match="cannot be awaited"):
        asyncio.run(main())


def test_only_an_unchanged_bundled_event_is_run_in_c():
    class Custom(OltpPointSelect):
        async def event(self, ctx):  # a user's own event: the worker must run it as written
            await super().event(ctx)

    assert OltpPointSelect.native_parts() == ("point",) and OltpUpdateIndex.native_parts() == ("index",)
    assert OltpReadOnly.native_parts() == ("begin", "point", "ranges", "commit")
    assert Custom.native_parts() is None


def _bundled_with_parts():
    from pysysbench.workloads import REGISTRY
    from pysysbench.workloads.oltp import Oltp

    return [cls for cls in REGISTRY.values() if issubclass(cls, Oltp) and cls.parts]


def test_native_parts_only_for_the_bundled_behaviour():
    from pysysbench.workloads.oltp import NATIVE_HELPERS

    bundled = _bundled_with_parts()
    assert len(bundled) == 6
    assert {"event", "event_steps", "_points", "_ranges", "_begin", "_commit"} <= set(NATIVE_HELPERS)
    for cls in bundled:
        assert cls.native_parts() == cls.parts
        assert type("Plain", (cls,), {}).native_parts() == cls.parts  # nothing overridden
        for name in NATIVE_HELPERS:  # any helper the C steps stand for, overridden: Python
            sub = type("Sub", (cls,), {name: lambda self, *a, _f=getattr(cls, name): _f(self, *a)})  # noqa: B008 -- binds this helper
            assert sub.native_parts() is None, (cls.name, name)
    for name in ("oltp_delete", "oltp_insert", "olap_point_select", "olap_sum_range"):  # their own event
        assert find_workload(name).native_parts() is None, name


@pytest.mark.parametrize("workload,options", CASES)
def test_a_subclass_overriding_a_helper_runs_it_with_the_same_statements(workload, options):
    """Overridden helpers are called (events then go part by part through them, in Python)
    and, passing through, send what the whole event sends."""
    from pysysbench.workloads.oltp_common import PARTS

    base = find_workload(workload)
    calls = []

    def passing(name):
        def helper(self, ctx, *args):
            calls.append(name)
            return getattr(base, name)(self, ctx, *args)

        return helper

    sub = type("Sub", (base,), {name: passing(name) for name in {part.helper for part in PARTS.values()}})
    assert sub.native_parts() is None
    expected = run_python(workload, options, 5)
    values = parse([workload, "--tables=3", "--table-size=1000", *options, "run"]).values
    w = sub(values, Driver())
    ctx = ThreadContext(
        tid=0, threads=1, conn=Conn(), rand=Rand(SEED), counters=Counters(), values=values, driver=Driver()
    )

    async def main():
        await w.thread_init(ctx)
        for _ in range(5):
            await w.event(ctx)

    asyncio.run(main())
    assert ctx.conn.sql == expected
    assert len(calls) == 5 * len(base.parts)
