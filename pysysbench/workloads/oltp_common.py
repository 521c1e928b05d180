"""The sbtest data set shared by the OLTP workloads: options, schema, prepare,
cleanup, prewarm (spec section 2 and 3.1), and the OLTP event's statements and parts,
defined once (``SQL``, ``PARTS``: workloads/oltp.py runs them).

``prepare`` loads with the database's bulk path by default (pysysbench.load:
COPY, LOAD DATA LOCAL, SQLite batches).  ``--load-method=insert`` is sysbench's
own: tables striped over ``--threads`` connections, rows generated in sysbench's
draw order (c, pad, k) and sent as multi-row INSERTs of at most 512 KiB, the
secondary index created after the load.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence
from typing import Any

from ..core.errors import ConfigError, DataCheckError, TableExistsError, listing
from ..core.options import COUNT, INT32_MAX, Bounds, Option, OptType, Values
from ..core.rand import C_TEMPLATE, PAD_TEMPLATE, Rand
from ..core.record import record
from ..load.marker import drop_existing
from ..load.options import INSERT
from ..load.sizing import derived_options, table_size_for
from .base import ID, Env, Workload, native_step, plus, string
from .check import AT_MOST, EXACT, TableReport, check_table

GROUP = "workload options"
BULK_INSERT_MAX_BYTES = 524_288  # sysbench's bulk insert buffer (spec 2.4)
PREWARM_SESSION_BYTES = 2 * 1024**3  # MySQL tmp_table_size / max_heap_table_size (spec 2.7)


TABLES = Bounds(1, INT32_MAX)
TABLE_SIZE = Bounds(0, INT32_MAX, why="the range of the INTEGER id column")


def _opt(name: str, type_: OptType, default: Any, text: str, bounds: Bounds | None = None, since: str = "") -> Option:
    """A workload option; ``since`` "1.1": sysbench 1.1's (help text ending in "(sysbench 1.1)")."""
    return Option(name, type_, default, text, GROUP, bounds=bounds, extra=bool(since), since=since)


OLTP_OPTIONS = [
    _opt(
        "auto_inc",
        OptType.BOOL,
        True,
        "Use AUTO_INCREMENT column as Primary Key (for MySQL), or its alternatives "
        "in other DBMS. When disabled, use client-generated IDs",
    ),
    _opt("create_secondary", OptType.BOOL, True, "Create a secondary index in addition to the PRIMARY KEY"),
    _opt("create_table_options", OptType.STRING, "", "Extra CREATE TABLE options (sysbench 1.1)", since="1.1"),
    _opt("delete_inserts", OptType.INT, 1, "Number of DELETE/INSERT combinations per transaction", COUNT),
    _opt("distinct_ranges", OptType.INT, 1, "Number of SELECT DISTINCT queries per transaction", COUNT),
    _opt("index_updates", OptType.INT, 1, "Number of UPDATE index queries per transaction", COUNT),
    _opt("mysql_storage_engine", OptType.STRING, "innodb", "Storage engine, if MySQL is used"),
    _opt("non_index_updates", OptType.INT, 1, "Number of UPDATE non-index queries per transaction", COUNT),
    _opt("order_ranges", OptType.INT, 1, "Number of SELECT ORDER BY queries per transaction", COUNT),
    Option(
        "pgsql_variant",
        OptType.STRING,
        "",
        "Use this PostgreSQL variant when running with the PostgreSQL "
        "driver. The only currently supported variant is 'redshift'. When enabled, create_secondary is "
        "automatically disabled, and delete_inserts is set to 0",
        GROUP,
        show_default=False,
    ),
    _opt("point_selects", OptType.INT, 10, "Number of point SELECT queries per transaction", COUNT),
    _opt("range_selects", OptType.BOOL, True, "Enable/disable all range SELECT queries"),
    _opt("range_size", OptType.INT, 100, "Range size for range SELECT queries", COUNT),
    _opt(
        "reconnect",
        OptType.INT,
        0,
        "Reconnect after every N events. The default (0) is to not reconnect (sysbench 1.1)",
        COUNT,
        since="1.1",
    ),
    _opt("secondary", OptType.BOOL, False, "Use a secondary index in place of the PRIMARY KEY"),
    _opt("simple_ranges", OptType.INT, 1, "Number of simple range SELECT queries per transaction", COUNT),
    _opt(
        "skip_trx",
        OptType.BOOL,
        False,
        "Don't start explicit transactions and execute all queries in the AUTOCOMMIT mode",
    ),
    _opt("sum_ranges", OptType.INT, 1, "Number of SELECT SUM() queries per transaction", COUNT),
    _opt("table_size", OptType.INT, 10000, "Number of rows per table", TABLE_SIZE),
    _opt("tables", OptType.INT, 1, "Number of tables", TABLES),
]


# --- the OLTP event (sysbench 1.0.20 oltp_common.lua's execute_* functions) ----------------

SQL = {
    "point": "SELECT c FROM sbtest{table} WHERE id=?",
    "simple": "SELECT c FROM sbtest{table} WHERE id BETWEEN ? AND ?",
    "sum": "SELECT SUM(k) FROM sbtest{table} WHERE id BETWEEN ? AND ?",
    "order": "SELECT c FROM sbtest{table} WHERE id BETWEEN ? AND ? ORDER BY c",
    "distinct": "SELECT DISTINCT c FROM sbtest{table} WHERE id BETWEEN ? AND ? ORDER BY c",
    "index": "UPDATE sbtest{table} SET k=k+1 WHERE id=?",
    "non_index": "UPDATE sbtest{table} SET c=? WHERE id=?",
    "delete": "DELETE FROM sbtest{table} WHERE id=?",
    "insert": "INSERT INTO sbtest{table} (id, k, c, pad) VALUES (?, ?, ?, ?)",
}
RANGES = ("simple", "sum", "order", "distinct")
RANGE_WIDTH = "range_width"  # in a plus() draw: --range_size - 1


@record(frozen=True)
class Part:
    """One part of the OLTP event: ``steps`` are ``native_step``s whose statements are
    names (SQL's keys, BEGIN and COMMIT) and whose count is 1 or a name (``Oltp.counts``).
    ``helper(ctx, *args)`` is the method of ``Oltp`` that runs it (a subclass that overrides
    it runs its own Python); it sends nothing unless the workload's ``flag`` is true."""

    helper: str
    args: tuple
    flag: str | None
    steps: tuple


def _each(name: str, draws: tuple, calls: tuple) -> tuple:
    """A step of statement ``name`` on a random table, ``counts[name]`` times."""
    return native_step((name,), name, draws, calls)


# the parts in sysbench's order of draws: a step on a random table draws the table even when its
# count is 0, then each repetition's values
PARTS = {
    "begin": Part("_begin", (), "use_trx", (native_step(("begin",), 1, per_table=False),)),
    "point": Part("_points", (), None, (_each("point", (ID,), ((0, (0,)),)),)),
    "ranges": Part(
        "_ranges",
        (),
        "range_selects",
        tuple(_each(kind, (ID, plus(0, RANGE_WIDTH)), ((0, (0, 1)),)) for kind in RANGES),
    ),
    "index": Part("_points", ("index",), None, (_each("index", (ID,), ((0, (0,)),)),)),
    "non_index": Part("_non_index", (), None, (_each("non_index", (string(C_TEMPLATE), ID), ((0, (0, 1)),)),)),
    "delete": Part(
        "_delete_inserts",
        (),
        None,
        (
            native_step(
                ("delete", "insert"),
                "delete",
                (ID, ID, string(C_TEMPLATE), string(PAD_TEMPLATE)),
                ((0, (0,)), (1, (0, 1, 2, 3))),
            ),
        ),
    ),
    "commit": Part("_commit", (), "use_trx", (native_step(("commit",), 1, per_table=False),)),
}


# --- the sbtest SQL that differs per server family (Dialect.family) ----------------------

# after CREATE TABLE's closing parenthesis: the storage engine (--mysql_storage_engine)
ENGINE_CLAUSE = {"mysql": lambda v: f"/*! ENGINE = {v.mysql_storage_engine} */"}


def _mysql_prewarm(table: int, size: int) -> list[str]:
    return [
        f"SET SESSION tmp_table_size={PREWARM_SESSION_BYTES}",
        f"SET SESSION max_heap_table_size={PREWARM_SESSION_BYTES}",
        f"ANALYZE TABLE sbtest{table}",
        f"SELECT AVG(id) FROM (SELECT * FROM sbtest{table} FORCE KEY (PRIMARY) LIMIT {size}) t",
        f"SELECT COUNT(*) FROM (SELECT * FROM sbtest{table} WHERE k LIKE '%0%' LIMIT {size}) t",
    ]


def _pg_prewarm(table: int, size: int) -> list[str]:
    """pg_prewarm loads heap and indexes when the extension is installed; the
    reads after it do the same job when it is not (they are cheap once warm)."""
    return [
        "DO $$ BEGIN IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_prewarm') THEN "
        f"PERFORM pg_prewarm(r) FROM (SELECT 'sbtest{table}'::regclass AS r UNION ALL "
        f"SELECT indexrelid::regclass FROM pg_index WHERE indrelid = 'sbtest{table}'::regclass) s; "
        "END IF; END $$",
        f"ANALYZE sbtest{table}",
        f"SELECT AVG(id) FROM (SELECT * FROM sbtest{table} ORDER BY id LIMIT {size}) t",
        f"SELECT COUNT(*) FROM (SELECT * FROM sbtest{table} WHERE k::text LIKE '%0%' LIMIT {size}) t",
    ]


# statements that read table N (of the given size) into the server's caches; a family
# without an entry (SQLite) refuses prewarm
PREWARM_SQL = {"mysql": _mysql_prewarm, "postgresql": _pg_prewarm}


def create_table_sql(values: Values, driver, table: int, on_node: bool = False) -> str:
    """The exact CREATE TABLE text of oltp_common.lua (spec 2.1); ``on_node``: the table on a
    node of --load-nodes, in the server's default engine and without the front's
    --create-table-options (a Spider front's engine and partitions are not the nodes')."""
    d = driver.dialect
    id_def = d.id_auto_inc if values.auto_inc else d.id_plain
    key = "KEY xid" if values.secondary else "PRIMARY KEY"
    engine = "" if on_node else ENGINE_CLAUSE.get(d.family, lambda v: "")(values)
    options = "" if on_node else values.get("create_table_options", "")
    return (
        f"CREATE TABLE sbtest{table}(\n"
        f"  id {id_def},\n"
        "  k INTEGER DEFAULT '0' NOT NULL,\n"
        "  c CHAR(120) DEFAULT '' NOT NULL,\n"
        "  pad CHAR(60) DEFAULT '' NOT NULL,\n"
        f"  {key} (id)\n"
        f") {engine} {options}"
    )


def row_literals(rand: Rand, table_size: int, auto_inc: bool):
    """Rows in sysbench's order of draws: c, pad, then k."""
    string = rand.string
    default = rand.default
    for i in range(1, table_size + 1):
        c = string(C_TEMPLATE)
        pad = string(PAD_TEMPLATE)
        k = default(1, table_size)
        if auto_inc:
            yield f"({k}, '{c}', '{pad}')"
        else:
            yield f"({i}, {k}, '{c}', '{pad}')"


async def bulk_insert(conn, prefix: str, rows, *, wrap_trx: bool) -> None:
    """Send ``rows`` as multi-row INSERTs no longer than 512 KiB (spec 2.4)."""
    buf: list[str] = []
    length = len(prefix)
    if wrap_trx:
        await conn.query("BEGIN")
    for row in rows:
        # flush when row + terminator (+ comma) would not fit; the terminator is
        # reserved, not accumulated: `length` is the statement's length
        comma = 1 if buf else 0
        if buf and length + comma + len(row) + 1 > BULK_INSERT_MAX_BYTES:
            await conn.query(prefix + ",".join(buf))
            buf, length = [], len(prefix)
            comma = 0
        buf.append(row)
        length += comma + len(row)
    if buf:
        await conn.query(prefix + ",".join(buf))
    if wrap_trx:
        await conn.query("COMMIT")


async def drop_tables(env: Env, count: int) -> None:
    """sysbench's cleanup: one connection, ``DROP TABLE IF EXISTS sbtest1..count`` (spec 2.6)."""
    conn = await env.driver.connect()
    try:
        for table in range(1, count + 1):
            env.say(f"Dropping table 'sbtest{table}'...")
            await conn.query(f"DROP TABLE IF EXISTS sbtest{table}")
    finally:
        await conn.close()


async def size_notes(conn, table: str, size: int, target: str) -> tuple[str, ...]:
    """A run given neither --table-size nor --data-size assumes the default size: when the
    first table's ids stop short of it, or reach twice it, one warning with both sizes (two
    probes of the primary key; rows inserted by earlier runs stay below twice the size)."""
    rows = await conn.fetchall(f"SELECT max(id) FROM {table} WHERE id <= {2 * size}")
    if not rows or rows[0][0] is None:  # no rows at all (or a dry run): nothing to compare
        return ()
    upto = int(rows[0][0])
    if size <= upto < 2 * size:
        return ()
    if upto >= 2 * size:
        rows = await conn.fetchall(f"SELECT max(id) FROM {table}")
        upto = rows[0][0]
    return (
        f"WARNING: {table} in {target} holds ids up to {upto}, but this run assumes --table-size={size} "
        "(neither --table-size nor --data-size was given): give the size the tables were prepared with",
    )


async def short_notes(conn, tables: Sequence[str], size: int, target: str) -> tuple[str, ...]:
    """A run given --table-size (or --data-size) on tables prepared smaller: one warning
    naming the first table whose ids stop short of the size and how many do (one probe of
    each table's primary key); sysbench runs anyway, its reads of the missing rows find nothing."""
    short: list[tuple[str, int]] = []
    for table in tables:
        rows = await conn.fetchall(f"SELECT max(id) FROM {table} WHERE id <= {size}")
        if not rows:  # a dry run: nothing to compare
            return ()
        upto = int(rows[0][0] or 0)
        if upto < size:
            short.append((table, upto))
    if not short:
        return ()
    table, upto = short[0]
    more = f" (and {len(short) - 1} more of the {len(tables)} tables)" if len(short) > 1 else ""
    return (
        f"WARNING: {table} in {target} holds ids up to {upto}, fewer rows than --table-size={size}{more}: "
        "prepare the tables with that size, or run with the size they were prepared with",
    )


class TableNames(Sequence):
    """sbtest1..sbtestN, named when asked: --tables=2147483647 made a list of two billion
    names (the machine ran out of memory) before the pre-flight found sbtest2 missing."""

    def __init__(self, n: int):
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self.n))]
        if not -self.n <= i < self.n:
            raise IndexError(i)
        return f"sbtest{i % self.n + 1}"


class OltpBase(Workload):
    """Schema, data and commands shared by the bundled OLTP workloads."""

    options = OLTP_OPTIONS
    commands = ("prepare", "prewarm", "run", "cleanup", "help", "check")  # sysbench's order, then ours
    loads_per_node = True  # --load-nodes (load/prepare.py)
    write_ids = {"index": 0, "non_index": 1, "delete": 0, "insert": 0}  # SQL's writes: where the id is
    prepare_table_size: int | None = None  # oltp_insert overrides for auto_inc=off
    # options accepted and ignored, as sysbench 1.0.20's oltp_common.lua does (its code tests a Lua
    # global the option never sets); pysysbench's own face warns when one is given (command/cmdline.py)
    inert_options = {
        "pgsql_variant": "sysbench 1.0.20's oltp scripts accept it and ignore it (their code reads "
        "a Lua global the option never sets), and so does pysysbench"
    }
    row_count_rule = EXACT  # what running this workload does to the row count

    @classmethod
    def derived_options(cls, values: Values, driver) -> dict[str, Any]:
        return derived_options(values, driver)  # --data-size: the table size it asks for

    def configure(self) -> None:
        v = self.values
        self.tables = v.tables
        self.table_size = table_size_for(v, self.driver)  # --table-size, or from --data-size
        self.range_size = v.range_size
        self.trx = not v.skip_trx

    def required_tables(self) -> Sequence[str]:
        return TableNames(self.tables)

    async def check_ready(self, conn, tables: list[str], target: str) -> None:
        await super().check_ready(conn, tables, target)
        v = self.values
        if not tables:
            return
        if not (v.is_set("table_size") or v.is_set("data_size")):
            self.ready_notes = await size_notes(conn, tables[0], self.table_size, target)
        elif self.prepare_table_size is None:  # the tables start with --table-size rows (not oltp_insert's empty ones)
            self.ready_notes = await short_notes(conn, tables, self.table_size, target)

    async def prepare(self, env: Env) -> None:
        size = self.table_size if self.prepare_table_size is None else self.prepare_table_size
        method = env.values.get("load_method", INSERT) or "auto"
        if method != INSERT:  # the bulk path (pysysbench.load), the default
            from ..load.prepare import fast_prepare  # numpy: imported when used

            await fast_prepare(
                env,
                self.tables,
                size,
                lambda t: create_table_sql(env.values, env.driver, t),
                lambda t: create_table_sql(env.values, env.driver, t, on_node=True),
            )
            return
        if env.values.get("load_nodes", ""):
            raise ConfigError("--load-nodes loads with the bulk prepare: give --load-method=auto, not insert")
        if env.values.get("force", False):
            await drop_existing(env, self.tables)
        await self._striped(env, self.tables, self._prepare_table)

    async def _striped(self, env: Env, ntables: int, job) -> None:
        """Worker t handles tables t+1, t+1+T, ... on its own connection (spec 2.5)."""
        threads = max(1, env.values.threads)
        if threads > 1:
            env.say("Initializing worker threads...\n")

        async def worker(t: int) -> None:
            mine = list(range(t + 1, ntables + 1, threads))
            if not mine:
                return
            conn = await env.driver.connect(index=t)
            try:
                for table in mine:
                    await job(env, conn, table)
            finally:
                await conn.close()

        await asyncio.gather(*(worker(t) for t in range(min(threads, max(ntables, 1)))))

    async def _prepare_table(self, env: Env, conn, table: int) -> None:
        v = env.values
        env.say(f"Creating table 'sbtest{table}'...")
        if await conn.table_exists(f"sbtest{table}"):
            raise TableExistsError(f"table 'sbtest{table}' already exists in {env.driver.target()}: run cleanup first")
        await conn.query(create_table_sql(v, env.driver, table))
        size = self.table_size if self.prepare_table_size is None else self.prepare_table_size
        if size > 0:
            env.say(f"Inserting {size} records into 'sbtest{table}'")
            cols = "(k, c, pad)" if v.auto_inc else "(id, k, c, pad)"
            seed = None if env.seed is None else env.seed * 1_000_003 + table
            rows = row_literals(Rand.from_options(v, seed), size, v.auto_inc)
            await bulk_insert(
                conn, f"INSERT INTO sbtest{table}{cols} VALUES", rows, wrap_trx=env.driver.caps.needs_commit_for_load
            )
        if v.create_secondary:
            env.say(f"Creating a secondary index on 'sbtest{table}'...")
            await conn.query(f"CREATE INDEX k_{table} ON sbtest{table}(k)")

    async def cleanup(self, env: Env) -> None:
        await drop_tables(env, self.tables)
        if env.values.get("load_nodes", ""):  # and each node's tables (--load-nodes)
            from ..drivers.targets import DATA_ROLES, aimed, targets

            for node in targets(env.values.load_nodes, "--load-nodes", roles=DATA_ROLES):
                env.say(f"On node {node.name}:")
                await drop_tables(dataclasses.replace(env, driver=aimed(env.driver, node)), self.tables)

    async def check(self, env: Env) -> list[TableReport]:
        """Consistency of every table (see workloads/check.py); raises when any
        table has a problem, after reporting every table."""
        v = env.values
        rule = self.row_count_rule
        if v.skip_trx and rule == EXACT and self.counts_delete_inserts():
            rule = AT_MOST  # without transactions a delete/insert pair can lose its insert
        conn = await env.driver.connect()
        reports = []
        try:
            for table in range(1, self.tables + 1):
                if not await conn.table_exists(f"sbtest{table}"):
                    reports.append(TableReport(f"sbtest{table}", problems=["table does not exist"]))
                else:
                    reports.append(
                        await check_table(conn, env.driver.dialect, table, self.table_size, rule, v.create_secondary)
                    )
                env.say(reports[-1].line())
        finally:
            await conn.close()
        bad = [r.table for r in reports if r.problems]
        if bad:
            raise DataCheckError(f"data check failed for {listing(bad)}")
        env.say(f"Data check passed: {len(reports)} table(s) consistent")
        return reports

    def counts_delete_inserts(self) -> bool:
        return self.values.get("delete_inserts", 0) > 0

    async def prewarm(self, env: Env) -> None:
        if env.driver.dialect.family not in PREWARM_SQL:
            from ..core.errors import WorkloadError

            raise WorkloadError(f"prewarm is not supported by the {env.driver.name} driver")
        await self._striped(env, self.tables, self._prewarm_table)

    async def _prewarm_table(self, env: Env, conn, table: int) -> None:
        env.say(f"Prewarming table sbtest{table}")
        for sql in PREWARM_SQL[env.driver.dialect.family](table, self.table_size):
            await conn.fetchall(sql)
