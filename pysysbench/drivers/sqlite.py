"""Embedded SQLite driver (the default): stdlib ``sqlite3``, zero set-up.

SQLite executes in-process and its calls do not yield, so a statement runs
synchronously on the worker's event loop; the engine yields between events
(``caps.blocking``), so connections take turns event by event and one event never
interleaves with another inside a process.  WAL mode and a busy timeout let
several worker processes share the file; "database is locked" is ignorable and
restarts the event, like a deadlock on a server.
"""

from __future__ import annotations

import os
import re
import sqlite3
from typing import Any

from ..errors import ConnectError, FatalSQLError, IgnorableError, MissingTableError, TableExistsError
from ..options import Option, OptType
from .base import Connection, Counters, Dialect, Driver, DriverCaps, register, split_placeholders, substitute

GROUP = "sqlite options"
BUSY_TIMEOUT_MS = 10_000
STATEMENT_CACHE = 4096       # sqlite3 caches compiled statements by SQL text

OPTIONS = [
    Option("sqlite-db", OptType.STRING, "sbtest.db", "SQLite database file", GROUP),
    Option("sqlite-journal-mode", OptType.STRING, "wal", "SQLite journal mode (wal, delete, memory, ...)", GROUP),
    Option("sqlite-synchronous", OptType.STRING, "normal", "SQLite synchronous setting (off, normal, full)", GROUP),
]

DIALECT = Dialect(
    id_auto_inc="INTEGER NOT NULL",     # INTEGER PRIMARY KEY is SQLite's rowid alias: auto-assigned
    family="sqlite",
    table_exists_sql="SELECT count(*) FROM sqlite_master WHERE type='table' AND name=?",
    regex_mismatch=lambda col, pattern: f"NOT regexp('{pattern}', {col})",
    # fast prepare: each table loads in one transaction (atomic: no flag needed); a large
    # page cache keeps the B-trees in memory, the index sort runs in memory
    load_session_sql=("PRAGMA cache_size=-262144", "PRAGMA temp_store=MEMORY"),
)


def _regexp(pattern: str, value: Any) -> bool:
    """SQLite has no REGEXP of its own; the data check needs one."""
    return value is not None and re.search(pattern, str(value)) is not None


def _raise(exc: sqlite3.Error, sql: str, counters: Counters) -> None:
    msg = str(exc)
    code = getattr(exc, "sqlite_errorname", None) or type(exc).__name__
    if "locked" in msg or "busy" in msg.lower() or code.startswith("SQLITE_BUSY") or code.startswith("SQLITE_LOCKED"):
        counters.count_error(code)
        raise IgnorableError(f"SQLite: {msg}", code, sql) from None
    counters.count_error(code)
    if "no such table" in msg:
        table = msg.rsplit(":", 1)[-1].strip()
        raise MissingTableError(f"table '{table}' does not exist in SQLite database: run prepare first", code, sql) from None
    if "already exists" in msg:
        raise TableExistsError(f"SQLite: {msg}: run cleanup first", code, sql) from None
    raise FatalSQLError(f"SQLite error {code} ({msg}) for query '{sql}'", code, sql) from None


class SQLiteConnection(Connection):
    dialect = DIALECT

    def __init__(self, driver: "SQLiteDriver", counters: Counters):
        self.driver = driver
        self.counters = counters
        self._open()

    def _open(self) -> None:
        try:
            self.db = sqlite3.connect(self.driver.path, isolation_level=None, check_same_thread=False,
                                      cached_statements=STATEMENT_CACHE, timeout=BUSY_TIMEOUT_MS / 1000)
            v = self.driver.values
            self.db.execute(f"PRAGMA journal_mode={v.sqlite_journal_mode}")
            self.db.execute(f"PRAGMA synchronous={v.sqlite_synchronous}")
        except sqlite3.Error as exc:
            raise ConnectError(f"cannot open SQLite database '{self.driver.path}': {exc}") from None
        self.db.create_function("regexp", 2, _regexp, deterministic=True)
        self.cur = self.db.cursor()

    def _run(self, sql: str, args: Any = ()) -> None:
        cur = self.cur
        c = self.counters
        try:
            cur.execute(sql, args)
        except sqlite3.Error as exc:
            _raise(exc, sql, c)
        if cur.description is not None:
            cur.fetchall()
            c.reads += 1
        elif cur.rowcount > 0:
            c.writes += 1
        else:
            c.others += 1

    async def prepare(self, sql: str):
        run = self._run
        if self.driver.ps_mode == "disable":
            parts = split_placeholders(sql)

            async def text_stmt(*args: Any) -> None:
                run(substitute(parts, args))
            return text_stmt

        async def stmt(*args: Any) -> None:
            run(sql, args)
        return stmt

    async def query(self, sql: str) -> None:
        self._run(sql)

    async def fetchall(self, sql: str) -> list[tuple]:
        try:
            return self.db.execute(sql).fetchall()
        except sqlite3.Error as exc:
            _raise(exc, sql, Counters())
            raise  # unreachable

    async def executescript(self, sql: str) -> None:
        try:
            self.db.execute(sql)
        except sqlite3.Error as exc:
            _raise(exc, sql, Counters())

    async def execute_params(self, sql: str, params) -> None:
        try:
            self.db.execute(sql, params)
        except sqlite3.Error as exc:
            _raise(exc, sql, Counters())

    async def execute_many(self, sql: str, rows) -> None:
        try:
            self.db.executemany(sql, rows)
        except sqlite3.Error as exc:
            _raise(exc, sql, Counters())

    async def close(self) -> None:
        self.db.close()

    async def reconnect(self) -> None:
        self.db.close()
        self._open()


@register
class SQLiteDriver(Driver):
    name = "sqlite"
    description = "SQLite driver (embedded, the default)"
    options = OPTIONS
    option_prefix = "sqlite"
    caps = DriverCaps(server_prepare=False, blocking=True, auto_inc_insert_omits_id=True,
                      needs_commit_for_load=True, bulk_methods=("blob-insert", "executemany"))
    dialect = DIALECT

    @property
    def path(self) -> str:
        return self.values.sqlite_db

    def target(self) -> str:
        return f"SQLite database '{os.path.abspath(self.path)}'"

    async def connect(self, counters: Counters | None = None, index: int = 0) -> Connection:
        return SQLiteConnection(self, counters or Counters())

    async def _version(self, conn: Connection) -> str:
        return "SQLite " + sqlite3.sqlite_version
