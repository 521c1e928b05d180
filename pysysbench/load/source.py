"""Where the bytes of one id range come from: this process, or a row-generator process.

A load method reads a :class:`RowStream` (the records of one id range of one
table, see :mod:`.rows`) in one of two ways: ``chunks()`` (bytes of any size:
COPY, LOAD DATA LOCAL) or ``row_blocks(n)`` (whole records, at most n per
block: multi-row INSERTs, SQLite).

* :class:`LocalStream` generates in the loading process (small data sets: no
  process start-up).
* :class:`PipeStream` is fed by a :class:`GeneratorProcess`: one process per
  loading connection, forked by a fork server that imported numpy once, that
  writes each range into a fresh pipe (the write end is passed over the control
  socketpair), so generation runs on other cores; the loading process reads the
  pipes asynchronously (no blocking read on its event loop, no temporary file).
  Each process counts the rows it has written in shared memory (progress).

Control messages, parent -> child: ``("job", id, RangeJob)`` followed by the
pipe's write end, ``("exit",)``; child -> parent: ``("done", id, rows, cpu_s)``,
``("aborted", id)`` (the reader closed the pipe), ``("error", id, text)``.
"""

from __future__ import annotations

import asyncio
import collections
import fcntl
import multiprocessing as mp
import os
import signal
import time
from collections.abc import AsyncIterator
from multiprocessing import forkserver
from multiprocessing.reduction import recv_handle, send_handle

from ..core.errors import PySysbenchError
from ..core.record import record
from ..runtime.childenv import parent_import_path, restore_environment
from .layout import BLOCK_ROWS, Layout, RandParams, block_range

PIPE_BYTES = 1 << 20  # pipe capacity asked for (Linux caps unprivileged pipes at 1 MiB)
READER_LIMIT = 4 << 20  # bytes buffered from a pipe before its reading pauses
EXIT_TIMEOUT_S = 5.0


@record(frozen=True)
class RangeJob:
    """Ids first_id..last_id of sbtest<table> (picklable: sent to generator processes); with
    ``shards`` > 1 only the ids that ``placement`` puts on node ``shard`` (one node's rows,
    ``--load-nodes``: :mod:`.placement`)."""

    table: int
    first_id: int
    last_id: int
    table_size: int
    params: RandParams
    seed: int
    fmt: str
    shard: int = 0
    shards: int = 1
    placement: str = "mod"

    @property
    def rows(self) -> int:
        if self.shards == 1:
            return self.last_id - self.first_id + 1
        from .placement import count  # numpy: only where a node's rows are loaded

        return count(self.first_id, self.last_id, self.shard, self.shards, self.placement)


class GeneratorCache:
    """One RowGenerator per (table size, parameters, seed, format): buffers are reused."""

    def __init__(self) -> None:
        self._gens: dict[tuple, object] = {}

    def get(self, job: RangeJob):
        from .rows import RowGenerator  # numpy: only where rows are generated

        key = (job.table_size, job.params, job.seed, job.fmt)
        gen = self._gens.get(key)
        if gen is None:
            gen = self._gens[key] = RowGenerator(job.table_size, job.params, job.seed, job.fmt)
        return gen


class RowStream:
    """The records of one range, read once by one load method."""

    job: RangeJob
    layout: Layout

    @property
    def row_bytes(self) -> int:
        return self.layout.row_bytes

    def chunks(self) -> AsyncIterator[bytes]:
        raise NotImplementedError

    def row_blocks(self, max_rows: int) -> AsyncIterator[bytes]:
        raise NotImplementedError

    async def finish(self) -> None:
        """Wait for the producer; raises when it failed."""

    def close(self) -> None:
        """Release the stream (also after a failed load)."""


class LocalStream(RowStream):
    def __init__(self, job: RangeJob, cache: GeneratorCache, progress: Counter):
        self.job = job
        self.gen = cache.get(job)
        self.layout = self.gen.layout
        self.progress = progress

    async def _blocks(self) -> AsyncIterator[memoryview]:
        job = self.job
        for block in self.gen.blocks(job.table, job.first_id, job.last_id, job.shard, job.shards, job.placement):
            yield block
            self.progress.value += len(block) // self.row_bytes
            await asyncio.sleep(0)  # let the other connections send

    async def chunks(self) -> AsyncIterator[bytes]:
        async for block in self._blocks():
            yield bytes(block)  # the generator reuses its buffer

    async def row_blocks(self, max_rows: int) -> AsyncIterator[bytes]:
        step = max_rows * self.row_bytes
        async for block in self._blocks():
            for at in range(0, len(block), step):
                yield bytes(block[at : at + step])


class Counter:
    """Rows produced (an in-process stand-in for the shared-memory counter)."""

    def __init__(self) -> None:
        self.value = 0


# --- generator processes ------------------------------------------------------------------


def _generator_main(conn, counter) -> None:
    """Entry point of a row-generator process (forked by the fork server)."""
    restore_environment()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop
    cache = GeneratorCache()
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return  # the parent is gone
        if msg[0] != "job":
            return
        _, job_id, job = msg
        fd = recv_handle(conn)
        cpu0 = time.process_time()
        try:
            rows = _write_range(fd, job, cache, counter)
            reply = ("done", job_id, rows, time.process_time() - cpu0)
        except BrokenPipeError:
            reply = ("aborted", job_id)
        except Exception as exc:  # reported, never a silent death
            reply = ("error", job_id, f"{type(exc).__name__}: {exc}")
        finally:
            try:
                os.close(fd)
            except OSError:
                pass
        try:
            conn.send(reply)
        except OSError:
            return


def _write_range(fd: int, job: RangeJob, cache: GeneratorCache, counter) -> int:
    gen = cache.get(job)
    rows = 0
    for block in gen.blocks(job.table, job.first_id, job.last_id, job.shard, job.shards, job.placement):
        view = block
        while view:
            view = view[os.write(fd, view) :]
        n = len(block) // gen.layout.row_bytes
        rows += n
        counter.value += n
    return rows


def _context():
    """A fork server that has imported numpy and the generator once: each
    generator process then starts in milliseconds instead of importing anew."""
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(["__main__", "pysysbench.load.source", "pysysbench.load.rows"])
    with parent_import_path():  # the fork server imports the parent's pysysbench, not the cwd's
        forkserver.ensure_running()
    return ctx


class GeneratorProcess:
    """A process (forked by the fork server) that generates the ranges one loading
    connection loads."""

    def __init__(self, index: int):
        ctx = _context()
        self.progress = ctx.RawValue("q", 0)
        self.conn, child = ctx.Pipe(duplex=True)  # a socketpair: can carry file descriptors
        self.proc = ctx.Process(
            target=_generator_main, args=(child, self.progress), daemon=True, name=f"pysysbench-rows-{index}"
        )
        self.proc.start()
        child.close()
        self._next_id = 0
        self._pending: dict[int, asyncio.Future] = {}
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(self.conn.fileno(), self._readable)
        self.cpu_s = 0.0
        self.dead = False

    def _readable(self) -> None:
        try:
            while self.conn.poll():
                msg = self.conn.recv()
                fut = self._pending.pop(msg[1], None)
                if msg[0] == "done":
                    self.cpu_s += msg[3]
                if fut is not None and not fut.done():
                    fut.set_result(msg)
        except (EOFError, OSError):
            self._died()

    def _died(self) -> None:
        if self.dead:
            return
        self.dead = True
        self._loop.remove_reader(self.conn.fileno())
        for fut in self._pending.values():
            if not fut.done():
                fut.set_result(
                    ("error", 0, f"row generator process {self.proc.name} died (exit code {self.proc.exitcode})")
                )
        self._pending.clear()

    def start(self, job: RangeJob) -> tuple[int, asyncio.Future]:
        """Start generating ``job`` into a new pipe; returns its read end and the result."""
        if self.dead:
            raise PySysbenchError(f"row generator process {self.proc.name} is not running")
        r, w = os.pipe()
        try:
            fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
        except OSError:
            pass  # the default 64 KiB works, a little slower
        self._next_id += 1
        fut = self._loop.create_future()
        self._pending[self._next_id] = fut
        try:
            self.conn.send(("job", self._next_id, job))
            send_handle(self.conn, w, self.proc.pid)
        except OSError:
            os.close(r)
            self._died()
            raise PySysbenchError(f"row generator process {self.proc.name} is not running") from None
        finally:
            os.close(w)
        return r, fut

    async def close(self) -> None:
        if not self.dead:
            self._loop.remove_reader(self.conn.fileno())
            self.dead = True
            try:
                self.conn.send(("exit",))
            except OSError:
                pass
        deadline = time.monotonic() + EXIT_TIMEOUT_S
        while self.proc.is_alive() and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        if self.proc.is_alive():
            self.proc.terminate()
            self.proc.join(1)
        self.conn.close()


class _ChunkQueue(asyncio.Protocol):
    """Read-pipe protocol handing over each read as it is (a StreamReader would copy
    it into its buffer and out again); reading pauses beyond READER_LIMIT bytes."""

    def __init__(self) -> None:
        self._chunks: collections.deque[bytes] = collections.deque()
        self._size = 0
        self._eof = False
        self._exc: BaseException | None = None
        self._waiter: asyncio.Future | None = None
        self._transport: asyncio.ReadTransport | None = None
        self._paused = False

    def connection_made(self, transport) -> None:
        self._transport = transport

    def data_received(self, data: bytes) -> None:
        self._chunks.append(data)
        self._size += len(data)
        if self._size > READER_LIMIT and not self._paused:
            self._paused = True
            self._transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        self._eof = True
        self._wake()
        return False

    def connection_lost(self, exc: BaseException | None) -> None:
        self._eof = True
        self._exc = exc
        self._wake()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    async def get(self) -> bytes | None:
        while not self._chunks and not self._eof:
            self._waiter = asyncio.get_running_loop().create_future()
            await self._waiter
        if self._chunks:
            data = self._chunks.popleft()
            self._size -= len(data)
            if self._paused and self._size < READER_LIMIT // 2:
                self._paused = False
                self._transport.resume_reading()
            return data
        if self._exc is not None:
            raise self._exc
        return None


class PipeStream(RowStream):
    """A range written into a pipe by a :class:`GeneratorProcess`."""

    def __init__(self, job: RangeJob, gen: GeneratorProcess):
        self.job = job
        self.layout = Layout.for_table(job.fmt, job.table_size)
        self.fd, self._result = gen.start(job)
        self._transport = None

    async def _connect(self, protocol: asyncio.BaseProtocol) -> None:
        pipe = os.fdopen(self.fd, "rb", buffering=0)
        self.fd = -1  # the transport owns it now
        self._transport, _ = await asyncio.get_running_loop().connect_read_pipe(lambda: protocol, pipe)

    async def _reader(self) -> asyncio.StreamReader:
        reader = asyncio.StreamReader(limit=READER_LIMIT)
        await self._connect(asyncio.StreamReaderProtocol(reader))
        return reader

    async def chunks(self) -> AsyncIterator[bytes]:
        """The pipe's reads as they come (up to 256 KiB each), without re-buffering."""
        queue = _ChunkQueue()
        await self._connect(queue)
        while (data := await queue.get()) is not None:
            yield data

    async def row_blocks(self, max_rows: int) -> AsyncIterator[bytes]:
        reader = await self._reader()
        left = self.job.rows
        while left:
            n = min(left, max_rows)
            yield await reader.readexactly(n * self.row_bytes)
            left -= n

    async def finish(self) -> None:
        msg = await self._result
        if msg[0] == "error":
            raise PySysbenchError(f"generating rows of sbtest{self.job.table} failed: {msg[2]}")
        if msg[0] == "aborted":
            raise PySysbenchError(f"the load of sbtest{self.job.table} stopped reading its rows")
        if msg[2] != self.job.rows:
            raise PySysbenchError(f"generated {msg[2]} rows of sbtest{self.job.table} instead of {self.job.rows}")

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()
            self._transport = None
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def ranges(table_size: int, parts: int) -> list[tuple[int, int]]:
    """Split ids 1..table_size into at most ``parts`` ranges on block boundaries."""
    blocks = len(block_range(1, table_size)) if table_size else 0
    parts = max(1, min(parts, blocks))
    out = []
    for i in range(parts):
        b0, b1 = blocks * i // parts, blocks * (i + 1) // parts
        out.append((b0 * BLOCK_ROWS + 1, min(b1 * BLOCK_ROWS, table_size)))
    return out
