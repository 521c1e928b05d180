"""One worker: an asyncio event loop owning a share of the connections.

Each benchmark thread is a coroutine running ``workload.event`` in a loop
(spec 5.1, step 6): check limits, [take an arrival in rate mode], time the event,
restart it on ignorable errors (reconnecting first when the connection was lost),
record its latency.  Counters and the histogram belong to this worker alone
(no locks); the aggregator reads them as :class:`Snapshot` copies once per
report interval, so the same code can later run in several processes.  A
blocking driver's threads (SQLite) each run on an OS thread of their own
(engine/threadstrand.py) and share them under the GIL: the C recorder's
``record`` is one call, the rest are ``+= 1`` on ints, which CPython never
interleaves (it switches threads only at calls and backward jumps).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from time import perf_counter_ns
from typing import TYPE_CHECKING, Any

from ..core.errors import DatabaseError, IgnorableError, PySysbenchError, ReconnectError, RunAborted, SQLError
from ..core.rand import Rand
from ..core.rand_compat import compat_streams
from ..drivers.base import Counters, Driver
from ..runtime.aio import all_or_nothing, close_quietly
from ..runtime.childenv import helpers_running
from ..runtime.limits import Limits, time_up
from ..stats.recorder import CRecorder, make_recorder
from ..stats.records import Snapshot
from ..workloads.base import ThreadContext, Workload, raised, user_code
from ..workloads.held import interrupted, park
from .spec import RunSpec
from .strand import Strand
from .threadstrand import SharedQueue, ThreadStrand, ThreadStrands

if TYPE_CHECKING:
    from ..stats.latencylog import LoggingRecorder
    from ..stats.recorder import PyRecorder

CONNECT_CONCURRENCY = 32  # connections opened at once: do not storm the server
RECONNECT_MAX_DELAY_S = 0.5  # back-off cap while a server is away
# a connection a thread ended with the run (close_later) closes with the threads' own after it,
# or this long after it was handed over, whichever comes first: a session left in a transaction
# holds its locks until then, and another thread's last event may wait on them
CLOSE_LATER_S = 1.0
EVENT_QUEUE_SLOTS = 131_072  # sysbench's rate-mode ring size (spec 5.4)
QUEUE_FULL = (
    "The event queue is full. This means the worker threads are unable to keep up with "
    "the specified event generation rate"
)
NS = 1_000_000_000
# a thread gives the event loop a turn at least this often, whatever its events do: an
# event whose statements complete without waiting (a dry run, a driver that never
# suspends, a CPU-only workload) would otherwise hold the loop, and the reporter, the
# checkpoints and a worker process's answers to its parent would wait for the time limit.
# One turn per window for the worker's threads together (Python loop), or after a window of
# events that never waited (C loop): at 1000 threads every event outlasts the window, and a
# turn per event was a second trip through the loop for each one
YIELD_EVERY_NS = 5_000_000
IDLE_TURNS = 10  # the pump's empty turns in a row before the loop waits on the poll (WirePump._step)
BATCH_BUDGET_NS = 5_000_000  # a built-in test's batch of C events (_batch_loop): at most 5 ms
BATCH_EVENTS = 1 << 40


from ..core.switches import WIRE_POLL as _WIRE_POLL_SWITCH
from ..runtime.native import Arrivals as _CArrivals
from ..runtime.native import EventLoop as _CEventLoop
from ..runtime.native import WirePoll as _WirePoll

# PYSYSBENCH_WIRE_POLL=off: the event loop reads the threads' sockets (WirePump's twin); read at import
WIRE_POLL = _WIRE_POLL_SWITCH.on()


def _shard_spans(shard_nodes: tuple[int, str] | None) -> Any:
    """--shard-nodes' counting of write transactions over nodes (imported only with it)."""
    if shard_nodes is None:
        return None
    from .spans import ShardSpans

    return ShardSpans(*shard_nodes)


class WirePump:
    """The worker's wires read in C while its threads run (drivers/wire.c's WirePoll): a
    callback of the event loop (never a Task: the strands it resumes run as they do under
    the loop's own reading) that, while every live thread waits on a polled wire, reads and
    scans responses for up to a turn (YIELD_EVERY_NS), then gives the loop its turn and
    comes back; while a thread is ready to run or waits on anything else, it reads what has
    come and lets the loop wait, with the poll as a reader; until the threads' loops end.
    Per response the loop's reading cost a callback of the loop, a bytes object and a
    Python call, and the GIL's release and retake around every wait; here the GIL is
    released only while another thread of the process may want it.  A wire that leaves
    (its library takes it back, it closes, its connection ends) goes back to the loop
    (Wire.unpoll), and so does every wire when the pump stops.  In rate mode the poll also
    watches the arrivals' timer, so a thread waiting for its next arrival waits here too."""

    def __init__(self, worker: Worker):
        self.worker = worker
        assert _WirePoll is not None  # a pump is made only when the C poll exists
        self.poll = _WirePoll()
        self.wires: set[Any] = set()  # the wires it reads now
        self.taken = 0  # wires it has read (tests/integration/test_wire_poll.py)
        self.handle: asyncio.Handle | None = None
        self.stopped = False
        self.reading = False  # the event loop waits on the poll (a reader) instead of the pump
        self.reads = 0  # the poll's reads (tests/integration/test_wire_poll.py)
        self.waits = 0  # its turns spent waiting on the poll (the same)
        self.idle_turns = 0  # turns in a row that waited and read nothing
        self.idles = 0  # times it left the waiting to the loop (the same)

    def start(self, loop: asyncio.AbstractEventLoop) -> bool:
        self.loop = loop  # the worker's: what the pump's steps run on
        for ctx in self.worker.contexts:
            self.take(ctx)
        if not self.wires:
            return False
        arrivals = self.worker.c_arrivals
        if arrivals is not None:  # rate mode: the arrivals' timer is read here too (engine/arrivals.c)
            self.poll.watch(arrivals.fileno(), arrivals.fire)
        self.handle = loop.call_soon(self._step)
        return True

    def take(self, ctx: ThreadContext) -> None:
        """Read the connections of ``ctx``'s events here (again after a reconnect: its new wire)."""
        if self.stopped:
            return
        for conn in self.worker.workload.connections(ctx):
            wire = getattr(conn, "wire", None)
            if wire is not None and wire.polled_by(self.poll):
                self.wires.add(wire)
                self.taken += 1

    def _step(self) -> None:
        self.handle = None
        w = self.worker
        if self.stopped:
            return
        if w.alive == 0 or (w.inflight == 0 and (w.over() or w.cancelled)):
            self.stop()
            return
        poll = self.poll
        if poll.count == 0:  # every wire left (a server restart): the reconnected ones come back
            self._wait_with_loop(False)
            self.handle = self.loop.call_later(YIELD_EVERY_NS / NS, self._step)
            return
        # every live thread waits on a polled wire (or, in rate mode, on its ticket, whose
        # timer the poll watches): wait here for a turn; else a thread is
        # ready to run or waits on the loop (Python code, a reconnect, a socket the loop
        # reads): read what has come, and let the loop wait, with the poll as one of its readers
        arrivals = w.c_arrivals
        wait_here = poll.waiting + (arrivals.waiting if arrivals is not None else 0) >= w.alive
        self.waits += wait_here
        try:
            back = poll.run(perf_counter_ns() + YIELD_EVERY_NS if wait_here else 0, wait_here and self._others_run())
        except Exception as exc:  # pragma: no cover - epoll itself failed: the loop reads them all
            self.loop.call_exception_handler({"message": "pysysbench: the wire poll failed", "exception": exc})
            self.stop()
            return
        if back.__class__ is int:
            self.reads += back
        else:
            for wire, error in back:
                self.hand_back(wire, error)
        if len(self.wires) != poll.count:  # some left on their own (released, closed, lost)
            self.wires = {wire for wire in self.wires if wire.poll is not None}
        # IDLE_TURNS whole turns of waiting with nothing read (a slow server, long queries):
        # the loop waits on the poll instead, as one of its readers, with its own timers'
        # timeouts -- not a turn every YIELD_EVERY_NS (200 a second of a waiting client's
        # CPU); the first response read brings the pump's wait back (at --rate=200 ten
        # empty turns in a row, 50 ms without an arrival, are rare)
        self.idle_turns = self.idle_turns + 1 if wait_here and back == 0 else 0
        idle = self.idle_turns >= IDLE_TURNS
        self.idles += idle
        self._wait_with_loop(idle or not wait_here)
        if wait_here and not idle:
            self.handle = self.loop.call_soon(self._step)

    @staticmethod
    def _others_run() -> bool:
        """Whether the poll gives up the GIL while it waits: other threads run Python (SQLite's
        strands, a user's), not only helpers that wait on their own loops (childenv)."""
        return threading.active_count() > 1 + helpers_running()

    def _wait_with_loop(self, on: bool) -> None:
        """The poll as a reader of the event loop (``on``), or not."""
        if on != self.reading:
            self.reading = on
            if on:
                self.loop.add_reader(self.poll.fileno(), self._step)
            else:
                self.loop.remove_reader(self.poll.fileno())

    def hand_back(self, wire: Any, exc: BaseException | None) -> None:
        """A wire the poll gave up: its socket ended (the loop reads the end and reports
        it), or its response raised (as under the loop's reading, a protocol error ends
        the connection)."""
        self.wires.discard(wire)
        wire.unpoll()  # the poll has dropped it already: the loop reads it again
        if exc is not None:
            self.loop.call_exception_handler(
                {
                    "message": "pysysbench: a response could not be handled",
                    "exception": exc,
                    "protocol": wire,
                    "transport": wire.transport,
                }
            )
            wire.transport.abort()

    def stop(self) -> None:
        """Every wire back to the event loop."""
        self.stopped = True
        if self.handle is not None:
            self.handle.cancel()
            self.handle = None
        self._wait_with_loop(False)
        wires, self.wires = self.wires, set()
        for wire in wires:
            wire.unpoll()


_GONE = object()  # _restarted: the thread's connection is gone for good


class _Failed:
    """_retrying's result for a transaction that failed after its last retry: true, so the
    Python loop's test of an event's result (a true one stops the thread) is the only one."""

    def __bool__(self) -> bool:
        return True


_FAILED = _Failed()


def _keeping(record: Callable[[int, int], Any], rand: Rand, kept: list[Any]) -> Callable[[int, int], None]:
    """The C event loop's recording with --max-retries: records, then keeps the generator's
    state in ``kept[0]``, where the next event starts (and ``kept[0]`` now, for the first)."""
    getstate = rand.getstate
    kept[:] = [getstate()]

    def keep(tid: int, latency_ns: int) -> None:
        record(tid, latency_ns)
        kept[0] = getstate()

    return keep


class Worker:
    """Runs threads ``tids`` of one benchmark on the current event loop."""

    def __init__(self, spec: RunSpec, workload: Workload, driver: Driver, tids: range):
        self.spec = spec
        threads = spec.threads
        self.workload = workload
        self.driver = driver
        self.tids = tids
        self.threads = threads
        self.counters = Counters()
        self.recorder: PyRecorder | CRecorder | LoggingRecorder = make_recorder(self.counters, tids)
        self.limits = Limits()
        if spec.values.get("latency_log"):  # --latency-log: off by default, then the plain recorder runs
            from ..stats.latencylog import LoggingRecorder

            self.recorder = LoggingRecorder(
                self.recorder,
                spec.values.latency_log,
                float(spec.values.get("latency_log_rate", 1.0) or 1.0),
                self.limits,
            )
        self.contexts: list[ThreadContext] = []
        self.tasks: Sequence[Strand | ThreadStrand] = []
        self.inflight = 0
        self.alive = 0  # threads whose coroutine has not ended (WirePump)
        self.turn = 0  # the Python loops' next turn for the event loop (YIELD_EVERY_NS)
        self.later: list[Any] = []  # connections to close with the threads' own (close_later)
        self._later_timer: asyncio.TimerHandle | None = None
        self._later_tasks: set[asyncio.Future[Any]] = set()
        self.arrivals: asyncio.Queue[Any] | None = None  # rate mode's in Python (_generate)
        self.generator: asyncio.Task[Any] | None = None
        self.c_arrivals: Any = None  # rate mode's in C (engine/arrivals.c): threads await their tickets
        self._tickets: dict[int, Any] = {}
        self.pump: WirePump | None = None
        self.loop: asyncio.AbstractEventLoop | None = None  # the engine's, set by start()
        self.os_threads: ThreadStrands | None = None  # a blocking driver's, made by init_threads()
        self.fatal: BaseException | None = None
        self.cancelled = False  # cancel() was called: the threads' CancelledError is expected
        self.traceback: BaseException | None = None  # shown with --debug
        self.reconnect_every = spec.reconnect_every
        self.max_retries = spec.max_retries  # --max-retries (events(), _c_loop)
        self.compat = compat_streams(spec.values, threads)  # --rand-compat=sysbench, else None
        self.spans = _shard_spans(spec.shard_nodes)  # --shard-nodes (engine/spans.py), else None
        self._connections: dict[str, int] | None = None
        self._counted = 0

    # --- start-up ---------------------------------------------------------------

    async def init_threads(self) -> None:
        """Connect and run ``thread_init`` for every thread, a few at a time."""
        gate = asyncio.Semaphore(CONNECT_CONCURRENCY)

        async def init_one(tid: int) -> ThreadContext:
            async with gate:
                conn = await self.driver.connect(self.counters, index=tid) if self.workload.connects else None
                ctx = ThreadContext(
                    tid=tid,
                    threads=self.threads,
                    conn=conn,
                    rand=Rand.from_options(self.spec.values, self.spec.thread_seed(tid)),
                    counters=self.counters,
                    values=self.spec.values,
                    driver=self.driver,
                    engine=self,
                )
                if self.compat is not None:
                    self.compat.attach(ctx)
                self.contexts.append(ctx)
                with user_code(self.workload, "thread_init"):
                    await self.workload.thread_init(ctx)
                if self.spans is not None:  # after the workload's own after_event (rand_compat)
                    self.spans.attach(ctx, self.workload)
                return ctx

        # the first failure is the run's error; the threads still connecting are stopped
        await all_or_nothing(init_one(t) for t in self.tids)
        self.contexts.sort(key=lambda c: c.tid)
        # statements that block (SQLite), a built-in test's C events (workloads/builtin.py): an OS thread per thread
        if self.driver.caps.blocking or self.workload.os_threads:
            self.os_threads = ThreadStrands(asyncio.get_running_loop(), [f"thread-{c.tid}" for c in self.contexts])

    def connections(self) -> dict[str, int]:
        """This worker's sessions per database node (``host:port``); a reconnect
        keeps its node, so the count made once all threads are connected stays true."""
        if self._connections is None or len(self.contexts) != self._counted:
            out: dict[str, int] = {}
            for ctx in self.contexts:
                where = ctx.conn.where if ctx.conn is not None else ""
                if where:
                    out[where] = out.get(where, 0) + 1
            self._connections, self._counted = out, len(self.contexts)
        return dict(self._connections)

    def start(self, rate: float = 0.0) -> None:
        """Start every thread; with ``rate`` > 0 also the arrival generator."""
        loop = self.loop = asyncio.get_running_loop()
        if rate and _CArrivals is not None and self.os_threads is None:
            seed = self.spec.rand_seed
            self.c_arrivals = _CArrivals(
                rate, seed * 7919 + self.tids.start if seed else 0, self.limits, self._queue_full, EVENT_QUEUE_SLOTS
            )
            loop.add_reader(self.c_arrivals.fileno(), self.c_arrivals.fire)
        elif rate:
            self.arrivals = SharedQueue(EVENT_QUEUE_SLOTS, loop)
        self.alive = len(self.contexts)
        if self.os_threads is not None:
            self.tasks = self.os_threads.start([self._thread(ctx) for ctx in self.contexts])
        else:
            self.tasks = [Strand(self._thread(ctx), loop, name=f"thread-{ctx.tid}") for ctx in self.contexts]
            if WIRE_POLL and _WirePoll is not None and self.arrivals is None:
                pump = WirePump(self)
                if pump.start(loop):
                    self.pump = pump
        if self.arrivals is not None:
            self.generator = asyncio.create_task(self._generate(rate))

    def _queue_full(self) -> None:
        self.fail(RunAborted(QUEUE_FULL))

    def queue_length(self) -> int:
        if self.c_arrivals is not None:
            return int(self.c_arrivals.queue_length)
        return self.arrivals.qsize() if self.arrivals is not None else 0

    def _arrivals_for(self, ctx: ThreadContext) -> Callable[[], Awaitable[int | None]] | None:
        """Rate mode: what the thread awaits for its next event's arrival (its stamp, or None
        at the end): the Python queue's get, or the thread's ticket of the C arrivals."""
        if self.arrivals is not None:
            return self.arrivals.get
        ticket = self._ticket(ctx)
        return None if ticket is None else lambda: ticket

    def _ticket(self, ctx: ThreadContext) -> Any:
        """The thread's ticket of the C arrivals (made once; idle again when its loop ends), or None."""
        if self.c_arrivals is None:
            return None
        ticket = self._tickets.get(ctx.tid)
        if ticket is None:
            ticket = self._tickets[ctx.tid] = self.c_arrivals.ticket()
        return ticket

    def busy(self) -> int:
        """The events running now (rate mode's concurrency)."""
        return int(self.c_arrivals.inflight) if self.c_arrivals is not None else self.inflight

    async def _generate(self, rate: float) -> None:
        """Open-loop Poisson arrivals (spec 5.4), without the C extension (its twin:
        engine/arrivals.c).  Each event is stamped with the moment it is enqueued, as
        sysbench does, so the time it waits for a free thread is part of its latency;
        the event loop's timer granularity (up to a millisecond) is not."""
        q = self.arrivals
        assert q is not None  # made with the rate, before this task
        seed = self.spec.rand_seed
        import random  # (here: only the Python twin of the arrivals draws from it)

        rng = random.Random(None if not seed else seed * 7919 + self.tids.start)
        mean_ns = NS / rate
        due = perf_counter_ns()
        lim = self.limits
        try:
            while True:
                now = perf_counter_ns()
                if not lim.admit(now, budget=None):  # the stop and the time limit; --events is the threads'
                    break
                while due <= now:
                    if q.full():
                        self.fail(RunAborted(QUEUE_FULL))
                        return
                    q.put_nowait(now)
                    due += int(rng.expovariate(1.0) * mean_ns) + 1
                until = lim.deadline_ns if time_up(lim.deadline_ns, due) else due  # a low rate ends on time too
                await asyncio.sleep(max(until - now, 0) / NS)
        finally:
            self.wake_all()

    # --- the event loop of one thread --------------------------------------------

    async def _thread(self, ctx: ThreadContext) -> None:
        try:
            await self._loop(ctx)
            await self.workload.thread_done(ctx)
        except PySysbenchError as exc:
            self.fail(exc)
        except asyncio.CancelledError:
            if not self.cancelled and not self.over():
                # nobody asked this thread to end (the run's stop, a forced shutdown, an
                # interrupt all go through cancel()): a cancellation that leaked into its
                # events (engine/strand.py's throw, the PostgreSQL soak) ended it with no
                # word and the run went on with fewer threads; now it is the run's error
                self.fail(
                    RunAborted(
                        f"thread {ctx.tid} was cancelled in the middle of the run "
                        "without a stop request (a stray asyncio cancellation: a bug); "
                        "stopping the run rather than going on with fewer threads"
                    )
                )
            raise
        except Exception as exc:  # a bug in a user workload must stop the run cleanly
            self.traceback = exc
            self.fail(raised(self.workload, "event", exc))
        finally:
            self.alive -= 1
            ticket = self._tickets.pop(ctx.tid, None)
            if ticket is not None:  # its last arrival is no longer running
                ticket.idle()

    def fail(self, exc: BaseException) -> None:
        """Record the first fatal error and stop every thread."""
        if self.fatal is None:
            self.fatal = exc
        self.stop()

    def stop(self) -> None:
        self.limits.stop = True
        self._at_home(self.wake_all)

    def cancel(self) -> None:
        """Cancel every thread (a forced shutdown, an interrupt): an end asked for, unlike
        a cancellation that reaches a thread from anywhere else (see _thread)."""
        self.cancelled = True
        for task in self.tasks:
            task.cancel()

    def over(self) -> bool:
        """The run's end has come for this worker's threads: a stop, the time limit, or
        every event of --events started (runtime/limits.py)."""
        return self.limits.over(perf_counter_ns())

    def ended(self) -> bool:
        """An event already started must give up: a stop or the time limit, not --events
        all started (runtime/limits.py)."""
        return self.limits.ended(perf_counter_ns())

    def close_later(self, conn: Any) -> None:
        """A connection a thread is done with at the run's end: closed by close(), after
        the run (as the threads' own connections), or CLOSE_LATER_S after it came."""
        self.later.append(conn)
        if self._later_timer is None:
            self._later_timer = asyncio.get_running_loop().call_later(CLOSE_LATER_S, self._close_held)

    def _close_held(self) -> None:
        self._later_timer = None
        later, self.later = self.later, []
        for conn in later:
            task = asyncio.ensure_future(close_quietly(conn))
            self._later_tasks.add(task)
            task.add_done_callback(self._later_tasks.discard)

    def _at_home(self, fn: Callable[[], Any]) -> None:
        """Call ``fn`` on the engine's loop: a thread strand (its own loop) hands it over."""
        try:
            here = asyncio.get_running_loop()
        except RuntimeError:
            here = None
        if self.loop is None or here is self.loop:
            fn()
        else:
            self.loop.call_soon_threadsafe(fn)

    def wake_all(self) -> None:
        """Release threads waiting for a rate-mode arrival (None = stop)."""
        if self.c_arrivals is not None:
            self.c_arrivals.stop()
        q = self.arrivals
        if q is None:
            return
        for _ in self.tasks:
            if q.full():
                q.get_nowait()
            q.put_nowait(None)

    def _loop(self, ctx: ThreadContext) -> Coroutine[Any, Any, None]:
        """The coroutine that runs this thread's events: returned, not awaited here,
        so a suspended statement has one Python frame fewer to resume through."""
        rated = self.arrivals is not None or self.c_arrivals is not None
        if self.workload.batched and not rated and not self.reconnect_every and ctx.after_event is None:
            return self._batch_loop(ctx)
        if (
            self.arrivals is None
            and not self.reconnect_every
            and ctx.after_event is None
            and self.limits.budget is None
        ):
            source = self.workload.native_source(ctx) if _CEventLoop is not None else None
            if source is not None:
                return self._source_loop(ctx, source)
            parts = self.workload.native_parts()
            if parts is not None and _CEventLoop is not None:
                steps = self.workload.event_steps(ctx, parts)
                # an event without a statement would never yield
                if any(count and calls for _, _, count, _, calls in steps):
                    return self._c_loop(ctx, parts, steps)
        return self._python_loop(ctx)

    async def _python_loop(self, ctx: ThreadContext) -> None:
        """The thread's events in Python (spec 5.1, step 6).  What a run does not use
        costs one test of a local per event: no event limit, no rate-mode arrival,
        no compat histogram draw, no periodic reconnect in the usual run."""
        admit = self.limits.admit  # the rule (runtime/limits.py): the stop, the time limit, --events
        event = self.events()
        record = self.recorder.record
        tid = ctx.tid
        clock = perf_counter_ns
        arrivals = self._arrivals_for(ctx)
        reconnect_every = self.reconnect_every
        after_event = ctx.after_event
        done = 0
        while True:
            start = clock()  # the rule's clock is the event's start
            if start >= self.turn:  # a turn for the reporter even when no statement waits
                self.turn = start + YIELD_EVERY_NS  # the other threads' too: one turn per window
                await asyncio.sleep(0)
                start = clock()
            if not admit(start):
                break
            if arrivals is not None:
                stamp = await arrivals()  # stamped when it arrived (rate mode)
                if stamp is None:
                    break
                start = stamp
            self.inflight += 1
            try:
                result = await event(ctx)
            except (IgnorableError, ReconnectError) as exc:
                result = await self._restarted(ctx, exc)
                if result is _GONE:
                    self.inflight -= 1
                    return
            self.inflight -= 1
            if result:  # sysbench does not count the event that stops its thread
                if result is _FAILED:  # --max-retries: failed after its last retry, not an event
                    continue
                break
            record(tid, clock() - start)
            if after_event is not None:
                after_event()
            if reconnect_every:
                done += 1
                if done % reconnect_every == 0:
                    self.counters.reconnects += 1
                    if not await self._reconnect(ctx):
                        return

    async def _c_loop(self, ctx: ThreadContext, parts: tuple[str, ...], steps: list[tuple[Any, ...]] | None) -> None:
        """``_python_loop`` for a time-limited bundled OLTP event (the workload's
        ``parts``): the loop and the event run in C
        (engine/event_loop.c's ``EventLoop``), the same statements, draws and recording; an event
        that fails with an ignorable error is restarted here in Python, as in
        ``_python_loop``, and the C loop goes on after it.  With --max-retries one that fails
        with a retryable error is retried here (``_retry``) from the generator's state at its
        start, which the recording keeps (``_keeping``: the next event starts where the last
        one was recorded); without it the C loop records as ever."""
        assert _CEventLoop is not None  # _loop chooses this loop only with it
        lim = self.limits
        w: Any = self.workload  # one with native_parts: a bundled OLTP test, with tables and table_size
        rec = self.recorder
        record = rec.record
        target: Any = rec.core if isinstance(rec, CRecorder) else record
        tid = ctx.tid
        r = ctx.rand
        kept: list[Any] = []  # --max-retries: the generator's state at the current event's start
        ticket = self._ticket(ctx)
        if self.max_retries:
            target = _keeping(record, r, kept)
        self.inflight += 1
        run: Any  # the C loop; None once it ended (its statements may go)
        try:
            while True:
                run = _CEventLoop(steps, r.uniform, r.default, r.string, w.tables, w.table_size, target, tid, lim)
                if ticket is not None:
                    run.arrive_by(ticket)
                try:
                    await run
                    return
                except SQLError as exc:
                    started, run, steps = run.start, None, None  # the old statements go (_reconnect)
                    result = await self._after_c_error(ctx, exc, kept)
                    if result is _GONE:
                        return
                if result is not _FAILED:
                    record(tid, perf_counter_ns() - started)
                    if result:
                        return
                if kept:
                    kept[0] = r.getstate()
                steps = w.event_steps(ctx, parts)  # a reconnect prepares new statements
        finally:
            self.inflight -= 1

    async def _after_c_error(self, ctx: ThreadContext, exc: SQLError, kept: list[Any]) -> object:
        """The C loop's event that failed with ``exc``: retried from its start's state
        (--max-retries, a retryable error), else restarted (an ignorable error, a lost
        connection), else the run's error; an ignorable error during the retries restarts it."""
        if kept and self.retryable(exc):
            exc.__traceback__ = None
            try:
                return await self._retry(ctx, kept[0], exc)
            except (IgnorableError, ReconnectError) as again:
                exc = again
        elif not isinstance(exc, (IgnorableError, ReconnectError)):
            raise exc
        return await self._restarted(ctx, exc)

    async def _source_loop(self, ctx: ThreadContext, source: Any) -> None:
        """``_python_loop`` for a workload with an event source (``native_source``): the loop
        and the statements of each event run in C (engine/event_loop.c); an event the source
        leaves to Python (or whose statement failed) is finished by ``source.finish`` and
        recorded here, and one that fails with an ignorable error is restarted as in
        ``_python_loop``; then the C loop goes on."""
        assert _CEventLoop is not None  # _loop chooses this loop only with it
        lim = self.limits
        rec = self.recorder
        record = rec.record
        target = rec.core if isinstance(rec, CRecorder) else record
        tid = ctx.tid
        ticket = self._ticket(ctx)
        self.inflight += 1
        try:
            run: Any  # the C loop; None once it ended
            while True:
                run = _CEventLoop(source.events, target, tid, lim, YIELD_EVERY_NS)
                if ticket is not None:
                    run.arrive_by(ticket)
                try:
                    outcome = await run
                except SQLError as exc:  # a statement's error: the workload's to answer
                    outcome = exc
                except Exception as exc:
                    if not interrupted(exc):
                        raise
                    # the watchdog stopped the event's Lua (engine/loopwatch.py): the state is
                    # dead; the event is in flight until the engine's cancel, as on a hung server
                    run = exc = None
                    source.abandon()
                    await park()
                if outcome is None or outcome is True:  # the limits, or the event stopped its thread
                    return
                started, run = run.start, None
                try:
                    result = await source.finish(outcome)
                except (IgnorableError, ReconnectError) as exc:
                    result = await self._restarted(ctx, exc)
                    if result is _GONE:
                        return
                outcome = None
                if result:  # sysbench does not count the event that stops its thread
                    return
                record(tid, perf_counter_ns() - started)
        finally:
            self.inflight -= 1

    async def _batch_loop(self, ctx: ThreadContext) -> None:
        """``_loop`` for a built-in test (workloads/builtin.py): the thread's runner runs its
        events in C in batches of at most BATCH_BUDGET_NS, with the GIL released, and records
        each latency itself; before each batch this loop asks the rule (runtime/limits.py) for
        its events: a share of what --events has left, so the threads finish together; what a
        batch did not run is given back."""
        lim = self.limits
        rec = self.recorder
        target = rec.core if isinstance(rec, CRecorder) else rec.record
        runner = ctx.state["runner"]
        own_limit = self.workload.own_event_limit
        clock = perf_counter_ns
        while True:
            budget = None if own_limit else lim.counted()  # read once: taken from and given back to
            want = BATCH_EVENTS if budget is None else max(1, budget.left() // (2 * self.threads))
            n = lim.admit(clock(), want, budget)
            if not n:
                break
            self.inflight += 1
            try:
                done, finished = runner.batch(target, n, lim.deadline_ns, BATCH_BUDGET_NS)
            except OSError as exc:
                raise self.workload.io_error(exc) from None
            finally:
                self.inflight -= 1
            if budget is not None and done < n:
                budget.give_back(n - done)
            if finished:
                break

    async def _restarted(self, ctx: ThreadContext, exc: Exception) -> object:
        """Restart an event after an ignorable error (reconnecting first when the
        connection was lost) until it completes; its result, or _GONE when the
        connection could not be re-opened before the run ended."""
        restart = self.workload.before_restart
        event = self.events()
        note = getattr(self.recorder, "note_error", None)
        while True:
            exc.__traceback__ = None  # its frames hold the failed event's statements (see _reconnect)
            if note is not None:
                note(ctx.tid, getattr(exc, "code", ""))
            if isinstance(exc, ReconnectError) and not await self._reconnect(ctx):
                return _GONE
            await restart(ctx, exc)
            try:
                return await event(ctx)
            except (IgnorableError, ReconnectError) as again:
                exc = again

    def events(self) -> Callable[[ThreadContext], Coroutine[Any, Any, Any]]:
        """What runs one event in Python: with --max-retries ``_retrying``, else the workload's own."""
        return self._retrying if self.max_retries else self.workload.event

    async def _retrying(self, ctx: ThreadContext) -> Any:
        """The workload's event with --max-retries: one that fails with a retryable error
        (``spec.retry_codes``) goes to ``_retry`` with the generator's state at its start."""
        state = ctx.rand.getstate()
        try:
            return await self.workload.event(ctx)
        except SQLError as exc:
            if not self.retryable(exc):
                raise
            exc.__traceback__ = None  # its frames hold the failed event's statements
            error = exc
        return await self._retry(ctx, state, error)

    def retryable(self, exc: SQLError) -> bool:
        return not isinstance(exc, ReconnectError) and exc.code.upper() in self.spec.retry_codes

    async def _retry(self, ctx: ThreadContext, state: Any, error: SQLError) -> Any:
        """A transaction whose try has just failed with a retryable error: rolled back and
        run again from its first statement with the same draws (the thread's generator put
        back to ``state``, where it stood at the start), up to ``max_retries`` times; one
        that still fails is counted as failed and gives _FAILED (the loop records nothing
        and goes on).  Once the run has ended (a stop, the time limit) it is not retried (nor
        counted); every event of --events started does not end it.  The workload's
        ``before_restart`` runs first (a 0.5 script's open XA transaction is rolled back)."""
        event = self.workload.event
        tries = 0
        while True:
            await self.workload.before_restart(ctx, error)
            await self._rollback(ctx)
            if self.ended():
                return _FAILED
            if tries == self.max_retries:
                self.counters.failed += 1
                return _FAILED
            if not tries:
                self.counters.retried += 1
            tries += 1
            ctx.rand.setstate(state)
            try:
                return await event(ctx)
            except SQLError as exc:
                if not self.retryable(exc):
                    raise
                exc.__traceback__ = None
                error = exc

    @staticmethod
    async def _rollback(ctx: ThreadContext) -> None:
        """End a failed transaction before its retry (a deadlock has rolled it back already,
        a lock wait timeout only its statement); an error here surfaces in the retry."""
        if ctx.conn is not None:
            try:
                await ctx.conn.query("ROLLBACK")
            except SQLError:
                pass

    async def _reconnect(self, ctx: ThreadContext) -> bool:
        """Re-open the connection (retrying while the server is away) and
        re-prepare the workload's statements; False if the run stopped first."""
        delay = 0.001
        # the lost connection's statements go now, not after the retries: freed before the new
        # ones are made, their memory holds the new ones (same shapes); kept through the storm,
        # the new ones went to fresh pymalloc arenas and the old ones left them a third empty,
        # never given back (PostgreSQL soak: +60 MB over five kills after the first)
        ctx.stmts.clear()
        while not self.ended():
            try:
                assert ctx.conn is not None  # a lost connection was one
                await ctx.conn.reconnect()
                self.counters.reopened += 1
                ctx.stmts.clear()
                await self.workload.thread_init(ctx)
                if self.spans is not None:
                    self.spans.attach(ctx, self.workload)
                if self.pump is not None:
                    self.pump.take(ctx)
                return True
            except DatabaseError as exc:  # counted and shown (LocalRun's ReconnectWatch), then retried
                self.counters.count_reconnect_failure(getattr(exc, "code", "") or "unknown", str(exc))
                await asyncio.sleep(delay)
                delay = min(delay * 2, RECONNECT_MAX_DELAY_S)
        return False

    # --- shutdown -------------------------------------------------------------------

    def running(self) -> int:
        return sum(1 for t in self.tasks if not t.done())

    async def close(self) -> None:
        if self.pump is not None:
            self.pump.stop()
        if self.generator is not None:
            self.generator.cancel()
        if self.c_arrivals is not None:
            if self.loop is not None:
                self.loop.remove_reader(self.c_arrivals.fileno())
            self.c_arrivals.close()
        if self.os_threads is not None:
            self.os_threads.close()
        if self._later_timer is not None:
            self._later_timer.cancel()
            self._later_timer = None
        # all at once: with 1000 connections whose sessions wait on row locks, closing
        # them one by one (each up to its timeout) took longer than the run itself
        later, self.later = self.later, []
        await asyncio.gather(
            *(close_quietly(ctx.conn) for ctx in self.contexts if ctx.conn is not None),
            *(close_quietly(conn) for conn in later),
            *self._later_tasks,
        )
        if hasattr(self.recorder, "close"):  # the latency log's last rows
            self.recorder.close()

    def snapshot(self) -> Snapshot:
        return self.recorder.snapshot()
