"""Rate mode's arrivals in C (engine/arrivals.c), as the worker uses them: threads run as
strands (engine/strand.py) and await their tickets, from Python or from the C ``EventLoop``
(engine/event_loop.c ``arrive_by``); the timer is a reader of the event loop.  The stream's
rate and order, its end (the time limit, stop()), a full queue, a cancelled waiter, the
concurrency count; the Python twin (Worker._generate) runs in the same runs without the C
extension (tests/integration/test_rate_mode.py)."""

from __future__ import annotations

import asyncio
import statistics
import time

import pytest

from pysysbench.engine.strand import Strand
from pysysbench.engine.worker import Limits
from pysysbench.runtime import native

if not native.ENABLED:
    pytest.skip(f"the C extension is not in use: {native.describe()}", allow_module_level=True)
Arrivals = native.Arrivals
MS = 1_000_000


def deadline_in(ms: float) -> Limits:
    return Limits(deadline_ns=time.perf_counter_ns() + int(ms * MS))


async def take_all(ticket, got: list, lag: list | None = None, work_s: float = 0.0) -> None:
    """A thread's loop: each arrival's stamp (and how late it was handed over), until None."""
    while True:
        stamp = await ticket
        if stamp is None:
            return
        got.append(stamp)
        if lag is not None:
            lag.append(time.perf_counter_ns() - stamp)
        await asyncio.sleep(work_s)


def run_threads(arr, n: int, **kw) -> list[list[int]]:
    """n strands taking arrivals until the end; each one's stamps."""
    out: list[list[int]] = [[] for _ in range(n)]

    async def main():
        loop = asyncio.get_running_loop()
        loop.add_reader(arr.fileno(), arr.fire)
        try:
            strands = [Strand(take_all(arr.ticket(), out[i], **kw), loop, f"t{i}") for i in range(n)]
            await asyncio.wait([s.finished for s in strands], timeout=5)
            assert all(s.finished.done() for s in strands), "a thread never got the end"
            for s in strands:
                s.finished.result()
        finally:
            loop.remove_reader(arr.fileno())
            arr.close()

    asyncio.run(main())
    return out


def test_the_stream_has_its_rate_in_order_and_ends_at_the_time_limit():
    limits = deadline_in(400)
    lag: list[int] = []
    got = run_threads(Arrivals(2000.0, 7, limits, lambda: None), 2, lag=lag)
    stamps = sorted(s for one in got for s in one)
    assert all(one == sorted(one) for one in got)
    assert len(set(stamps)) == len(stamps)
    assert 640 <= len(stamps) <= 960, len(stamps)  # 800 expected (sd 28)
    assert stamps[-1] < limits.deadline_ns
    gaps = [b - a for a, b in zip(stamps, stamps[1:])]
    assert 0.4 * MS < statistics.fmean(gaps) < 0.6 * MS
    assert statistics.median(gaps) < statistics.fmean(gaps)  # exponential: median = mean * ln 2
    # handed over at its nanosecond, not at the loop's next millisecond
    assert statistics.median(lag) < 0.5 * MS, statistics.median(lag)
    assert time.perf_counter_ns() - limits.deadline_ns < 1000 * MS


def test_the_same_seed_gives_the_same_gaps():
    def gaps(seed):
        got = run_threads(Arrivals(3000.0, seed, deadline_in(100), lambda: None), 1)[0]
        return [b - a for a, b in zip(got, got[1:])][:100]

    assert gaps(11) == gaps(11)
    assert gaps(11) != gaps(12)


def test_a_waiting_thread_gets_the_end_at_the_time_limit_not_at_the_next_arrival():
    limits = deadline_in(150)
    got = run_threads(Arrivals(0.5, 3, limits, lambda: None), 2)
    assert sum(map(len, got)) == 1  # the first arrival comes at once, the next ~2 s later
    assert abs(time.perf_counter_ns() - limits.deadline_ns) < 300 * MS


def test_stop_answers_every_waiting_thread_with_none():
    arr = Arrivals(0.5, 3, Limits(), lambda: None)
    ended_at: list[int] = []

    async def main():
        loop = asyncio.get_running_loop()
        loop.add_reader(arr.fileno(), arr.fire)

        async def thread():
            got = []
            await take_all(arr.ticket(), got)
            ended_at.append(time.perf_counter_ns())

        strands = [Strand(thread(), loop, f"t{i}") for i in range(3)]
        await asyncio.sleep(0.05)
        stopped = time.perf_counter_ns()
        arr.stop()
        await asyncio.wait([s.finished for s in strands], timeout=2)
        loop.remove_reader(arr.fileno())
        arr.close()
        return stopped

    stopped = asyncio.run(main())
    assert len(ended_at) == 3
    assert max(ended_at) - stopped < 100 * MS
    assert arr.ended


def test_a_full_queue_ends_the_stream_and_calls_on_full_once():
    calls: list[int] = []
    arr = Arrivals(100_000.0, 5, deadline_in(2000), lambda: calls.append(1), 50)
    # one thread, each event 20 ms: the queue of 50 fills within a millisecond
    got = run_threads(arr, 1, work_s=0.02)
    assert calls == [1]
    assert arr.ended
    assert 1 <= len(got[0]) <= 52  # what was queued is still run, then the end


def test_a_cancelled_waiter_gets_no_arrival_and_the_others_go_on():
    arr = Arrivals(200.0, 9, deadline_in(300), lambda: None)
    out: list[int] = []

    async def main():
        loop = asyncio.get_running_loop()
        loop.add_reader(arr.fileno(), arr.fire)
        victim = Strand(take_all(arr.ticket(), []), loop, "victim")
        await asyncio.sleep(0.02)
        victim.cancel()
        other = Strand(take_all(arr.ticket(), out), loop, "other")
        await asyncio.wait([victim.finished, other.finished], timeout=3)
        loop.remove_reader(arr.fileno())
        arr.close()
        return victim

    victim = asyncio.run(main())
    assert victim.finished.cancelled()
    assert 20 <= len(out) <= 100  # ~56 expected over the remaining 280 ms


def test_inflight_counts_the_tickets_holding_an_arrival():
    arr = Arrivals(1000.0, 1, Limits(), lambda: None)
    seen: list[int] = []

    async def main():
        loop = asyncio.get_running_loop()
        loop.add_reader(arr.fileno(), arr.fire)

        async def thread():
            ticket = arr.ticket()
            await ticket
            seen.append(arr.inflight)
            ticket.idle()
            seen.append(arr.inflight)

        s = Strand(thread(), loop, "t")
        await asyncio.wait([s.finished], timeout=2)
        s.finished.result()
        loop.remove_reader(arr.fileno())
        arr.close()

    asyncio.run(main())
    assert seen == [1, 0]


def test_a_ticket_awaited_outside_a_strand_says_so():
    arr = Arrivals(0.5, 1, Limits(), lambda: None)

    async def main():
        ticket = arr.ticket()
        await ticket  # the first arrival is due at once
        with pytest.raises(RuntimeError, match="outside a strand"):
            await ticket

    asyncio.run(main())
    arr.close()


def test_bad_arguments():
    with pytest.raises(ValueError, match="must be positive"):
        Arrivals(0.0, 1, Limits(), lambda: None)
    with pytest.raises(TypeError, match="Ticket"):
        native.EventLoop((), None, None, None, 1, 1, None, 0, Limits()).arrive_by(object())
