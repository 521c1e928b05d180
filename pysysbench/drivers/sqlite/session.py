"""Embedded SQLite driver (the default): stdlib ``sqlite3``, zero set-up.

SQLite executes in-process and its calls block their caller (``sqlite3`` releases
the GIL while SQLite works), so ``caps.blocking`` makes the engine run each
connection's thread on an OS thread of its own (engine/threadstrand.py): the
connections work at once, and a thread's wait for the database's lock or for the
GIL is inside its event's latency.  WAL mode lets readers proceed beside the one
writer.  This process's writers queue for SQLite's write lock on the driver's
:class:`WriteQueue` (``gate``), in order, each woken as soon as it is its turn:
SQLite's own busy handler polls with sleeps of up to 100 ms and would leave the
lock idle between writers.  A connection that can write (it prepared or sent a write) begins its
transactions IMMEDIATE, taking the lock at BEGIN, as a server's row locks make a
writer wait rather than fail; a deferred transaction that writes after another
writer committed cannot (its snapshot is stale).  The busy timeout covers the
lock held by another process.  "database is locked" is ignorable: the connection's
transaction is rolled back and the event restarts, like a deadlock on a server.
"""

from __future__ import annotations

import os
import re
import threading
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from ...core.errors import ConnectError, FatalSQLError, IgnorableError, MissingTableError, TableExistsError
from ...core.options import Option, OptType, Values
from ..base import (
    Connection,
    Counters,
    Dialect,
    Driver,
    DriverCaps,
    Statement,
    register,
    split_placeholders,
    substitute,
    text_rows,
)

GROUP = "sqlite options"
# the stdlib module, imported by the first connection (SQLiteConnection._open): registering the
# driver, as every run does, does not load it (10 M instructions)
sqlite3: Any = None
BUSY_TIMEOUT_MS = 10_000
BEGIN_WRITE = "BEGIN IMMEDIATE"  # a writer connection's BEGIN: the write lock at once
STATEMENT_CACHE = 4096  # sqlite3 caches compiled statements by SQL text

OPTIONS = [
    Option("sqlite-db", OptType.STRING, "sbtest.db", "SQLite database file", GROUP),
    Option("sqlite-journal-mode", OptType.STRING, "wal", "SQLite journal mode (wal, delete, memory, ...)", GROUP),
    Option("sqlite-synchronous", OptType.STRING, "normal", "SQLite synchronous setting (off, normal, full)", GROUP),
]

DIALECT = Dialect(
    id_auto_inc="INTEGER NOT NULL",  # INTEGER PRIMARY KEY is SQLite's rowid alias: auto-assigned
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


# what a statement does to SQLite's write lock, by its first word(s): see statement_kind
READ, WRITE, BEGIN, CONTROL = range(4)
_READ_WORDS = frozenset({"SELECT", "VALUES", "EXPLAIN"})
_CONTROL_WORDS = frozenset({"COMMIT", "END", "ROLLBACK", "SAVEPOINT", "RELEASE"})
_COUNT_LOCK = threading.Lock()  # the connections' threads share the worker's Counters


def statement_kind(sql: str) -> int:
    """READ (never takes the write lock), WRITE (takes it: writes, DDL, PRAGMAs,
    BEGIN IMMEDIATE/EXCLUSIVE), BEGIN (a plain BEGIN: IMMEDIATE on a writer
    connection) or CONTROL (may end the transaction holding it)."""
    words = sql.split(None, 2)
    first = words[0].upper() if words else ""
    if first in _READ_WORDS:
        return READ
    if first in _CONTROL_WORDS:
        return CONTROL
    if first == "BEGIN":
        mode = words[1].upper().rstrip(";") if len(words) > 1 else ""
        return BEGIN if mode in ("", "TRANSACTION") else WRITE if mode in ("IMMEDIATE", "EXCLUSIVE") else CONTROL
    return WRITE


class WriteQueue:
    """This process's queue for SQLite's write lock: first come, first served, each
    waiter woken the moment the lock is handed to it (``threading.Lock`` lets the
    releasing thread take it straight back, starving the others for a GIL switch
    interval at a time)."""

    __slots__ = ("_mutex", "_held", "_waiters")

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._held = False
        self._waiters: deque[threading.Lock] = deque()

    def acquire(self, timeout: float) -> bool:
        with self._mutex:
            if not self._held:
                self._held = True
                return True
            turn = threading.Lock()
            turn.acquire()
            self._waiters.append(turn)
        if turn.acquire(timeout=timeout):
            return True
        with self._mutex:
            try:
                self._waiters.remove(turn)
            except ValueError:
                return True  # handed over just as the wait timed out
        return False

    def release(self) -> None:
        with self._mutex:
            if self._waiters:
                self._waiters.popleft().release()  # still held: by the first waiter now
            else:
                self._held = False


def _error(exc: sqlite3.Error, sql: str, counters: Counters) -> Exception:
    """The pysysbench error for ``exc``, counted."""
    msg = str(exc)
    code = getattr(exc, "sqlite_errorname", None) or type(exc).__name__
    with _COUNT_LOCK:
        counters.count_error(code)
    if "locked" in msg or "busy" in msg.lower() or code.startswith("SQLITE_BUSY") or code.startswith("SQLITE_LOCKED"):
        return IgnorableError(f"SQLite: {msg}", code, sql, errmsg=msg)
    if "no such table" in msg:
        table = msg.rsplit(":", 1)[-1].strip()
        return MissingTableError(f"table '{table}' does not exist in SQLite database: run prepare first", code, sql)
    if "already exists" in msg:
        return TableExistsError(f"SQLite: {msg}: run cleanup first", code, sql, errmsg=msg)
    return FatalSQLError(f"SQLite error {code} ({msg}) for query '{sql}'", code, sql, errmsg=msg)


def _raise(exc: sqlite3.Error, sql: str, counters: Counters) -> None:
    raise _error(exc, sql, counters) from None


class SQLiteConnection(Connection):
    dialect = DIALECT

    def __init__(self, driver: SQLiteDriver, counters: Counters):
        self.driver = driver
        self.counters = counters
        self.gate = driver.gate
        self.gated = False  # this connection holds the gate (its transaction writes)
        self.writer = False  # it prepared or sent a write: its BEGIN is IMMEDIATE
        self._open()

    def _open(self) -> None:
        global sqlite3
        if sqlite3 is None:
            import sqlite3
        try:
            self.db = sqlite3.connect(
                self.driver.path,
                isolation_level=None,
                check_same_thread=False,
                cached_statements=STATEMENT_CACHE,
                timeout=BUSY_TIMEOUT_MS / 1000,
            )
            v = self.driver.values
            self.db.execute(f"PRAGMA journal_mode={v.sqlite_journal_mode}")
            self.db.execute(f"PRAGMA synchronous={v.sqlite_synchronous}")
        except sqlite3.Error as exc:
            raise ConnectError(f"cannot open SQLite database '{self.driver.path}': {exc}") from None
        self.db.create_function("regexp", 2, _regexp, deterministic=True)
        self.cur = self.db.cursor()

    def _run(self, sql: str, args: Any = (), keep: list[Any] | None = None) -> None:
        """Execute, count; ``keep`` receives (columns, text rows) of a result set."""
        cur = self.cur
        c = self.counters
        try:
            cur.execute(sql, args)
        except sqlite3.Error as exc:
            err = _error(exc, sql, c)
            if isinstance(err, IgnorableError):
                self._roll_back()  # the event restarts from its BEGIN, as after a server's deadlock
            raise err from None
        if cur.description is not None:
            rows = cur.fetchall()
            if keep is not None:
                keep.append((len(cur.description), text_rows(rows)))
            c.reads += 1
        elif cur.rowcount > 0:
            c.writes += 1
        else:
            c.others += 1

    # --- SQLite's write lock: this process's writers queue on the gate -------------

    def _locked(self, sql: str, args: Any = (), keep: list[Any] | None = None) -> None:
        """A statement that takes SQLite's write lock."""
        if not self.gated:
            if not self.gate.acquire(timeout=BUSY_TIMEOUT_MS / 1000):
                with _COUNT_LOCK:
                    self.counters.count_error("SQLITE_BUSY")
                self._roll_back()
                raise IgnorableError("SQLite: database is locked", "SQLITE_BUSY", sql)
            self.gated = True
        self._control(sql, args, keep)

    def _control(self, sql: str, args: Any = (), keep: list[Any] | None = None) -> None:
        """A statement after which the transaction holding the lock may be over."""
        try:
            self._run(sql, args, keep)
        finally:
            if self.gated and not self.db.in_transaction:
                self._release()

    def _begin(self, sql: str, args: Any = (), keep: list[Any] | None = None) -> None:
        if self.writer:
            self._locked(BEGIN_WRITE)
        else:
            self._run(sql, args, keep)

    def _release(self) -> None:
        if self.gated:
            self.gated = False
            self.gate.release()

    def _roll_back(self) -> None:
        if self.db.in_transaction:
            try:
                self.db.execute("ROLLBACK")
            except sqlite3.Error:
                pass  # gone with the error already
        self._release()

    def _runner(self, sql: str) -> Callable[..., None]:
        kind = statement_kind(sql)
        if kind == WRITE:
            self.writer = True
        return (self._run, self._locked, self._begin, self._control)[kind]

    # --- the Connection API ----------------------------------------------------------

    async def prepare(self, sql: str) -> Statement:
        run = self._runner(sql)
        if self.driver.ps_mode == "disable":
            parts = split_placeholders(sql)

            async def text_stmt(*args: Any) -> None:
                run(substitute(parts, args))

            return text_stmt

        async def stmt(*args: Any) -> None:
            run(sql, args)

        return stmt

    async def query(self, sql: str) -> None:
        self._runner(sql)(sql)

    async def query_rows(self, sql: str) -> tuple[int, list[tuple[Any, ...]]] | None:
        keep: list[Any] = []
        self._runner(sql)(sql, (), keep)
        return keep[0] if keep else None

    async def fetchall(self, sql: str) -> list[tuple[Any, ...]]:
        try:
            rows: list[tuple[Any, ...]] = self.db.execute(sql).fetchall()
            return rows
        except sqlite3.Error as exc:
            _raise(exc, sql, Counters())
            raise  # unreachable

    async def execute_params(self, sql: str, params: Sequence[Any]) -> None:
        try:
            self.db.execute(sql, params)
        except sqlite3.Error as exc:
            _raise(exc, sql, Counters())

    async def execute_many(self, sql: str, rows: Any) -> None:
        try:
            self.db.executemany(sql, rows)
        except sqlite3.Error as exc:
            _raise(exc, sql, Counters())

    async def fetch_params(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        try:
            rows: list[tuple[Any, ...]] = self.db.execute(sql, params).fetchall()
            return rows
        except sqlite3.Error as exc:
            _raise(exc, sql, Counters())
            raise  # unreachable

    async def close(self) -> None:
        self._release()
        self.db.close()

    async def reconnect(self) -> None:
        self._release()
        self.db.close()
        self._open()


@register
class SQLiteDriver(Driver):
    name = "sqlite"
    description = "SQLite driver (embedded, the default)"
    options = OPTIONS
    option_prefix = "sqlite"
    caps = DriverCaps(
        server_prepare=False,
        blocking=True,
        auto_inc_insert_omits_id=True,
        needs_commit_for_load=True,
        bulk_methods=("blob-insert", "executemany"),
    )
    dialect = DIALECT

    def __init__(self, values: Values) -> None:
        super().__init__(values)
        self.gate = WriteQueue()

    @property
    def path(self) -> str:
        path: str = self.values.sqlite_db
        return path

    def target(self) -> str:
        return f"SQLite database '{os.path.abspath(self.path)}'"

    async def connect(self, counters: Counters | None = None, index: int = 0) -> Connection:
        return SQLiteConnection(self, counters or Counters())

    async def _version(self, conn: Connection) -> str:
        version: str = sqlite3.sqlite_version
        return "SQLite " + version
