"""``--events``: one budget of events for the whole run, shared by every thread of every
worker process, as sysbench's one counter is shared by its threads.

Role: a thread takes one event from the budget before it starts one (a built-in test's
batch takes several and gives back what it did not run); when none is left, it ends.  The
total is exact whatever the split over threads and processes, and a thread that runs
faster takes more events (sysbench: ``--events=10 --threads=2`` splits 10/0 or 9/1, not
5/5).  The counter lives in shared memory (an mmap: anonymous for one process, a file in
``/dev/shm`` that worker processes map for ``--workers``), never a message per event:

* the C twin (engine/event_loop.c's ``Budget``) takes with an atomic compare-and-swap;
* the Python twin (:class:`PyBudgetCore`, ``PYSYSBENCH_NATIVE=off``) takes under a lock:
  a ``threading.Lock`` within the process and, for a shared budget, a POSIX record lock
  (``fcntl.lockf``) on the file across processes.

Both keep the counter at most ``total`` (a take that finds nothing left changes nothing),
so giving back events makes them available again.  A worker forked from the parent
inherits the mapping; a spawned one maps the file by its path (pickling carries the path:
the file is unlinked once every worker is up, :meth:`EventBudget.unlink`).  A budget made
without ``shared`` pickles as a fresh budget of the same total: a Ray actor on another
machine cannot map this one, so each actor gets its own share (engine/group.py's
``shares``), whose 0 means no events, never "unlimited".
"""

from __future__ import annotations

import fcntl
import mmap
import os
import struct
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from ..core.files import private_file
from ..runtime.native import Budget as _CBudget

SIZE = 8  # one native-order int64: the events handed out so far
_CELL = struct.Struct("=q")
SHM_DIR = "/dev/shm"
T = TypeVar("T")


class PyBudgetCore:
    """The Python twin of engine/event_loop.c's ``Budget(region, total)``; ``fd`` (of the
    file behind a shared region, or -1) is locked around each change across processes."""

    def __init__(self, region: Any, total: int, fd: int = -1):
        if total < 0:
            raise ValueError("Budget: total must not be negative")
        self.region, self.total, self.fd = region, total, fd
        self._lock = threading.Lock()

    def _change(self, fn: Callable[[int], tuple[int, T]]) -> T:
        with self._lock:
            if self.fd >= 0:
                fcntl.lockf(self.fd, fcntl.LOCK_EX, SIZE)
            try:
                old = _CELL.unpack_from(self.region, 0)[0]
                new, out = fn(old)
                if new != old:
                    _CELL.pack_into(self.region, 0, new)
                return out
            finally:
                if self.fd >= 0:
                    fcntl.lockf(self.fd, fcntl.LOCK_UN, SIZE)

    def take(self, n: int = 1) -> int:
        """How many of ``n`` events the caller may start (0: none left)."""
        if n < 0:
            raise ValueError("the count must not be negative")

        def grant(old: int) -> tuple[int, int]:
            g = max(0, min(n, self.total - old))
            return old + g, g

        return self._change(grant)

    def give_back(self, n: int) -> None:
        """``n`` events taken and not run are left again."""
        if n < 0:
            raise ValueError("the count must not be negative")
        self._change(lambda old: (old - n, None))

    @property
    def taken(self) -> int:
        value: int = _CELL.unpack_from(self.region, 0)[0]
        return value


class EventBudget:
    """``total`` events for the threads that hold this budget (see the module docstring)."""

    def __init__(self, total: int, shared: bool = False):
        self.total = total
        self.path: str | None = None
        self.fd = -1
        if shared:
            self.fd, self.path = _create_file()
            os.ftruncate(self.fd, SIZE)
            self.region = mmap.mmap(self.fd, SIZE)
        else:
            self.region = mmap.mmap(-1, SIZE)
        self._bind()

    @classmethod
    def _attach(cls, path: str, total: int) -> EventBudget:
        """A spawned worker's view of the parent's shared budget."""
        self = cls.__new__(cls)
        self.total, self.path = total, path
        self.fd = os.open(path, os.O_RDWR)
        self.region = mmap.mmap(self.fd, SIZE)
        self._bind()
        return self

    def _bind(self) -> None:
        core = (
            _CBudget(self.region, self.total)
            if _CBudget is not None
            else PyBudgetCore(self.region, self.total, self.fd)
        )
        self.core = core
        self.take = core.take  # the hot path calls these directly
        self.give_back = core.give_back

    @property
    def taken(self) -> int:
        """Events handed out so far (by every holder)."""
        return self.core.taken

    def left(self) -> int:
        return max(0, self.total - self.core.taken)

    def exhausted(self) -> bool:
        return self.core.taken >= self.total

    def unlink(self) -> None:
        """Remove the shared file's name (the mappings stay): once every worker has mapped it."""
        if self.path is not None:
            try:
                os.unlink(self.path)
            except FileNotFoundError:
                pass

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        if self.path is not None:
            return (EventBudget._attach, (self.path, self.total))
        return (EventBudget, (self.total,))

    def __repr__(self) -> str:
        return f"EventBudget({self.taken}/{self.total}{', shared' if self.path else ''})"


def _create_file() -> tuple[int, str]:
    """A new private file for a shared budget: in /dev/shm (memory) where there is one."""
    where = SHM_DIR if os.path.isdir(SHM_DIR) and os.access(SHM_DIR, os.W_OK) else _tmpdir()
    return private_file(where, f"pysysbench-events-{os.getpid()}-", "the --events counter")


def _tmpdir() -> str:
    import tempfile

    return tempfile.gettempdir()


def budget_for(events: int, shared: bool = False) -> EventBudget | None:
    """The run's budget for ``--events`` (0: no limit, None)."""
    return EventBudget(events, shared=shared) if events else None
