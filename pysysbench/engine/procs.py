"""Worker processes (``--workers=N``): one uvloop event loop per process.

The parent starts N processes, each owning a contiguous slice of the thread ids
with its share of ``--rate`` (a sum of independent Poisson streams is a Poisson
stream of the summed rate); every thread of every process takes its events from
one ``--events`` budget in shared memory (engine/budget.py), so the total is exact
whatever the split.  The parent talks to each over a socket
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

Start-up: where the platform forks and the parent runs one thread, the workers are
forked (:func:`start_method`): they inherit the modules the parent has imported, where a
``spawn`` worker starts a new interpreter and imports everything again (0.55 s of client
CPU with two workers at 8 threads, against sysbench's whole 0.39 s for a ``--time=1``
run; bench/journal/2026-12-01.md "Start-up"). A forked child first drops what it inherited from
the parent's event loop and from the other workers' links (:func:`_forget_parent`).
``PYSYSBENCH_WORKER_START=spawn`` in the environment forces the spawn start.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import time
from collections.abc import Callable, Coroutine
from dataclasses import field
from functools import partial
from typing import Any

from ..core import switches
from ..core.errors import PySysbenchError, RunAborted
from ..core.record import record
from ..runtime.childenv import PausedThreads, parent_import_path, restore_environment
from .budget import EventBudget, budget_for
from .channel import Channel, open_channel, send_blocking
from .forked import ForkedProcess, flush_std_streams
from .group import InProcessGroup, Share, share_group, shares
from .loopwatch import LoopWatch
from .outside import Origin, bring_in, origins
from .remote import MemberLost, RemoteGroup
from .spec import RunSpec

HEARTBEAT_S = 1.0
WORKER_TIMEOUT_S = 15.0  # a child silent this long is stopped or hung (a starved one: 1.3 s at most, see _WorkerEnd)
CANCEL_TIMEOUT_S = 2.0  # a child not ended this long after a cancel is stopped or hung
START_TIMEOUT_S = 120.0  # spawning + importing + connecting, beyond --thread-init-timeout
EXIT_TIMEOUT_S = 10.0
REPLY_WAIT_S = 2.0  # a sample waits this long for a child's reply, then takes its last report


# --- child side ------------------------------------------------------------------------


START_ENV = switches.WORKER_START.name
CHILD_SIGNALS = ("SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGCHLD", "SIGWINCH")


def start_method() -> str:
    """``fork`` where the platform has it, the parent runs no other thread (a thread
    could hold a lock the child then waits for forever) and the environment does not
    ask for ``spawn``; ``spawn`` otherwise."""
    import threading

    wanted = switches.WORKER_START.value()
    if wanted == "spawn" or not hasattr(os, "fork") or threading.active_count() > 1:
        return "spawn"
    return "fork"


def _forget_parent(inherited_fds: tuple[int, ...]) -> None:
    """First steps of a forked worker: the parent's event loop had installed signal
    handlers that write to its wakeup socket (a signal to this child would wake the
    parent's loop as if the parent had got it), and the parent's ends of the earlier
    workers' links would keep those workers from seeing the parent's end."""
    try:
        signal.set_wakeup_fd(-1)
    except ValueError:  # not the main thread: nothing was inherited there
        pass
    for name in CHILD_SIGNALS:
        sig = getattr(signal, name, None)
        if sig is not None:
            signal.signal(sig, signal.SIG_DFL)
    asyncio.set_event_loop_policy(None)
    for fd in inherited_fds:
        try:
            os.close(fd)
        except OSError:
            pass


def _child_main(
    spec: RunSpec,
    share: Share,
    sock: socket.socket,
    inherited_fds: tuple[int, ...] = (),
    forked: bool = False,
    carried: tuple[Origin, ...] = (),
) -> None:
    """Entry point of a worker process (forked from the parent, or spawned: then it
    imports everything afresh, and ``carried`` names what it must import beside pysysbench)."""
    if forked:
        _forget_parent(inherited_fds)
    restore_environment()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides how to stop
    if spec.worker_sessions:
        own_session()
    runner: Callable[[Coroutine[Any, Any, None]], object]
    try:
        import uvloop

        runner = uvloop.run
    except ImportError:
        runner = asyncio.run
    try:
        runner(_child_async(spec, share, sock, carried))
    except Exception as exc:  # never a silent death: the parent reports it
        try:
            send_blocking(sock, ("error", _failure(exc), 1))
        except OSError:  # the loop had the socket already (and closed it): the parent sees the end
            pass


def _failure(exc: BaseException) -> str:
    return f"worker process failed: {type(exc).__name__}: {exc}"


def own_session() -> None:
    """Start a session of this process's own.  Where Linux groups CPU time by
    session (autogroup, kernel.sched_autogroup_enabled=1, as on Debian and Ubuntu),
    a session is one scheduling entity: two worker processes in the parent's
    session competing with a server's thousand threads on the same host were run
    after them, so the server's threads went idle waiting for requests the client
    had not been scheduled to send (bench/journal/2026-11-30.md, "Worker sessions").
    Nothing changes elsewhere.  The worker still ignores the terminal's Ctrl-C
    (its parent stops it) and ends when the parent's end of the link closes."""
    try:
        os.setsid()
    except OSError:  # already a session leader: nothing to do
        pass


def worker_payload(group: InProcessGroup) -> dict[str, Any]:
    """What a worker reports to its parent (over its link, or as a Ray actor's reply)."""
    s = group.sample_now()
    fatal = group.fatal
    return {
        "snapshot": s.snapshot,
        "running": s.running,
        "inflight": s.inflight,
        "queue_length": s.queue_length,
        "cpu_s": s.cpu_s,
        "connections": s.connections,
        "fatal": None if fatal is None else str(fatal),
        "exit_code": getattr(fatal, "exit_code", 1) if fatal is not None else 0,
    }


async def _child_async(spec: RunSpec, share: Share, sock: socket.socket, carried: tuple[Origin, ...] = ()) -> None:
    end = _WorkerEnd()
    link = end.link = await open_channel(sock, end.on_message, end.on_lost)
    try:
        group = await _init_group(spec, share, link, carried)
        if group is not None:
            end.group = group
            link.send(("ready",))
            try:
                await end.exit.wait()
            finally:
                await group.close()
    except Exception as exc:  # never a silent death: the parent reports it
        link.send(("error", _failure(exc), 1))
    finally:
        await link.close()  # what is still buffered (the last report) reaches the parent first


async def _init_group(
    spec: RunSpec, share: Share, link: Channel, carried: tuple[Origin, ...] = ()
) -> InProcessGroup | None:
    """The worker's threads, connected; None once a start-up error is sent.  ``carried``: the
    parent's drivers and workloads registered from outside the package (:mod:`.outside`)."""
    try:
        bring_in(carried)
        group = share_group(spec, share)
        # a thread_init that Lua holds: at the parent's bound, interrupted, or this process ends
        # (the parent says why) -- the parent would otherwise wait EXIT_TIMEOUT_S for it
        watch = group.watch = LoopWatch(group.worker.workload.holds_loop)
        watch.start(signals=False)
        if spec.thread_init_timeout_s:
            watch.bound(spec.thread_init_timeout_s, "", 2)
        try:
            await group.init()
        finally:
            watch.bound(0)
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

    def on_message(self, msg: tuple[Any, ...]) -> None:
        watch = getattr(self.group, "watch", None)
        if watch is not None:  # the loop runs: no stop request is waiting
            watch.ack()
        if msg[0] == "exit":
            self.exit.set()
        elif self.group is not None and self.link is not None:  # nothing else comes before "ready" (the link is older)
            try:
                _handle(msg, self.group, self.link)
            except Exception as exc:  # never a silent death: the parent reports it
                self.link.send(("error", _failure(exc), 1))
                self.exit.set()

    def on_lost(self) -> None:
        """The parent is gone: stop at once."""
        if self.group is not None:
            self.group.cancel()
        self.exit.set()


def _handle(msg: tuple[Any, ...], group: InProcessGroup, link: Channel) -> None:
    """Act on one parent message (all but "exit")."""
    kind = msg[0]
    if kind == "start":
        # Lua that computes without yielding holds this loop: the parent's cancel comes as
        # SIGURG too, and the watchdog interrupts that Lua (engine/loopwatch.py)
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
        watch = getattr(group, "watch", None)
        if watch is not None:  # Lua still running a second from now missed the cancel
            watch.bound(1.0, "", 2)
            watch.ack()


async def _report_done(group: InProcessGroup, link: Channel) -> None:
    await group.wait(None)
    link.send(("done", worker_payload(group)))


# --- parent side ---------------------------------------------------------------------


def _cpu_ticks(pid: int | None) -> int | None:
    """A process's user + system CPU time in clock ticks (Linux's /proc), or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except (OSError, IndexError, ValueError):
        return None


def _retrieved(fut: asyncio.Future[Any]) -> None:
    if not fut.cancelled():
        fut.exception()


@record
class _Child:
    """The parent's view of one worker process: its process, threads, link and last report."""

    index: int
    proc: Any
    tids: range
    link: Channel | None = None
    last: dict[str, Any] | None = None
    heard: float = 0.0  # time.monotonic() of its last message
    done: bool = False
    dead: bool = False
    ready: asyncio.Future[Any] | None = None
    pending: dict[int, asyncio.Future[Any]] = field(default_factory=dict)
    cpu_ticks: int | None = None  # user + system clock ticks at the last silence check (_computing)


class ProcessGroup(RemoteGroup):
    """The threads of one run split over ``workers`` processes."""

    def __init__(self, spec: RunSpec):
        super().__init__(spec)
        self.workers = spec.workers
        self.children: list[_Child] = self.members
        self._rid = 0
        self._cancel_check: asyncio.TimerHandle | None = None
        self._closing = False
        self.budget: EventBudget | None = None  # the run's --events, one counter mapped by every worker

    # -- start-up --

    async def setup(self) -> None:
        """Nothing ahead of ``init``: spawning counts as thread start-up, as before."""

    async def init(self) -> None:
        loop = asyncio.get_running_loop()
        self._all_done = asyncio.Event()
        parent_ends: list[int] = []
        readies: list[asyncio.Future[Any]] = []  # the children's
        try:
            with PausedThreads():  # a helper thread of the parent (the Lua main state's) stops for the forks
                method = start_method()
                if method == "spawn":  # a fork needs no multiprocessing (engine/forked.py)
                    import multiprocessing

                    ctx = multiprocessing.get_context("spawn")
                carried = origins()  # what spawned children must import beside pysysbench (forked ones have it)
                self.budget = budget_for(self.spec.events, shared=True)
                for i, share in enumerate(shares(self.spec, self.workers, self.budget)):
                    mine, theirs = socket.socketpair()
                    parent_ends.append(mine.fileno())
                    args = (self.spec, share, theirs, tuple(parent_ends), method == "fork", carried)
                    name = f"pysysbench-worker-{i}"
                    proc = (
                        ForkedProcess(_child_main, name, args)
                        if method == "fork"
                        else ctx.Process(target=_child_main, name=name, daemon=True, args=args)
                    )
                    readies.append(loop.create_future())
                    child = _Child(i, proc, share.tids, ready=readies[-1])
                    self.children.append(child)
                    # a forked child would write out again what the parent had not flushed yet
                    flush_std_streams()
                    if method == "fork":  # the child is this interpreter: nothing to find again
                        proc.start()
                    else:
                        with parent_import_path():  # spawn: the parent's pysysbench and stdlib, not the cwd's
                            proc.start()
                    theirs.close()
                    child.link = await open_channel(
                        mine, partial(self._on_message, child), partial(self._on_death, child)
                    )
            ready = asyncio.gather(*readies)
            ready.add_done_callback(_retrieved)  # cancelled by a start-up timeout: no "never retrieved"
            await asyncio.wait_for(ready, (self.spec.thread_init_timeout_s or START_TIMEOUT_S) + START_TIMEOUT_S)
        except BaseException:
            await self.close()
            raise
        if self.budget is not None:  # every worker has mapped it: the name can go
            self.budget.unlink()

    def _on_message(self, child: _Child, msg: tuple[Any, ...]) -> None:
        child.heard = time.monotonic()
        kind = msg[0]
        if kind == "ready":
            # late: the start-up already failed (another worker's error or the start-up timeout
            # cancelled the wait); setting it then raised in the channel's callback and printed
            # a traceback ("Fatal error on transport") over the run's one-line error
            assert child.ready is not None  # made with the child
            if not child.ready.done():
                child.ready.set_result(None)
        elif kind == "error":
            err = RunAborted(msg[1], msg[2])
            assert child.ready is not None  # made with the child
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
        child.proc.join(0.5)  # so that exitcode is known
        if child.ready is not None and not child.ready.done():
            child.ready.set_exception(
                RunAborted(f"worker process {child.index} exited during start-up (exit code {child.proc.exitcode})")
            )
            return
        if not child.done:
            self._set_fatal(
                MemberLost(
                    f"worker process {child.index} (pid {child.proc.pid}) {why}; the figures cover what was "
                    "measured until its last report"
                )
            )
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

    # -- control --

    def _live(self) -> list[_Child]:
        return [c for c in self.children if not c.dead and c.link is not None]

    def _links(self) -> list[tuple[_Child, Channel]]:
        """``_live``'s children with their links."""
        return [(c, c.link) for c in self.children if not c.dead and c.link is not None]

    def _send(self, msg: tuple[Any, ...]) -> None:
        for _, link in self._links():
            link.send(msg)

    def _tell(self, kind: str) -> None:
        self._send((kind,))

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
            if now - before > 2 * HEARTBEAT_S:  # this process was not running (stopped itself):
                for c in self.children:  # its children are not to blame for the gap
                    c.heard = now
            before = now
            for c in self._live():
                if c.done or now - c.heard <= 2 * HEARTBEAT_S:
                    c.cpu_ticks = None
                    continue
                # silent: computing (Lua holding its loop, which the run's bounds stop), or not
                computing = self._computing(c)
                if now - c.heard > WORKER_TIMEOUT_S and not computing:
                    self._lose(c, f"sent nothing for {WORKER_TIMEOUT_S:g} s")
            self._ask("sample")

    def _computing(self, c: _Child) -> bool:
        """Whether a silent child used CPU time since the last heartbeat: a stopped or hung
        process uses none; one whose loop a computing Lua function holds does."""
        ticks = _cpu_ticks(c.proc.pid)
        before, c.cpu_ticks = c.cpu_ticks, ticks
        return ticks is not None and before is not None and ticks > before

    def _ask(self, kind: str) -> list[asyncio.Future[Any]]:
        loop = asyncio.get_running_loop()
        self._rid += 1
        futs = []
        for c, link in self._links():
            fut = loop.create_future()
            c.pending[self._rid] = fut
            link.send((kind, self._rid))
            futs.append(fut)
        return futs

    async def _request(self, kind: str) -> None:
        """Ask every live child and wait for the replies (a child lost meanwhile answers None),
        at most REPLY_WAIT_S: a child whose loop Lua holds (engine/loopwatch.py) answers when
        its Lua returns or is interrupted, and meanwhile its last report stands."""
        futs = self._ask(kind)
        if futs:
            await asyncio.wait(futs, timeout=REPLY_WAIT_S)

    @staticmethod
    def _worker_entry(c: _Child) -> dict[str, Any]:
        return {
            "worker": c.index,
            "pid": c.proc.pid,
            "threads": len(c.tids),
            "cpu_s": (c.last or {}).get("cpu_s", 0.0),
            "died": c.dead,
            "events": c.last["snapshot"].events if c.last else 0,
        }

    def cancel(self) -> None:
        self._tell("cancel")
        self.unhold()

    def unhold(self) -> None:
        """A worker whose loop Lua holds reads no message: SIGURG has its watchdog interrupt
        that Lua unless the loop answers a message first (engine/loopwatch.py)."""
        for c in self._live():
            try:
                os.kill(c.proc.pid, signal.SIGURG)
            except (OSError, TypeError):
                pass
        if self._cancel_check is None:
            self._cancel_check = asyncio.get_running_loop().call_later(CANCEL_TIMEOUT_S, self._check_cancelled)

    def _check_cancelled(self) -> None:
        for c in self._live():
            if not c.done:
                self._lose(c, f"did not stop within {CANCEL_TIMEOUT_S:g} s of being cancelled")

    async def close(self) -> None:
        if self.budget is not None:
            self.budget.unlink()
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
                c.proc.kill()  # SIGTERM would wait for a stopped process to be continued
                c.proc.join(2)
            if c.link is not None:
                c.link.abort()
