"""A worker process forked with ``os.fork``: the part of ``multiprocessing.Process`` the
process group uses (``start``, ``pid``, ``is_alive``, ``join``, ``exitcode``, ``kill``).

Why not multiprocessing for a fork: importing it (with its context, process, util,
reduction and connection modules) was 13 M instructions of every run's start-up, for a
``fork()`` and a ``waitpid()`` (bench/journal/2026-12-01.md, "Start-up").  Spawned workers still
go through multiprocessing (engine/procs.py), which a spawned child needs to find its
target.  The child's life is the one multiprocessing gives a forked target: stdin on
/dev/null, the target called, an uncaught exception printed with its traceback and exit
code 1, ``SystemExit``'s code, the standard streams flushed, then ``os._exit`` (no exit
handlers of the parent run twice).  What the child inherited is frozen for its garbage
collector first (``gc.freeze``, as cli/entry.py freezes the imports): its collections walk
only what it makes itself, not the parent's objects (instructions, and the pages a visit
writes to would be copied).
"""

from __future__ import annotations

import gc
import os
import signal
import sys
import time
from collections.abc import Callable
from typing import Any

JOIN_POLL_S = 0.005


def flush_std_streams() -> None:
    """Before a fork (the child would write out again what the parent had not flushed) and
    at the child's end (``os._exit`` flushes nothing)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):  # closed or replaced: nothing to copy
            pass


class ForkedProcess:
    def __init__(self, target: Callable[..., Any], name: str, args: tuple[Any, ...] = ()):
        self.target, self.name, self.args = target, name, args
        self.pid: int | None = None
        self.exitcode: int | None = None

    def start(self) -> None:
        pid = os.fork()
        if pid == 0:  # the child: never returns
            os._exit(self._child())
        self.pid = pid

    def _child(self) -> int:
        code = 1
        try:
            gc.freeze()
            try:
                sys.stdin.close()
                sys.stdin = open(os.devnull)
            except (OSError, ValueError, AttributeError):
                pass
            self.target(*self.args)
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            if not isinstance(exc.code, (int, type(None))):
                sys.stderr.write(f"{exc.code}\n")  # as multiprocessing's child does
        except BaseException:
            import traceback

            traceback.print_exc()
        finally:
            flush_std_streams()
        return code

    def _reap(self, flags: int) -> None:
        if self.exitcode is None and self.pid is not None:
            try:
                pid, status = os.waitpid(self.pid, flags)
            except ChildProcessError:  # reaped elsewhere: its code is lost, it is gone
                self.exitcode = -1
                return
            if pid:
                self.exitcode = os.waitstatus_to_exitcode(status)

    def is_alive(self) -> bool:
        self._reap(os.WNOHANG)
        return self.pid is not None and self.exitcode is None

    def join(self, timeout: float | None = None) -> None:
        if timeout is None:
            self._reap(0)
            return
        deadline = time.monotonic() + timeout
        while self.is_alive() and time.monotonic() < deadline:
            time.sleep(JOIN_POLL_S)

    def kill(self) -> None:
        if self.is_alive():
            os.kill(self.pid, signal.SIGKILL)  # type: ignore[arg-type]


__all__ = ["ForkedProcess", "flush_std_streams"]
