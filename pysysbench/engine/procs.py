"""Worker processes (``--workers=N``): one uvloop event loop per process.

The parent spawns N processes, each owning a contiguous slice of the thread ids
with its share of ``--events`` and ``--rate`` (a sum of independent Poisson
streams is a Poisson stream of the summed rate), and talks to each over a socket
pair (:mod:`.channel`: length-prefixed frames, any size, read by the loop):

    parent -> child   ("start", deadline_ns, warming) | ("sample", id) | ("end_warmup", id)
                      | ("checkpoint", id) | ("stop",) | ("cancel",) | ("exit",)
    child -> parent   ("ready",) | ("error", message, exit_code)
                      | ("reply", id, payload) | ("done", payload)

Every payload carries the child's cumulative :class:`Snapshot`; the parent merges
them (exact: counts and histogram buckets add).  The parent also samples every
``HEARTBEAT_S`` so that when a child dies, what it measured until shortly before
is kept and reported with a clear error.  The heartbeat is the watchdog too: a
child that sends nothing for ``WORKER_TIMEOUT_S`` (stopped, hung, its machine
out of memory), or has not ended ``CANCEL_TIMEOUT_S`` after a cancel, is killed
and reported like a dead one -- the run never waits for it forever.
"""

from __future__ import annotations

import asyncio
import multiprocessing as mp
import os
import signal
import socket
import time
from dataclasses import dataclass, field
from typing import Any

from ..childenv import parent_import_path, restore_environment
from ..errors import PySysbenchError, RunAborted
from ..options import Values
from .channel import Channel, open_channel, send_blocking
from .group import InProcessGroup, Sample, merged_sample, split

HEARTBEAT_S = 1.0
WORKER_TIMEOUT_S = 15.0      # a child silent this long is stopped or hung (a starved one: 1.3 s at most, see _WorkerEnd)
CANCEL_TIMEOUT_S = 2.0       # a child not ended this long after a cancel is stopped or hung
THREADS_PER_EXTRA_WORKER = 64   # default --workers: one process per this many threads, up to the cores
MIN_WORKERS = 2                  # ... but at least two (see default_workers)
START_TIMEOUT_S = 120.0      # spawning + importing + connecting, beyond --thread-init-timeout
EXIT_TIMEOUT_S = 10.0


# --- child side ------------------------------------------------------------------------


def _child_main(values: Values, test: str, driver_name: str, first_tid: int, last_tid: int, threads: int,
                rate: float, max_events: int, sock: socket.socket) -> None:
    """Entry point of a worker process (spawned: imports everything afresh)."""
    restore_environment()
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
                            sock))
    except Exception as exc:   # never a silent death: the parent reports it
        try:
            send_blocking(sock, ("error", _failure(exc), 1))
        except OSError:        # the loop had the socket already (and closed it): the parent sees the end
            pass


def _failure(exc: BaseException) -> str:
    return f"worker process failed: {type(exc).__name__}: {exc}"


def own_session() -> None:
    """Start a session of this process's own.  Where Linux groups CPU time by
    session (autogroup, kernel.sched_autogroup_enabled=1, as on Debian and Ubuntu),
    a session is one scheduling entity: two worker processes in the parent's
    session competing with a server's thousand threads on the same host were run
    after them, so the server's threads went idle waiting for requests the client
    had not been scheduled to send (docs/performance.md, "Worker sessions").
    Nothing changes elsewhere.  The worker still ignores the terminal's Ctrl-C
    (its parent stops it) and ends when the parent's end of the link closes."""
    try:
        os.setsid()
    except OSError:   # already a session leader: nothing to do
        pass


def worker_payload(group: InProcessGroup) -> dict[str, Any]:
    """What a worker reports to its parent (over its link, or as a Ray actor's reply)."""
    s = group.sample_now()
    fatal = group.fatal
    return {"snapshot": s.snapshot, "running": s.running, "inflight": s.inflight,
            "queue_length": s.queue_length, "cpu_s": s.cpu_s, "connections": s.connections,
            "fatal": None if fatal is None else str(fatal),
            "exit_code": getattr(fatal, "exit_code", 1) if fatal is not None else 0}


async def _child_async(values: Values, test: str, driver_name: str, tids: range, threads: int, rate: float,
                       max_events: int, sock: socket.socket) -> None:
    end = _WorkerEnd()
    link = end.link = await open_channel(sock, end.on_message, end.on_lost)
    try:
        group = await _init_group(values, test, driver_name, tids, threads, rate, max_events, link)
        if group is not None:
            end.group = group
            link.send(("ready",))
            try:
                await end.exit.wait()
            finally:
                await group.close()
    except Exception as exc:   # never a silent death: the parent reports it
        link.send(("error", _failure(exc), 1))
    finally:
        await link.close()     # what is still buffered (the last report) reaches the parent first


async def _init_group(values: Values, test: str, driver_name: str, tids: range, threads: int, rate: float,
                      max_events: int, link: Channel) -> InProcessGroup | None:
    """The worker's threads, connected; None once a start-up error is sent."""
    from ..drivers import REGISTRY as DRIVERS
    from ..workloads import find_workload

    try:
        driver = DRIVERS[driver_name](values)
        workload = find_workload(test)(values, driver)
        group = InProcessGroup(values, workload, driver, tids, threads, rate=rate, max_events=max_events)
        await group.init()
    except PySysbenchError as exc:
        link.send(("error", str(exc), exc.exit_code))
        return None
    return group


class _WorkerEnd:
    """The worker's end of the link.  Messages are acted on in the loop's I/O
    callback itself, so a reply leaves at once: through a task it waited for the
    loop's turn to end, and a loop busy with 2,000 connections runs up to 48
    batches of 1,024 socket events per turn (libuv) -- seconds for a starved
    worker, which the parent's heartbeat would take for a hang."""

    def __init__(self) -> None:
        self.group: InProcessGroup | None = None
        self.link: Channel | None = None
        self.exit = asyncio.Event()

    def on_message(self, msg: tuple) -> None:
        if msg[0] == "exit":
            self.exit.set()
        elif self.group is not None:   # nothing else comes before "ready"
            try:
                _handle(msg, self.group, self.link)
            except Exception as exc:   # never a silent death: the parent reports it
                self.link.send(("error", _failure(exc), 1))
                self.exit.set()

    def on_lost(self) -> None:
        """The parent is gone: stop at once."""
        if self.group is not None:
            self.group.cancel()
        self.exit.set()


def _handle(msg: tuple, group: InProcessGroup, link: Channel) -> None:
    """Act on one parent message (all but "exit")."""
    kind = msg[0]
    if kind == "start":
        group.start(msg[1], msg[2])
        asyncio.get_running_loop().create_task(_report_done(group, link))
    elif kind == "sample":
        link.send(("reply", msg[1], worker_payload(group)))
    elif kind == "end_warmup":
        group.leave_warmup()
        link.send(("reply", msg[1], worker_payload(group)))
    elif kind == "checkpoint":
        payload = worker_payload(group)
        group.worker.recorder.reset_minmax()
        link.send(("reply", msg[1], payload))
    elif kind == "stop":
        group.stop()
    elif kind == "cancel":
        group.cancel()


async def _report_done(group: InProcessGroup, link: Channel) -> None:
    await group.wait(None)
    link.send(("done", worker_payload(group)))


# --- parent side ---------------------------------------------------------------------


@dataclass
class _Child:
    index: int
    proc: Any
    tids: range
    link: Channel | None = None
    last: dict[str, Any] | None = None
    heard: float = 0.0          # time.monotonic() of its last message
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
        self._cancel_check: asyncio.TimerHandle | None = None
        self._closing = False
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
        try:
            for i in range(self.workers):
                n = split(self.threads, self.workers, i)
                mine, theirs = socket.socketpair()
                proc = ctx.Process(target=_child_main, name=f"pysysbench-worker-{i}", daemon=True,
                                   args=(v, self.test, self.driver_name, first, first + n, self.threads,
                                         v.rate / self.workers if v.rate else 0.0,
                                         split(v.events, self.workers, i) if v.events else 0, theirs))
                child = _Child(i, proc, range(first, first + n), ready=loop.create_future())
                self.children.append(child)
                with parent_import_path():   # the parent's pysysbench and stdlib, not the cwd's
                    proc.start()
                theirs.close()
                child.link = await open_channel(mine, lambda msg, c=child: self._on_message(c, msg),
                                                lambda c=child: self._on_death(c))
                first += n
            await asyncio.wait_for(asyncio.gather(*(c.ready for c in self.children)),
                                   (v.thread_init_timeout or START_TIMEOUT_S) + START_TIMEOUT_S)
        except BaseException:
            await self.close()
            raise

    def _on_message(self, child: _Child, msg: tuple) -> None:
        child.heard = time.monotonic()
        kind = msg[0]
        if kind == "ready":
            # late: the start-up already failed (another worker's error or the start-up timeout
            # cancelled the wait); setting it then raised in the channel's callback and printed
            # a traceback ("Fatal error on transport") over the run's one-line error
            if not child.ready.done():
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

    def _on_death(self, child: _Child, why: str = "died unexpectedly") -> None:
        if child.dead or self._closing:
            return
        child.dead = True
        if child.link is not None:
            child.link.abort()
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
                f"worker process {child.index} (pid {child.proc.pid}) {why}; the figures cover what was "
                "measured until its last report"))
        self._check_all_done()

    def _lose(self, child: _Child, why: str) -> None:
        """A child that stopped answering: kill it (SIGKILL, the one signal a
        stopped process acts on) and go on as if it had died."""
        if child.dead:
            return
        try:
            child.proc.kill()
        except OSError:
            pass
        self._on_death(child, f"{why} and was killed (stopped or hung?)")

    def _set_fatal(self, exc: BaseException) -> None:
        if self.fatal is None:
            self.fatal = exc
        self.stop()

    def _check_all_done(self) -> None:
        if all(c.done or c.dead for c in self.children) and self._all_done is not None:
            self._all_done.set()

    # -- control --

    def _live(self) -> list[_Child]:
        return [c for c in self.children if not c.dead and c.link is not None]

    def _send(self, msg: tuple) -> None:
        for c in self._live():
            c.link.send(msg)

    def start(self, deadline_ns: int, warming: bool) -> None:
        now = time.monotonic()
        for c in self.children:
            c.heard = now
        self._send(("start", deadline_ns, warming))
        self._heartbeat = asyncio.get_running_loop().create_task(self._beat())

    async def _beat(self) -> None:
        """Ask every child for a sample each HEARTBEAT_S (not waiting for the
        replies, which update ``last``) and lose the ones silent too long."""
        before = time.monotonic()
        while True:
            await asyncio.sleep(HEARTBEAT_S)
            now = time.monotonic()
            if now - before > 2 * HEARTBEAT_S:   # this process was not running (stopped itself):
                for c in self.children:          # its children are not to blame for the gap
                    c.heard = now
            before = now
            for c in self._live():
                if not c.done and now - c.heard > WORKER_TIMEOUT_S:
                    self._lose(c, f"sent nothing for {WORKER_TIMEOUT_S:g} s")
            self._ask("sample")

    def _ask(self, kind: str) -> list[asyncio.Future]:
        loop = asyncio.get_running_loop()
        self._rid += 1
        futs = []
        for c in self._live():
            fut = loop.create_future()
            c.pending[self._rid] = fut
            c.link.send((kind, self._rid))
            futs.append(fut)
        return futs

    async def _request(self, kind: str) -> None:
        """Ask every live child and wait for the replies (a child lost meanwhile answers None)."""
        futs = self._ask(kind)
        if futs:
            await asyncio.wait(futs)

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
        if self._cancel_check is None:
            self._cancel_check = asyncio.get_running_loop().call_later(CANCEL_TIMEOUT_S, self._check_cancelled)

    def _check_cancelled(self) -> None:
        for c in self._live():
            if not c.done:
                self._lose(c, f"did not stop within {CANCEL_TIMEOUT_S:g} s of being cancelled")

    async def close(self) -> None:
        if self._heartbeat is not None:
            self._heartbeat.cancel()
        if self._cancel_check is not None:
            self._cancel_check.cancel()
        self._send(("exit",))
        self._closing = True
        deadline = time.monotonic() + EXIT_TIMEOUT_S
        for c in self.children:
            while c.proc.is_alive() and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
            if c.proc.is_alive():
                c.proc.kill()   # SIGTERM would wait for a stopped process to be continued
                c.proc.join(2)
            if c.link is not None:
                c.link.abort()


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
