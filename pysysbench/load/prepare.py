"""The fast prepare: create the sbtest tables and load them at the database's bulk rate.

Flow (per table, as sysbench: ``Creating table``, ``Inserting``, ``Creating a
secondary index``):

1. one connection checks that no table exists (``--force`` drops them);
2. S loading *streams* open, each a connection plus, for large data sets, a
   row-generator process (:mod:`.source`; up to two per core, further streams
   generate in this process); S = ``--threads`` (SQLite: 1);
3. with at least as many tables as streams, each stream takes the next table
   from a queue and loads it whole; with fewer tables, every table gets its
   share of the streams, each loading one id range (when the method allows
   parallel ranges, see :mod:`.methods`);
4. a table is flagged while it loads (dialect ``mark_loading_sql``; SQLite
   loads a table in one transaction instead), its secondary index is built
   after the rows (or before, ``--create-secondary-at=before``), then the flag
   is cleared: a prepare killed half-way leaves flagged tables, which ``run``
   refuses (:func:`.marker.check_complete`).

Progress: a ticker sends a frozen :class:`LoadSnapshot` to the observer every
``TICK_S``; the CLI renders it (rich bars on a terminal, a periodic plain line
when piped).  Library code never prints: sysbench's message lines go through
``observer.say``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
from collections.abc import Callable
from time import perf_counter
from typing import Any

from ..core.errors import BulkLoadRefused, ConfigError, FatalSQLError, TableExistsError
from ..core.record import record
from ..drivers.base import literal
from ..runtime.aio import all_or_nothing
from .layout import RandParams
from .marker import drop_existing
from .methods import METHODS, LoadMethod, choose
from .source import Counter, GeneratorCache, GeneratorProcess, LocalStream, PipeStream, RangeJob, ranges

TICK_S = 0.2
PROCESS_MIN_ROWS = 100_000  # below this many rows in all, generating in-process is quicker than spawning
MAX_GENERATORS = 32  # row-generator processes at most


@record(frozen=True)
class LoadSnapshot:
    """Progress of one prepare (the contract between the loader and any display)."""

    elapsed_s: float
    tables: int
    tables_created: int
    tables_done: int
    rows_total: int
    rows_done: int
    load_elapsed_s: float  # since the first row was sent
    indexes_total: int
    indexes_done: int
    streams: int
    method: str
    finished: bool = False

    @property
    def rows_per_s(self) -> float:
        return self.rows_done / self.load_elapsed_s if self.load_elapsed_s > 0 else 0.0

    @property
    def eta_s(self) -> float | None:
        rate = self.rows_per_s
        return (self.rows_total - self.rows_done) / rate if rate > 0 else None


class SayObserver:
    """Messages to a ``say`` function, progress ignored (library use, tests)."""

    def __init__(self, say):
        self.say = say

    def update(self, snap: LoadSnapshot) -> None:
        pass


class Progress:
    """Single-writer counters of the loader; read by the ticker."""

    def __init__(self, tables: int, rows_total: int, indexes_total: int, streams: int, method: str):
        self.t0 = perf_counter()
        self.load_t0: float | None = None
        self.tables, self.rows_total, self.indexes_total = tables, rows_total, indexes_total
        self.streams, self.method = streams, method
        self.tables_created = self.tables_done = self.indexes_done = 0
        self.counters: list[Any] = []  # rows produced per stream (objects with .value)

    def snapshot(self, finished: bool = False) -> LoadSnapshot:
        now = perf_counter()
        rows = self.rows_total if finished else min(self.rows_total, sum(c.value for c in self.counters))
        return LoadSnapshot(
            elapsed_s=now - self.t0,
            tables=self.tables,
            tables_created=self.tables_created,
            tables_done=self.tables_done,
            rows_total=self.rows_total,
            rows_done=rows,
            load_elapsed_s=now - self.load_t0 if self.load_t0 is not None else 0.0,
            indexes_total=self.indexes_total,
            indexes_done=self.indexes_done,
            streams=self.streams,
            method=self.method,
            finished=finished,
        )


class Stream:
    """One loading connection and where its rows come from."""

    def __init__(self, loader: Loader, index: int):
        self.loader = loader
        self.index = index
        self.conn = None
        self.gen: GeneratorProcess | None = None
        self.counter: Any = Counter()

    def start_generator(self) -> None:
        """Fork the row generator first: it starts while the tables are created."""
        if self.index < self.loader.generators:
            self.gen = GeneratorProcess(self.index)
            self.counter = self.gen.progress

    async def open(self, conn=None) -> None:
        ld = self.loader
        self.conn = conn or await ld.driver.connect(index=self.index)
        for sql in ld.driver.dialect.load_session_sql:
            await self.conn.query(sql)

    async def close(self) -> None:
        if self.gen is not None:
            await self.gen.close()
        if self.conn is not None:
            await self.conn.close()

    async def load_range(self, table: int, first_id: int, last_id: int) -> None:
        ld = self.loader
        method = ld.method
        job = RangeJob(table, first_id, last_id, ld.size, ld.params, ld.seed, method.fmt)
        try:
            rows = await self._load(method, job)
        except BulkLoadRefused as exc:
            method = ld.fall_back(exc)
            rows = await self._load(method, job)
        if rows != job.rows:
            raise FatalSQLError(
                f"{method.name}: the server reports {rows} rows loaded into sbtest{table} "
                f"(ids {first_id}..{last_id}) instead of {job.rows}"
            )

    async def _load(self, method: LoadMethod, job: RangeJob) -> int:
        ld = self.loader
        job = dataclasses.replace(job, fmt=method.fmt)
        stream: PipeStream | LocalStream
        if self.gen is not None:
            stream = PipeStream(job, self.gen)
        else:
            stream = LocalStream(job, ld.cache, self.counter)
        try:
            rows = await method.load(self.conn, f"sbtest{job.table}", stream)
            await stream.finish()
        finally:
            stream.close()
        return rows


class Loader:
    """One fast prepare of ``tables`` tables of ``size`` rows."""

    def __init__(self, env, tables: int, size: int, create_sql: Callable[[int], str]):
        self.env = env
        self.create_sql = create_sql
        self.v = v = env.values
        self.driver = env.driver
        self.tables, self.size = tables, size
        self.threads = max(1, v.threads)
        self.observer = getattr(env, "observer", None) or SayObserver(env.say)
        self.say = self.observer.say
        requested = v.get("load_method", "auto") or "auto"
        total = tables * size
        self.processes = total >= PROCESS_MIN_ROWS and (os.cpu_count() or 1) > 1
        self.requested = requested
        self.method = choose(requested, self.driver)
        self.params = RandParams.from_values(v)
        self.seed = env.seed if env.seed is not None else int.from_bytes(os.urandom(8), "little") >> 1
        self.cache = GeneratorCache()
        self.index_at = v.get("create_secondary_at", "after") or "after"
        self._comments: dict[int, str] = {}  # table -> the comment its CREATE TABLE gave
        self.plan = self._plan()
        if self.parallel:
            nstreams = sum(len(p) for p in self.plan)
        elif self.driver.caps.blocking:
            nstreams = 1  # SQLite: one writer; a second connection would wait on the file lock
        else:
            nstreams = min(self.threads, tables)
        self.streams = [Stream(self, i) for i in range(max(1, nstreams))]
        # one generator process per stream, up to two per core: more would only share the
        # cores; the streams beyond generate in this process (3-4 M rows/s per core here)
        cores = os.cpu_count() or 1
        self.generators = min(len(self.streams), 2 * cores, MAX_GENERATORS) if self.processes else 0
        self.progress = Progress(
            tables, total, tables if v.create_secondary else 0, len(self.streams), self.method.name
        )
        self._warned = False
        self._keep_keys = False  # the server refused to drop a primary key: keep them

    # -- planning --

    @property
    def parallel(self) -> bool:
        """Id ranges of one table on several streams (fewer tables than threads)."""
        return (
            self.method.parallel_ranges
            and not self.driver.caps.blocking
            and self.size > 0
            and self.tables < self.threads
        )

    def _plan(self) -> list[list[tuple[int, int]]]:
        """Per table, the id ranges its streams load (parallel mode only)."""
        if not self.parallel:
            return []
        out = []
        for t in range(self.tables):
            share = self.threads // self.tables + (1 if t < self.threads % self.tables else 0)
            out.append(ranges(self.size, share))
        return out

    def fall_back(self, exc: BulkLoadRefused) -> LoadMethod:
        """LOAD DATA LOCAL refused by the server: the next method of the driver (auto only)."""
        if self.requested not in ("auto", ""):
            raise ConfigError(
                f"--load-method={self.requested}: the server refuses it ({exc}); enable it "
                "(MySQL/MariaDB: SET GLOBAL local_infile=1) or use --load-method=auto"
            ) from None
        fallback = next(METHODS[m] for m in self.driver.caps.bulk_methods if m != "load-data")
        if not self._warned:
            self._warned = True
            self.say(
                f"WARNING: the server refuses {self.method.name} ({exc}): loading with {fallback.name} "
                "instead (MySQL/MariaDB: SET GLOBAL local_infile=1 enables the fast path)"
            )
        self.method = fallback
        return fallback

    # -- the whole prepare --

    async def run(self) -> None:
        conn0 = None
        ticker = None
        try:
            for s in self.streams:
                s.start_generator()
            conn0 = await self.driver.connect()
            await self._check_existing(conn0)
            if self.threads > 1:
                self.say("Initializing worker threads...\n")
            await asyncio.gather(*(s.open(conn0 if s.index == 0 else None) for s in self.streams))
            conn0 = None  # stream 0 owns it now
            self.progress.counters = [s.counter for s in self.streams]
            ticker = asyncio.create_task(self._tick())
            await self._tables()
        finally:
            if ticker is not None:
                ticker.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await ticker
            if conn0 is not None:
                await conn0.close()
            await asyncio.gather(*(s.close() for s in self.streams), return_exceptions=True)
        self.observer.update(self.progress.snapshot(finished=True))

    async def _check_existing(self, conn) -> None:
        if self.v.get("force", False):
            await drop_existing(self.env, self.tables, conn)
            return
        existing = [t for t in range(1, self.tables + 1) if await conn.table_exists(f"sbtest{t}")]
        if existing:
            more = f" (and {len(existing) - 1} more)" if len(existing) > 1 else ""
            raise TableExistsError(
                f"table 'sbtest{existing[0]}' already exists in {self.driver.target()}{more}: "
                "run cleanup first, or prepare with --force to replace the tables"
            )

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(TICK_S)
            self.observer.update(self.progress.snapshot())

    async def _tables(self) -> None:
        if self.parallel:
            groups, first = [], 0
            for t, rngs in enumerate(self.plan, 1):
                groups.append(self._table(t, self.streams[first : first + len(rngs)], rngs))
                first += len(rngs)
            await all_or_nothing(groups)
            return
        queue: asyncio.Queue[int] = asyncio.Queue()
        for t in range(1, self.tables + 1):
            queue.put_nowait(t)

        async def worker(stream: Stream) -> None:
            while not queue.empty():
                t = queue.get_nowait()
                await self._table(t, [stream], [(1, self.size)] if self.size else [])

        await all_or_nothing([worker(s) for s in self.streams])

    async def _table(self, t: int, streams: list[Stream], rngs: list[tuple[int, int]]) -> None:
        """Create, load, index and un-flag sbtest<t> (sysbench's message order)."""
        name, conn, d = f"sbtest{t}", streams[0].conn, self.driver.dialect
        atomic = self.driver.caps.needs_commit_for_load  # SQLite: the whole table in one transaction
        self.say(f"Creating table '{name}'...")
        await self._create(conn, t, atomic)
        if self.index_at == "before":
            await self._index(conn, t)
        if self.size > 0:
            await self._rows(t, streams, rngs)
        if self.index_at != "before":
            await self._index(conn, t)
        comment = self._comments.pop(t, "")
        await _run_all(conn, ["COMMIT"] if atomic else d.mark_loaded_sql(name, comment) if d.mark_loaded_sql else [])
        self.progress.tables_done += 1

    async def _rows(self, t: int, streams: list[Stream], rngs: list[tuple[int, int]]) -> None:
        """Load the id ranges on their streams; around them, the deferred primary key
        and the dialect's after-load statements."""
        name, conn, d = f"sbtest{t}", streams[0].conn, self.driver.dialect
        self.say(f"Inserting {self.size} records into '{name}'")
        defer_key = (
            self.index_at != "before"
            and not self.v.get("secondary", False)
            and d.drop_primary_key_sql is not None
            and not self._keep_keys
            and await self._drop_key(conn, name)
        )
        if self.progress.load_t0 is None:
            self.progress.load_t0 = perf_counter()
        await all_or_nothing([s.load_range(t, lo, hi) for s, (lo, hi) in zip(streams, rngs)])
        await _run_all(conn, d.add_primary_key_sql(name) if defer_key else [])
        for sql in d.after_load_sql(name, self.size) if d.after_load_sql else []:
            await conn.fetchall(sql)

    async def _drop_key(self, conn, name: str) -> bool:
        """Drop the primary key for the load; engines that refuse (CockroachDB cannot
        drop a primary key alone) keep it, for this and every later table."""
        try:
            await _run_all(conn, self.driver.dialect.drop_primary_key_sql(name))
            return True
        except FatalSQLError:
            self._keep_keys = True
            return False

    async def _create(self, conn, t: int, atomic: bool) -> None:
        """sysbench's CREATE TABLE, flagged as loading (or inside the table's transaction)."""
        d = self.driver.dialect
        if atomic:
            await conn.query("BEGIN")
        await conn.query(self.create_sql(t))
        if not atomic and d.mark_loading_sql is not None:
            if d.table_comment_sql:  # the flag replaces the comment: keep the CREATE TABLE's
                rows = await conn.fetchall(d.table_comment_sql.replace("?", literal(f"sbtest{t}")))
                self._comments[t] = str(rows[0][0] or "") if rows else ""
            await _run_all(conn, d.mark_loading_sql(f"sbtest{t}"))
        self.progress.tables_created += 1

    async def _index(self, conn, t: int) -> None:
        if not self.v.create_secondary:
            return
        self.say(f"Creating a secondary index on 'sbtest{t}'...")
        await conn.query(f"CREATE INDEX k_{t} ON sbtest{t}(k)")
        self.progress.indexes_done += 1


async def _run_all(conn, statements: list[str]) -> None:
    for sql in statements:
        await conn.query(sql)


async def fast_prepare(env, tables: int, size: int, create_sql: Callable[[int], str]) -> None:
    """Prepare ``tables`` sbtest tables of ``size`` rows with the bulk path;
    ``create_sql(t)`` is the workload's CREATE TABLE of table t (the workload owns
    its schema; the loader owns only the bulk path)."""
    if tables <= 0:
        return
    await Loader(env, tables, size, create_sql).run()
