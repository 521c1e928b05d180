"""Local executor: runs one benchmark on this machine and aggregates it.

Lifecycle (spec 5.1): pre-flight table check, thread initialisation (bounded by
``--thread-init-timeout``), "Threads started!", optional warm-up, then the
measured phase with the reporter, the checkpoint timer, the rate generator and
the forced-shutdown watchdog running beside the threads.  Intermediate and
final figures are built only from :class:`Snapshot` differences, never from
the hot-path objects directly.
"""

from __future__ import annotations

import asyncio
import random
import signal
from dataclasses import dataclass, field
from datetime import datetime, timezone
from time import perf_counter_ns
from typing import Callable

from ..drivers.base import Driver
from ..errors import MissingTableError, PySysbenchError, RunAborted
from ..options import Values
from ..stats.records import IntervalStat, Snapshot, Summary, interval_from, summary_from
from ..workloads.base import Workload
from .worker import NS, Worker

EVENT_QUEUE_SLOTS = 131_072     # sysbench's rate-mode ring size (spec 5.4)
QUEUE_FULL = ("The event queue is full. This means the worker threads are unable to keep up with "
              "the specified event generation rate")


@dataclass
class Hooks:
    """How the engine talks to the outside (the CLI prints; tests collect)."""

    say: Callable[[str], None] = lambda line: None
    interval: Callable[[IntervalStat], None] = lambda st: None
    checkpoint: Callable[[float, Summary], None] = lambda t, s: None


@dataclass
class RunOutcome:
    summary: Summary
    intervals: list[IntervalStat] = field(default_factory=list)
    started_at: str = ""
    exit_code: int = 0
    error: str | None = None
    forced: bool = False
    interrupted: bool = False
    traceback: BaseException | None = None


def forced_shutdown_s(values: Values) -> float | None:
    """--forced-shutdown: 'off', N seconds, N% of --time, or '' = 5% (spec 5.9)."""
    raw = values.forced_shutdown
    if raw in ("off", None) or not values.time:
        return None
    text = raw.strip()
    try:
        if text == "":
            return values.time * 0.05
        if text.endswith("%"):
            return values.time * float(text[:-1]) / 100
        return float(text)
    except ValueError:
        raise RunAborted(f"Invalid value for --forced-shutdown: '{raw}'") from None


class LocalRun:
    """One ``run`` command executed by a single worker on the current loop."""

    def __init__(self, values: Values, workload: Workload, driver: Driver, hooks: Hooks):
        self.v = values
        self.workload = workload
        self.driver = driver
        self.hooks = hooks
        self.threads = values.threads
        self.worker = Worker(values, workload, driver, range(self.threads), self.threads)
        self.percentile = values.percentile
        self.intervals: list[IntervalStat] = []
        self.base = Snapshot()
        self.t0 = 0
        self.checkpoint_t = 0
        self.forced = False
        self.unfinished: int | None = None
        self.interrupted = False

    async def preflight(self) -> None:
        tables = self.workload.required_tables()
        if not tables:
            return
        conn = await self.driver.connect()
        try:
            for table in tables:
                if not await conn.table_exists(table):
                    raise MissingTableError(f"table '{table}' does not exist in {self.driver.target()}: "
                                            f"run prepare first (pysysbench {self.workload.name} prepare "
                                            "with the same options)")
        finally:
            await conn.close()

    async def execute(self) -> RunOutcome:
        await self.preflight()
        self.hooks.say("Initializing worker threads...\n")
        try:
            await asyncio.wait_for(self.worker.init_threads(), self.v.thread_init_timeout or None)
        except asyncio.TimeoutError:
            await self.worker.close()
            raise RunAborted(f"Worker threads failed to initialize within {self.v.thread_init_timeout} seconds!",
                             2) from None
        except BaseException:
            await self.worker.close()
            raise
        self.hooks.say("Threads started!\n")
        started_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
        self._install_signals()
        try:
            await self._measure()
        finally:
            self._remove_signals()
            await self.worker.close()
        return self._outcome(started_at)

    async def _measure(self) -> None:
        v, w = self.v, self.worker
        warmup_ns = int((v.warmup_time or 0) * NS)
        start = perf_counter_ns()
        w.limits.deadline_ns = start + warmup_ns + int(v.time * NS) if v.time else 0
        w.limits.max_events = v.events
        if v.rate:
            w.arrivals = asyncio.Queue(maxsize=EVENT_QUEUE_SLOTS)
        w.start()
        side: list[asyncio.Task] = []
        if v.rate:
            side.append(asyncio.create_task(self._generate()))
        if warmup_ns:
            self.hooks.say(f"Warming up for {v.warmup_time:g} seconds...")
            w.limits.warming = True
            await self._wait_tasks(warmup_ns / NS)
            w.limits.warming = False
            self.base = w.snapshot()
            w.recorder.reset_minmax()
        self.t0 = self.checkpoint_t = perf_counter_ns()
        if v.report_interval:
            side.append(asyncio.create_task(self._report()))
        if v.report_checkpoints:
            side.append(asyncio.create_task(self._checkpoints()))
        grace = forced_shutdown_s(v)
        if grace is not None:
            side.append(asyncio.create_task(self._watchdog(v.time + grace)))
        await self._wait_tasks(None)
        self.end = perf_counter_ns()
        for task in side:
            task.cancel()
        await asyncio.gather(*side, return_exceptions=True)

    async def _wait_tasks(self, timeout: float | None) -> None:
        tasks = self.worker.tasks
        if tasks:
            await asyncio.wait(tasks, timeout=timeout)

    # --- side tasks -----------------------------------------------------------------

    async def _report(self) -> None:
        every_ns = int(self.v.report_interval * NS)
        prev, prev_t = self.worker.snapshot(), self.t0
        k = 1
        while True:
            now = perf_counter_ns()
            k = max(k, (now - self.t0) // every_ns + 1)   # missed ticks are skipped
            await asyncio.sleep((self.t0 + k * every_ns - now) / NS)
            if self.worker.running() == 0:
                return
            snap, t = self.worker.snapshot(), perf_counter_ns()
            rate = self.worker.arrivals is not None
            st = interval_from(snap, prev, time_s=(t - self.t0) / NS, interval_s=(t - prev_t) / NS,
                               threads_running=self.worker.running(), percentile=self.percentile,
                               queue_length=self.worker.arrivals.qsize() if rate else None,
                               concurrency=self.worker.inflight if rate else None)
            self.intervals.append(st)
            self.hooks.interval(st)
            prev, prev_t = snap, t
            k += 1

    async def _checkpoints(self) -> None:
        for at in sorted(float(x) for x in self.v.report_checkpoints):
            delay = self.t0 / NS + at - perf_counter_ns() / NS
            if delay > 0:
                await asyncio.sleep(delay)
            snap, t = self.worker.snapshot(), perf_counter_ns()
            summary = self._summary(snap, t)
            self.hooks.checkpoint((t - self.t0) / NS, summary)
            self.base, self.checkpoint_t = snap, t
            self.worker.recorder.reset_minmax()

    async def _generate(self) -> None:
        """Open-loop Poisson arrivals (spec 5.4).  Each event is stamped with the
        moment it is enqueued, as sysbench does, so the time it waits for a free
        thread is part of its latency; the event loop's timer granularity (up to
        a millisecond) is not."""
        w = self.worker
        q = w.arrivals
        seed = self.v.rand_seed
        rng = random.Random(None if not seed else seed * 7919 + 17)
        mean_ns = NS / self.v.rate
        due = perf_counter_ns()
        try:
            while not w.limits.stop:
                now = perf_counter_ns()
                if w.limits.deadline_ns and now >= w.limits.deadline_ns:
                    break
                while due <= now:
                    if q.full():
                        w.fail(RunAborted(QUEUE_FULL))
                        return
                    q.put_nowait(now)
                    due += int(rng.expovariate(1.0) * mean_ns) + 1
                await asyncio.sleep((due - now) / NS)
        finally:
            w.wake_all()

    async def _watchdog(self, after_s: float) -> None:
        await asyncio.sleep(self.t0 / NS + after_s - perf_counter_ns() / NS)
        self.hooks.say("FATAL: The --max-time limit has expired, forcing shutdown...")
        self.forced = True
        self.unfinished = self.worker.inflight
        for task in self.worker.tasks:
            task.cancel()

    # --- signals ------------------------------------------------------------------

    def _install_signals(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(sig, self._on_signal)
            except (NotImplementedError, RuntimeError):
                pass

    def _remove_signals(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.remove_signal_handler(sig)
            except (NotImplementedError, RuntimeError):
                pass

    def _on_signal(self) -> None:
        """First signal: finish the events in flight and report; second: stop now."""
        if self.interrupted:
            for task in self.worker.tasks:
                task.cancel()
            return
        self.interrupted = True
        self.hooks.say("Interrupted: stopping the run and reporting what was measured "
                       "(interrupt again to stop at once)...")
        self.worker.stop()

    # --- results ------------------------------------------------------------------

    def _summary(self, snap: Snapshot, t_ns: int, unfinished: int | None = None) -> Summary:
        return summary_from(snap, self.base, total_time_s=(t_ns - self.t0) / NS,
                            elapsed_s=(t_ns - self.checkpoint_t) / NS, threads=self.threads,
                            percentile=self.percentile, unfinished=unfinished)

    def _outcome(self, started_at: str) -> RunOutcome:
        summary = self._summary(self.worker.snapshot(), self.end, self.unfinished if self.forced else None)
        out = RunOutcome(summary=summary, intervals=self.intervals, started_at=started_at,
                         forced=self.forced, interrupted=self.interrupted, traceback=self.worker.traceback)
        fatal = self.worker.fatal
        if fatal is not None:
            out.exit_code = getattr(fatal, "exit_code", 1)
            out.error = str(fatal) if isinstance(fatal, PySysbenchError) else repr(fatal)
        elif self.forced:
            out.exit_code = 2
        elif self.interrupted:
            out.exit_code = 130
        return out


async def run_benchmark(values: Values, workload: Workload, driver: Driver, hooks: Hooks) -> RunOutcome:
    return await LocalRun(values, workload, driver, hooks).execute()
