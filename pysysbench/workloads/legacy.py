"""sysbench 0.5's ``tests/db/*.lua`` scripts and the sysbench-xa fork's XA scripts (spec 7).

Role: old reports pass ``--test=tests/db/oltp.lua --oltp-tables-count=... --num-threads=...``;
:func:`resolve` maps such a script path (any directory prefix) to a class here,
and every class declares the 0.5 option names (and the 0.4 names 0.5 silently
ignored) next to the code that reads them.  What differs from the 1.0 scripts,
as 0.5 did it (spec 7.2):

* one random table per transaction (``oltp-randtabs.lua``: per statement);
* plain text queries, never prepared; ranges are sent as ``BETWEEN s AND s+99``;
* ids from 0.5's integer-arithmetic distributions (:class:`LegacyRand`);
* statements counted read / write / other by their first word, and
  "transactions" counted by COMMIT (``tx_per_event``: the 0.5 report shows 0
  transactions for scripts that send none);
* ``LOCK TABLES ... WRITE`` / ``UNLOCK TABLES`` instead of BEGIN/COMMIT for
  MyISAM on MySQL; 0.5's schema (unsigned columns, ``MAX_ROWS``, ``SERIAL``);
* a serial ``prepare`` (``parallel_prepare.lua`` stripes tables over threads);
* 0.5's run limits: 10000 events and no time limit unless told otherwise.

``oltp-xa.lua`` / ``update_non_index_xa.lua`` (the KunlunBase fork, spec 7.4)
draw ``--oltp_use_xa_pct`` / ``--oltp_use_xa_2pc_pct`` with the default
distribution as the fork does and run ``XA START/END/PREPARE/COMMIT`` on MySQL,
``BEGIN`` / ``PREPARE TRANSACTION`` / ``COMMIT PREPARED`` on PostgreSQL.

Per-server SQL lives in :data:`DIALECTS`, a registry looked up once by the
driver's server family (``dialect.family``: data, not branches in the event code,
and no driver named).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from ..core.errors import ConfigError, DatabaseError, TableExistsError, WorkloadError
from ..core.options import Values
from ..core.rand import C_TEMPLATE, PAD_TEMPLATE, Rand, Unique, thread_unique
from ..core.record import record
from .base import Env, ThreadContext, Workload
from .bulk_insert import BulkInsert
from .legacy_options import (
    COMMON_OPTIONS,
    NONTRX_MODES,
    OLD_OPTIONS,
    OLTP_OPTIONS,
    RANDOM_POINTS_OPTIONS,
    RANDOM_RANGES_OPTIONS,
    XA_OPTIONS,
    LegacyMixin,
)
from .oltp_common import bulk_insert, drop_tables

SB_MAX_RND = 0x3FFFFFFF  # 0.5's sb_rnd(): 30-bit random numbers
LEGACY_DIRS = ("db", "oltp_legacy")  # tests/db/ (0.5) and 1.0's tests/include/oltp_legacy/

# --- 0.5's random numbers ----------------------------------------------------------------


class LegacyRand:
    """0.5's ``sb_rand`` family: integer arithmetic on a 30-bit random number
    (spec 7.2).  The 30-bit numbers come from the connection's :class:`Rand`
    (so ``--rand-seed`` and ``--rand-compat`` govern them); strings are 1.0's."""

    def __init__(self, rand: Rand, values: Values):
        self._rand = rand
        self._iter = max(1, int(values.rand_spec_iter))
        self._pct = float(values.rand_spec_pct)
        res = float(values.rand_spec_res)
        self._mult = math.floor(100 / (100 - res)) if res < 100 else 0  # 0: every draw in the band
        kind = values.rand_type
        # pareto / zipfian: 1.0's formulas (0.5's pareto has the same shape)
        self.default: Callable[[int, int], int] = (
            getattr(self, kind) if kind in ("uniform", "gaussian", "special") else getattr(rand, kind)
        )
        self.string = rand.string

    def _r(self) -> int:
        return int(self._rand._u() * SB_MAX_RND)

    def uniform(self, a: int, b: int) -> int:
        return a + self._r() % (b - a + 1)

    def gaussian(self, a: int, b: int) -> int:
        t = b - a + 1
        total = 0
        for _ in range(self._iter):
            total += self._r() % t
        return a + total // self._iter

    def special(self, a: int, b: int) -> int:
        t = b - a + 1
        if self._mult:
            x = self._r() % (t * self._mult)
            if x < t:
                return self.gaussian(a, b)
        else:
            x = self._r()
        d = max(1, int(t * self._pct / 100))
        return a + x % d + t // 2 - int(t * self._pct / 200)


# --- per-server SQL ------------------------------------------------------------------------


@record(frozen=True)
class LegacyDialect:
    """What 0.5's scripts did differently per server."""

    id_column: Callable[[bool], str]  # auto_inc -> id column definition
    k_type: str
    table_suffix: Callable[[Values], str]  # after the closing parenthesis
    table_locks: bool = False  # MyISAM: LOCK TABLES instead of BEGIN/COMMIT
    omit_id_on_auto_inc_insert: bool = False  # insert.lua on PostgreSQL
    xa_start: Callable[[str], list[str]] | None = None
    # (xid, two_phase) -> [(sql, state of the XA transaction once it succeeded)]
    xa_end: Callable[[str, bool], list[tuple[str, str | None]]] | None = None
    xa_abort: Callable[[str, str], list[str]] | None = None  # (xid, state) -> roll-back statements
    xa_limit_sql: str = ""  # a query returning the prepared-transaction limit
    variant_id_columns: tuple[tuple[str, str], ...] = ()  # (--pgsql-variant, its id column)


def _mysql_suffix(v: Values) -> str:
    opts = " ".join(x for x in (v.mysql_table_options, v.mysql_create_options) if x)
    return f"/*! ENGINE = {v.mysql_table_engine} MAX_ROWS = {v.myisam_max_rows} */ {opts}"


def _mysql_abort(xid: str, state: str) -> list[str]:
    return ([f"XA END '{xid}'"] if state == "active" else []) + [f"XA ROLLBACK '{xid}'"]


def _pg_abort(xid: str, state: str) -> list[str]:
    return [f"ROLLBACK PREPARED '{xid}'"] if state == "prepared" else ["ROLLBACK"]


# by server family (Dialect.family)
DIALECTS: dict[str, LegacyDialect] = {
    "mysql": LegacyDialect(
        id_column=lambda auto: f"id INTEGER UNSIGNED NOT NULL {'AUTO_INCREMENT' if auto else ''}",
        k_type="INTEGER UNSIGNED",
        table_suffix=_mysql_suffix,
        table_locks=True,
        xa_start=lambda xid: [f"XA START '{xid}'"],
        xa_end=lambda xid, two: (
            [(f"XA END '{xid}'", "ended"), (f"XA PREPARE '{xid}'", "prepared"), (f"XA COMMIT '{xid}'", None)]
            if two
            else [(f"XA END '{xid}'", "ended"), (f"XA COMMIT '{xid}' ONE PHASE", None)]
        ),
        xa_abort=_mysql_abort,
    ),
    "postgresql": LegacyDialect(
        id_column=lambda auto: "id SERIAL NOT NULL",
        k_type="INTEGER",
        table_suffix=lambda v: "",
        omit_id_on_auto_inc_insert=True,
        variant_id_columns=(("redshift", "id INTEGER IDENTITY(1,1) NOT NULL"),),
        xa_start=lambda xid: ["BEGIN"],
        xa_end=lambda xid, two: (
            [(f"PREPARE TRANSACTION '{xid}'", "prepared"), (f"COMMIT PREPARED '{xid}'", None)]
            if two
            else [("COMMIT", None)]
        ),
        xa_abort=_pg_abort,
        xa_limit_sql="SELECT current_setting('max_prepared_transactions')::int",
    ),
}
# SQLite and other families: 1.0-like DDL, no table locks, no XA
GENERIC = LegacyDialect(
    id_column=lambda auto: "id INTEGER NOT NULL",
    k_type="INTEGER",
    table_suffix=lambda v: "",
    omit_id_on_auto_inc_insert=True,
)


def create_table_sql(dialect: LegacyDialect, v: Values, table: int) -> str:
    """0.5 common.lua's CREATE TABLE (Lua long strings: no leading newline)."""
    key = "KEY xid" if v.oltp_secondary else "PRIMARY KEY"
    id_column = dict(dialect.variant_id_columns).get(v.get("pgsql_variant", "")) or dialect.id_column(v.oltp_auto_inc)
    return (
        f"CREATE TABLE sbtest{table} (\n"
        f"{id_column},\n"
        f"k {dialect.k_type} DEFAULT '0' NOT NULL,\n"
        "c CHAR(120) DEFAULT '' NOT NULL,\n"
        "pad CHAR(60) DEFAULT '' NOT NULL,\n"
        f"{key} (id)\n"
        f") {dialect.table_suffix(v)}"
    )


def check_prepared_transactions(limit: int, threads: int) -> None:
    """PostgreSQL two-phase commit needs max_prepared_transactions >= threads."""
    if limit == 0:
        raise WorkloadError(
            "PostgreSQL has max_prepared_transactions = 0, so the two-phase XA transactions of the sysbench-xa "
            "scripts (PREPARE TRANSACTION / COMMIT PREPARED) cannot run: set max_prepared_transactions to at "
            f"least --num-threads ({threads}) in postgresql.conf and restart PostgreSQL, or pass "
            "--oltp_use_xa_2pc_pct=0 (one-phase only) or --oltp_use_xa_pct=0 (no XA)"
        )
    if limit < threads:
        raise WorkloadError(
            f"PostgreSQL's max_prepared_transactions ({limit}) is below --num-threads ({threads}): concurrent "
            "PREPARE TRANSACTIONs would fail with 'maximum number of prepared transactions reached'; raise "
            "max_prepared_transactions (restart needed) or use fewer threads"
        )


# --- statement counting ----------------------------------------------------------------------


class _ErrorsOnly:
    """Stands in for a connection's counters: the driver's classification by
    result is dropped (0.5 classifies by keyword, see :meth:`LegacyScript._send`),
    errors and reconnects still reach the worker's counters."""

    __slots__ = ("reads", "writes", "others", "count_error")

    def __init__(self, real: Any):
        self.reads = self.writes = self.others = 0
        self.count_error = real.count_error


READ, WRITE, OTHER = "reads", "writes", "others"  # Counters attributes


def keyword_kind(sql: str) -> str:
    """0.5's db_get_query_type(): by the first word (COMMIT / UNLOCK TABLES count as other)."""
    word = sql.lstrip()[:6].lower()
    if word == "select":
        return READ
    if word in ("insert", "update", "delete"):
        return WRITE
    return OTHER


# --- the scripts ----------------------------------------------------------------------------


class LegacyScript(LegacyMixin, Workload):
    """Schema, data, commands and statement sending shared by the 0.5 scripts."""

    options = COMMON_OPTIONS + OLD_OPTIONS
    commands = ("prepare", "run", "cleanup", "help")

    def configure(self) -> None:
        v = self.values
        self.tables = v.oltp_tables_count
        self.table_size = v.oltp_table_size
        if self.tables < 1 or self.table_size < 1:
            raise ConfigError("--oltp-tables-count and --oltp-table-size must be at least 1")
        self.dialect = DIALECTS.get(self.driver.dialect.family, GENERIC)

    def required_tables(self) -> Sequence[str]:
        from .oltp_common import TableNames  # named when asked (--oltp-tables-count=2147483647)

        return TableNames(self.tables)

    # -- prepare / cleanup (0.5's common.lua) --

    async def prepare(self, env: Env) -> None:
        conn = await env.driver.connect()
        try:
            for table in range(1, self.tables + 1):
                await self.create_insert(env.say, conn, table, seed=env.seed)
        finally:
            await conn.close()

    async def create_insert(self, say: Callable[[str], None], conn, table: int, seed: int | None) -> None:
        v = self.values
        say(f"Creating table 'sbtest{table}'...")
        if await conn.table_exists(f"sbtest{table}"):
            raise TableExistsError(f"table 'sbtest{table}' already exists in {self.driver.target()}: run cleanup first")
        await conn.query(create_table_sql(self.dialect, v, table))
        say(f"Inserting {self.table_size} records into 'sbtest{table}'")
        rand = Rand(
            None if seed is None else seed * 1_000_003 + table,
            rand_type=v.rand_type,
            spec_iter=v.rand_spec_iter,
            spec_pct=v.rand_spec_pct,
            spec_res=v.rand_spec_res,
            pareto_h=v.rand_pareto_h,
        )
        cols = "(k, c, pad)" if v.oltp_auto_inc else "(id, k, c, pad)"
        await bulk_insert(
            conn,
            f"INSERT INTO sbtest{table}{cols} VALUES",
            self._rows(LegacyRand(rand, v), v.oltp_auto_inc),
            wrap_trx=self.driver.caps.needs_commit_for_load,
        )
        if v.oltp_create_secondary:
            say(f"Creating secondary indexes on 'sbtest{table}'...")
            await conn.query(f"CREATE INDEX k_{table} on sbtest{table}(k)")

    def _rows(self, r: LegacyRand, auto_inc: bool):
        """Rows in 0.5's draw order (c, pad, then k) and literal layout."""
        n = self.table_size
        for j in range(1, n + 1):
            c = r.string(C_TEMPLATE)
            pad = r.string(PAD_TEMPLATE)
            if auto_inc:
                yield f"({r.default(1, n)}, '{c}', '{pad}')"
            else:
                yield f"({j},{r.default(1, n)},'{c}', '{pad}'  )"

    async def cleanup(self, env: Env) -> None:
        await drop_tables(env, self.tables)

    # -- run --

    async def thread_init(self, ctx: ThreadContext) -> None:
        ctx.conn.counters = _ErrorsOnly(ctx.counters)
        ctx.state["r"] = LegacyRand(ctx.rand, self.values)

    @staticmethod
    async def _send(ctx: ThreadContext, sql: str) -> None:
        """A plain text query, counted by its first word as 0.5 did."""
        await ctx.conn.query(sql)
        c = ctx.counters
        kind = keyword_kind(sql)
        setattr(c, kind, getattr(c, kind) + 1)

    # single statements (also the 0.4 --oltp-test-mode / --oltp-nontrx-mode events)

    async def point_select(self, ctx: ThreadContext, column: str = "c") -> None:
        r = ctx.state["r"]
        t = r.uniform(1, self.tables)
        await self._send(ctx, f"SELECT {column} FROM sbtest{t} WHERE id={r.default(1, self.table_size)}")

    async def index_update(self, ctx: ThreadContext) -> None:
        r = ctx.state["r"]
        t = r.uniform(1, self.tables)
        await self._send(ctx, f"UPDATE sbtest{t} SET k=k+1 WHERE id={r.default(1, self.table_size)}")

    async def non_index_update(self, ctx: ThreadContext) -> None:
        r = ctx.state["r"]
        t = r.uniform(1, self.tables)
        c = r.string(C_TEMPLATE)
        await self._send(ctx, f"UPDATE sbtest{t} SET c='{c}' WHERE id={r.default(1, self.table_size)}")

    async def delete(self, ctx: ThreadContext) -> None:
        r = ctx.state["r"]
        t = r.uniform(1, self.tables)
        await self._send(ctx, f"DELETE FROM sbtest{t} WHERE id={r.default(1, self.table_size)}")

    async def insert(self, ctx: ThreadContext) -> None:
        r = ctx.state["r"]
        t = r.uniform(1, self.tables)
        k = r.default(1, self.table_size)
        c = r.string(C_TEMPLATE)
        pad = r.string(PAD_TEMPLATE)
        auto_inc = self.values.oltp_auto_inc
        if auto_inc and self.dialect.omit_id_on_auto_inc_insert:
            await self._send(ctx, f"INSERT INTO sbtest{t} (k, c, pad) VALUES ({k}, '{c}', '{pad}')")
            return
        # auto_inc off: ids from a permutation far outside 1..N, so they never collide (as 1.0's oltp_insert)
        ident = 0 if auto_inc else self._unique(ctx).next() - 2147483648
        await self._send(ctx, f"INSERT INTO sbtest{t} (id, k, c, pad) VALUES ({ident}, {k}, '{c}', '{pad}')")

    def _unique(self, ctx: ThreadContext) -> Unique:
        unique = ctx.state.get("unique")
        if unique is None:
            unique = ctx.state["unique"] = thread_unique(self.values, ctx.tid, ctx.threads)
        return unique


class SimpleScript(LegacyScript):
    """A 0.5 script whose event is one statement (no BEGIN/COMMIT)."""

    step = "point_select"

    async def event(self, ctx: ThreadContext) -> None:
        await getattr(self, self.step)(ctx)


class OltpSimple(SimpleScript):
    """sysbench 0.5 tests/db/oltp_simple.lua: one SELECT c ... WHERE id=N per event."""

    script = "oltp_simple.lua"


class Select(SimpleScript):
    """sysbench 0.5 tests/db/select.lua: one SELECT pad ... WHERE id=N per event."""

    script = "select.lua"

    async def event(self, ctx: ThreadContext) -> None:
        await self.point_select(ctx, "pad")


class Insert(SimpleScript):
    """sysbench 0.5 tests/db/insert.lua: one INSERT per event."""

    script = "insert.lua"
    step = "insert"


class Delete(SimpleScript):
    """sysbench 0.5 tests/db/delete.lua: one DELETE ... WHERE id=N per event."""

    script = "delete.lua"
    step = "delete"


class UpdateIndex(SimpleScript):
    """sysbench 0.5 tests/db/update_index.lua: one UPDATE ... SET k=k+1 per event."""

    script = "update_index.lua"
    step = "index_update"


class UpdateNonIndex(SimpleScript):
    """sysbench 0.5 tests/db/update_non_index.lua: one UPDATE ... SET c='...' per event."""

    script = "update_non_index.lua"
    step = "non_index_update"


RANGE_SQL = (
    ("oltp_simple_ranges", "SELECT c FROM {t} WHERE id BETWEEN {s} AND {s}+{w}"),
    ("oltp_sum_ranges", "SELECT SUM(K) FROM {t} WHERE id BETWEEN {s} AND {s}+{w}"),
    ("oltp_order_ranges", "SELECT c FROM {t} WHERE id BETWEEN {s} AND {s}+{w} ORDER BY c"),
    ("oltp_distinct_ranges", "SELECT DISTINCT c FROM {t} WHERE id BETWEEN {s} AND {s}+{w} ORDER BY c"),
)


class Oltp(LegacyScript):
    """sysbench 0.5 tests/db/oltp.lua: point selects, ranges, updates and a
    DELETE/INSERT pair on ONE random table per transaction, sent as plain text.
    --oltp-read-only / --oltp-write-only drop the writes / the reads."""

    script = "oltp.lua"
    options = OLTP_OPTIONS + XA_OPTIONS + OLD_OPTIONS
    table_per_statement = False  # oltp-randtabs.lua: a new table for every statement
    fixed_delete_inserts: int | None = None  # the fork's scripts: always one pair
    uses_xa = False

    @classmethod
    def check_options(cls, values: Values, say: Callable[[str], None]) -> None:
        if values.oltp_read_only and values.oltp_write_only:
            raise ConfigError("--oltp-read-only and --oltp-write-only are mutually exclusive")
        if cls.uses_xa:
            return
        given = [n for n in ("oltp_use_xa_pct", "oltp_use_xa_2pc_pct") if values.is_set(n)]
        if given:
            pct = values.oltp_use_xa_pct
            names, verb, it = (
                (" and ".join("--" + n for n in given), "are", "them")
                if len(given) > 1
                else ("--" + given[0], "is", "it")
            )
            say(
                f"WARNING: {names} {verb} read only by the sysbench-xa fork's oltp-xa.lua and "
                f"update_non_index_xa.lua; {cls.script} ignores {it}, as the fork does, so no XA transactions "
                "are run"
                + (
                    " (with --oltp_use_xa_pct=0 none would be anyway)"
                    if pct == 0
                    else "; use --test=tests/db/oltp-xa.lua for XA"
                )
            )
        mode = values.oltp_test_mode
        if values.is_set("oltp_test_mode") and mode != "complex":
            cls._test_mode_note(values, mode, say)

    @staticmethod
    def _test_mode_note(values: Values, mode: str, say: Callable[[str], None]) -> None:
        if mode == "simple":
            say(
                "NOTE: --oltp-test-mode=simple (sysbench 0.4; 0.5's oltp.lua ignored it) is honoured: each event "
                "is one point select"
            )
        elif mode == "nontrx":
            nt = values.oltp_nontrx_mode
            if nt not in NONTRX_MODES:
                raise ConfigError(
                    f"Invalid value for --oltp-nontrx-mode: '{nt}' (choose one of: {', '.join(NONTRX_MODES)})"
                )
            say(
                f"NOTE: --oltp-test-mode=nontrx (sysbench 0.4; 0.5's oltp.lua ignored it) is honoured: each "
                f"event is one '{nt}' statement (--oltp-nontrx-mode) without BEGIN/COMMIT"
            )
        else:
            raise ConfigError(f"--oltp-test-mode={mode} is not supported (complex, simple and nontrx are)")

    def configure(self) -> None:
        super().configure()
        v = self.values
        self.counts = {
            name: v.get(name)
            for name in (
                "oltp_point_selects",
                "oltp_simple_ranges",
                "oltp_sum_ranges",
                "oltp_order_ranges",
                "oltp_distinct_ranges",
                "oltp_index_updates",
                "oltp_non_index_updates",
                "oltp_delete_inserts",
            )
        }
        if self.fixed_delete_inserts is not None:
            self.counts["oltp_delete_inserts"] = self.fixed_delete_inserts
        self.width = v.oltp_range_size - 1
        self.reads, self.writes = not v.oltp_write_only, not v.oltp_read_only
        self.trx = not v.oltp_skip_trx
        self.tx_per_event = 1 if self.trx else 0
        self.single = None if self.uses_xa else self._single_statement_mode(v)
        if self.single is not None:
            self.tx_per_event = 0
        locks = self.dialect.table_locks and v.mysql_table_engine.lower() == "myisam"
        self.begin_sql = (
            "LOCK TABLES " + " ,".join(f"sbtest{i} WRITE" for i in range(1, self.tables + 1)) if locks else "BEGIN"
        )
        self.commit_sql = "UNLOCK TABLES" if locks else "COMMIT"

    @staticmethod
    def _single_statement_mode(v: Values) -> str | None:
        mode = v.oltp_test_mode
        if mode == "simple":
            return "point_select"
        if mode == "nontrx":
            return {
                "select": "point_select",
                "update_key": "index_update",
                "update_nokey": "non_index_update",
                "insert": "insert",
                "delete": "delete",
            }[v.oltp_nontrx_mode]
        return None

    def _table(self, r: LegacyRand, fixed: str | None) -> str:
        return fixed if fixed is not None else f"sbtest{r.uniform(1, self.tables)}"

    async def event(self, ctx: ThreadContext) -> None:
        if self.single is not None:
            await getattr(self, self.single)(ctx)
            return
        r = ctx.state["r"]
        table = None if self.table_per_statement else f"sbtest{r.uniform(1, self.tables)}"
        if self.trx:
            await self._send(ctx, self.begin_sql)
        await self.body(ctx, r, table)
        if self.trx:
            await self._send(ctx, self.commit_sql)

    async def body(self, ctx: ThreadContext, r: LegacyRand, table: str | None) -> None:
        n, counts, send = self.table_size, self.counts, self._send
        if self.reads:
            for _ in range(counts["oltp_point_selects"]):
                t = self._table(r, table)
                await send(ctx, f"SELECT c FROM {t} WHERE id={r.default(1, n)}")
            if self.values.oltp_range_selects:
                for name, sql in RANGE_SQL:
                    for _ in range(counts[name]):
                        t = self._table(r, table)
                        await send(ctx, sql.format(t=t, s=r.default(1, n), w=self.width))
        if self.writes:
            await self._writes(ctx, r, table)

    async def _writes(self, ctx: ThreadContext, r: LegacyRand, table: str | None) -> None:
        n, counts, send = self.table_size, self.counts, self._send
        for _ in range(counts["oltp_index_updates"]):
            t = self._table(r, table)
            await send(ctx, f"UPDATE {t} SET k=k+1 WHERE id={r.default(1, n)}")
        for _ in range(counts["oltp_non_index_updates"]):
            t = self._table(r, table)
            c = r.string(C_TEMPLATE)
            await send(ctx, f"UPDATE {t} SET c='{c}' WHERE id={r.default(1, n)}")
        for _ in range(counts["oltp_delete_inserts"]):
            t = self._table(r, table)  # one table for the pair, also in oltp-randtabs.lua
            i = r.default(1, n)
            await send(ctx, f"DELETE FROM {t} WHERE id={i}")
            c = r.string(C_TEMPLATE)
            pad = r.string(PAD_TEMPLATE)
            await send(ctx, f"INSERT INTO {t} (id, k, c, pad) VALUES ({i}, {r.default(1, n)}, '{c}', '{pad}')")


class OltpRandTabs(Oltp):
    """sysbench-xa fork tests/db/oltp-randtabs.lua: oltp.lua with a random table
    for every statement (the DELETE/INSERT pair shares one)."""

    script = "oltp-randtabs.lua"
    table_per_statement = True
    fixed_delete_inserts = 1


TENCENT_DEFAULTS = {
    "oltp-point-selects": 4,
    "oltp-simple-ranges": 0,
    "oltp-sum-ranges": 0,
    "oltp-order-ranges": 0,
    "oltp-distinct-ranges": 0,
    "oltp-index-updates": 1,
    "oltp-non-index-updates": 0,
    "oltp-delete-inserts": 0,
}


class TencentOltp(Oltp):
    """TencentDB for MariaDB's our_oltp.lua: oltp.lua with 4 point selects and 1
    index update per transaction (read/write 4:1) by default; run it with
    --rand-type=special --percentile=99 as the report does."""

    script = "our_oltp.lua"
    options = [replace(o, default=TENCENT_DEFAULTS[o.name]) if o.name in TENCENT_DEFAULTS else o for o in Oltp.options]


class XaMixin:
    """XA transactions of the sysbench-xa fork (spec 7.4)."""

    uses_xa = True

    def configure_xa(self) -> None:
        v = self.values
        self.xa_pct = v.oltp_use_xa_pct
        self.xa_2pc_pct = v.oltp_use_xa_2pc_pct
        d = self.dialect
        if self.xa_pct > 0 and d.xa_start is None:
            raise WorkloadError(
                f"{self.script}: XA transactions need MySQL or PostgreSQL (the {self.driver.name} "
                "driver has none); pass --oltp_use_xa_pct=0"
            )

    async def xa_thread_init(self, ctx: ThreadContext) -> None:
        sql = self.dialect.xa_limit_sql
        if sql and ctx.tid == 0 and self.xa_pct > 0 and self.xa_2pc_pct > 0:
            rows = await ctx.conn.fetchall(sql)
            check_prepared_transactions(int(rows[0][0]), ctx.threads)

    def use_xa(self, r: LegacyRand) -> bool:
        # sb_rand() is the default distribution: with 'special' most draws are near 50
        return r.default(1, 100) <= self.xa_pct

    async def xa_begin(self, ctx: ThreadContext) -> None:
        xid = f"xa_{ctx.tid}"
        ctx.state["xa"] = "active"
        for sql in self.dialect.xa_start(xid):
            await self._send(ctx, sql)

    async def xa_commit(self, ctx: ThreadContext, r: LegacyRand) -> None:
        two_phase = not r.default(1, 100) > self.xa_2pc_pct
        xid = f"xa_{ctx.tid}"
        for sql, state in self.dialect.xa_end(xid, two_phase):
            await self._send(ctx, sql)
            ctx.state["xa"] = state

    async def before_restart(self, ctx: ThreadContext, error: Exception) -> None:
        """An ignorable error inside an XA transaction leaves it open (MySQL) or
        prepared (PostgreSQL): roll it back, uncounted, before the retry."""
        state = ctx.state.get("xa")
        if not state:
            return
        ctx.state["xa"] = None
        conn = ctx.conn
        counters, conn.counters = conn.counters, _ErrorsOnly(_Discard())
        try:
            for sql in self.dialect.xa_abort(f"xa_{ctx.tid}", state):
                try:
                    await conn.fetchall(sql)
                except DatabaseError:
                    pass  # already rolled back by the server
        finally:
            conn.counters = counters


class _Discard:
    def count_error(self, code: str, reconnect: bool = False) -> None:
        pass


class OltpXa(XaMixin, Oltp):
    """sysbench-xa fork tests/db/oltp-xa.lua: oltp.lua where an event is an XA
    transaction when sb_rand(1,100) <= --oltp_use_xa_pct, committed in two
    phases unless sb_rand(1,100) > --oltp_use_xa_2pc_pct (PostgreSQL: PREPARE
    TRANSACTION / COMMIT PREPARED)."""

    script = "oltp-xa.lua"
    fixed_delete_inserts = 1

    def configure(self) -> None:
        super().configure()
        self.configure_xa()

    async def thread_init(self, ctx: ThreadContext) -> None:
        await super().thread_init(ctx)
        await self.xa_thread_init(ctx)

    async def event(self, ctx: ThreadContext) -> None:
        r = ctx.state["r"]
        use_xa = self.use_xa(r)  # drawn before the table, as the fork does
        table = f"sbtest{r.uniform(1, self.tables)}"
        if self.trx:
            if use_xa:
                await self.xa_begin(ctx)
            else:
                await self._send(ctx, self.begin_sql)
        await self.body(ctx, r, table)
        if self.trx:
            if use_xa:
                await self.xa_commit(ctx, r)
            else:
                await self._send(ctx, "COMMIT")


class UpdateNonIndexXa(XaMixin, LegacyScript):
    """sysbench-xa fork tests/db/update_non_index_xa.lua: one non-index UPDATE
    per event, inside an XA transaction when sb_rand(1,100) <= --oltp_use_xa_pct
    (autocommit otherwise)."""

    script = "update_non_index_xa.lua"
    options = COMMON_OPTIONS + XA_OPTIONS + OLD_OPTIONS

    def configure(self) -> None:
        super().configure()
        self.configure_xa()

    async def thread_init(self, ctx: ThreadContext) -> None:
        await super().thread_init(ctx)
        await self.xa_thread_init(ctx)

    async def event(self, ctx: ThreadContext) -> None:
        r = ctx.state["r"]
        use_xa = self.use_xa(r)
        t = r.uniform(1, self.tables)
        c = r.string(C_TEMPLATE)
        sql = f"UPDATE sbtest{t} SET c='{c}' WHERE id={r.default(1, self.table_size)}"
        if use_xa:
            await self.xa_begin(ctx)
        await self._send(ctx, sql)
        if use_xa:
            await self.xa_commit(ctx, r)


class ParallelPrepare(LegacyScript):
    """sysbench 0.5 tests/db/parallel_prepare.lua, run as a benchmark: thread t
    creates and loads tables t+1, t+1+threads, ... once, then stops (pass
    --max-requests=N with N >= --num-threads, as 0.5's documentation says)."""

    script = "parallel_prepare.lua"

    def required_tables(self) -> list[str]:
        return []

    async def event(self, ctx: ThreadContext) -> bool:
        counters, ctx.conn.counters = ctx.conn.counters, ctx.counters  # loads count as the driver sees them
        try:
            for table in range(ctx.tid + 1, self.tables + 1, ctx.threads):
                await self.create_insert(lambda line: None, ctx.conn, table, seed=None)
        finally:
            ctx.conn.counters = counters
        return True


class _RandomSelect(LegacyScript):
    """0.5's select_random_*.lua on sbtest1: prepared statements, each thread in
    its own slice of k values."""

    sql = ""

    def configure(self) -> None:
        super().configure()
        self.tables = 1

    def prepared_per_thread(self) -> int:
        return 1  # "select", below

    async def thread_init(self, ctx: ThreadContext) -> None:
        await super().thread_init(ctx)
        await ctx.prepare("select", self.sql)
        size = self.table_size
        ctx.state["bounds"] = (int(size / ctx.threads * ctx.tid), int(size / ctx.threads * (ctx.tid + 1)))

    def values_for(self, r: LegacyRand, lo: int, hi: int) -> list[int]:
        raise NotImplementedError

    async def event(self, ctx: ThreadContext) -> None:
        lo, hi = ctx.state["bounds"]
        await ctx.stmts["select"][0](*self.values_for(ctx.state["r"], lo, hi))
        ctx.counters.reads += 1


class SelectRandomPoints(_RandomSelect):
    """sysbench 0.5 tests/db/select_random_points.lua: SELECT ... WHERE k IN (--random-points values)."""

    script = "select_random_points.lua"
    options = COMMON_OPTIONS + RANDOM_POINTS_OPTIONS + OLD_OPTIONS

    def configure(self) -> None:
        super().configure()
        self.points = max(1, self.values.random_points)
        self.sql = (
            "        SELECT id, k, c, pad\n          FROM sbtest1\n          WHERE k IN ("
            + ", ".join("?" * self.points)
            + ")\n        "
        )

    def values_for(self, r: LegacyRand, lo: int, hi: int) -> list[int]:
        return [r.default(lo, hi) for _ in range(self.points)]


class SelectRandomRanges(_RandomSelect):
    """sysbench 0.5 tests/db/select_random_ranges.lua: SELECT count(k) ... WHERE k BETWEEN ... OR ..."""

    script = "select_random_ranges.lua"
    options = COMMON_OPTIONS + RANDOM_RANGES_OPTIONS + OLD_OPTIONS

    def configure(self) -> None:
        super().configure()
        self.ranges = max(1, self.values.number_of_ranges)
        self.delta = self.values.random_ranges_delta
        self.sql = (
            "        SELECT count(k)\n          FROM sbtest1\n          WHERE "
            + " OR ".join(["k BETWEEN ? AND ?"] * self.ranges)
            + "\n        "
        )

    def values_for(self, r: LegacyRand, lo: int, hi: int) -> list[int]:
        out: list[int] = []
        for _ in range(self.ranges):
            v = r.default(lo, hi)
            out += (v, v + self.delta)
        return out


class LegacyBulkInsert(LegacyMixin, BulkInsert):
    """sysbench 0.5 tests/db/bulk_insert.lua (the same as 1.0's bulk_insert)."""

    script = "bulk_insert.lua"
    options = []


LEGACY_SCRIPTS: dict[str, type[Workload]] = {}
for _cls in (
    Oltp,
    OltpRandTabs,
    TencentOltp,
    OltpXa,
    UpdateNonIndexXa,
    OltpSimple,
    Select,
    Insert,
    Delete,
    UpdateIndex,
    UpdateNonIndex,
    ParallelPrepare,
    SelectRandomPoints,
    SelectRandomRanges,
    LegacyBulkInsert,
):
    _cls.name = _cls.script
    LEGACY_SCRIPTS[_cls.script[:-4]] = _cls
# names 1.0 also ships: the 0.5 script only from a tests/db/ (or oltp_legacy/) directory
AMBIGUOUS = {"select_random_points", "select_random_ranges", "bulk_insert"}


def resolve(name: str) -> type[Workload] | None:
    """The 0.5 script class for a path such as ``tests/db/oltp.lua`` (any
    directory prefix), or None when ``name`` is not a 0.5 script."""
    base = os.path.basename(name)
    if not base.endswith(".lua"):
        return None
    stem = base[:-4]
    cls = LEGACY_SCRIPTS.get(stem)
    if cls is None:
        return None
    if stem in AMBIGUOUS and os.path.basename(os.path.dirname(os.path.normpath(name))) not in LEGACY_DIRS:
        return None
    cls.source = name  # worker processes resolve the same path again
    return cls
