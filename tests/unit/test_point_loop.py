"""``_hotpath.PointLoop``: the worker's time-limited loop of OLTP point events in C
(engine/worker.py ``_point_loop``) against the Python event it replaces
(workloads/oltp.py ``Oltp._points``): the same tables and ids in the same order
from the same seed, one recorded latency per event, errors that end the await
unrecorded with the event's start kept, cancellation, the stop flag and the
deadline.  Statements here are Python coroutine functions that record their
parameters and really suspend on the event loop, so the loop is exercised as it
runs against a server (the real-statement path is in tests/integration)."""

from __future__ import annotations

import asyncio
import time

import pytest

from pysysbench.drivers.base import Counters
from pysysbench.engine.worker import Limits, make_recorder
from pysysbench.errors import IgnorableError
from pysysbench.rand import Rand

hotpath = pytest.importorskip("pysysbench._hotpath")
PointLoop = hotpath.PointLoop

TABLES, SIZE = 4, 10_000


class Calls:
    """stmts[t] records (t, params) and suspends once on the loop (fail_at: raise at call n)."""

    def __init__(self, fail_at: int | None = None, exc: BaseException | None = None, wait: float = 0.0):
        self.seen: list[tuple[int, tuple]] = []
        self.fail_at, self.exc, self.wait = fail_at, exc, wait

    def stmts(self) -> list:
        def make(t):
            async def stmt(*params):
                self.seen.append((t, params))
                await asyncio.sleep(self.wait)
                if self.fail_at is not None and len(self.seen) == self.fail_at:
                    raise self.exc
            return stmt
        return [None] + [make(t) for t in range(1, TABLES + 1)]


def python_points(seed: int, events: int, count: int) -> list[tuple[int, tuple]]:
    """What Oltp._points(ctx, group) draws for ``events`` events."""
    r, out = Rand(seed), []
    for _ in range(events):
        t = r.uniform(1, TABLES)
        for _ in range(count):
            out.append((t, (r.default(1, SIZE),)))
    return out


def run(coro):
    return asyncio.run(coro)


@pytest.mark.parametrize("count", [1, 3])
def test_same_draws_and_one_record_per_event_as_the_python_event(count):
    calls, lat = Calls(), []
    r = Rand(42)

    async def main():
        deadline = time.perf_counter_ns() + 50_000_000
        loop = PointLoop(calls.stmts(), r.uniform, r.default, TABLES, SIZE, count,
                         lambda tid, ns: lat.append((tid, ns)), 7, Limits(), deadline)
        await loop
        assert time.perf_counter_ns() >= deadline

    run(main())
    events = len(lat)
    assert events > 10 and len(calls.seen) == events * count
    assert calls.seen == python_points(42, events, count)
    assert all(tid == 7 and ns > 0 for tid, ns in lat)


def test_records_into_the_c_recorder():
    counters = Counters()
    rec = make_recorder(counters, range(3, 5))
    calls, r = Calls(), Rand(1)

    async def main():
        await PointLoop(calls.stmts(), r.uniform, r.default, TABLES, SIZE, 1, rec.core, 4, Limits(),
                        time.perf_counter_ns() + 20_000_000)

    run(main())
    snap = rec.snapshot()
    assert snap.events == len(calls.seen) > 0
    assert snap.thread_events == {4: snap.events}
    assert sum(snap.hist) == snap.events and 0 < snap.lat_min_ns <= snap.lat_max_ns


def test_an_error_ends_the_await_unrecorded_and_the_loop_goes_on_after_it():
    calls, lat = Calls(fail_at=5, exc=IgnorableError("deadlock", code="1213")), []
    r = Rand(9)

    async def main():
        deadline = time.perf_counter_ns() + 30_000_000
        loop = PointLoop(calls.stmts(), r.uniform, r.default, TABLES, SIZE, 1, lambda t, ns: lat.append(ns),
                         0, Limits(), deadline)
        before = time.perf_counter_ns()
        with pytest.raises(IgnorableError):
            await loop
        assert len(lat) == 4 and before <= loop.start <= time.perf_counter_ns()
        await loop            # the next event, with the next draws
        return len(lat)

    events = run(main())
    assert calls.seen == python_points(9, events + 1, 1)


def test_stop_flag_and_past_deadline_run_no_event():
    calls, r = Calls(), Rand(3)
    stopped = Limits(stop=True)

    async def main():
        await PointLoop(calls.stmts(), r.uniform, r.default, TABLES, SIZE, 1, lambda *a: None, 0, stopped,
                        time.perf_counter_ns() + 10**9)
        await PointLoop(calls.stmts(), r.uniform, r.default, TABLES, SIZE, 1, lambda *a: None, 0, Limits(),
                        time.perf_counter_ns() - 1)

    run(main())
    assert calls.seen == []


def test_stop_set_during_the_run_ends_it_after_the_current_event():
    calls, lat, r = Calls(), [], Rand(5)
    lim = Limits()

    def record(tid, ns):
        lat.append(ns)
        if len(lat) == 3:
            lim.stop = True

    async def main():
        await PointLoop(calls.stmts(), r.uniform, r.default, TABLES, SIZE, 2, record, 0, lim, 0)   # no deadline

    run(main())
    assert len(lat) == 3 and len(calls.seen) == 6


def test_cancel_while_a_statement_waits():
    calls, r = Calls(wait=10.0), Rand(2)

    async def main():
        loop = PointLoop(calls.stmts(), r.uniform, r.default, TABLES, SIZE, 1, lambda *a: None, 0, Limits(), 0)
        task = asyncio.ensure_future(loop)
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert len(calls.seen) == 1

    run(main())


def test_bad_arguments():
    r = Rand(1)
    with pytest.raises(ValueError):
        PointLoop([None], r.uniform, r.default, TABLES, SIZE, 0, lambda *a: None, 0, Limits(), 0)

    async def main():
        await PointLoop([None, lambda i: 5] * 3, r.uniform, r.default, 1, SIZE, 1, lambda *a: None, 0, Limits(), 0)

    with pytest.raises(TypeError, match="cannot be awaited"):
        run(main())


def test_only_an_unchanged_points_event_is_run_in_c():
    from pysysbench.workloads.oltp import OltpPointSelect, OltpReadOnly, OltpUpdateIndex

    class Custom(OltpPointSelect):
        async def event(self, ctx):      # a user's own event: the worker must run it as written
            await super().event(ctx)

    assert OltpPointSelect.event.points_group == "point"
    assert OltpUpdateIndex.event.points_group == "index"
    assert getattr(Custom.event, "points_group", None) is None
    assert getattr(OltpReadOnly.event, "points_group", None) is None
