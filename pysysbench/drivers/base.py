"""Driver API: what workloads and the engine may ask of a database.

A driver is a name, its prefixed options (``option_prefix``: ``--mysql-*`` picks the
MySQL driver when no ``--db-driver`` is given), the environment variable its password
may come from (``password_env``), capabilities and a dialect (data, not code paths:
generic code asks ``caps``/``dialect`` instead of comparing names), and ``connect()``.
The dialect holds facts about the server only (DDL details, catalog queries, its
``family``); what a workload sends -- sbtest's tables, prewarm reads, index checks,
row sizes -- is the workload's, keyed by that family.  ``register`` adds a driver
class to the registry; a name already taken is refused.  A :class:`Connection` executes statements, classifies every
result as read / write / other (spec 5.11) into the :class:`Counters` it was
given, and classifies every error at the edge as ignorable, reconnect or fatal
(spec 5.10): the worker acts on the exception class, never on error codes.

Statements are callables: ``stmt = await conn.prepare(sql)`` then
``await stmt(arg1, arg2)``.  ``sql`` always uses ``?`` placeholders; the driver
rewrites them for its server.  With ``--db-ps-mode=disable`` a statement sends the
literal text of spec 3.2 instead (integers in decimal, strings single-quoted
without escaping, exactly as sysbench).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from contextlib import nullcontext
from dataclasses import field
from typing import Any

from ..core.errors import ConfigError, SQLError
from ..core.options import Option, OptType, Values
from ..core.record import record

Statement = Callable[..., Awaitable[None]]

# what a server refusing a session for want of connection slots means (MySQL 1040, PostgreSQL 53300)
TOO_MANY_CONNECTIONS = (
    "the server's max_connections is reached (sessions of other clients count too): "
    "use fewer --threads or raise max_connections"
)

DB_GROUP = "General database options"
DB_OPTIONS = [
    Option(
        "db-driver",
        OptType.STRING,
        "sqlite",
        "specifies database driver to use ('help' to get list of available drivers)",
        DB_GROUP,
    ),
    Option(
        "db-ps-mode",
        OptType.STRING,
        "auto",
        "prepared statements usage mode {auto, disable}",
        DB_GROUP,
        choices=("auto", "disable"),
    ),
    Option("db-debug", OptType.BOOL, False, "print database-specific debug information", DB_GROUP),
    Option(
        "db-fast-path",
        OptType.BOOL,
        True,
        "send the benchmark's statements with pysysbench's lean wire client (off: through the "
        "driver library, asyncmy / asyncpg)",
        DB_GROUP,
    ),
]


class Counters:
    """Per-worker statement counters (no locks: one event loop, or a blocking
    driver's threads under the GIL, see engine/worker.py).

    ``errors_by_code`` lets the result file say which errors were ignored;
    ``reconnect_failures`` counts failed attempts to re-open a lost connection
    by error code, ``reconnect_error`` is the last one's message; ``reopened``
    counts lost connections re-opened (the reconnect watch's sign of life while
    no event completes yet)."""

    __slots__ = (
        "reads",
        "writes",
        "others",
        "errors",
        "reconnects",
        "errors_by_code",
        "reconnect_failures",
        "reconnect_error",
        "reopened",
        "retried",
        "failed",
        "write_trx",
        "spanning_trx",
    )

    def __init__(self) -> None:
        self.reads = self.writes = self.others = 0
        self.errors = self.reconnects = self.reopened = 0
        self.retried = self.failed = 0  # --max-retries: transactions retried, failed after the last retry
        self.write_trx = self.spanning_trx = 0  # --shard-nodes: write transactions, those on several nodes
        self.errors_by_code: dict[str, int] = {}
        self.reconnect_failures: dict[str, int] = {}
        self.reconnect_error = ""

    def count_reconnect_failure(self, code: str, message: str) -> None:
        self.reconnect_failures[code] = self.reconnect_failures.get(code, 0) + 1
        self.reconnect_error = message

    def count_error(self, code: str, reconnect: bool = False) -> None:
        if reconnect:
            self.reconnects += 1
        else:
            self.errors += 1
        self.errors_by_code[code] = self.errors_by_code.get(code, 0) + 1


@record(frozen=True)
class DriverCaps:
    """What a driver can do; workloads and the engine ask, never sniff names."""

    server_prepare: bool  # real server-side prepared statements
    # statements run synchronously in the caller (SQLite): each thread gets an OS thread of its own
    blocking: bool = False
    auto_inc_insert_omits_id: bool = False  # oltp_insert with auto_inc sends no id column
    needs_commit_for_load: bool = False  # wrap bulk loads in explicit transactions
    # fast prepare (pysysbench.load): the bulk-load methods this driver implements, fastest first
    bulk_methods: tuple[str, ...] = ("multi-insert",)


def quote_standard(name: str) -> str:
    """``name`` as a delimited SQL identifier: double quotes, embedded ones doubled."""
    return '"' + name.replace('"', '""') + '"'


@record(frozen=True)
class Dialect:
    """DDL and literal details that differ between servers (facts about the server, no
    workload's SQL)."""

    id_auto_inc: str  # column definition of an auto-increment id
    # the server family whose SQL this server speaks ("mysql", "postgresql", "sqlite"; ""
    # for none of them): workloads key their per-server SQL on it, never on a driver's name
    family: str = ""
    # a name (database, table) as the server's delimited identifier, for the SQL a hint prints
    quote_name: Callable[[str], str] = field(default=quote_standard)
    id_plain: str = "INTEGER NOT NULL"
    table_exists_sql: str = ""  # one ? placeholder: the table name
    # data checks: SQL that is true when ``col`` does NOT match regex ``pattern``
    regex_mismatch: Callable[[str, str], str] = field(default=lambda col, pattern: "0=1")
    # the server's connection limit (one value), and how to raise it; the slots of it this
    # user cannot take (reserved for superusers) and the sessions open now, ours included
    # (each: an integer in the last column of the first row; "" = not known)
    max_connections_sql: str = ""
    max_connections_hint: str = ""
    reserved_connections_sql: str = ""
    open_connections_sql: str = ""
    # the server's limit on prepared statements, all sessions together (one value), the
    # statements prepared now, ours included (as above), and how to raise the limit
    prepared_limit_sql: str = ""
    prepared_open_sql: str = ""
    prepared_limit_hint: str = ""
    # fast prepare (pysysbench.load).  A table being loaded carries a flag that the
    # pre-flight of run refuses (an interrupted prepare leaves it); the statements take
    # the table name; None = loads are atomic (one transaction), no flag needed.  The flag
    # is the table comment, so the comment the CREATE TABLE gave (1.1's --create_table_options)
    # is read first (table_comment_sql, one ? placeholder) and put back (mark_loaded_sql's 2nd
    # argument, '' for none)
    mark_loading_sql: Callable[[str], list[str]] | None = None
    mark_loaded_sql: Callable[[str, str], list[str]] | None = None
    table_comment_sql: str = ""
    loading_check_sql: str = ""  # one ? placeholder: the table name; a true first column = flagged
    # statements after the rows of a table are in (table name, rows): PostgreSQL moves
    # the SERIAL sequence past the explicit ids
    after_load_sql: Callable[[str, int], list[str]] | None = None
    # a primary key dropped before the rows and added back after them (built by one sort
    # instead of row by row): statements of the table name; None = keep it during the load
    drop_primary_key_sql: Callable[[str], list[str]] | None = None
    add_primary_key_sql: Callable[[str], list[str]] | None = None
    # session settings of the loading connections
    load_session_sql: tuple[str, ...] = ()


def literal(value: Any) -> str:
    """sysbench's text substitution for --db-ps-mode=disable (no escaping)."""
    if isinstance(value, str):
        return "'" + value + "'"
    if value is None:
        return "NULL"
    return str(value)


def text_value(value: Any) -> str | None:
    """A decoded column value as the text the server sent (libraries decode rows;
    the Lua API hands scripts strings, as sysbench's C client does)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", "replace")
    if isinstance(value, bool):
        return "t" if value else "f"
    return str(value)


def text_rows(rows: Sequence[Sequence[Any]]) -> list[tuple[Any, ...]]:
    return [tuple(text_value(v) for v in row) for row in rows]


def split_placeholders(sql: str) -> list[str]:
    """Split SQL on '?' placeholders (none of our statements quote a '?')."""
    return sql.split("?")


def substitute(parts: Sequence[str], args: Sequence[Any]) -> str:
    if len(args) != len(parts) - 1:
        raise SQLError(f"statement expects {len(parts) - 1} parameters, got {len(args)}")
    out = [parts[0]]
    for value, part in zip(args, parts[1:]):
        out.append(literal(value))
        out.append(part)
    return "".join(out)


class StatementFailure:
    """A prepared statement's error handler, ``session._fail(exc, sql)``: a small object
    rather than a closure, kept by each of the thousands of statements a run prepares."""

    __slots__ = ("session", "sql")

    def __init__(self, session: Any, sql: str):
        self.session, self.sql = session, sql

    def __call__(self, exc: BaseException) -> Any:
        return self.session._fail(exc, self.sql)


class Connection:
    """One database session.  Subclasses implement the abstract methods."""

    counters: Counters
    # which server this session talks to ("host:port", a socket path; "" = embedded):
    # the result file counts connections per database node with it
    where: str = ""
    # the lean wire client holding the session's transport (drivers/wire.py), or None
    wire: Any = None
    # the results after the first of the last statement that had several (a MySQL CALL),
    # each (columns or -1, rows, affected rows), oldest first; see next_result
    pending: list[tuple[int, list[tuple[Any, ...]], int]] | None = None

    def end_wire(self, goodbye: bytes) -> bool:
        """End the session of the wire client, if there is one: the protocol's goodbye
        and a close of the socket (not the library's close(): asyncpg spends ~0.1 ms of
        CPU on it), or no goodbye when a statement is still in flight (a lock wait at
        the end of a run: the session cannot end gracefully before it does).  True if
        there was a wire session: the caller then discards the library's connection."""
        wire, self.wire = self.wire, None
        if wire is None:
            return False
        if not wire.busy:
            wire.close(goodbye)
        wire.release()
        return True

    def native(self) -> Any:
        """A context in which the driver library has its transport back (checks,
        bulk loads, close): statements off the hot path go through the library."""
        return self.wire.released() if self.wire is not None else nullcontext()

    async def prepare(self, sql: str) -> Statement:
        """A callable statement honouring --db-ps-mode."""
        raise NotImplementedError

    async def query(self, sql: str) -> None:
        """Send plain text, counted and classified (never prepared)."""
        raise NotImplementedError

    async def fetchall(self, sql: str) -> list[tuple[Any, ...]]:
        """Plain text query returning rows; not counted (tooling, checks)."""
        raise NotImplementedError

    async def query_rows(self, sql: str) -> tuple[int, list[tuple[Any, ...]]] | None:
        """Plain text, counted and classified like :meth:`query`, keeping what it
        returned: ``(columns, rows)`` with every value as the server's text (None
        for SQL NULL), or None when the statement produced no result set (the Lua
        API's ``con:query``)."""
        raise NotImplementedError

    def more_results(self) -> bool:
        """Whether the last statement left results to read with :meth:`next_result`."""
        return bool(self.pending)

    def next_result(self) -> tuple[int, list[tuple[Any, ...]]] | None:
        """The next result of the last statement that returned several (sysbench 1.1's
        ``con:next_result()``), counted like a statement: ``(columns, rows)`` for a
        result set, None for one without (or when none is left)."""
        pending = self.pending
        if not pending:
            self.counters.others += 1
            return None
        columns, rows, affected = pending.pop(0)
        if columns >= 0:
            self.counters.reads += 1
            return columns, rows
        if affected:
            self.counters.writes += 1
        else:
            self.counters.others += 1
        return None

    async def close(self) -> None:
        raise NotImplementedError

    async def reconnect(self) -> None:
        """Re-open the session to the same server; statements must be re-prepared."""
        raise NotImplementedError

    async def table_exists(self, table: str) -> bool:
        rows = await self.fetchall(self.dialect.table_exists_sql.replace("?", literal(table)))
        return bool(rows and rows[0][0])

    # --- bulk load (fast prepare); drivers implement the ones their caps.bulk_methods name

    async def copy_in(self, table: str, columns: Sequence[str], chunks: Any) -> int:
        """COPY tab-separated text lines (an async iterator of bytes) into ``table``; rows copied."""
        raise NotImplementedError

    async def load_data_local(self, table: str, columns: Sequence[str], chunks: Any) -> int:
        """LOAD DATA LOCAL INFILE of tab-separated text lines (an async iterator of bytes);
        rows loaded.  Raises BulkLoadRefused when the server does not allow it."""
        raise NotImplementedError

    async def execute_params(self, sql: str, params: Sequence[Any]) -> None:
        """One statement with ``?`` parameters, not counted (loading)."""
        raise NotImplementedError

    async def execute_many(self, sql: str, rows: Any) -> None:
        """One statement per parameter tuple of ``rows``, not counted (loading)."""
        raise NotImplementedError

    async def fetch_params(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """One statement with ``?`` parameters returning its rows (none for a statement
        without a result set), not counted: tooling that keeps its own tables (the history
        store) sends its SQL and values here, never spliced into the text."""
        raise NotImplementedError

    dialect: Dialect


class Driver:
    """A database driver: subclasses set the class attributes and ``connect``."""

    name: str = ""
    description: str = ""
    options: list[Option] = []
    # sysbench 1.1.0's form of its options where it differs from 1.0.20's: name -> the fields
    # that change under --sysbench-compat=1.1 (command/cmdline.py for_face)
    options_11: dict[str, dict[str, Any]] = {}
    # the prefix of this driver's options ("mysql": --mysql-host, ...); given without
    # --db-driver, an option of that prefix picks this driver ("": never)
    option_prefix: str = ""
    # the environment variable the password may come from when no option gives it ("": none);
    # passed on to Ray actors on other machines
    password_env: str = ""
    # the option listing the errors that restart an event instead of ending the run
    # ("mysql-ignore-errors"; "": the driver has none)
    ignore_option: str = ""
    # the error codes --max-retries retries: the server gave up on the transaction, not on
    # its statements (a deadlock, a serialization failure); --retry-errors adds to them
    retryable: tuple[str, ...] = ()
    caps: DriverCaps
    dialect: Dialect

    def __init__(self, values: Values):
        self.values = values
        self.ps_mode = values.db_ps_mode

    def target(self) -> str:
        """Human description of where we connect, for messages (no secrets)."""
        raise NotImplementedError

    async def connect(self, counters: Counters | None = None, index: int = 0) -> Connection:
        """Open connection number ``index`` (drivers with host lists rotate on it)."""
        raise NotImplementedError

    def node_targets(self) -> list[str]:
        """The database nodes connection ``index`` rotates over (``index`` mod their count),
        each as :meth:`target` would name it alone."""
        return [self.target()]

    async def server_version(self) -> str:
        conn = await self.connect()
        try:
            return await self._version(conn)
        finally:
            await conn.close()

    async def _version(self, conn: Connection) -> str:
        rows = await conn.fetchall("SELECT version()")
        return str(rows[0][0]) if rows else ""

    def check(self) -> None:
        """Validate driver options after parsing; raise ConfigError."""

    def unlisted_defaults(self) -> list[str]:
        """The errors ignored by default that this run's ignore list leaves out.  A list
        replaces the default, as sysbench's ``--mysql-ignore-errors`` does, so a list
        written for one server's errors (TiDB's 9007) makes a deadlock (1213) fatal."""
        opt = next((o for o in self.options if o.name == self.ignore_option), None)
        if opt is None:
            return []
        given = {str(code).strip().lower() for code in self.values.get(opt.key, opt.default) or ()}
        if "all" in given:
            return []
        if self.values.get("max_retries", 0):  # retried, and counted as failed after the last retry
            given |= {code.lower() for code in self.retryable}
        return [code for code in opt.default if code.lower() not in given]

    def ignore_list_warning(self) -> str | None:
        """One line when :meth:`unlisted_defaults` finds any (campaigns print it)."""
        dropped = self.unlisted_defaults()
        if not dropped:
            return None
        given = ",".join(str(c) for c in self.values.get(self.ignore_option.replace("-", "_"), ()))
        default = next(o.default for o in self.options if o.name == self.ignore_option)
        return (
            f"--{self.ignore_option}={given} replaces the default list {','.join(default)} (as in sysbench), so "
            f"error{'s' if len(dropped) > 1 else ''} {', '.join(dropped)} end{'' if len(dropped) > 1 else 's'} "
            "the run; list them too to keep ignoring them"
        )


REGISTRY: dict[str, type[Driver]] = {}


def register(cls: type[Driver]) -> type[Driver]:
    """Add a driver class under its ``name`` (a class decorator); a name already registered
    is refused -- a second driver would silently replace the first."""
    if not cls.name:
        raise ConfigError(f"driver class {cls.__module__}.{cls.__qualname__} has no name")
    taken = REGISTRY.get(cls.name)
    if taken is not None:
        raise ConfigError(
            f"a database driver named '{cls.name}' is already registered "
            f"({taken.__module__}.{taken.__qualname__}): choose another name for "
            f"{cls.__module__}.{cls.__qualname__}"
        )
    REGISTRY[cls.name] = cls
    return cls


def password_envs() -> tuple[str, ...]:
    """The password environment variables of every registered driver."""
    return tuple(cls.password_env for cls in REGISTRY.values() if cls.password_env)


def by_option_prefix() -> dict[str, str]:
    """Option prefix -> driver name, for every registered driver that has one."""
    return {cls.option_prefix: name for name, cls in REGISTRY.items() if cls.option_prefix}
