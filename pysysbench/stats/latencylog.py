"""The raw per-transaction log (``--latency-log=FILE``), as pgbench ``-l`` and BenchBase's raw.csv.

Role: one CSV line per completed transaction of the measured phase -- when it
ended (Unix time, seconds), the thread, its latency (microseconds) and the code
of the last ignorable error that made it restart (empty when none) -- for tail
analysis outside pysysbench.  ``--latency-log-rate`` keeps a random fraction of
the transactions.  Memory is bounded: each worker buffers at most ``CHUNK`` rows
and appends them to the file with one ``write`` (``O_APPEND``: the workers'
chunks never interleave within a line).  Off by default, and then nothing of
this is on the hot path: the worker's recorder is the plain one.
"""

from __future__ import annotations

import os
import random
import threading
import time
from typing import Any

HEADER = "time_s,thread,latency_us,error\n"
CHUNK = 4096


def create(path: str) -> None:
    """Start the file with its header (the parent, before the workers append)."""
    with open(path, "w", encoding="ascii") as fh:
        fh.write(HEADER)


class LoggingRecorder:
    """A recorder that also samples each recorded event into the log; everything
    else is the wrapped recorder's."""

    def __init__(self, inner: Any, path: str, rate: float, limits: Any):
        self.inner = inner
        self.counters = inner.counters
        self.reset_minmax = inner.reset_minmax
        self.path = path
        self.fd: int | None = None  # opened at the first flush (the parent created the file)
        self.rate = rate
        self.limits = limits
        self.buf: list[str] = []
        self.pending: dict[int, str] = {}
        self.epoch_ns = time.time_ns() - time.perf_counter_ns()
        self._random = random.Random().random
        self._inner_record = inner.record
        # SQLite's threads record from OS threads: the buffer is shared between them
        self._lock = threading.Lock()

    def record(self, tid: int, lat_ns: int) -> None:
        self._inner_record(tid, lat_ns)
        error = self.pending.pop(tid, "") if self.pending else ""
        if self.limits.warming or (self.rate < 1.0 and self._random() >= self.rate):
            return
        end = (time.perf_counter_ns() + self.epoch_ns) / 1e9
        line = f"{end:.6f},{tid},{lat_ns / 1000:.1f},{error}\n"
        with self._lock:
            self.buf.append(line)
            if len(self.buf) >= CHUNK:
                self._flush()

    def note_error(self, tid: int, code: Any) -> None:
        """The event of ``tid`` hit an ignorable error and restarts (its line names it)."""
        self.pending[tid] = str(code or "")

    def flush(self) -> None:
        with self._lock:
            self._flush()

    def _flush(self) -> None:
        if not self.buf:
            return
        try:
            if self.fd is None:
                self.fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            os.write(self.fd, "".join(self.buf).encode("ascii"))
        except OSError as exc:  # a full disk, a removed directory: one line, not a crash
            from ..core.errors import UsageError
            from ..core.files import problem

            self.buf.clear()
            raise UsageError(f"cannot write latency log '{self.path}': {problem(exc)}") from None
        self.buf.clear()

    def close(self) -> None:
        self.flush()
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def snapshot(self) -> Any:
        return self.inner.snapshot()
