"""Worker processes (``--workers=N``): one uvloop event loop per process.

The parent spawns N processes, each owning a contiguous slice of the thread ids
with its share of ``--events`` and ``--rate`` (a sum of independent Poisson
streams is a Poisson stream of the summed rate), and talks to them over pipes:

    parent -> child   ("start", deadline_ns, warming) | ("sample", id) | ("end_warmup", id)
                      | ("checkpoint", id) | ("stop",) | ("cancel",) | ("exit",)
    child -> parent   ("ready",) | ("error", message, exit_code)
                      | ("reply", id, payload) | ("done", payload)

Every payload carries the child's cumulative :class:`Snapshot`; the parent merges
them (exact: counts and histogram buckets add).  The parent also samples every
``HEARTBEAT_S`` so that when a child dies, what it measured until shortly before
is kept and reported with a clear error.
"""

from __future__ import annotations

import asyncio
import multiprocessing as mp
import os
import signal
import time
from dataclasses import dataclass, field
from typing import Any

from ..errors import PySysbenchError, RunAborted
from ..options import Values
from .group import InProcessGroup, Sample, merged_sample, split

HEARTBEAT_S = 1.0
THREADS_PER_EXTRA_WORKER = 64   # default --workers: one process per this many threads, up to the cores
MIN_WORKERS = 2                  # ... but at least two (see default_workers)
START_TIMEOUT_S = 120.0      # spawning + importing + connecting, beyond --thread-init-timeout
EXIT_TIMEOUT_S = 10.0


# --- child side ------------------------------------------------------------------------


def _child_main(values: Values, test: str, driver_name: str, first_tid: int, last_tid: int, threads: int,
                rate: float, max_events: int, conn) -> None:
    """Entry point of a worker process (spawned: imports everything afresh)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # the parent decides how to stop
    if values.get("worker_sessions", True):
        own_session()
    try:
        import uvloop
        runner = uvloop.run
    except ImportError:
        runner = asyncio.run
    try:
        runner(_child_async(values, test, driver_name, range(first_tid, last_tid), threads, rate, max_events,
                            conn))
    except Exception as exc:   # never a silent death: the parent reports it
        try:
            conn.send(("error", f"worker process failed: {type(exc).__name__}: {exc}", 1))
        except OSError:
            pass


def own_session() -> None:
    """Start a session of this process's own.  Where Linux groups CPU time by
    session (autogroup, kernel.sched_autogroup_enabled=1, as on Debian and Ubuntu),
    a session is one scheduling entity: two worker processes in the parent's
    session competing with a server's thousand threads on the same host were run
    after them, so the server's threads went idle waiting for requests the client
    had not been scheduled to send (docs/performance.md, "Worker sessions").
    Nothing changes elsewhere.  The worker still ignores the terminal's Ctrl-C
    (its parent stops it) and ends when the parent's pipe closes."""
    try:
        os.setsid()
    except OSError:   # already a session leader: nothing to do
        pass


def worker_payload(group: InProcessGroup) -> dict[str, Any]:
    """What a worker reports to its parent (over a pipe, or as a Ray actor's reply)."""
    s = group.sample_now()
    fatal = group.fatal
    return {"snapshot": s.snapshot, "running": s.running, "inflight": s.inflight,
            "queue_length": s.queue_length, "cpu_s": s.cpu_s, "connections": s.connections,
            "fatal": None if fatal is None else str(fatal),
            "exit_code": getattr(fatal, "exit_code", 1) if fatal is not None else 0}


async def _child_async(values: Values, test: str, driver_name: str, tids: range, threads: int, rate: float,
                       max_events: int, conn) -> None:
    from ..drivers import REGISTRY as DRIVERS
    from ..workloads import find_workload

    try:
        driver = DRIVERS[driver_name](values)
        workload = find_workload(test)(values, driver)
        group = InProcessGroup(values, workload, driver, tids, threads, rate=rate, max_events=max_events)
        await group.init()
    except PySysbenchError as exc:
        conn.send(("error", str(exc), exc.exit_code))
        return
    loop = asyncio.get_running_loop()
    inbox: asyncio.Queue = asyncio.Queue()

    def readable() -> None:
        try:
            while conn.poll():
                inbox.put_nowait(conn.recv())
        except (EOFError, OSError):   # the parent is gone: stop
            loop.remove_reader(conn.fileno())
            inbox.put_nowait(("cancel",))
            inbox.put_nowait(("exit",))

    loop.add_reader(conn.fileno(), readable)
    conn.send(("ready",))
    finished = asyncio.Event()
    try:
        while True:
            msg = await inbox.get()
            if await _handle(msg, group, conn, finished):
                break
    finally:
        loop.remove_reader(conn.fileno())
        await group.close()


async def _handle(msg: tuple, group: InProcessGroup, conn, finished: asyncio.Event) -> bool:
    """Act on one parent message; True means exit."""
    kind = msg[0]
    if kind == "start":
        group.start(msg[1], msg[2])
        asyncio.get_running_loop().create_task(_report_done(group, conn, finished))
    elif kind == "sample":
        conn.send(("reply", msg[1], worker_payload(group)))
    elif kind == "end_warmup":
        await group.end_warmup()
        conn.send(("reply", msg[1], worker_payload(group)))
    elif kind == "checkpoint":
        payload = worker_payload(group)
        group.worker.recorder.reset_minmax()
        conn.send(("reply", msg[1], payload))
    elif kind == "stop":
        group.stop()
    elif kind == "cancel":
        group.cancel()
    elif kind == "exit":
        return True
    return False


async def _report_done(group: InProcessGroup, conn, finished: asyncio.Event) -> None:
    await group.wait(None)
    finished.set()
    try:
        conn.send(("done", worker_payload(group)))
    except OSError:
        pass


# --- parent side ---------------------------------------------------------------------


@dataclass
class _Child:
    index: int
    proc: Any
    conn: Any
    tids: range
    last: dict[str, Any] | None = None
    done: bool = False
    dead: bool = False
    ready: asyncio.Future | None = None
    pending: dict[int, asyncio.Future] = field(default_factory=dict)


class ProcessGroup:
    """The threads of one run split over ``workers`` processes."""

    def __init__(self, values: Values, test: str, driver_name: str, threads: int, workers: int):
        self.values = values
        self.test = test
        self.driver_name = driver_name
        self.threads = threads
        self.workers = workers
        self.children: list[_Child] = []
        self.fatal: BaseException | None = None
        self.traceback = None
        self._rid = 0
        self._all_done: asyncio.Event | None = None
        self._heartbeat: asyncio.Task | None = None
        self._cpu0 = time.process_time()

    # -- start-up --

    async def setup(self) -> None:
        """Nothing ahead of ``init``: spawning counts as thread start-up, as before."""

    async def init(self) -> None:
        loop = asyncio.get_running_loop()
        self._all_done = asyncio.Event()
        ctx = mp.get_context("spawn")
        v = self.values
        first = 0
        for i in range(self.workers):
            n = split(self.threads, self.workers, i)
            parent_conn, child_conn = ctx.Pipe()
            proc = ctx.Process(target=_child_main, name=f"pysysbench-worker-{i}", daemon=True,
                               args=(v, self.test, self.driver_name, first, first + n, self.threads,
                                     v.rate / self.workers if v.rate else 0.0,
                                     split(v.events, self.workers, i) if v.events else 0, child_conn))
            proc.start()
            child_conn.close()
            child = _Child(i, proc, parent_conn, range(first, first + n), ready=loop.create_future())
            self.children.append(child)
            loop.add_reader(parent_conn.fileno(), self._readable, child)
            first += n
        try:
            await asyncio.wait_for(asyncio.gather(*(c.ready for c in self.children)),
                                   (v.thread_init_timeout or START_TIMEOUT_S) + START_TIMEOUT_S)
        except BaseException:
            await self.close()
            raise

    def _readable(self, child: _Child) -> None:
        try:
            while child.conn.poll():
                self._on_message(child, child.conn.recv())
        except (EOFError, OSError):
            self._on_death(child)

    def _on_message(self, child: _Child, msg: tuple) -> None:
        kind = msg[0]
        if kind == "ready":
            child.ready.set_result(None)
        elif kind == "error":
            err = RunAborted(msg[1], msg[2])
            if not child.ready.done():
                child.ready.set_exception(err)
            else:
                self._set_fatal(err)
        elif kind == "reply":
            child.last = msg[2]
            fut = child.pending.pop(msg[1], None)
            if fut is not None and not fut.done():
                fut.set_result(msg[2])
        elif kind == "done":
            child.last = msg[1]
            child.done = True
            if msg[1]["fatal"] and self.fatal is None:
                self._set_fatal(RunAborted(msg[1]["fatal"], msg[1]["exit_code"]))
            self._check_all_done()

    def _on_death(self, child: _Child) -> None:
        if child.dead:
            return
        child.dead = True
        asyncio.get_running_loop().remove_reader(child.conn.fileno())
        for fut in child.pending.values():
            if not fut.done():
                fut.set_result(None)
        child.pending.clear()
        child.proc.join(0.5)   # so that exitcode is known
        if child.ready is not None and not child.ready.done():
            child.ready.set_exception(RunAborted(f"worker process {child.index} exited during start-up "
                                                 f"(exit code {child.proc.exitcode})"))
            return
        if not child.done:
            self._set_fatal(RunAborted(
                f"worker process {child.index} (pid {child.proc.pid}) died unexpectedly (exit code "
                f"{child.proc.exitcode}); the figures cover what was measured until its last report"))
        self._check_all_done()

    def _set_fatal(self, exc: BaseException) -> None:
        if self.fatal is None:
            self.fatal = exc
        self.stop()

    def _check_all_done(self) -> None:
        if all(c.done or c.dead for c in self.children) and self._all_done is not None:
            self._all_done.set()

    # -- control --

    def _send(self, msg: tuple) -> None:
        for c in self.children:
            if not c.dead:
                try:
                    c.conn.send(msg)
                except OSError:
                    self._on_death(c)

    def start(self, deadline_ns: int, warming: bool) -> None:
        self._send(("start", deadline_ns, warming))
        self._heartbeat = asyncio.get_running_loop().create_task(self._beat())

    async def _beat(self) -> None:
        while True:
            await asyncio.sleep(HEARTBEAT_S)
            await self._request("sample")

    async def _request(self, kind: str) -> list[dict | None]:
        loop = asyncio.get_running_loop()
        self._rid += 1
        futs = []
        for c in self.children:
            if c.dead:
                futs.append(None)
                continue
            fut = loop.create_future()
            c.pending[self._rid] = fut
            try:
                c.conn.send((kind, self._rid))
            except OSError:
                self._on_death(c)
            futs.append(fut)
        return [await f if f is not None else None for f in futs]

    def _merge(self) -> Sample:
        payloads = [c.last for c in self.children if c.last is not None]
        alive = [c.last for c in self.children if c.last is not None and not c.dead]
        return merged_sample(payloads, alive, time.process_time() - self._cpu0,
                             per_worker=[{"worker": c.index, "pid": c.proc.pid, "threads": len(c.tids),
                                          "cpu_s": (c.last or {}).get("cpu_s", 0.0), "died": c.dead,
                                          "events": c.last["snapshot"].events if c.last else 0}
                                         for c in self.children])

    async def sample(self) -> Sample:
        await self._request("sample")
        return self._merge()

    async def end_warmup(self) -> Sample:
        await self._request("end_warmup")
        return self._merge()

    async def checkpoint(self) -> Sample:
        await self._request("checkpoint")
        return self._merge()

    async def wait(self, timeout: float | None) -> bool:
        try:
            await asyncio.wait_for(self._all_done.wait(), timeout)
        except asyncio.TimeoutError:
            return False
        return True

    def stop(self) -> None:
        self._send(("stop",))

    def cancel(self) -> None:
        self._send(("cancel",))

    async def close(self) -> None:
        if self._heartbeat is not None:
            self._heartbeat.cancel()
        loop = asyncio.get_running_loop()
        self._send(("exit",))
        deadline = time.monotonic() + EXIT_TIMEOUT_S
        for c in self.children:
            while c.proc.is_alive() and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
            if c.proc.is_alive():
                c.proc.terminate()
                c.proc.join(2)
            if not c.dead:
                try:
                    loop.remove_reader(c.conn.fileno())
                except (ValueError, OSError):
                    pass
            c.conn.close()


def default_workers(threads: int, blocking: bool) -> int:
    """Two processes from 2 threads up (one more per 64 threads, up to the cores).

    One event loop is a single point every response must pass: when a server
    process it just woke preempts it, no connection gets its next statement until
    it runs again.  Measured on 2 cores, oltp_point_select at 8 threads on
    PostgreSQL: 72,748 involuntary context switches of the client in 6 s (MariaDB:
    2,261), 9-15 % idle CPU, 0.63-0.77x sysbench's QPS with one process and
    0.77-0.98x with two; MariaDB and the other workloads within the noise either
    way.  SQLite stays in one process: its threads work at once on OS threads of
    their own there, and its writers queue for the one write lock in any case."""
    if blocking:
        return 1
    cores = os.cpu_count() or 1
    return max(1, min(cores, threads, max(MIN_WORKERS, threads // THREADS_PER_EXTRA_WORKER)))
