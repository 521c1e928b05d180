"""Thread strands: a benchmark thread on an OS thread of its own.

The statements of a blocking driver (``DriverCaps.blocking``: SQLite, whose
``sqlite3`` calls return only when SQLite is done, the GIL released meanwhile)
never yield to the event loop.  Sharing one loop, such connections could only
take turns, and a thread's wait for its turn would be in no event's latency.  A
:class:`ThreadStrand` runs one benchmark thread's coroutine on an event loop of
its own in an OS thread of its own: the connections work at once, and what a
thread waits for -- the database's lock, the GIL, the CPU -- is inside its
event's latency, as a server's queues are.

It offers the engine what it uses of a :class:`~pysysbench.engine.strand.Strand`:
``finished`` (a Future of the engine's loop settled with the coroutine's
outcome), ``done()`` and ``cancel()`` (delivered when the coroutine next awaits
something on its loop; a statement in progress ends first).  Rate mode's
arrivals are a :class:`SharedQueue`, which thread strands await across loops.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any


class ThreadStrand:
    """One coroutine on its own event loop in a daemon OS thread.  The thread and its
    loop are made first; the coroutine, given by :meth:`ThreadStrands.start`, begins
    when the group's ``begin`` Event is set."""

    __slots__ = ("name", "finished", "coro", "_home", "_begin", "_task", "_cancel", "_lock", "_thread")

    def __init__(self, loop: asyncio.AbstractEventLoop, name: str, begin: threading.Event):
        self.name = name
        self.finished = loop.create_future()
        self.coro: Coroutine[Any, Any, Any] | None = None  # None when begin is set: the run did not start
        self._home = loop
        self._begin = begin
        self._task: asyncio.Task[Any] | None = None  # while the coroutine runs on the thread's loop
        self._cancel = False  # a cancel() not yet delivered
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._main, name=name, daemon=True)
        self._thread.start()

    def done(self) -> bool:
        return self.finished.done()

    def cancel(self, msg: Any = None) -> bool:
        """As ``Task.cancel``, from the engine's loop."""
        if self.finished.done():
            return False
        with self._lock:
            self._cancel = True
            if self._task is not None:
                self._task.get_loop().call_soon_threadsafe(self._task.cancel, msg)
        return True

    def _main(self) -> None:
        with asyncio.Runner() as runner:
            loop = runner.get_loop()
            self._begin.wait()
            if self.coro is None:
                return
            task = loop.create_task(self.coro, name=self.name)
            with self._lock:
                self._task = task
                if self._cancel:
                    task.cancel()
            try:
                outcome: tuple[Any, BaseException | None] = (loop.run_until_complete(task), None)
            except BaseException as exc:
                outcome = (None, exc)
            with self._lock:
                self._task = None
        try:
            self._home.call_soon_threadsafe(self._settle, *outcome)
        except RuntimeError:
            pass  # the engine's loop is closed: nobody waits for this thread any more

    def _settle(self, result: Any, exc: BaseException | None) -> None:
        f = self.finished
        if f.done():
            return
        if exc is None:
            f.set_result(result)
        elif isinstance(exc, asyncio.CancelledError):
            f.cancel()
        else:
            f.set_exception(exc)

    def __repr__(self) -> str:
        state = "done" if self.finished.done() else "running"
        return f"<ThreadStrand {self.name} {state}>"


class ThreadStrands:
    """The OS threads of one worker's benchmark threads, made while the threads
    initialise (before "Threads started!"), so that starting the run costs nothing:
    made at the start, 500 of them took 5 s, the first ones holding the GIL against
    the making of the next, and even two made the run's clock start late (a 3 s run
    reported 2.996 s of total time).  :meth:`start` gives them their coroutines,
    which all begin on the engine loop's next turn, as :class:`Strand` s do."""

    def __init__(self, loop: asyncio.AbstractEventLoop, names: list[str]):
        self.loop = loop
        self._begin = threading.Event()
        self.strands = [ThreadStrand(loop, name, self._begin) for name in names]

    def start(self, coros: list[Coroutine[Any, Any, Any]]) -> list[ThreadStrand]:
        for strand, coro in zip(self.strands, coros):
            strand.coro = coro
        self.loop.call_soon(self._begin.set)
        return self.strands

    def close(self) -> None:
        """End the threads that were never started (the run did not begin)."""
        self._begin.set()


class SharedQueue(asyncio.Queue[Any]):
    """An ``asyncio.Queue`` of the engine's loop (rate mode's arrivals) whose ``get``
    a thread strand may await from its own loop too (one hop per item)."""

    def __init__(self, maxsize: int, loop: asyncio.AbstractEventLoop):
        super().__init__(maxsize)
        self._home = loop

    async def get(self) -> Any:
        if asyncio.get_running_loop() is self._home:
            return await super().get()
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(super().get(), self._home))
