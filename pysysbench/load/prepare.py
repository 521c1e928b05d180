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

Per node (``--load-nodes``): each row goes to node i of the N nodes listed where
``PARTITION BY HASH (id)`` over N partitions puts it, node i holding partition i
(:mod:`.placement`: MySQL/MariaDB ``id mod N``, as a Spider table over N data nodes;
PostgreSQL its hash, as postgres_fdw partitions of remainder i), each node on connections
of its own, all at once. A
table is created on every node (the workload's CREATE TABLE without the front's engine and
options), loaded, indexed and un-flagged there; then on the front (the host of the run's
connection options) it is created, unless the front has it already (a Spider table that was
defined over the nodes beforehand), so that the front shows a table only once its rows are in.

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
from ..drivers.targets import DATA_ROLES, PLACEMENT, NodeTarget, aimed, targets
from ..runtime.aio import all_or_nothing
from .layout import RandParams
from .marker import drop_existing, existing_tables
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

    def __init__(self, loader: Loader, index: int, node: int = 0, nodes: int = 1):
        self.loader = loader
        self.index = index
        self.node, self.nodes = node, nodes  # --load-nodes: the rows the placement puts on this node
        self.driver = loader.node_drivers[node] if loader.node_drivers else loader.driver
        self.conn: Any = None
        self.gen: GeneratorProcess | None = None
        self.counter: Any = Counter()

    def start_generator(self) -> None:
        """Fork the row generator first: it starts while the tables are created."""
        if self.index < self.loader.generators:
            self.gen = GeneratorProcess(self.index)
            self.counter = self.gen.progress

    async def open(self, conn=None) -> None:
        ld = self.loader
        self.conn = conn or await self.driver.connect(index=self.index)
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
        job = RangeJob(
            table, first_id, last_id, ld.size, ld.params, ld.seed, method.fmt, self.node, self.nodes, ld.placement
        )
        try:
            rows = await self._load(method, job)
        except BulkLoadRefused as exc:
            method = ld.fall_back(exc)
            rows = await self._load(method, job)
        if rows != job.rows:
            raise FatalSQLError(
                f"{method.name}: the server{self.where} reports {rows} rows loaded into sbtest{table} "
                f"(ids {first_id}..{last_id}{self.which}) instead of {job.rows}"
            )

    @property
    def where(self) -> str:
        return f" {self.loader.nodes[self.node].where}" if self.loader.nodes else ""

    @property
    def which(self) -> str:
        return f" of node {self.node + 1} of {self.nodes}, {self.loader.placement}" if self.nodes > 1 else ""

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

    def __init__(
        self,
        env,
        tables: int,
        size: int,
        create_sql: Callable[[int], str],
        node_sql: Callable[[int], str] | None = None,
    ):
        self.env = env
        self.create_sql = create_sql
        self.node_sql = node_sql or create_sql
        self.v = v = env.values
        self.driver = env.driver
        self.nodes, self.placement = load_nodes(v.get("load_nodes", ""), self.driver)
        self.node_drivers = [aimed(self.driver, t) for t in self.nodes]
        self.front_lock = asyncio.Lock()  # the front's connection, shared by the node groups
        self.front: Any = None  # --load-nodes: the front's own connection
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
        if self.nodes:
            n = len(self.nodes)  # groups of one stream per node, each group a table at a time
            groups = max(1, min(tables, self.threads // n))
            self.streams = [Stream(self, g * n + i, i, n) for g in range(groups) for i in range(n)]
        else:
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
        self.kept: set[int] = set()  # --load-nodes: tables the front has already (not created there)
        self._warned = False
        self._keep_keys = False  # the server refused to drop a primary key: keep them

    # -- planning --

    @property
    def parallel(self) -> bool:
        """Id ranges of one table on several streams (fewer tables than threads)."""
        return (
            self.method.parallel_ranges
            and not self.nodes
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
            if self.nodes:  # the front's connection stays the front's
                self.front, conn0 = conn0, None
                await asyncio.gather(*(s.open() for s in self.streams))
                await self._check_nodes()
            else:
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
            for conn in (conn0, self.front):
                if conn is not None:
                    await conn.close()
            await asyncio.gather(*(s.close() for s in self.streams), return_exceptions=True)
        self.observer.update(self.progress.snapshot(finished=True))

    async def _check_existing(self, conn) -> None:
        if self.v.get("force", False):
            await drop_existing(self.env, self.tables, conn)
            return
        existing = await existing_tables(conn, self.tables)
        if self.nodes:  # the front's own tables (Spider's, defined over the nodes) are kept
            self.kept = set(existing)
            if existing:
                self.say(f"{len(existing)} of the sbtest tables exist on the front ({self.driver.target()}): kept")
        elif existing:
            self._exists(existing, self.driver.target())

    def _exists(self, existing: list[int], where: str) -> None:
        more = f" (and {len(existing) - 1} more)" if len(existing) > 1 else ""
        raise TableExistsError(
            f"table 'sbtest{existing[0]}' already exists in {where}{more}: "
            "run cleanup first, or prepare with --force to replace the tables"
        )

    async def _check_nodes(self) -> None:
        """--load-nodes: no node may hold the tables already (--force drops them there)."""
        for s in self.streams[: len(self.nodes)]:
            if self.v.get("force", False):
                await drop_existing(self.env, self.tables, s.conn)
                continue
            existing = await existing_tables(s.conn, self.tables)
            if existing:
                self._exists(existing, f"node {self.nodes[s.node].name} ({s.driver.target()})")

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(TICK_S)
            self.observer.update(self.progress.snapshot())

    async def _tables(self) -> None:
        if self.nodes:
            await self._queue(
                [self.streams[g : g + len(self.nodes)] for g in range(0, len(self.streams), len(self.nodes))],
                self._table_on_nodes,
            )
            return
        if self.parallel:
            groups, first = [], 0
            for t, rngs in enumerate(self.plan, 1):
                groups.append(self._table(t, self.streams[first : first + len(rngs)], rngs))
                first += len(rngs)
            await all_or_nothing(groups)
            return
        whole = [(1, self.size)] if self.size else []
        await self._queue([[s] for s in self.streams], lambda t, group: self._table(t, group, whole))

    async def _queue(self, groups: list[list[Stream]], job) -> None:
        """The tables, in order, each to the next free group of streams."""
        queue: asyncio.Queue[int] = asyncio.Queue()
        for t in range(1, self.tables + 1):
            queue.put_nowait(t)

        async def worker(group: list[Stream]) -> None:
            while not queue.empty():
                await job(queue.get_nowait(), group)

        await all_or_nothing([worker(g) for g in groups])

    async def _table_on_nodes(self, t: int, group: list[Stream]) -> None:
        """--load-nodes: sbtest<t> created, flagged, loaded, indexed and un-flagged on every
        node of ``group`` (one stream per node), then created on the front."""
        name, d = f"sbtest{t}", self.driver.dialect
        conns = [s.conn for s in group]
        self.say(f"Creating table '{name}'...")
        for conn in conns:
            await conn.query(self.node_sql(t))
            await _run_all(conn, d.mark_loading_sql(name) if d.mark_loading_sql else [])
        self.progress.tables_created += 1
        if self.index_at == "before":
            await self._index(conns, t)
        if self.size > 0:
            self.say(f"Inserting {self.size} records into '{name}'")
            if self.progress.load_t0 is None:
                self.progress.load_t0 = perf_counter()
            await all_or_nothing([s.load_range(t, 1, self.size) for s in group])
            for conn in conns:
                for sql in d.after_load_sql(name, self.size) if d.after_load_sql else []:
                    await conn.fetchall(sql)
        if self.index_at != "before":
            await self._index(conns, t)
        for conn in conns:
            await _run_all(conn, d.mark_loaded_sql(name, "") if d.mark_loaded_sql else [])
        if t not in self.kept:
            async with self.front_lock:
                await self.front.query(self.create_sql(t))
                if self.v.create_secondary:
                    await self.front.query(f"CREATE INDEX k_{t} ON {name}(k)")
        self.progress.tables_done += 1

    async def _table(self, t: int, streams: list[Stream], rngs: list[tuple[int, int]]) -> None:
        """Create, load, index and un-flag sbtest<t> (sysbench's message order)."""
        name, conn, d = f"sbtest{t}", streams[0].conn, self.driver.dialect
        atomic = self.driver.caps.needs_commit_for_load  # SQLite: the whole table in one transaction
        self.say(f"Creating table '{name}'...")
        await self._create(conn, t, atomic)
        if self.index_at == "before":
            await self._index([conn], t)
        if self.size > 0:
            await self._rows(t, streams, rngs)
        if self.index_at != "before":
            await self._index([conn], t)
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

    async def _index(self, conns: list, t: int) -> None:
        """sbtest<t>'s secondary index, on each of ``conns`` (the nodes' at once)."""
        if not self.v.create_secondary:
            return
        self.say(f"Creating a secondary index on 'sbtest{t}'...")
        await all_or_nothing([conn.query(f"CREATE INDEX k_{t} ON sbtest{t}(k)") for conn in conns])
        self.progress.indexes_done += 1


async def _run_all(conn, statements: list[str]) -> None:
    for sql in statements:
        await conn.query(sql)


def load_nodes(text: str, driver) -> tuple[tuple[NodeTarget, ...], str]:
    """``--load-nodes``' nodes (a lab's data nodes or shards) and the placement of rows on them."""
    if not text:
        return (), ""
    nodes = targets(text, "--load-nodes", roles=DATA_ROLES)
    placement = PLACEMENT.get(getattr(driver.dialect, "family", ""))
    if placement is None:
        raise ConfigError("--load-nodes needs a MySQL/MariaDB or PostgreSQL driver (--db-driver=mysql or pgsql)")
    return nodes, placement


async def fast_prepare(
    env, tables: int, size: int, create_sql: Callable[[int], str], node_sql: Callable[[int], str] | None = None
) -> None:
    """Prepare ``tables`` sbtest tables of ``size`` rows with the bulk path;
    ``create_sql(t)`` is the workload's CREATE TABLE of table t (the workload owns
    its schema; the loader owns only the bulk path), ``node_sql(t)`` the one for the
    nodes of ``--load-nodes``."""
    if tables <= 0:
        return
    await Loader(env, tables, size, create_sql, node_sql).run()
