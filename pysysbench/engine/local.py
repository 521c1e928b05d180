"""Local executor: runs one benchmark on this machine and aggregates it.

Lifecycle (spec 5.1): pre-flight table check, thread initialisation (bounded by
``--thread-init-timeout``), "Threads started!", optional warm-up, then the
measured phase with the reporter, the checkpoint timer and the forced-shutdown
watchdog running beside the threads.  No run outlives its bounds: a stop request
(Ctrl-C, SIGTERM) gives the events in flight ``STOP_GRACE_S`` before cutting them
short, and with ``--forced-shutdown`` off the watchdog still forces the shutdown
``DEADLINE_GRACE_S`` after ``--time`` (sysbench waits forever, e.g. on a stopped
server).  The threads live in a worker group (this
process, or ``--workers`` processes); every figure is built from merged
:class:`Snapshot` differences, never from the hot-path objects directly.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Callable
from time import gmtime, perf_counter_ns, strftime
from typing import TYPE_CHECKING, Any

from ..core.errors import PySysbenchError, RunAborted
from ..core.record import record
from ..drivers.base import Driver
from ..stats import host
from ..stats.records import IntervalStat, Snapshot, Summary, interval_from, summary_from
from ..stats.results import RunOutcome
from ..workloads.base import Workload
from .budget import budget_for
from .group import InProcessGroup, Sample
from .loopwatch import LoopWatch
from .preflight import check_run
from .reconnects import CHECK_EVERY_S, ReconnectWatch
from .remote import MemberLost
from .spec import RunSpec
from .worker import NS

if TYPE_CHECKING:
    from types import FrameType

    from .metrics import RunMetrics
    from .nodes import NodeWatch
    from .procs import ProcessGroup
    from .raygroup import RayGroup
    from .servercontext import ServerContext

    SignalHandler = Callable[[int, FrameType | None], Any] | int | signal.Handlers | None

CLIENT_BUSY_FRACTION = 0.9  # warn when the client used this share of its cores
CLIENT_BUSY_MIN_S = 1.0  # ... in a measured phase at least this long (a shorter one says too little)
STOP_GRACE_S = 5.0  # after Ctrl-C / SIGTERM: events in flight get this long, then are cut short
DEADLINE_GRACE_S = 30.0  # --forced-shutdown off: events still running this long after --time are cut short
CANCEL_GRACE_S = 1.0  # after a cancel, Lua still running this long is interrupted (engine/loopwatch.py)


@record
class Hooks:
    """How the engine talks to the outside (the CLI prints; tests collect)."""

    say: Callable[[str], None] = lambda line: None
    interval: Callable[[IntervalStat], None] = lambda st: None
    checkpoint: Callable[[float, Summary], None] = lambda t, s: None
    control: Callable[[LocalRun], None] = lambda run: None  # the run, once made (to pass stop requests)
    note: Callable[[str], None] = lambda line: None  # pysysbench's own advice (sysbench prints none)


class LocalRun:
    """One ``run`` command on this machine.

    A stop request (:meth:`interrupt`: SIGINT, SIGTERM, or the CLI's closed
    standard output) before the measurement aborts the start-up
    (:class:`RunAborted` with the request's exit code); the first during it lets
    the events in flight finish (for ``STOP_GRACE_S``, then cuts them short) and
    reports what was measured, another stops at once.  The outcome carries the request and its exit code (128 + signal)."""

    def __init__(self, spec: RunSpec, workload: Workload, driver: Driver, hooks: Hooks):
        self.spec = spec
        self.workload = workload
        self.driver = driver
        self.hooks = hooks
        self.threads = spec.threads
        self.workers = spec.workers
        self.group: InProcessGroup | ProcessGroup | RayGroup
        if spec.ray_address:  # actors on a Ray cluster (optional extra, imported lazily)
            from .raygroup import RayGroup

            self.group = RayGroup(spec)
        elif self.workers > 1:
            from .procs import ProcessGroup  # spawns worker processes: not needed by one-process runs

            self.group = ProcessGroup(spec)
        else:
            self.group = InProcessGroup(
                spec, workload, driver, range(self.threads), rate=spec.rate, budget=budget_for(spec.events)
            )
        self.percentile = spec.percentile
        self.intervals: list[IntervalStat] = []
        self.report_prev: tuple[Snapshot, int, int, float] | None = None  # last interval's end: counts, time,
        self.at_t0 = Sample(Snapshot())  # threads, client CPU
        self.interval_cpu_s: list[float] = []
        self.host_start: dict[Any, Any] = {}
        self.host_end: dict[Any, Any] = {}
        self.base = Snapshot()
        self.t0 = self.checkpoint_t = self.end = 0
        self.forced = False
        self.unfinished: int | None = None
        self.want_version = spec.server_version
        self.server_version = ""
        self.stop_reason: str | None = None  # the first stop request, and its exit code
        self.stop_exit = 0
        self.startup: asyncio.Task[Any] | None = None
        self.measuring = False
        self._cut: asyncio.TimerHandle | None = None  # the end of the stop grace, once stopped
        self.last = Sample(Snapshot())
        self.fatal: PySysbenchError | None = None  # the run's own verdict (reconnects gave up)
        self._signals: dict[int, SignalHandler] = {}
        # Lua that computes without yielding holds this loop: a watchdog keeps its bounds
        self.watch = LoopWatch(workload.holds_loop and isinstance(self.group, InProcessGroup))
        self.metrics: RunMetrics | None = None  # --metrics-addr, started with the threads
        self.context: ServerContext | None = None  # when asked for and supported
        if spec.server_context:
            from .servercontext import ServerContext

            ctx = ServerContext(driver)
            self.context = ctx if ctx.supported else None
        self.nodes: NodeWatch | None = None  # --server-nodes (engine/nodes.py)
        if spec.server_nodes:
            from .nodes import NodeWatch

            self.nodes = NodeWatch(driver, spec.server_nodes, spec.report_interval_s)

    async def preflight(self) -> None:
        """The pre-run checks (engine/preflight.py), before the group starts a thread."""
        per_process = None if self.spec.ray_address else -(-self.threads // max(1, self.workers))
        await check_run(self.workload, self.driver, self.threads, per_process, self.hooks.note)

    async def execute(self) -> RunOutcome:
        self._install_signals()
        self.watch.start(signals=bool(self._signals))
        try:
            await self._start_up()
            for tid in range(self.threads):  # sysbench's --verbosity=5 lines (the printer drops them below)
                self.hooks.say(f"DEBUG: Worker thread (#{tid}) started")
                self.hooks.say(f"DEBUG: Worker thread (#{tid}) initialized")
            if self.spec.report_interval_s:
                self.hooks.say("DEBUG: Reporting thread started")
            self.hooks.say("Threads started!\n")
            started_at = strftime(
                "%Y-%m-%dT%H:%M:%S+00:00", gmtime()
            )  # isoformat(timespec="seconds") in UTC, without importing datetime
            try:
                await self._measure()
            finally:
                await self.group.close()
                if self.metrics is not None:
                    self.metrics.close()
                if self.nodes is not None:  # the last sample, after the sessions ended (as the context's)
                    await self.nodes.finish()
            if self.context is not None:  # after the sessions ended: PostgreSQL has flushed their counts
                await self.context.finish(cut_short=self.forced or self.stop_reason is not None)
        finally:
            self.watch.stop()
            self._remove_signals()
        return self._outcome(started_at)

    async def _start_up(self) -> None:
        """Pre-flight, executor set-up and thread start-up, as one task a stop request cancels."""
        if self.stop_reason is None:
            self.startup = asyncio.ensure_future(self._start_up_steps())
            try:
                await self.startup
            except asyncio.CancelledError:
                if self.stop_reason is None:
                    raise
            finally:
                self.startup = None
        if self.stop_reason is not None:
            raise RunAborted(f"interrupted ({self.stop_reason}) before the benchmark started", self.stop_exit)

    async def _start_up_steps(self) -> None:
        if self.want_version and self.workload.connects:
            try:
                self.server_version = await self.driver.server_version()
            except PySysbenchError:
                pass  # the pre-flight or the threads report the connection problem
        await self.preflight()
        await self.group.setup()
        self.hooks.say("Initializing worker threads...\n")
        timeout = self.spec.thread_init_timeout_s
        failed = f"Worker threads failed to initialize within {timeout} seconds!"
        if timeout:
            self.watch.bound(timeout, "FATAL: " + failed, 2)
        try:
            await asyncio.wait_for(self.group.init(), timeout or None)
        except TimeoutError:
            self.watch.bound(0)
            await self.group.close()
            raise RunAborted(failed, 2) from None
        finally:
            self.watch.bound(0)
        if v_addr := self.spec.metrics_addr:
            # after the worker processes started (init forks them): a parent running the
            # HTTP server's thread would have to spawn them instead (procs.start_method)
            from .metrics import RunMetrics

            try:
                self.metrics = RunMetrics(v_addr, {"test": self.workload.name})
            except PySysbenchError:
                await self.group.close()
                raise

    async def _measure(self) -> None:
        spec, g = self.spec, self.group
        warmup_ns = int(spec.warmup_s * NS)
        if self.context is not None and not warmup_ns:
            await self.context.begin()  # before the first event: the deltas are the run's exactly
        start = perf_counter_ns()
        g.start(start + warmup_ns + int(spec.time_s * NS) if spec.time_s else 0, warming=bool(warmup_ns))
        if spec.time_s:  # _watchdog's bound, should Lua hold the loop
            grace = spec.forced_shutdown_s
            self.watch.bound(
                spec.warmup_s + spec.time_s + (DEADLINE_GRACE_S if grace is None else grace),
                self._forced_line(grace),
                2,
            )
        self.measuring = True
        if self.stop_reason is not None:  # asked to stop between the start-up and here
            self._stop()
        side: list[asyncio.Task[Any]] = [asyncio.create_task(self._watch_reconnects(start))]
        if self.metrics is not None:
            side.append(asyncio.create_task(self.metrics.follow(g)))
        v11 = spec.values.get("sysbench_compat") == "1.1"
        if warmup_ns:
            blank = "\n" if v11 else ""  # 1.1.0's line has its blank
            self.hooks.say(f"Warming up for {spec.warmup_s:g} seconds...{blank}")
            await g.wait(warmup_ns / NS)
            self.base = (await g.end_warmup()).snapshot
            if self.context is not None:
                await self.context.begin()
        # 1.1.0 counts the measured phase from the warmup's nominal end (its run's start plus
        # --warmup-time), pysysbench from the real one (a few ms later on a busy machine)
        self.t0 = self.checkpoint_t = start + warmup_ns if v11 and warmup_ns else perf_counter_ns()
        self.at_t0 = await g.sample()  # the measured phase's start: counts and client CPU
        self.report_prev = (self.at_t0.snapshot, self.t0, self.at_t0.running, self.at_t0.cpu_s)
        self.host_start = host.snapshot()
        if self.nodes is not None:
            self.nodes.start(self.t0)
        if spec.report_interval_s:
            side.append(asyncio.create_task(self._report()))
        if spec.checkpoints_s:
            side.append(asyncio.create_task(self._checkpoints()))
        if spec.time_s:
            side.append(asyncio.create_task(self._watchdog(spec.time_s, spec.forced_shutdown_s)))
        await g.wait(None)
        self.watch.bound(0)
        self.end = perf_counter_ns()
        self.host_end = host.snapshot()
        if self.context is not None:
            self.context.stop_cpu()
        self.measuring = False  # a stop request from now on only marks the outcome
        if self._cut is not None:
            self._cut.cancel()
        for task in side:
            task.cancel()
        await asyncio.gather(*side, return_exceptions=True)
        self.last = await g.sample()
        if spec.report_interval_s:
            self._final_interval()

    # --- side tasks -----------------------------------------------------------------

    async def _report(self) -> None:
        """One interval line per tick of --report-interval, except a tick at the --time
        limit: there the threads are stopping as the tick fires (a sample would find
        some or all of them gone), so the run's end prints that line
        (``_final_interval``) from the final counts."""
        every_ns = int(self.spec.report_interval_s * NS)
        end_k = self._end_tick()
        k = 1
        while end_k is None or k < end_k:
            now = perf_counter_ns()
            k = max(k, (now - self.t0) // every_ns + 1)  # missed ticks are skipped
            if end_k is not None and k >= end_k:
                return
            await asyncio.sleep((self.t0 + k * every_ns - now) / NS)
            s = await self.group.sample()
            if s.running == 0:
                return
            self._interval(s, perf_counter_ns(), s.running)
            k += 1

    def _end_tick(self) -> int | None:
        """The tick that falls on the --time limit (None: none does)."""
        spec = self.spec
        if not spec.time_s or spec.time_s % spec.report_interval_s:
            return None
        return spec.time_s // spec.report_interval_s

    def _final_interval(self) -> None:
        """The tick at the --time limit, printed once the run has reached it: from the
        final counts, with the threads that were running in that interval."""
        spec = self.spec
        end_k = self._end_tick()
        prev = self.report_prev
        if end_k is None or prev is None or self.stop_reason or self.fatal or self.forced:
            return
        if self.end - self.t0 < (spec.time_s - spec.report_interval_s / 2) * NS:  # ended early (--events, an error)
            return
        self._interval(self.last, self.end, prev[2])

    def _interval(self, s: Sample, t: int, running: int) -> None:
        assert self.report_prev is not None  # set by the run's start
        prev, prev_t, _, prev_cpu = self.report_prev
        rate = bool(self.spec.rate)
        st = interval_from(
            s.snapshot,
            prev,
            time_s=(t - self.t0) / NS,
            interval_s=(t - prev_t) / NS,
            threads_running=running,
            percentile=self.percentile,
            queue_length=s.queue_length if rate else None,
            concurrency=s.inflight if rate else None,
            retries=bool(self.spec.max_retries),
        )
        self.intervals.append(st)
        self.interval_cpu_s.append(max(0.0, s.cpu_s - prev_cpu))
        self.hooks.interval(st)
        self.report_prev = (s.snapshot, t, running, s.cpu_s)

    async def _checkpoints(self) -> None:
        for at in self.spec.checkpoints_s:
            delay = self.t0 / NS + at - perf_counter_ns() / NS
            if delay > 0:
                await asyncio.sleep(delay)
            s = await self.group.checkpoint()
            t = perf_counter_ns()
            self.hooks.checkpoint((t - self.t0) / NS, self._summary(s.snapshot, t))
            self.base, self.checkpoint_t = s.snapshot, t

    async def _watch_reconnects(self, start_ns: int) -> None:
        """Warn while reconnects keep failing; stop the run when it does nothing else
        for --reconnect-timeout seconds (engine/reconnects.py)."""
        watch = ReconnectWatch(self.spec.reconnect_timeout_s, start_ns / NS)
        while True:
            await asyncio.sleep(CHECK_EVERY_S)
            s = await self.group.sample()
            verdict = watch.observe(perf_counter_ns() / NS, s.snapshot)
            if verdict.warning:
                self.hooks.say(verdict.warning)
            if verdict.fatal:
                self.fatal = RunAborted(verdict.fatal)
                self.group.stop()
                return

    async def _watchdog(self, time_s: float, grace_s: float | None) -> None:
        """--forced-shutdown (spec 5.9); when off, the same at DEADLINE_GRACE_S."""
        await asyncio.sleep(
            self.t0 / NS + time_s + (DEADLINE_GRACE_S if grace_s is None else grace_s) - perf_counter_ns() / NS
        )
        self.watch.bound(CANCEL_GRACE_S, "", 2)  # a thread whose Lua holds its own loop misses the cancel
        self.hooks.say(self._forced_line(grace_s))
        self.forced = True
        unhold = getattr(self.group, "unhold", None)
        if unhold is not None:  # a worker process whose loop Lua holds answers no sample
            unhold()
        self.unfinished = (await self.group.sample()).inflight
        self.group.cancel()

    @staticmethod
    def _forced_line(grace_s: float | None) -> str:
        if grace_s is None:
            return (
                f"FATAL: events still running {DEADLINE_GRACE_S:g} s after the --time limit (a hung "
                "server? --forced-shutdown=N sets this bound), forcing shutdown..."
            )
        return "FATAL: The --max-time limit has expired, forcing shutdown..."

    # --- signals ------------------------------------------------------------------

    def _install_signals(self) -> None:
        """From the start-up to the end of ``close``; the handlers that were there before
        (the CLI's) come back afterwards, not the defaults the loop would restore."""
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                previous = signal.getsignal(sig)
                loop.add_signal_handler(sig, self._on_signal, sig)
                self._signals[sig] = previous
            except (NotImplementedError, RuntimeError, ValueError):
                pass

    def _remove_signals(self) -> None:
        loop = asyncio.get_running_loop()
        for sig, previous in self._signals.items():
            try:
                loop.remove_signal_handler(sig)
                signal.signal(sig, previous)
            except (NotImplementedError, RuntimeError, ValueError, TypeError):
                pass
        self._signals = {}

    def _on_signal(self, sig: int) -> None:
        self.interrupt(signal.Signals(sig).name, 128 + sig)

    def interrupt(self, reason: str, exit_code: int) -> None:
        """A stop request (see the class docstring); the first one's reason and exit code count."""
        self.watch.ack()
        again = self.stop_reason is not None
        if not again:
            self.stop_reason, self.stop_exit = reason, exit_code
        if self.startup is not None:
            self.startup.cancel()
        elif self.measuring:
            if again:
                self.watch.bound(CANCEL_GRACE_S, "", self.stop_exit)
                self.group.cancel()
            else:
                self._stop()

    def _stop(self) -> None:
        """Finish the events in flight and report."""
        self.hooks.say(
            "Interrupted: stopping the run and reporting what was measured (interrupt again to stop at once)..."
        )
        self.group.stop()
        self._cut = asyncio.get_running_loop().call_later(STOP_GRACE_S, self._cut_short)
        self.watch.bound(STOP_GRACE_S, "", self.stop_exit, earlier=True)

    def _cut_short(self) -> None:
        """The stop grace is over: end the events still in flight (a hung server never answers them)."""
        if self.end:  # the run ended meanwhile
            return
        self.watch.bound(CANCEL_GRACE_S, "", self.stop_exit)
        self.hooks.say(f"Interrupted: events still running after {STOP_GRACE_S:g} s are cut short")
        self.group.cancel()

    # --- results ------------------------------------------------------------------

    def _summary(self, snap: Snapshot, t_ns: int, unfinished: int | None = None) -> Summary:
        return summary_from(
            snap,
            self.base,
            total_time_s=(t_ns - self.t0) / NS,
            elapsed_s=(t_ns - self.checkpoint_t) / NS,
            threads=self.threads,
            percentile=self.percentile,
            unfinished=unfinished,
            retries=bool(self.spec.max_retries),
            spans=self.spec.shard_nodes is not None,
        )

    def _outcome(self, started_at: str) -> RunOutcome:
        s = self.last
        summary = self._summary(s.snapshot, self.end, self.unfinished if self.forced else None)
        out = RunOutcome(
            summary=summary,
            intervals=self.intervals,
            started_at=started_at,
            forced=self.forced,
            interrupted=self.stop_reason,
            traceback=self.group.traceback,
            workers=len(s.per_worker) or self.workers,
            client_cpu_s=max(0.0, s.cpu_s - self.at_t0.cpu_s),
            per_worker=measured_per_worker(s.per_worker, self.at_t0.per_worker, summary.total_time_s),
            connections=s.connections,
            nodes=s.nodes,
            server_version=self.server_version,
            interval_cpu_s=self.interval_cpu_s,
            host=host.between(self.host_start, self.host_end) if self.host_start else {},
        )
        if self.context is not None and self.context.end:
            q = summary.reads + summary.writes + summary.others
            out.server_context = self.context.result(events=summary.events, queries=q)
        if self.nodes is not None:
            out.server_nodes = self.nodes.result(s.connections)
        fatal = self.fatal or self.group.fatal
        if fatal is not None:
            out.exit_code = getattr(fatal, "exit_code", 1)
            out.error = str(fatal) if isinstance(fatal, PySysbenchError) else repr(fatal)
            out.partial = isinstance(fatal, MemberLost)
        elif self.forced:
            out.exit_code = 2
        elif self.stop_reason is not None:
            out.exit_code = self.stop_exit
        return out


def measured_per_worker(
    end: list[dict[Any, Any]], start: list[dict[Any, Any]], elapsed_s: float
) -> list[dict[Any, Any]]:
    """Each worker process's entry with ``busy_fraction``: the share of a core it used in
    the measured phase (its CPU between the phase's start and end over the phase's
    length; at most 1).  ``cpu_s`` stays the process's whole CPU time."""
    before = {w["worker"]: w.get("cpu_s", 0.0) for w in start}
    cores = os.cpu_count() or 1
    share = min(1.0, cores / len(end)) if end else 1.0  # more workers than cores: each gets a part of one
    out = []
    for w in end:
        used = max(0.0, w.get("cpu_s", 0.0) - before.get(w["worker"], 0.0))
        out.append(dict(w, busy_fraction=min(1.0, used / (elapsed_s * share)) if elapsed_s > 0 else 0.0))
    return out
