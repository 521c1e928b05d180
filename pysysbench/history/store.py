"""The history store: one row per run, in an SQLite file or a PostgreSQL database.

Where it is: ``--history-db=PATH|URL``, else ``PYSYSBENCH_HISTORY_DB``, else
``$XDG_DATA_HOME/pysysbench/history.sqlite`` (``~/.local/share/pysysbench/history.sqlite``).
A ``postgresql://user[:password]@host[:port]/database[?schema=NAME&sslmode=MODE]`` URL
selects a team's shared store on PostgreSQL: the same tables, the same migrations.  The
store talks to its database through the drivers' connections (``fetch_params``): only
``drivers/`` imports a database library; the SQL here is the store's own.

The schema is versioned: ``pysysbench_schema_version`` holds every migration applied, and
opening a store applies the ones it lacks (:data:`MIGRATIONS`, in order, each in one
transaction).  A store written by a newer pysysbench is refused, never altered.

A run's row holds everything its result file holds: the document itself (``document``,
without the two bulky parts, which have columns of their own: ``intervals``, the
per-interval series, and ``histogram``, the latency histogram's non-empty buckets), where it
came from (``source``: the file's path or the log's name) and, to filter by, the workload,
thread count, driver, start time, the common labels (version, commit, date, machine) and
the headline metrics; every label is also a row of ``pysysbench_run_labels``.  A run is
known by the hash of its file's bytes (``content_hash``, unique): importing a file twice
keeps one row.  Result files hold no passwords (``stats/results.py`` masks them); the
store keeps them as they are and masks the password of its own URL wherever it shows it.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit

from ..core import switches
from ..core.errors import ConnectError, PySysbenchError, UsageError
from ..core.options import Registry, Values
from ..core.record import record
from ..drivers import DB_OPTIONS, REGISTRY, Connection

DEFAULT_NAME = "history.sqlite"
MASK = "***"
PG_SCHEMES = ("postgresql", "postgres")
COMMON_LABELS = ("version", "commit", "date", "machine")
SCHEMA_TABLE = "pysysbench_schema_version"
RUNS = "pysysbench_runs"
LABELS = "pysysbench_run_labels"
SSL_MODES = ("disable", "allow", "prefer", "require", "verify-ca", "verify-full")
BOOTSTRAP_LOCK = 0x7079_7362_6869_7374  # PostgreSQL advisory lock of a store's creation and migrations ("pysbhist")
IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")


class StoreError(PySysbenchError):
    """The store cannot be opened or used (exit code 1, one line)."""


# --- where the store is -------------------------------------------------------------------------


@record(frozen=True)
class Location:
    """A store's place: an SQLite file (``path``) or a PostgreSQL server (``url`` and the
    pgsql driver's option values it maps to)."""

    kind: str  # "sqlite" | "pgsql"
    path: str = ""
    url: str = ""
    options: tuple[tuple[str, Any], ...] = ()
    schema: str = ""

    def shown(self) -> str:
        """Where the store is, for people: the path, or the URL with its password masked."""
        return self.path if self.kind == "sqlite" else mask_url(self.url)


def default_path(env: Mapping[str, str] | None = None) -> str:
    """The per-user store file: under $XDG_DATA_HOME, else ~/.local/share (``env``: the
    environment to read, the process's by default)."""
    xdg = os.environ.get("XDG_DATA_HOME") if env is None else env.get("XDG_DATA_HOME")
    base = xdg or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(base, "pysysbench", DEFAULT_NAME)


def locate(given: str | None = None, env: Mapping[str, str] | None = None) -> Location:
    """The store chosen by ``--history-db`` (``given``), else the environment, else the default."""
    where = given or switches.HISTORY_DB.raw(env) or ""
    where = where.strip()
    if not where:
        return Location(kind="sqlite", path=default_path(env))
    if "://" not in where:
        return Location(kind="sqlite", path=os.path.abspath(os.path.expanduser(where)))
    scheme = where.split("://", 1)[0].lower()
    if scheme == "sqlite":
        path = where.split("://", 1)[1]
        if not path:
            raise UsageError("history store URL 'sqlite://' names no file: give sqlite:///PATH or just PATH")
        return Location(kind="sqlite", path=os.path.abspath(os.path.expanduser(path)))
    if scheme not in PG_SCHEMES:
        raise UsageError(
            f"history store '{mask_url(where)}': unknown scheme '{scheme}'; give a file path or a postgresql:// URL"
        )
    return _pg_location(where)


def _pg_location(url: str) -> Location:
    parts = urlsplit(url)
    query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    unknown = sorted(set(query) - {"schema", "sslmode"})
    if unknown:
        raise UsageError(f"history store '{mask_url(url)}': unknown parameter '{unknown[0]}' (known: schema, sslmode)")
    schema = query.get("schema", "")
    if schema and not IDENT.match(schema):
        raise UsageError(f"history store '{mask_url(url)}': schema '{schema}' is not a plain SQL name")
    try:
        port = parts.port
    except ValueError:
        raise UsageError(f"history store '{mask_url(url)}': the port is not a number") from None
    options: dict[str, Any] = {
        "pgsql_host": [parts.hostname or "localhost"],
        "pgsql_port": [str(port or 5432)],
    }
    if parts.username:
        options["pgsql_user"] = unquote(parts.username)
    if parts.password:
        options["pgsql_password"] = unquote(parts.password)
    database = unquote(parts.path.lstrip("/"))
    if database:
        options["pgsql_db"] = database
    if "sslmode" in query:
        if query["sslmode"] not in SSL_MODES:
            raise UsageError(
                f"history store '{mask_url(url)}': sslmode '{query['sslmode']}' is not one of {', '.join(SSL_MODES)}"
            )
        options["pgsql_sslmode"] = query["sslmode"]
    return Location(kind="pgsql", url=url, options=tuple(sorted(options.items())), schema=schema)


def mask_url(url: str) -> str:
    """``url`` with the password of its user part replaced by ``***``."""
    if "://" not in url:
        return url
    scheme, rest = url.split("://", 1)
    netloc, sep, tail = rest.partition("/")
    if "@" not in netloc:
        return url
    userinfo, host = netloc.rsplit("@", 1)
    if ":" not in userinfo:
        return url
    user = userinfo.split(":", 1)[0]
    return f"{scheme}://{user}:{MASK}@{host}{sep}{tail}"


def pg_url(
    *, user: str, host: str, port: int, database: str, password: str = "", schema: str = "", sslmode: str = ""
) -> str:
    """A store URL from its parts (tests and docs build theirs with it)."""
    auth = quote(user, safe="") + (":" + quote(password, safe="") if password else "")
    params = "&".join(f"{k}={v}" for k, v in (("schema", schema), ("sslmode", sslmode)) if v)
    return f"postgresql://{auth}@{host}:{port}/{quote(database, safe='')}" + (f"?{params}" if params else "")


# --- the schema ---------------------------------------------------------------------------------

# per database: the type of an auto-numbered key, of a JSON document and of a real number
TYPES = {
    "sqlite": {"id": "INTEGER PRIMARY KEY", "json": "TEXT", "real": "REAL"},
    "pgsql": {"id": "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY", "json": "JSONB", "real": "DOUBLE PRECISION"},
}

# the indexed columns a run is filtered by, and the headline metrics: name -> type key
FILTER_COLUMNS = {
    "workload": "TEXT NOT NULL",
    "test": "TEXT",
    "command": "TEXT",
    "driver": "TEXT",
    "threads": "INTEGER",
    "started_at": "TEXT",
    "label_version": "TEXT",
    "label_commit": "TEXT",
    "label_date": "TEXT",
    "label_machine": "TEXT",
}
METRIC_COLUMNS = ("tps", "qps", "latency_avg_ms", "latency_p95_ms", "latency_p99_ms", "errors_per_s")
JSON_COLUMNS = ("labels", "document", "intervals", "histogram")
INDEXED = ("workload", "threads", "driver", "started_at", *(f"label_{k}" for k in COMMON_LABELS))


def _migration_1(kind: str) -> list[str]:
    t = TYPES[kind]
    columns = [
        f"id {t['id']}",
        "content_hash TEXT NOT NULL UNIQUE",
        "source TEXT NOT NULL",
        "source_kind TEXT NOT NULL",
        "imported_at TEXT NOT NULL",
        *(f"{name} {kind_}" for name, kind_ in FILTER_COLUMNS.items()),
        "server_version TEXT",
        "tool_version TEXT",
        "exit_code INTEGER",
        *(f"{name} {t['real']}" for name in METRIC_COLUMNS),
        *(f"{name} {t['json']}" for name in JSON_COLUMNS),
    ]
    return [
        f"CREATE TABLE {RUNS} ({', '.join(columns)})",
        *(f"CREATE INDEX {RUNS}_{c} ON {RUNS} ({c})" for c in INDEXED),
        f"CREATE TABLE {LABELS} (run_id BIGINT NOT NULL REFERENCES {RUNS} (id) ON DELETE CASCADE, "
        "key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (run_id, key))",
        f"CREATE INDEX {LABELS}_key_value ON {LABELS} (key, value)",
    ]


# version -> its statements for a store of a kind; a new version is appended, never edited
MIGRATIONS: dict[int, Any] = {1: _migration_1}


# --- a run's row --------------------------------------------------------------------------------


def labels_of(doc: Mapping[str, Any], extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """A run's labels: the file's, then ``extra`` (``--label`` on import) over them; the
    machine is the client's host name when no label names it."""
    labels = {str(k): str(v) for k, v in (doc.get("labels") or {}).items()}
    labels.update(extra or {})
    host = (doc.get("client") or {}).get("hostname")
    if "machine" not in labels and isinstance(host, str) and host:
        labels["machine"] = host
    return labels


def workload_of(doc: Mapping[str, Any]) -> str:
    campaign = doc.get("campaign") or {}
    return str(campaign.get("workload") or doc.get("test") or "")


def threads_of(doc: Mapping[str, Any]) -> int | None:
    summary = doc.get("summary") or {}
    threads = summary.get("threads", (doc.get("options") or {}).get("threads"))
    return threads if isinstance(threads, int) and not isinstance(threads, bool) else None


def metrics_of(doc: Mapping[str, Any]) -> dict[str, float | None]:
    """The headline metrics of a run (None where it has none: it never started)."""
    summary = doc.get("summary") or {}
    latency = summary.get("latency_ms") or {}

    def num(value: Any) -> float | None:
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    return {
        "tps": num(summary.get("tps")),
        "qps": num(summary.get("qps")),
        "latency_avg_ms": num(latency.get("avg")),
        "latency_p95_ms": num(latency.get("p95")),
        "latency_p99_ms": num(latency.get("p99")),
        "errors_per_s": num(summary.get("errors_per_s")),
    }


def split_document(doc: Mapping[str, Any]) -> tuple[dict[str, Any], list[Any], dict[str, Any]]:
    """(the document without its series and histogram, the series, the histogram)."""
    rest = dict(doc)
    intervals = list(rest.pop("intervals", None) or [])
    summary = dict(rest.get("summary") or {})
    histogram = dict(summary.pop("histogram", None) or {})
    if rest.get("summary") is not None:
        rest["summary"] = summary
    return rest, intervals, histogram


def join_document(rest: Mapping[str, Any], intervals: list[Any], histogram: Mapping[str, Any]) -> dict[str, Any]:
    """The document :func:`split_document` split, whole again."""
    doc = dict(rest)
    doc["intervals"] = intervals
    if isinstance(doc.get("summary"), dict):
        doc["summary"] = {**doc["summary"], "histogram": dict(histogram)}
    return doc


@record(frozen=True)
class NewRun:
    """One run on its way in: its document, where it came from and its identity."""

    doc: dict[str, Any]
    source: str
    content_hash: str
    source_kind: str = "result-file"  # or "text-log"
    extra_labels: tuple[tuple[str, str], ...] = ()


def scrubbed(doc: Mapping[str, Any]) -> dict[str, Any]:
    """``doc`` with any password it still holds masked: pysysbench writes none, but a file
    edited by hand or written by another tool might (an option named ``*password``, in the
    options or on the command line)."""

    def secret(name: str) -> bool:
        return name.replace("_", "-").lower().endswith("password")

    out = dict(doc)
    options = doc.get("options")
    if isinstance(options, dict):
        out["options"] = {k: MASK if secret(str(k)) and v not in ("", None, MASK) else v for k, v in options.items()}
    argv = doc.get("command_line")
    if isinstance(argv, list):
        out["command_line"] = [
            f"{a.split('=', 1)[0]}={MASK}" if isinstance(a, str) and "=" in a and secret(a.split("=", 1)[0]) else a
            for a in argv
        ]
    return out


def row_of(run: NewRun, imported_at: str) -> tuple[dict[str, Any], dict[str, str]]:
    """The column values of ``run``'s row (JSON columns as text) and its labels."""
    doc = scrubbed(run.doc)
    labels = labels_of(doc, dict(run.extra_labels))
    rest, intervals, histogram = split_document(doc)
    tool = doc.get("tool") or {}
    row: dict[str, Any] = {
        "content_hash": run.content_hash,
        "source": run.source,
        "source_kind": run.source_kind,
        "imported_at": imported_at,
        "workload": workload_of(doc),
        "test": doc.get("test") or None,
        "command": doc.get("command") or None,
        "driver": doc.get("driver") or None,
        "threads": threads_of(doc),
        "started_at": doc.get("started_at") or None,
        **{f"label_{k}": labels.get(k) for k in COMMON_LABELS},
        "server_version": doc.get("server_version") or None,
        "tool_version": tool.get("version") if isinstance(tool.get("version"), str) else None,
        "exit_code": doc.get("exit_code") if isinstance(doc.get("exit_code"), int) else None,
        **metrics_of(doc),
        "labels": json.dumps(labels),
        "document": json.dumps(rest),
        "intervals": json.dumps(intervals),
        "histogram": json.dumps(histogram),
    }
    return row, labels


def now_utc() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat()


# --- queries ------------------------------------------------------------------------------------


@record(frozen=True)
class Filter:
    """What ``history list`` keeps: runs of this workload, thread count and labels."""

    workload: str | None = None
    threads: int | None = None
    labels: tuple[tuple[str, str], ...] = ()
    limit: int | None = None


LIST_COLUMNS = (
    "id",
    "source",
    "source_kind",
    "imported_at",
    "workload",
    "test",
    "driver",
    "threads",
    "started_at",
    "server_version",
    "exit_code",
    *METRIC_COLUMNS,
    "labels",
)


def list_query(f: Filter, extra: Sequence[str] = ()) -> tuple[str, list[Any]]:
    """The SELECT of ``history list`` for ``f`` and its parameters (values are never spliced in);
    ``extra`` columns follow :data:`LIST_COLUMNS`."""
    where: list[str] = []
    params: list[Any] = []
    if f.workload is not None:
        where.append("workload = ?")
        params.append(f.workload)
    if f.threads is not None:
        where.append("threads = ?")
        params.append(f.threads)
    for key, value in f.labels:
        where.append(f"EXISTS (SELECT 1 FROM {LABELS} l WHERE l.run_id = r.id AND l.key = ? AND l.value = ?)")
        params.extend((key, value))
    sql = f"SELECT {', '.join('r.' + c for c in (*LIST_COLUMNS, *extra))} FROM {RUNS} r"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY r.started_at, r.id"
    if f.limit is not None:
        sql += f" LIMIT {int(f.limit)}"
    return sql, params


def _json(value: Any) -> Any:
    """A JSON column's value: text from SQLite and asyncpg alike."""
    return json.loads(value) if isinstance(value, (str, bytes)) else value


def run_summary(row: Sequence[Any]) -> dict[str, Any]:
    """One row of :data:`LIST_COLUMNS` as ``history list`` shows it."""
    out = dict(zip(LIST_COLUMNS, row))
    out["labels"] = _json(out["labels"]) or {}
    return out


# --- the store ----------------------------------------------------------------------------------


class Store:
    """An open store: :meth:`open` it (applying missing migrations), :meth:`add` runs,
    :meth:`runs` and :meth:`run` read them, :meth:`close` it."""

    def __init__(self, location: Location, conn: Connection):
        self.location, self.conn = location, conn

    @classmethod
    async def open(cls, location: Location, migrations: Mapping[int, Any] | None = None) -> Store:
        conn = await _connect(location)
        store = cls(location, conn)
        pg = location.kind == "pgsql"
        try:
            if pg:  # PostgreSQL's CREATE ... IF NOT EXISTS is no guard against a second process at once
                await conn.fetch_params("SELECT pg_advisory_lock(?)", (BOOTSTRAP_LOCK,))
            if location.schema:  # created when missing: a user who may not create schemas uses one made for it
                if not await conn.fetch_params("SELECT 1 FROM pg_namespace WHERE nspname = ?", (location.schema,)):
                    await conn.fetch_params(f"CREATE SCHEMA {location.schema}")
                await conn.fetch_params(f"SET search_path TO {location.schema}")
            await store.migrate(MIGRATIONS if migrations is None else migrations)
            if pg:
                await conn.fetch_params("SELECT pg_advisory_unlock(?)", (BOOTSTRAP_LOCK,))
        except BaseException:
            await conn.close()  # the session's advisory lock goes with it
            raise
        return store

    async def close(self) -> None:
        await self.conn.close()

    async def _q(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return await self.conn.fetch_params(sql, params)

    async def version(self) -> int:
        """The newest migration applied (0: a new store)."""
        rows = await self._q(f"SELECT max(version) FROM {SCHEMA_TABLE}")
        return int(rows[0][0] or 0) if rows else 0

    async def migrate(self, migrations: Mapping[int, Any]) -> list[int]:
        """Apply the migrations the store lacks, in order, each in one transaction; the
        versions applied.  A store newer than ``migrations`` is refused."""
        await self._q(
            f"CREATE TABLE IF NOT EXISTS {SCHEMA_TABLE} (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)"
        )
        have, known = await self.version(), max(migrations, default=0)
        if have > known:
            raise StoreError(
                f"history store {self.location.shown()} has schema version {have}; this pysysbench knows "
                f"up to {known}: upgrade pysysbench"
            )
        applied = []
        for version in sorted(v for v in migrations if v > have):
            await self.begin(exclusive=True)  # a second process migrating waits, then skips
            try:
                if await self.version() < version:
                    for sql in migrations[version](self.location.kind):
                        await self._q(sql)
                    await self._q(
                        f"INSERT INTO {SCHEMA_TABLE} (version, applied_at) VALUES (?, ?)", (version, now_utc())
                    )
                    applied.append(version)
            except BaseException:
                await self.rollback()
                raise
            await self.commit()
        return applied

    async def hashes(self) -> set[str]:
        """The content hashes of every run stored."""
        return {r[0] for r in await self._q(f"SELECT content_hash FROM {RUNS}")}

    async def begin(self, exclusive: bool = False) -> None:
        """A transaction.  On SQLite it holds the file's write lock from its start (BEGIN
        IMMEDIATE), so two imports at once take turns instead of failing; on PostgreSQL
        rows need no such lock, and ``exclusive`` (a migration) locks the version table
        against another migration."""
        if self.location.kind == "sqlite":
            await self._q("BEGIN IMMEDIATE")
            return
        await self._q("BEGIN")
        if exclusive:
            await self._q(f"LOCK TABLE {SCHEMA_TABLE} IN SHARE ROW EXCLUSIVE MODE")

    async def commit(self) -> None:
        await self._q("COMMIT")

    async def rollback(self) -> None:
        await self._q("ROLLBACK")

    async def add(self, run: NewRun, imported_at: str | None = None) -> int | None:
        """Store ``run``; its id, or None when a run of the same content is there already."""
        row, labels = row_of(run, imported_at or now_utc())
        names = list(row)
        sql = (
            f"INSERT INTO {RUNS} ({', '.join(names)}) VALUES ({', '.join('?' for _ in names)}) "
            "ON CONFLICT (content_hash) DO NOTHING RETURNING id"
        )
        rows = await self._q(sql, [row[n] for n in names])
        if not rows:
            return None
        run_id = int(rows[0][0])
        if labels:
            await self.conn.execute_many(
                f"INSERT INTO {LABELS} (run_id, key, value) VALUES (?, ?, ?)",
                [(run_id, k, v) for k, v in labels.items()],
            )
        return run_id

    async def runs(self, f: Filter | None = None) -> list[dict[str, Any]]:
        sql, params = list_query(f or Filter())
        return [run_summary(r) for r in await self._q(sql, params)]

    async def series_runs(self, f: Filter | None = None) -> list[dict[str, Any]]:
        """The runs of ``f`` as :meth:`runs` gives them, each with its per-interval series
        (``intervals``) and its options (``options``): what ``history/series.py`` reads."""
        sql, params = list_query(f or Filter(), ("intervals", "document"))
        out = []
        for row in await self._q(sql, params):
            run = run_summary(row[: len(LIST_COLUMNS)])
            run["intervals"] = _json(row[len(LIST_COLUMNS)]) or []
            run["options"] = (_json(row[len(LIST_COLUMNS) + 1]) or {}).get("options") or {}
            out.append(run)
        return out

    async def run(self, run_id: int) -> dict[str, Any] | None:
        """One run whole: its summary row and its result document, joined again."""
        cols = ", ".join(LIST_COLUMNS)
        rows = await self._q(
            f"SELECT {cols}, content_hash, document, intervals, histogram FROM {RUNS} WHERE id = ?", (run_id,)
        )
        if not rows:
            return None
        row = rows[0]
        out = run_summary(row[: len(LIST_COLUMNS)])
        content_hash, rest, intervals, histogram = row[len(LIST_COLUMNS) :]
        out["content_hash"] = content_hash
        out["document"] = join_document(_json(rest), _json(intervals), _json(histogram))
        return out

    async def count(self) -> int:
        rows = await self._q(f"SELECT count(*) FROM {RUNS}")
        return int(rows[0][0])


# the driver's hints name its options; a store is chosen by its URL
_HINTS = (
    ("check --pgsql-host/--pgsql-port", "check the URL's host and port"),
    ("check --pgsql-user and --pgsql-password", "check the URL's user and password (or PYSYSBENCH_PGSQL_PASSWORD)"),
    ("or pass --pgsql-db", "or name another database in the URL"),
)


def for_store(message: str) -> str:
    """A driver's connection error worded for a store given by its URL."""
    for theirs, ours in _HINTS:
        message = message.replace(theirs, ours)
    return message


async def _connect(location: Location) -> Connection:
    """A connection to the store's database through its driver (the file's folder made)."""
    cls = REGISTRY[location.kind]
    values = Values(Registry([*DB_OPTIONS, *cls.options]))
    data: dict[str, Any] = dict(location.options)
    if location.kind == "sqlite":
        folder = os.path.dirname(location.path)
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the history store's folder '{folder}': {exc.strerror}") from None
        data["sqlite_db"] = location.path
    if location.kind == "pgsql":
        data["pgsql_ignore_errors"] = []  # every error of the store's SQL is one (the driver ignores 23505 by default)
    data["db_fast_path"] = False  # the library's protocol: the store's statements are few and varied
    for key, value in data.items():
        opt = values.registry.get(key)
        if opt is not None:
            values.set(opt, value)
    driver = cls(values)
    driver.check()
    try:
        conn = await driver.connect()
    except ConnectError as exc:
        raise StoreError(f"cannot open the history store {location.shown()}: {for_store(str(exc))}") from None
    if location.kind == "sqlite":
        await conn.fetch_params("PRAGMA foreign_keys=ON")
    return conn
