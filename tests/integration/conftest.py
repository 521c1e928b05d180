"""Fixtures for the integration tests: the three targets, the CLI runner and
server-side statement capture.

Targets (each yields a fresh, clean database; every ``sbtest%`` table is
dropped before and after the test):

* ``sqlite``: a temporary database file (``--sqlite-db=...``);
* ``mysql``: the local MariaDB (``--db-driver=mysql --mysql-host=127.0.0.1
  --mysql-user=sbtest --mysql-db=sbtest``), marker ``mysql``;
* ``pgsql``: the local PostgreSQL (``--db-driver=pgsql --pgsql-host=127.0.0.1
  --pgsql-user=sbtest --pgsql-db=sbtest``), marker ``pgsql``.

An unreachable MariaDB/PostgreSQL is a test FAILURE, never a skip: CI runs
``scripts/setup-databases.sh`` first, so a missing server is a real problem.

The machine's servers are used as they run: no test changes their global settings
for good or restarts them.  A test that needs settings they do not have carries the
marker ``private_server`` (``@pytest.mark.private_server("pgsql")``: its PostgreSQL
targets; no argument: MariaDB and PostgreSQL): its targets are then this pytest
session's PRIVATE servers (``private_mysql`` / ``private_pgsql``, private_servers.py),
started on first use on free ports and in their own data directories, stopped when
the session ends.  Their settings are :data:`PRIVATE_MY_ARGS` / :data:`PRIVATE_PG_SETTINGS`
(pg_stat_statements preloaded, max_prepared_transactions, many connections).

Fixtures: ``sqlite_opts`` / ``mysql_opts`` / ``pgsql_opts`` (option lists),
``db`` (a :class:`Target`, parametrised over all three), ``server_db`` (MariaDB
and PostgreSQL only), ``run_cli`` (run ``python -m pysysbench`` as a
subprocess), ``parse_summary`` (the r/w/o lines of the final report).

``Target.capture()`` records the statements the SERVER executed while the
block runs, classified per statement kind (:func:`classify`):

* MariaDB: the general log written to ``mysql.general_log`` (as root), rows
  with command_type ``Execute`` / ``Query`` of the sessions that connected as
  user ``sbtest`` to database ``sbtest`` while the capture was on (the Connect
  row names both; other sessions may use other databases concurrently);
* PostgreSQL: ``log_statement='all'`` for the role ``sbtest`` in database
  ``sbtest`` (the server log is read as superuser) plus ``pg_stat_statements``.  The log is the primary
  source: on PostgreSQL < 16 pg_stat_statements counts a *prepared* utility
  statement (BEGIN/COMMIT via the extended protocol) only on its first
  execution (its queryId is cleared in the cached plan), so it cannot count
  BEGIN/COMMIT.  Every other kind is cross-checked against pg_stat_statements.

PostgreSQL's capture needs pg_stat_statements preloaded, which the machine's
server does not have: its tests are marked ``private_server("pgsql")``.  MariaDB's
capture switches (``general_log``, ``log_output``) are global state of the machine's
server: they are put back as they were when the block ends, and tests of concurrent
pytest sessions (other engineers) are serialised with a lock file.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import re
import shlex
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from private_servers import PrivateMariaDB, PrivatePostgres, free_port

REPO = Path(__file__).resolve().parents[2]

MY_HOST, MY_PORT = "127.0.0.1", 3306
PG_HOST, PG_PORT = "127.0.0.1", 5432
DB_USER = DB_NAME = "sbtest"

MYSQL_OPTS = ["--db-driver=mysql", f"--mysql-host={MY_HOST}", f"--mysql-user={DB_USER}", f"--mysql-db={DB_NAME}"]
PGSQL_OPTS = ["--db-driver=pgsql", f"--pgsql-host={PG_HOST}", f"--pgsql-user={DB_USER}", f"--pgsql-db={DB_NAME}"]

CLI_TIMEOUT_S = 120
LOCK_FILE = "/tmp/pysysbench-integration-tests.lock"
LOCK_TIMEOUT_S = 600
SETUP_HINT = "run scripts/setup-databases.sh (as root) to start the local servers and create the sbtest user"

# This session's private servers (marker private_server): the settings the machine's
# servers do not have and no test may set on them.
PRIVATE_PG_SETTINGS = {
    "shared_preload_libraries": "pg_stat_statements",  # capture()'s cross-check, the 0.5 / XA statement counts
    "max_prepared_transactions": "100",  # the sysbench-xa scripts' PREPARE TRANSACTION
    "max_connections": "500",
    "log_line_prefix": "%m [%p] %q%u@%d ",  # Debian's: capture() keeps the sbtest@sbtest lines
}
PRIVATE_MY_ARGS = ("--max-connections=2000", "--max-prepared-stmt-count=1000000", "--local-infile=1")


# --------------------------------------------------------------------------- CLI ---


def _run_cli(
    *args: str,
    timeout: float = CLI_TIMEOUT_S,
    cwd: str | os.PathLike | None = None,
) -> subprocess.CompletedProcess:
    """Run ``python -m pysysbench ARGS`` and capture its output (text)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    try:
        return subprocess.run(
            [sys.executable, "-m", "pysysbench", *map(str, args)],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=cwd or REPO,
            env=env,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(
            f"pysysbench {' '.join(map(str, args))} timed out after {timeout}s\n"
            f"stdout:\n{exc.stdout}\nstderr:\n{exc.stderr}"
        )


def describe(proc: subprocess.CompletedProcess) -> str:
    """Command, exit code and output of a finished process, for assertion messages."""
    cmd = " ".join(map(str, proc.args))
    return f"$ {cmd}\nexit code {proc.returncode}\n--- stdout ---\n{proc.stdout}\n--- stderr ---\n{proc.stderr}"


class CliRunner:
    """``run_cli(*args)`` -> CompletedProcess; ``run_cli.ok(*args)`` also asserts exit code 0."""

    def __call__(self, *args: str, timeout: float = CLI_TIMEOUT_S, cwd=None) -> subprocess.CompletedProcess:
        return _run_cli(*args, timeout=timeout, cwd=cwd)

    def ok(self, *args: str, timeout: float = CLI_TIMEOUT_S, cwd=None) -> subprocess.CompletedProcess:
        proc = _run_cli(*args, timeout=timeout, cwd=cwd)
        assert proc.returncode == 0, describe(proc)
        return proc

    describe = staticmethod(describe)


@pytest.fixture(scope="session")
def run_cli() -> CliRunner:
    return CliRunner()


# ----------------------------------------------------------------- report parsing ---

_SUMMARY_LINES = {
    "read": r"^\s+read:\s+(\d+)\s*$",
    "write": r"^\s+write:\s+(\d+)\s*$",
    "other": r"^\s+other:\s+(\d+)\s*$",
    "total": r"^\s+total:\s+(\d+)\s*$",
    "transactions": r"^\s+transactions:\s+(\d+)\s",
    "queries": r"^\s+queries:\s+(\d+)\s",
    "ignored_errors": r"^\s+ignored errors:\s+(\d+)\s",
    "reconnects": r"^\s+reconnects:\s+(\d+)\s",
    "events": r"^\s+total number of events:\s+(\d+)\s*$",
}


def parse_summary_text(stdout: str) -> dict[str, int]:
    """The counters of the final report (sysbench 1.0.20 text format)."""
    out: dict[str, int] = {}
    for key, pattern in _SUMMARY_LINES.items():
        m = re.search(pattern, stdout, re.M)
        assert m, f"no '{key}' line in the report:\n{stdout}"
        out[key] = int(m.group(1))
    return out


@pytest.fixture(scope="session")
def parse_summary():
    return parse_summary_text


# ------------------------------------------------------------ statement classes ---

# fullmatch on the statement text with whitespace collapsed; values may be
# literals (MySQL Execute/Query, PostgreSQL simple query) or $n (PostgreSQL
# prepared / pg_stat_statements-normalised)
_V = r"\S+"
KIND_PATTERNS: list[tuple[str, str]] = [
    ("begin", r"BEGIN"),
    ("commit", r"COMMIT"),
    ("rollback", r"ROLLBACK"),
    ("point_select", rf"SELECT c FROM sbtest\d+ WHERE id ?= ?{_V}"),
    ("simple_range", rf"SELECT c FROM sbtest\d+ WHERE id BETWEEN {_V} AND {_V}"),
    ("sum_range", rf"SELECT SUM\(k\) FROM sbtest\d+ WHERE id BETWEEN {_V} AND {_V}"),
    ("order_range", rf"SELECT c FROM sbtest\d+ WHERE id BETWEEN {_V} AND {_V} ORDER BY c"),
    ("distinct_range", rf"SELECT DISTINCT c FROM sbtest\d+ WHERE id BETWEEN {_V} AND {_V} ORDER BY c"),
    ("index_update", rf"UPDATE sbtest\d+ SET k ?= ?k ?\+ ?(?:1|\$\d+) WHERE id ?= ?{_V}"),
    ("non_index_update", rf"UPDATE sbtest\d+ SET c ?= ?{_V} WHERE id ?= ?{_V}"),
    ("delete", rf"DELETE FROM sbtest\d+ WHERE id ?= ?{_V}"),
    # prepare's multi-row load: no space before "(" (spec 2.3)
    ("load_insert", r"INSERT INTO sbtest\d+\((?:id, )?k, c, pad\) VALUES\(.*"),
    # one row: oltp_read_write & co. (prepared) and oltp_insert (plain query)
    ("insert", rf"INSERT INTO sbtest\d+ \((?:id, )?k, c, pad\) VALUES \((?:{_V}, ){{2,3}}{_V}\)"),
    # bulk_insert's multi-row statement (spec 3.9)
    ("bulk_insert", r"INSERT INTO sbtest\d+ VALUES ?\(.*"),
    ("random_points", r"SELECT id, k, c, pad FROM sbtest1 WHERE k IN \(.*\)"),
    ("random_ranges", rf"SELECT count\(k\) FROM sbtest1 WHERE k BETWEEN {_V} AND {_V}(?: OR k BETWEEN {_V} AND {_V})*"),
    # pysysbench's pre-run checks (not part of any event): the tables exist, the
    # server accepts enough connections
    ("table_check", r"SELECT count\(\*\) FROM information_schema\.tables WHERE .*"),
    ("table_check", r"SELECT to_regclass\(.*\) IS NOT NULL"),
    # run's pre-flight: is the table still flagged by an unfinished prepare (pysysbench.load.marker)?
    ("table_check", r"SELECT obj_description\(to_regclass\(.*\), 'pg_class'\) = .*"),
    # ... and holds the rows --table-size asks for (one probe of each table's primary key)
    ("table_check", r"SELECT max\(id\) FROM sbtest\d+(?: WHERE id <= \d+)?"),
    ("preflight", r"SELECT @@(?:GLOBAL\.)?max_connections"),
    ("preflight", r"SELECT @@max_prepared_stmt_count"),
    ("preflight", r"SHOW GLOBAL STATUS LIKE 'Prepared_stmt_count'"),
    ("preflight", r"SHOW max_connections"),
    ("preflight", r"SHOW GLOBAL STATUS LIKE 'Threads_connected'"),
    ("preflight", r"SELECT CASE WHEN rolsuper THEN 0 ELSE current_setting\('superuser_reserved_connections'\).*"),
    ("preflight", r"SELECT count\(\*\) FROM pg_stat_activity WHERE backend_type = 'client backend'"),
    ("ddl", r"(?:CREATE|DROP) (?:TABLE|INDEX) .*"),
]
_COMPILED = [(kind, re.compile(p, re.S | re.I)) for kind, p in KIND_PATTERNS]

# the kinds a benchmark event can send (everything else is set-up/tooling)
EVENT_KINDS = (
    "begin",
    "commit",
    "rollback",
    "point_select",
    "simple_range",
    "sum_range",
    "order_range",
    "distinct_range",
    "index_update",
    "non_index_update",
    "delete",
    "insert",
    "bulk_insert",
    "random_points",
    "random_ranges",
)
UTILITY_KINDS = ("begin", "commit", "rollback")
READ_KINDS = (
    "point_select",
    "simple_range",
    "sum_range",
    "order_range",
    "distinct_range",
    "random_points",
    "random_ranges",
)
WRITE_KINDS = ("index_update", "non_index_update", "delete", "insert", "bulk_insert")


def normalize_sql(sql: str) -> str:
    return " ".join(sql.split()).rstrip(";").strip()


def classify(sql: str) -> str:
    """Statement kind of one SQL text; unknown statements give ``unknown: <text>``."""
    text = normalize_sql(sql)
    for kind, rx in _COMPILED:
        if rx.fullmatch(text):
            return kind
    return "unknown: " + text[:120]


@dataclass
class Capture:
    """What the server executed during a ``Target.capture()`` block."""

    available: bool = True
    # (command, sql): command is 'Execute'/'Query' (MariaDB) or 'execute'/'statement' (PostgreSQL log)
    statements: list[tuple[str, str]] = field(default_factory=list)
    prepared: list[str] = field(default_factory=list)  # MariaDB 'Prepare' rows (statement texts)
    pgss: Counter | None = None  # kind -> calls (PostgreSQL only)
    pgss_rows: Counter | None = None  # kind -> rows (PostgreSQL only)

    @property
    def kinds(self) -> Counter:
        return Counter(classify(sql) for _, sql in self.statements)

    def first_event(self) -> int:
        """Index of the first statement an event sent (len(statements) if none)."""
        for i, (_, sql) in enumerate(self.statements):
            if classify(sql) in EVENT_KINDS:
                return i
        return len(self.statements)

    def setup_statements(self) -> list[str]:
        """What was sent before the first event (pre-run checks of the tool)."""
        return [sql for _, sql in self.statements[: self.first_event()]]

    def event_kinds(self) -> Counter:
        """Kinds sent from the first event on.  Statements before it (a tool's one-off
        pre-run checks: tables exist, max_connections, ...) are not part of any event;
        afterwards every statement counts, unknown ones included so that a comparison
        shows them, except pysysbench's known set-up queries."""
        kinds = Counter(classify(sql) for _, sql in self.statements[self.first_event() :])
        return Counter({k: n for k, n in kinds.items() if k in EVENT_KINDS or k.startswith("unknown")})

    def commands(self) -> Counter:
        return Counter((classify(sql), cmd) for cmd, sql in self.statements)

    def items(self) -> list[tuple[str, str, str]]:
        """(kind, command, sql) of every statement, in execution order."""
        return [(classify(sql), cmd, sql) for cmd, sql in self.statements]


# ------------------------------------------------------------- server access ---


def _sync(coro):
    return asyncio.run(coro)


async def _my_query(
    sql: str | list[str], user: str = "root", db: str | None = None, port: int = MY_PORT
) -> list[tuple]:
    import asyncmy

    conn = await asyncmy.connect(
        host=MY_HOST, port=port, user=user, password="", database=db, connect_timeout=5, autocommit=True
    )
    try:
        rows: list[tuple] = []
        async with conn.cursor() as cur:
            for stmt in [sql] if isinstance(sql, str) else sql:
                await cur.execute(stmt)
                rows = list(await cur.fetchall() or [])
        return rows
    finally:
        await conn.ensure_closed()


async def _pg_query(sql: str | list[str], user: str = "postgres", args: tuple = (), port: int = PG_PORT) -> list[tuple]:
    import asyncpg

    conn = await asyncpg.connect(host=PG_HOST, port=port, user=user, database=DB_NAME, timeout=5)
    try:
        rows: list[tuple] = []
        for stmt in [sql] if isinstance(sql, str) else sql:
            rows = [tuple(r) for r in await conn.fetch(stmt, *args)]
        return rows
    finally:
        await conn.close()


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, (bytes, bytearray)) else str(value)


_reachability: dict[tuple[str, int], str | None] = {}


def _unreachable(name: str, port: int) -> str | None:
    """Why the server cannot be used (None when it can); checked once per session."""
    if (name, port) not in _reachability:
        try:
            if name == "mysql":
                _sync(_my_query("SELECT 1", user=DB_USER, db=DB_NAME, port=port))
                _sync(_my_query("SELECT 1", port=port))
            else:
                _sync(_pg_query("SELECT 1", user=DB_USER, port=port))
                _sync(_pg_query("SELECT 1", port=port))
            _reachability[(name, port)] = None
        except Exception as exc:  # any driver error: report it
            where = (
                f"MariaDB on {MY_HOST}:{port} (users sbtest and root, database sbtest)"
                if name == "mysql"
                else f"PostgreSQL on {PG_HOST}:{port} (users sbtest and postgres, database sbtest)"
            )
            _reachability[(name, port)] = f"{where} is not reachable: {type(exc).__name__}: {exc}; {SETUP_HINT}"
    return _reachability[(name, port)]


# An unreachable server must make its tests FAIL (not error in set-up, not skip):
# the fixture records the reason on the test item and this hook fails the test's
# call phase before its body runs.
_UNREACHABLE = pytest.StashKey[str]()


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    msg = pyfuncitem.stash.get(_UNREACHABLE, None)
    if msg:
        pytest.fail(msg, pytrace=False)


@dataclass
class Target:
    """One database target of the CLI, with clean-up and observation helpers."""

    name: str
    opts: list[str]
    sqlite_path: str | None = None
    port: int = 0  # the server's (the machine's or this session's private one)

    # ---- data access (as the benchmark user) ----

    def rows(self, sql: str) -> list[tuple]:
        if self.name == "sqlite":
            import sqlite3

            con = sqlite3.connect(self.sqlite_path)
            try:
                return [tuple(r) for r in con.execute(sql).fetchall()]
            finally:
                con.close()
        if self.name == "mysql":
            return _sync(_my_query(sql, user=DB_USER, db=DB_NAME, port=self.port))
        return _sync(_pg_query(sql, user=DB_USER, port=self.port))

    def scalar(self, sql: str) -> Any:
        rows = self.rows(sql)
        return rows[0][0] if rows else None

    def admin(self, sql: str | list[str]) -> list[tuple]:
        """As root / postgres (for schema text, logs, statistics)."""
        if self.name == "mysql":
            return _sync(_my_query(sql, db=DB_NAME, port=self.port))
        if self.name == "pgsql":
            return _sync(_pg_query(sql, port=self.port))
        raise AssertionError("no admin connection for sqlite")

    def tables(self) -> list[str]:
        if self.name == "sqlite":
            if not os.path.exists(self.sqlite_path):
                return []
            sql = "SELECT name FROM sqlite_master WHERE type='table' AND name LIKE 'sbtest%'"
        elif self.name == "mysql":
            sql = (
                "SELECT table_name FROM information_schema.tables WHERE table_schema='sbtest' "
                "AND table_name LIKE 'sbtest%'"
            )
        else:
            sql = "SELECT tablename FROM pg_tables WHERE schemaname='public' AND tablename LIKE 'sbtest%'"
        return sorted(_text(r[0]) for r in self.rows(sql))

    def drop_tables(self) -> None:
        if self.name == "sqlite":
            for suffix in ("", "-wal", "-shm", "-journal"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self.sqlite_path + suffix)
            return
        names = self.tables()
        if not names:
            return
        if self.name == "mysql":
            self.admin([f"DROP TABLE IF EXISTS `{n}`" for n in names])
        else:
            self.admin([f'DROP TABLE IF EXISTS "{n}" CASCADE' for n in names])

    # ---- server-side statement capture ----

    @contextlib.contextmanager
    def capture(self) -> Iterator[Capture]:
        if self.name == "mysql":
            with _mysql_capture(self.port) as cap:
                yield cap
        elif self.name == "pgsql":
            with _pgsql_capture(self.port) as cap:
                yield cap
        else:
            yield Capture(available=False)  # no server: nothing to observe


_MY_CONNECT_DB = re.compile(rf"^{DB_USER}@\S* on {DB_NAME} using ")


@contextlib.contextmanager
def general_log_on(query) -> Iterator[None]:
    """MariaDB's general log into the table mysql.general_log (emptied first) inside the
    block; ``query(sql_or_list)`` runs as root.  log_output and general_log are put back
    exactly as they were, whatever happens in the block or while reading the log."""
    before = query("SELECT @@GLOBAL.log_output, @@GLOBAL.general_log")[0]
    try:
        query(["SET GLOBAL log_output='TABLE'", "SET GLOBAL general_log=1", "TRUNCATE TABLE mysql.general_log"])
        yield
    finally:
        query([f"SET GLOBAL general_log={int(before[1])}", f"SET GLOBAL log_output='{_text(before[0])}'"])


@contextlib.contextmanager
def _mysql_capture(port: int) -> Iterator[Capture]:
    cap = Capture()
    query = lambda sql: _sync(_my_query(sql, port=port))  # noqa: E731
    with general_log_on(query):
        try:
            yield cap
        finally:
            rows = query(
                [
                    "SELECT thread_id, command_type, argument FROM mysql.general_log "
                    "WHERE command_type IN ('Connect', 'Execute', 'Query', 'Prepare') AND thread_id IN "
                    "(SELECT thread_id FROM mysql.general_log WHERE command_type = 'Connect' "
                    f"AND argument LIKE '{DB_USER}@% on {DB_NAME} using %')"
                ]
            )
    # the log table (CSV engine) returns rows in the order they were written; keep the
    # sessions that connected to database sbtest (others may use user sbtest on other databases)
    rows = [(tid, _text(cmd), _text(arg)) for tid, cmd, arg in rows]
    ours = {tid for tid, cmd, arg in rows if cmd == "Connect" and _MY_CONNECT_DB.search(arg)}
    rows = [(cmd, arg) for tid, cmd, arg in rows if tid in ours and cmd != "Connect"]
    cap.statements = [(cmd, arg) for cmd, arg in rows if cmd != "Prepare"]
    cap.prepared = [arg for cmd, arg in rows if cmd == "Prepare"]


# "<prefix> LOG:  execute <name>: SQL" / "<prefix> LOG:  statement: SQL"; continuation lines
# of a multi-line statement do not match _PG_MSG
_PG_MSG = re.compile(
    r"^(?P<prefix>.*?)(?P<sev>LOG|DETAIL|STATEMENT|ERROR|HINT|CONTEXT|FATAL|WARNING|NOTICE|"
    r"PANIC|INFO|DEBUG\d?):  (?P<text>.*)$"
)
_PG_STMT = re.compile(r"^(?:(?P<exec>execute) [^:]*|(?P<plain>statement)): (?P<sql>.*)$", re.S)


def _pg_log_file(port: int) -> str:
    """The server log as a path pg_read_file() can read: the collector's file, or
    the postmaster's stderr (Debian's pg_ctlcluster and pg_ctl -l redirect it to a file).
    Looked up for every capture: the server may have been restarted meanwhile."""
    current = _sync(_pg_query("SELECT pg_current_logfile('stderr')", port=port))[0][0]
    if current:
        return current
    pid = _sync(_pg_query("SELECT split_part(pg_read_file('postmaster.pid'), E'\\n', 1)", port=port))[0][0]
    return f"/proc/{pid.strip()}/fd/2"


def _pg_log_size(path: str, port: int) -> int:
    return int(_sync(_pg_query("SELECT (pg_stat_file($1)).size", args=(path,), port=port))[0][0])


def _pg_read_log(path: str, start: int, port: int) -> str:
    size = _pg_log_size(path, port)
    if size <= start:
        return ""
    data = _sync(_pg_query("SELECT pg_read_binary_file($1, $2, $3)", args=(path, start, size - start), port=port))[0][0]
    return bytes(data).decode("utf-8", "replace")


def _parse_pg_log(text: str, user_db: str | None) -> list[tuple[str, str]]:
    messages: list[list[str]] = []  # [prefix, severity, text]
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the text ends with a newline
    for line in lines:
        m = _PG_MSG.match(line)
        if m:
            messages.append([m["prefix"], m["sev"], m["text"]])
        elif messages:
            messages[-1][2] += "\n" + line
    out = []
    for prefix, sev, body in messages:
        if sev != "LOG" or (user_db and user_db not in prefix):
            continue
        m = _PG_STMT.match(body)
        if m:
            out.append(("execute" if m["exec"] else "statement", m["sql"]))
    return out


@contextlib.contextmanager
def _pgsql_capture(port: int) -> Iterator[Capture]:
    cap = Capture()
    path = _pg_log_file(port)
    prefix, libs = _sync(
        _pg_query("SELECT current_setting('log_line_prefix'), current_setting('shared_preload_libraries')", port=port)
    )[0]
    if "pg_stat_statements" not in libs:
        pytest.fail(
            f"capture() on the PostgreSQL on port {port} needs pg_stat_statements preloaded, which it "
            "is not: mark the test @pytest.mark.private_server('pgsql') to run it on the session's "
            "private server",
            pytrace=False,
        )
    user_db = f"{DB_USER}@{DB_NAME}" if "%u@%d" in prefix else None
    # reset the statistics of database sbtest only (other tests may observe other databases);
    # first: without pg_stat_statements preloaded this fails before anything was set
    _sync(
        _pg_query(
            f"SELECT pg_stat_statements_reset(0, (SELECT oid FROM pg_database WHERE datname = '{DB_NAME}'), 0)",
            port=port,
        )
    )
    start = _pg_log_size(path, port)
    _sync(_pg_query(f"ALTER ROLE {DB_USER} IN DATABASE {DB_NAME} SET log_statement = 'all'", port=port))
    try:
        yield cap
    finally:
        _sync(_pg_query(f"ALTER ROLE {DB_USER} IN DATABASE {DB_NAME} RESET log_statement", port=port))
    # the backends write their log lines synchronously; a short pause covers a
    # backend that is still finishing its last line
    time.sleep(0.05)
    log = _pg_read_log(path, start, port)
    stats = _sync(
        _pg_query(
            "SELECT s.query, s.calls, s.rows FROM pg_stat_statements s "
            "JOIN pg_roles r ON r.oid = s.userid JOIN pg_database d ON d.oid = s.dbid "
            f"WHERE r.rolname = '{DB_USER}' AND d.datname = '{DB_NAME}'",
            port=port,
        )
    )
    cap.statements = _parse_pg_log(log, user_db)
    cap.pgss, cap.pgss_rows = Counter(), Counter()
    for query, calls, nrows in stats:
        kind = classify(query)
        cap.pgss[kind] += calls
        cap.pgss_rows[kind] += nrows


# --------------------------------------------------------------------- fixtures ---


@contextlib.contextmanager
def _exclusive() -> Iterator[None]:
    """Serialise tests of concurrent pytest sessions on the shared servers."""
    fd = os.open(LOCK_FILE, os.O_CREAT | os.O_RDWR, 0o666)
    try:
        deadline = time.monotonic() + LOCK_TIMEOUT_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    pytest.fail(f"could not lock {LOCK_FILE} within {LOCK_TIMEOUT_S}s (another test session?)")
                time.sleep(0.2)
        yield
    finally:
        os.close(fd)  # releases the lock


def _private_wanted(name: str, node) -> bool:
    """Whether the test's ``name`` target is this session's private server (marker
    ``private_server``, with the drivers it applies to or none for both)."""
    marker = node.get_closest_marker("private_server")
    return marker is not None and (not marker.args or name in marker.args)


@pytest.fixture(scope="session")
def private_pgsql() -> Iterator[PrivatePostgres]:
    """This session's private PostgreSQL (PRIVATE_PG_SETTINGS), started on first use: user
    ``sbtest`` (no password), database ``sbtest`` with the pg_stat_statements extension."""
    settings = " ".join(f"-c {shlex.quote(f'{k}={v}')}" for k, v in PRIVATE_PG_SETTINGS.items())
    server = PrivatePostgres(
        port=int(os.environ.get("PYSYSBENCH_TEST_SESSION_PG_PORT") or free_port()), extra_settings=settings
    )
    try:
        server.start()
        server.sql("CREATE EXTENSION IF NOT EXISTS pg_stat_statements", db=DB_NAME)
        server.sql(f"GRANT pg_read_all_stats TO {DB_USER}")
        yield server
    finally:
        server.destroy()


@pytest.fixture(scope="session")
def private_mysql() -> Iterator[PrivateMariaDB]:
    """This session's private MariaDB (PRIVATE_MY_ARGS, grant tables: root and ``sbtest``
    without a password), started on first use."""
    server = PrivateMariaDB(
        port=int(os.environ.get("PYSYSBENCH_TEST_SESSION_MY_PORT") or free_port()),
        extra_args=PRIVATE_MY_ARGS,
        grants=True,
    )
    try:
        server.start()
        yield server
    finally:
        server.destroy()


@contextlib.contextmanager
def _target(name: str, tmp_path: Path, request) -> Iterator[Target]:
    node = request.node
    if name == "sqlite":
        path = str(tmp_path / "sbtest.db")
        t = Target("sqlite", ["--db-driver=sqlite", f"--sqlite-db={path}"], sqlite_path=path)
        t.drop_tables()
        try:
            yield t
        finally:
            t.drop_tables()
        return
    opts = list(MYSQL_OPTS if name == "mysql" else PGSQL_OPTS)
    if _private_wanted(name, node):
        try:
            server = request.getfixturevalue(f"private_{name}")
        except Exception as exc:  # a private server that does not start fails the test, as below
            node.stash[_UNREACHABLE] = f"this session's private {name} server did not start: {exc}"
            yield Target(name, opts, port=0)
            return
        t = Target(name, [*opts, f"--{name}-port={server.port}"], port=server.port)
        lock = contextlib.nullcontext()  # this session's own server
    else:
        t = Target(name, opts, port=MY_PORT if name == "mysql" else PG_PORT)
        lock = _exclusive()
    msg = _unreachable(name, t.port)
    if msg:
        node.stash[_UNREACHABLE] = msg  # pytest_pyfunc_call fails the test
        yield t
        return
    with lock:
        t.drop_tables()
        try:
            yield t
        finally:
            t.drop_tables()


ALL_TARGETS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("mysql", id="mysql", marks=pytest.mark.mysql),
    pytest.param("pgsql", id="pgsql", marks=pytest.mark.pgsql),
]
SERVER_TARGETS = ALL_TARGETS[1:]


@pytest.fixture(params=ALL_TARGETS)
def db(request, tmp_path) -> Iterator[Target]:
    """Each target in turn, with a clean database."""
    with _target(request.param, tmp_path, request) as t:
        yield t


@pytest.fixture(params=SERVER_TARGETS)
def server_db(request, tmp_path) -> Iterator[Target]:
    """MariaDB and PostgreSQL in turn, with a clean database."""
    with _target(request.param, tmp_path, request) as t:
        yield t


@pytest.fixture
def sqlite_opts(request, tmp_path) -> Iterator[list[str]]:
    with _target("sqlite", tmp_path, request) as t:
        yield t.opts


@pytest.fixture
def mysql_opts(request, tmp_path) -> Iterator[list[str]]:
    with _target("mysql", tmp_path, request) as t:
        yield t.opts


@pytest.fixture
def pgsql_opts(request, tmp_path) -> Iterator[list[str]]:
    with _target("pgsql", tmp_path, request) as t:
        yield t.opts


@pytest.fixture
def mysql_db(request, tmp_path) -> Iterator[Target]:
    with _target("mysql", tmp_path, request) as t:
        yield t


@pytest.fixture
def pgsql_db(request, tmp_path) -> Iterator[Target]:
    with _target("pgsql", tmp_path, request) as t:
        yield t
