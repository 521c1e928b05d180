"""Strands: benchmark threads resumed straight from the protocol callback.

An asyncio Task resumes its coroutine through a Future: the protocol sets the
Future's result, the Future schedules the Task with ``call_soon``, the loop runs
it on its next turn.  For a statement that takes tens of microseconds of server
time that machinery is about a fifth of the client's CPU per point select
(bench/journal/2026-11-30.md).  A :class:`Strand` drives a thread's coroutine itself:
when a lean wire statement (:mod:`..drivers.wire`) is awaited, the coroutine
yields the wire, the wire keeps the strand, and ``data_received`` resumes it with
the scanned response -- no Future, no scheduling, no extra loop turn.

Anything else the coroutine awaits (an asyncio Future of a library call, a
reconnect, ``asyncio.sleep``, a rate-mode queue) is handled as a Task handles it,
and the strand registers itself as the loop's current task while it runs, so
``asyncio.current_task()`` and ``asyncio.timeout()`` work inside events.
"""

from __future__ import annotations

import asyncio
from asyncio.tasks import _enter_task, _leave_task
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from ..drivers.wire import Wire
from ..runtime.handoff import here as _here
from ..runtime.native import StrandCore as _CStrandCore
from ..runtime.native import strand_setup as _strand_setup


class _PyStrandCore:
    """The driving half of :class:`Strand`; the C twin is engine/strand.c's ``StrandCore``."""

    __slots__ = ("coro", "loop", "_waiting", "_cancel")
    coro: Coroutine[Any, Any, Any]
    loop: asyncio.AbstractEventLoop
    _waiting: Any
    _cancel: bool
    _settle: Callable[[BaseException], None]  # Strand's: the coroutine's end
    _park: Callable[[Any], None]  # Strand's: anything it awaits but a wire

    def step(self, value: Any = None) -> None:
        """Resume the coroutine with ``value`` (a response, a Future's result)."""
        if self._cancel:
            self._cancel = False
            self.throw(asyncio.CancelledError())
            return
        self._run(value, None)

    def throw(self, exc: BaseException) -> None:
        """Resume the coroutine with ``exc`` raised -- or with the cancel not yet delivered,
        as Task.__step does: a cancel() that found the awaited Future already done (an
        asyncio.timeout() firing in the turn its connect failed) must land in that await,
        inside the timeout block, not at some later await (it ended threads silently)."""
        if self._cancel:
            self._cancel = False
            if not isinstance(exc, asyncio.CancelledError):
                exc = asyncio.CancelledError()
        self._run(None, exc)

    def resume(self, value: Any) -> None:
        """Called by the wire this strand waits on, with the scanned response."""
        self._waiting = None
        self.step(value)

    def fail(self, exc: BaseException) -> None:
        """Called by the wire this strand waits on when its connection is lost."""
        self._waiting = None
        self.throw(exc)

    def _run(self, value: Any, exc: BaseException | None) -> None:
        loop = self.loop
        here = _here
        outer = here.strand
        _enter_task(loop, self)  # type: ignore[arg-type]  # a strand is its loop's running task, as a Task; may refuse (a Task is running): here stays as it was
        here.strand = self
        try:
            yielded = self.coro.send(value) if exc is None else self.coro.throw(exc)
        except BaseException as e:
            self._waiting = None
            self._settle(e)
            return
        finally:
            _leave_task(loop, self)  # type: ignore[arg-type]  # as _enter_task
            here.strand = outer
        if isinstance(yielded, Wire):
            self._waiting = yielded  # the wire resumes us (see Wire.data_received)
            return
        self._park(yielded)


def _current_tasks() -> dict[Any, Any] | None:
    """asyncio's table of the running task per loop, where the C strand may keep it directly:
    only when ``_enter_task`` / ``_leave_task`` are _asyncio's and keep exactly this dict
    (CPython 3.11-3.13); elsewhere None, and the C strand calls the functions."""
    try:
        import _asyncio
    except ImportError:
        return None
    tasks = getattr(_asyncio, "_current_tasks", None)
    if (
        type(tasks) is not dict
        or asyncio.tasks._current_tasks is not tasks  # type: ignore[attr-defined]  # private
        or _enter_task is not getattr(_asyncio, "_enter_task", None)
        or _leave_task is not getattr(_asyncio, "_leave_task", None)
    ):
        return None
    return tasks


if _CStrandCore is not None and _strand_setup is not None:
    _strand_setup(_here, _enter_task, _leave_task, asyncio.CancelledError, _current_tasks())
if TYPE_CHECKING:  # the C twin has the Python twin's interface
    _StrandCore = _PyStrandCore
else:
    _StrandCore = _CStrandCore or _PyStrandCore


class Strand(_StrandCore):
    """A Task-like driver of one coroutine; ``finished`` is an asyncio Future that
    settles with the coroutine's outcome (so ``asyncio.wait`` works on it).  The
    core (C when built) resumes it and parks it on wires; this class handles what
    else it awaits and its end, as a Task would."""

    __slots__ = ("name", "finished", "_cancelling", "__weakref__")

    def __init__(self, coro: Coroutine[Any, Any, Any], loop: asyncio.AbstractEventLoop, name: str = ""):
        self.coro = coro
        self.loop = loop
        self.name = name
        self.finished = loop.create_future()
        self._waiting: Any = None  # the Future or wire this strand waits on
        self._cancel = False  # a cancel() not yet delivered
        self._cancelling = 0
        loop.call_soon(self.step)

    # --- the Task surface asyncio.timeout() and the engine use ----------------------

    def done(self) -> bool:
        return self.finished.done()

    def get_loop(self) -> asyncio.AbstractEventLoop:
        return self.loop

    def get_name(self) -> str:
        return self.name

    def cancelling(self) -> int:
        return self._cancelling

    def uncancel(self) -> int:
        if self._cancelling > 0:
            self._cancelling -= 1
        return self._cancelling

    def cancel(self, msg: Any = None) -> bool:
        """As ``Task.cancel``: CancelledError is raised inside the coroutine at its
        next resumption, which is brought forward if it waits on anything."""
        if self.finished.done():
            return False
        self._cancelling += 1
        waiting = self._waiting
        if isinstance(waiting, asyncio.Future):
            if waiting.cancel(msg=msg):
                return True  # its done callback resumes us with CancelledError
        elif waiting is not None:  # a wire: stop listening, resume with the error
            waiting.strand = None
            self._waiting = None
            self.loop.call_soon(self.throw, asyncio.CancelledError(msg))
            return True
        self._cancel = True
        return True

    # --- what the core hands back: anything but a wire, and the end ---------------

    def _park(self, yielded: Any) -> None:
        if yielded is None:  # a bare yield (asyncio.sleep(0)): next loop turn
            self._waiting = None
            self.loop.call_soon(self.step)
            return
        if getattr(yielded, "_asyncio_future_blocking", None):
            yielded._asyncio_future_blocking = False
            self._waiting = yielded
            yielded.add_done_callback(self._wakeup)
            if self._cancel:
                self._cancel = False
                yielded.cancel()
            return
        self.loop.call_soon(self.throw, RuntimeError(f"strand {self.name} got bad yield: {yielded!r}"))

    def _wakeup(self, future: asyncio.Future[Any]) -> None:
        self._waiting = None
        try:
            value = future.result()
        except BaseException as exc:
            self.throw(exc)
            return
        self.step(value)

    def _settle(self, exc: BaseException) -> None:
        self._waiting = None
        f = self.finished
        if isinstance(exc, StopIteration):
            f.set_result(exc.value)
        elif isinstance(exc, asyncio.CancelledError):
            f.cancel()
        else:
            f.set_exception(exc)
            if not isinstance(exc, Exception):  # KeyboardInterrupt, SystemExit: as a Task would
                raise exc

    def __repr__(self) -> str:
        state = "done" if self.finished.done() else "running"
        return f"<Strand {self.name} {state}>"
