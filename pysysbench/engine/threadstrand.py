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
from typing import Any, Coroutine


class ThreadStrand:
    """One coroutine on its own event loop in a daemon OS thread."""

    __slots__ = ("name", "finished", "_home", "_task", "_cancel", "_lock", "_thread")

    def __init__(self, coro: Coroutine, loop: asyncio.AbstractEventLoop, name: str = "",
                 begin: threading.Event | None = None):
        """The coroutine begins when ``begin`` is set (see :func:`start_thread_strands`)."""
        self.name = name
        self.finished = loop.create_future()
        self._home = loop
        self._task: asyncio.Task | None = None    # while the coroutine runs on the thread's loop
        self._cancel = False                      # a cancel() not yet delivered
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._main, args=(coro, begin), name=name, daemon=True)
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

    def _main(self, coro: Coroutine, begin: threading.Event | None) -> None:
        with asyncio.Runner() as runner:
            loop = runner.get_loop()
            task = loop.create_task(coro, name=self.name)
            with self._lock:
                self._task = task
                if self._cancel:
                    task.cancel()
            if begin is not None:
                begin.wait()     # the loop is ready: the first event begins at once
            try:
                outcome: tuple[Any, BaseException | None] = (loop.run_until_complete(task), None)
            except BaseException as exc:
                outcome = (None, exc)
            with self._lock:
                self._task = None
        try:
            self._home.call_soon_threadsafe(self._settle, *outcome)
        except RuntimeError:
            pass    # the engine's loop is closed: nobody waits for this thread any more

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


def start_thread_strands(named: list[tuple[Coroutine, str]], loop: asyncio.AbstractEventLoop) -> list[ThreadStrand]:
    """A strand per (coroutine, name), all beginning together on the loop's next turn,
    as :class:`Strand` s do: a thread that began at once would hold the GIL against
    the creation of the next ones (500 threads took 5 s to start) and run events
    before the run's clock starts."""
    begin = threading.Event()
    strands = [ThreadStrand(coro, loop, name, begin) for coro, name in named]
    loop.call_soon(begin.set)
    return strands


class SharedQueue(asyncio.Queue):
    """An ``asyncio.Queue`` of the engine's loop (rate mode's arrivals) whose ``get``
    a thread strand may await from its own loop too (one hop per item)."""

    def __init__(self, maxsize: int, loop: asyncio.AbstractEventLoop):
        super().__init__(maxsize)
        self._home = loop

    async def get(self) -> Any:
        if asyncio.get_running_loop() is self._home:
            return await super().get()
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(super().get(), self._home))
