"""The inner loops of sysbench's built-in tests: the Python twin of workloads/builtin.c.

``make(kind, params, fds, ratio)`` gives the test's shared state: the C ``Builtin`` when
the extension is used (pysysbench/runtime/native.py), else :class:`PyBuiltin`, which is its
contract: the same events, the same request generator, the same random stream
(core/rand.py's xoroshiro128+ with XORO_2018, seeded by splitmix64) and the same interface::

    test.runner(tid, seed) -> runner
    runner.batch(record, max_n, deadline_ns, budget_ns) -> (events, finished)
    runner.step() -> finished
    runner.fsync_all()
    test.stats() -> (reads, writes, fsyncs, bytes read, bytes written)   # fileio
    test.claimed() -> bytes transferred                                  # memory

The C runs a batch with the GIL released, so the benchmark threads (OS threads,
engine/threadstrand.py) run at once and the figures are the machine's; the twin runs
the same events under the GIL, slower (PYSYSBENCH_NATIVE=off).
"""

from __future__ import annotations

import math
import mmap
import os
import threading
from collections.abc import Callable
from time import perf_counter_ns
from typing import Any

from ..core.rand import XORO_2018, Xoroshiro128Plus
from ..runtime import native
from ..runtime.limits import time_up

CPU, MEMORY, THREADS, MUTEX, FILEIO = range(5)
SEQWR, SEQREWR, SEQRD, RNDRD, RNDWR, RNDRW = range(6)
READ, WRITE, FSYNC = range(3)
MEM_NONE, MEM_READ, MEM_WRITE = range(3)
FILE_MODES = {"seqwr": SEQWR, "seqrewr": SEQREWR, "seqrd": SEQRD, "rndrd": RNDRD, "rndwr": RNDWR, "rndrw": RNDRW}
# the order of a test's integer parameters (builtin.c's p[])
PARAMS = {
    CPU: ("max_prime",),
    MEMORY: ("block_size", "total_size", "local", "oper", "rnd", "threads"),
    THREADS: ("yields", "locks"),
    MUTEX: ("num", "locks", "loops"),
    FILEIO: (
        "mode",
        "file_size",
        "total_size",
        "block_size",
        "request_size",
        "fsync_freq",
        "fsync_all",
        "fdatasync",
        "mmap",
    ),
}
M64 = (1 << 64) - 1
WORD = 8  # sizeof(size_t)


def make(kind: int, params: dict[str, int], fds: tuple[int, ...] = (), ratio: float = 1.5) -> Any:
    """The shared state of a test: C when the extension is used, else the Python twin."""
    values = tuple(int(params[name]) for name in PARAMS[kind])
    cls = native.Builtin if native.Builtin is not None else PyBuiltin
    return cls(kind, values, tuple(fds), float(ratio))


class PyBuiltin:
    """builtin.c's ``Builtin`` in Python."""

    def __init__(self, kind: int, params: tuple[int, ...], fds: tuple[int, ...], ratio: float = 1.5):
        self.kind = kind
        self.p = dict(zip(PARAMS[kind], params))
        self.ratio = ratio
        self.lock = threading.Lock()
        self.claimed_bytes = 0
        self.global_var = 0
        self.fds = list(fds)
        self.maps: list[mmap.mmap] | None = None
        self.position = self.req_performed = 0
        self.current_file = self.fsynced_file = 0
        self.is_dirty = False
        self.reads = self.writes = self.fsyncs = self.bytes_read = self.bytes_written = 0
        if kind == MEMORY:
            if self.p["block_size"] < WORD:
                raise ValueError("Builtin: memory block too small")
            self.global_buf = [0] * (self.p["block_size"] // WORD)
        if kind in (THREADS, MUTEX):
            n = self.p["locks"] if kind == THREADS else self.p["num"]
            if n < 1:
                raise ValueError("Builtin: no locks")
            self.locks = [threading.Lock() for _ in range(n)]
        if kind == FILEIO:
            if not fds or self.p["block_size"] < 1 or self.p["file_size"] < 1:
                raise ValueError("Builtin: fileio needs files, a block and a file size")
            if self.p["mmap"]:
                self.maps = [mmap.mmap(fd, self.p["file_size"]) for fd in fds]

    def runner(self, tid: int, seed: int) -> PyRunner:
        return PyRunner(self, tid, seed)

    def stats(self) -> tuple[int, int, int, int, int]:
        return self.reads, self.writes, self.fsyncs, self.bytes_read, self.bytes_written

    def claimed(self) -> int:
        return min(self.claimed_bytes, self.p["total_size"])

    def close(self) -> None:
        if self.maps is not None:
            for m in self.maps:
                m.close()
            self.maps = None


class PyRunner:
    """builtin.c's ``BuiltinRunner`` in Python."""

    def __init__(self, test: PyBuiltin, tid: int, seed: int):
        self.test = test
        self.tid = tid
        self.rng = Xoroshiro128Plus.from_splitmix64(seed, XORO_2018)
        self.sink = 0
        self.reads = self.writes = 0
        self.done_once = False
        p = test.p
        # memory: as sysbench 1.0.20, each thread does total / block / threads events
        self.left = (
            p["total_size"] // p["block_size"] // max(1, p["threads"])
            if test.kind == MEMORY and p["total_size"] > 0
            else -1
        )
        if test.kind == MEMORY and p["local"]:
            self.local_buf = [0] * (p["block_size"] // WORD)
        if test.kind == FILEIO:
            # one buffer for reads and writes, as sysbench's per-thread buffer: a write after a
            # read writes what was read
            self.io_buf = bytearray(max(p["request_size"], p["block_size"]))
        self.event: Callable[[], bool] = {
            CPU: self._cpu,
            MEMORY: self._memory,
            THREADS: self._threads,
            MUTEX: self._mutex,
            FILEIO: self._fileio,
        }[test.kind]

    # --- the engine's interface -------------------------------------------------------

    def batch(self, record: Callable[[int, int], Any], max_n: int, deadline: int, budget: int) -> tuple[int, bool]:
        n = 0
        clock = perf_counter_ns
        now = clock()
        stop_at = now + budget
        event, tid = self.event, self.tid
        while n < max_n:
            if time_up(deadline, now):  # the rule's time part (runtime/limits.py)
                return n, False
            start = clock()
            if event():
                return n, True
            record(tid, clock() - start)
            n += 1
            now = clock()
            if now >= stop_at:
                break
        return n, False

    def step(self) -> bool:
        return self.event()

    def fsync_all(self) -> None:
        for i in range(len(self.test.fds)):
            self._fsync(i)

    # --- the events -----------------------------------------------------------------------

    def _cpu(self) -> bool:
        n = 0
        for c in range(3, self.test.p["max_prime"]):
            t = math.sqrt(c)
            d = 2
            while d <= t:
                if c % d == 0:
                    break
                d += 1
            if d > t:
                n += 1
        self.sink = n
        return False

    def _memory(self) -> bool:
        t = self.test
        p = t.p
        block = p["block_size"]
        if self.left == 0:
            return True
        self.left -= 1
        with t.lock:
            t.claimed_bytes += block
        buf = self.local_buf if p["local"] else t.global_buf
        words = block // WORD
        tmp = 0
        if p["rnd"] and p["oper"] in (MEM_READ, MEM_WRITE):
            d = self.rng.double
            if p["oper"] == MEM_WRITE:
                for i in range(words):
                    buf[int(d() * words)] = i
            else:
                for _ in range(words):
                    tmp = buf[int(d() * words)]
        elif p["oper"] == MEM_WRITE:
            buf[:] = range(words, 0, -1)
        elif p["oper"] == MEM_READ:
            for tmp in buf:  # noqa: B007 -- reads every word, as sysbench's loop does
                pass
        else:
            tmp = sum(words - i for i in range(words)) & M64
        self.sink = tmp
        return False

    def _threads(self) -> bool:
        t = self.test
        lock = t.locks[self.tid % len(t.locks)]
        for _ in range(t.p["yields"]):
            with lock:
                os.sched_yield()
        return False

    def _mutex(self) -> bool:
        if self.done_once:
            return True
        self.done_once = True
        t = self.test
        n, loops, locks = t.p["locks"], t.p["loops"], t.locks
        while True:
            lock = locks[self.rng.next() % len(locks)]
            for _ in range(loops):
                pass
            with lock:
                t.global_var += 1
            n -= 1
            if n <= 0:
                return False

    def _next_request(self) -> tuple[int, int, int, int]:
        """(op, file, pos, size): sysbench's file_get_seq_request / file_get_rnd_request."""
        t = self.test
        p = t.p
        mode = p["mode"]
        nfiles = len(t.fds)
        with t.lock:
            if mode <= SEQRD:
                op = READ if mode == SEQRD else WRITE
                if not (p["fsync_freq"] and op == WRITE and t.is_dirty and t.req_performed % p["fsync_freq"] == 0):
                    t.req_performed += 1
                    if op == WRITE:
                        t.is_dirty = True
                    if t.current_file == nfiles:
                        t.position = t.current_file = 0
                    f, pos = t.current_file, t.position
                    size = min(p["request_size"], p["file_size"] - pos)
                    t.position += size
                    if t.position == p["file_size"]:
                        t.current_file += 1
                        t.position = 0
                    return op, f, pos, size
            else:
                if mode == RNDRW:
                    op = READ if (self.reads + 1.0) / (self.writes + 1.0) < t.ratio else WRITE
                else:
                    op = WRITE if mode == RNDWR else READ
                if not (p["fsync_freq"] and t.is_dirty and t.req_performed % p["fsync_freq"] == 0):
                    x = int(self.rng.double() * float(p["total_size"]))
                    x -= x % p["block_size"]
                    f, pos = x // p["file_size"], x % p["file_size"]
                    size = min(p["block_size"], p["file_size"] - pos)
                    t.req_performed += 1
                    if op == WRITE:
                        t.is_dirty = True
                    return op, f, pos, size
            f = t.fsynced_file
            t.fsynced_file += 1
            if t.fsynced_file == nfiles:
                t.fsynced_file = 0
                t.is_dirty = False
            return FSYNC, f, 0, 0

    def _fsync(self, f: int) -> None:
        t = self.test
        try:
            if t.maps is not None:
                t.maps[f].flush()
            elif t.p["fdatasync"]:
                os.fdatasync(t.fds[f])
            else:
                os.fsync(t.fds[f])
        except OSError as exc:
            raise OSError(exc.errno, f"Failed to fsync file! file: {t.fds[f]}") from None
        with t.lock:
            t.fsyncs += 1

    def _fileio(self) -> bool:
        t = self.test
        op, f, pos, size = self._next_request()
        if not 0 <= f < len(t.fds):
            f = 0
        if op == WRITE:
            try:
                if t.maps is not None:
                    t.maps[f][pos : pos + size] = bytes(self.io_buf[:size])
                    got = size
                else:
                    view = memoryview(self.io_buf)
                    got = 0
                    while got < size:  # a short write: the next one says why (ENOSPC, EFBIG)
                        got += os.pwrite(t.fds[f], view[got:size], pos + got)
            except OSError as exc:
                raise OSError(exc.errno, f"Failed to write file! file: {t.fds[f]} pos: {pos}") from None
            if got != size:
                raise OSError(28, f"Failed to write file! file: {t.fds[f]} pos: {pos}")
            if t.p["fsync_all"]:
                self._fsync(f)
            self.writes += 1
            with t.lock:
                t.writes += 1
                t.bytes_written += size
        elif op == READ:
            try:
                data = t.maps[f][pos : pos + size] if t.maps is not None else os.pread(t.fds[f], size, pos)
                got = len(data)
                self.io_buf[:got] = data
            except OSError as exc:
                raise OSError(exc.errno, f"Failed to read file! file: {t.fds[f]} pos: {pos}") from None
            if got != size:
                raise OSError(5, f"Failed to read file! file: {t.fds[f]} pos: {pos}")
            self.reads += 1
            with t.lock:
                t.reads += 1
                t.bytes_read += size
        elif not t.p["fsync_all"]:
            self._fsync(f)
        return False


def is_native() -> bool:
    return native.Builtin is not None


__all__ = ["make", "PyBuiltin", "PyRunner", "FILE_MODES", "is_native"]
