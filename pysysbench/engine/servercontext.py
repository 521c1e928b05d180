"""Server context of a run: curated settings and metric deltas over the measured phase.

Role: what BenchBase stores per run and HammerDB shows live -- which server
configuration produced the figures, and what the server did meanwhile.  At the
start of the measured phase one short session reads a curated set of settings
and a snapshot of cumulative counters; at its end another reads the counters
again; the result file keeps the settings, the deltas and derived figures
(buffer-pool hit ratio, lock waits per transaction, server CPU per query).

* MariaDB / MySQL: ``SHOW GLOBAL VARIABLES`` (buffer pool, flush and sync
  settings, max_connections, isolation, ...) and ``SHOW GLOBAL STATUS``
  (buffer-pool read requests vs reads, row-lock waits and time, commits,
  fsyncs, Threads_running at both ends, ...).
* PostgreSQL: ``pg_settings`` and ``pg_stat_database`` (this database: blks_hit
  vs blks_read, commits, deadlocks, temp bytes, ...) and ``pg_stat_bgwriter``.
* The server process's CPU time (``/proc``) when the server runs on this host
  and its pid file can be read.

Which server it is (MariaDB, MySQL, TiDB, PostgreSQL, CockroachDB, Redshift, ...)
is recognised from its version text by the registry :data:`FAMILIES`, one entry
per family naming the settings and counters it reads; a server nobody recognised
gets its protocol's fallback entry (the standard set above).  The result file
names it (``server_context.server``).

Counters are server-wide (other sessions count too); per-transaction figures
divide by this run's own transactions.  Nothing here may fail a run: a query
the server does not allow, a missing view or an unreadable pid file is left
out, with one note saying what and why.  Off with ``--server-context=off``;
collected only when the run writes a result file.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from ..core.errors import PySysbenchError

if TYPE_CHECKING:
    from ..drivers.base import Connection, Driver

MYSQL_SETTINGS = (
    "version",
    "version_comment",
    "innodb_buffer_pool_size",
    "innodb_buffer_pool_instances",
    "innodb_flush_log_at_trx_commit",
    "innodb_flush_method",
    "innodb_doublewrite",
    "sync_binlog",
    "log_bin",
    "binlog_format",
    "innodb_log_file_size",
    "innodb_io_capacity",
    "max_connections",
    "transaction_isolation",
    "tx_isolation",
    "thread_handling",
    "innodb_adaptive_hash_index",
    "performance_schema",
    "pid_file",
)
MYSQL_STATUS = (
    "Innodb_buffer_pool_read_requests",
    "Innodb_buffer_pool_reads",
    "Innodb_row_lock_waits",
    "Innodb_row_lock_time",
    "Innodb_deadlocks",
    "Innodb_data_fsyncs",
    "Innodb_os_log_fsyncs",
    "Innodb_log_waits",
    "Innodb_rows_read",
    "Innodb_rows_inserted",
    "Innodb_rows_updated",
    "Innodb_rows_deleted",
    "Com_select",
    "Com_insert",
    "Com_update",
    "Com_delete",
    "Com_commit",
    "Com_rollback",
    "Questions",
    "Handler_commit",
    "Handler_rollback",
    "Created_tmp_disk_tables",
    "Threads_running",
    "Threads_connected",
)
MYSQL_GAUGES = ("Threads_running", "Threads_connected")
PG_SETTINGS = (
    "server_version",
    "shared_buffers",
    "effective_cache_size",
    "work_mem",
    "max_connections",
    "synchronous_commit",
    "fsync",
    "full_page_writes",
    "wal_level",
    "wal_sync_method",
    "max_wal_size",
    "checkpoint_timeout",
    "default_transaction_isolation",
    "data_directory",
)
PG_DATABASE = (
    "xact_commit",
    "xact_rollback",
    "blks_read",
    "blks_hit",
    "tup_returned",
    "tup_fetched",
    "tup_inserted",
    "tup_updated",
    "tup_deleted",
    "conflicts",
    "temp_files",
    "temp_bytes",
    "deadlocks",
)


# --- the registry of server families ---------------------------------------------------------------
#
# A *protocol* is the driver's dialect family ("mysql", "postgresql"): how settings and counters are
# asked for and where the server's pid file is.  A *server family* is one kind of server speaking it
# (MariaDB, TiDB, CockroachDB, ...): how it is recognised from its version text and which settings
# and counters it reads.  Adding a family is one FAMILIES entry; each protocol has a fallback entry
# (no marks) for a server nobody recognised, which reads the protocol's standard set.


@dataclass(frozen=True)
class Protocol:
    name: str  # Dialect.family
    version_sql: str  # the one query whose answer (its columns joined) recognises the family
    settings_sql: str  # {names}: the family's settings, quoted; answers (name, value) rows
    status_sql: str  # {names}: the family's counters; answers (name, value) rows, or with
    status_by_column: bool  # ... this, one row of those columns
    whole_views: tuple[str, ...]  # views whose every column is a counter ("<view>.<column>" minus "pg_stat_")
    pid_setting: str  # the setting naming the pid file, or the directory holding pid_file_name
    pid_file_name: str
    children: bool  # the server's CPU includes its child processes (PostgreSQL's backends)
    hit_ratio: tuple[str, str, bool]  # (hits or requests, misses, whether the first counts the misses too)
    gauges: tuple[str, ...] = ()  # counters kept at both ends rather than as a delta
    # which server a session reached: behind a proxy the two snapshots can be two servers'
    identity_sql: str = ""


PROTOCOLS = {
    "mysql": Protocol(
        "mysql",
        "SELECT @@version, @@version_comment",
        "SHOW GLOBAL VARIABLES WHERE Variable_name IN ({names})",
        "SHOW GLOBAL STATUS WHERE Variable_name IN ({names})",
        False,
        (),
        "pid_file",
        "",
        False,
        ("Innodb_buffer_pool_read_requests", "Innodb_buffer_pool_reads", True),
        MYSQL_GAUGES,
        "SELECT @@hostname, @@port, @@server_id",
    ),
    "postgresql": Protocol(
        "postgresql",
        "SELECT version()",
        "SELECT name, current_setting(name) FROM pg_settings WHERE name IN ({names})",
        "SELECT {columns} FROM pg_stat_database WHERE datname = current_database()",
        True,
        ("pg_stat_bgwriter",),
        "data_directory",
        "postmaster.pid",
        True,
        ("blks_hit", "blks_read", False),
        (),
        "SELECT inet_server_addr(), inet_server_port(), pg_postmaster_start_time()",
    ),
}


@dataclass(frozen=True)
class ServerFamily:
    name: str  # shown in the result file (server_context.server)
    protocol: str  # a PROTOCOLS key
    marks: tuple[str, ...]  # any of these in the version text (case-insensitive) recognises it;
    # () marks the protocol's fallback
    settings: tuple[str, ...]  # the settings read at the start
    status: tuple[str, ...]  # the counters read at both ends (postgresql: pg_stat_database's
    # columns; pg_stat_bgwriter's are read whole)

    def recognises(self, version_text: str) -> bool:
        low = version_text.lower()
        return any(mark.lower() in low for mark in self.marks)


# First match wins: a family whose text also names another (Redshift's version() says
# "PostgreSQL") comes before it; the fallbacks come last.
FAMILIES = (
    ServerFamily("MariaDB", "mysql", ("MariaDB",), MYSQL_SETTINGS, MYSQL_STATUS),
    ServerFamily("TiDB", "mysql", ("TiDB",), MYSQL_SETTINGS, MYSQL_STATUS),
    ServerFamily("MySQL", "mysql", ("MySQL", "Percona Server"), MYSQL_SETTINGS, MYSQL_STATUS),
    ServerFamily("CockroachDB", "postgresql", ("CockroachDB",), PG_SETTINGS, PG_DATABASE),
    ServerFamily("Redshift", "postgresql", ("Redshift",), PG_SETTINGS, PG_DATABASE),
    ServerFamily("PostgreSQL", "postgresql", ("PostgreSQL",), PG_SETTINGS, PG_DATABASE),
    ServerFamily("unknown MySQL-protocol server", "mysql", (), MYSQL_SETTINGS, MYSQL_STATUS),
    ServerFamily("unknown PostgreSQL-protocol server", "postgresql", (), PG_SETTINGS, PG_DATABASE),
)


def fallback(protocol: str) -> ServerFamily | None:
    """The protocol's entry for a server nobody recognised; None for a protocol without one
    (SQLite, the dry-run driver: no server context)."""
    return next((f for f in FAMILIES if f.protocol == protocol and not f.marks), None)


def recognise(protocol: str, version_text: str) -> ServerFamily | None:
    """The family of a server speaking ``protocol`` whose version query answered ``version_text``."""
    for family in FAMILIES:
        if family.protocol == protocol and family.marks and family.recognises(version_text):
            return family
    return fallback(protocol)


def _in(names: tuple[str, ...]) -> str:
    return ", ".join(f"'{n}'" for n in names)


def as_number(text: Any) -> float | None:
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return int(value) if value.is_integer() else value


# --- the server process's CPU (this host only) ---------------------------------------------------

TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
MIN_CPU_TICKS = 5  # the fewest ticks of server CPU a per-query figure is derived from (<= 20 % rounding)


def cpu_per_query_measurable(cpu_s: float) -> bool:
    """Whether ``cpu_s`` of a process's CPU, read from /proc in clock ticks, is enough ticks
    to derive a per-query figure from (a few ticks are mostly rounding)."""
    return round(cpu_s * TICKS) >= MIN_CPU_TICKS


def _stat(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            text = fh.read()
    except OSError:
        return None
    return text[text.rindex(")") + 2 :].split()  # fields from the state on (the name may hold spaces)


def process_alive(pid: int, mark: str = "") -> bool:
    """``pid`` runs (not a zombie) and, given ``mark``, its command line holds it (a recycled
    pid of another program is not the server's)."""
    state = _stat(pid) if pid else None
    if state is None or state[0] == "Z":
        return False
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            cmdline = fh.read().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return False
    return mark in cmdline


def process_cpu_s(pid: int, children: bool) -> float | None:
    """CPU seconds of ``pid`` (with ``children``: its reaped children and the live ones too,
    as PostgreSQL's backends are)."""
    fields = _stat(pid)
    if fields is None:
        return None
    ticks = int(fields[11]) + int(fields[12])  # utime, stime
    if children:
        ticks += int(fields[13]) + int(fields[14])  # cutime, cstime: children that ended
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                f = _stat(int(entry))
                if f is not None and f[1] == str(pid):
                    ticks += int(f[11]) + int(f[12])
    return ticks / TICKS


def _pid_from(path: str) -> int | None:
    try:
        with open(path, encoding="ascii", errors="replace") as fh:
            first = fh.readline().strip()
    except OSError:
        return None
    return int(first) if first.isdigit() else None


def is_local(where: str) -> bool:
    host = where.rsplit(":", 1)[0].strip("[]") if not where.startswith("/") else "/"
    return host in ("127.0.0.1", "localhost", "::1", "/") or host.startswith("127.")


# --- collection ------------------------------------------------------------------------------------


ANSWER_TIMEOUT_S = 5.0  # a snapshot the server has not answered in this long is left out
CUT_SHORT_TIMEOUT_S = 1.0  # ... after a run that was stopped or cut short (the server may be hung)


class ServerContext:
    """Two snapshots around the measured phase (:meth:`begin`, :meth:`finish`), then :meth:`result`.
    Each is bounded: a server that does not answer (stopped, hung) leaves the snapshot out with
    one note instead of holding the run's end past the bounds it promises (--time, Ctrl-C)."""

    def __init__(self, driver: Driver) -> None:
        self.driver = driver
        self.family = getattr(driver.dialect, "family", "")  # the protocol: a PROTOCOLS key
        self.protocol = PROTOCOLS.get(self.family)
        self.server = fallback(self.family)  # the ServerFamily, recognised in the first session
        self.settings: dict[str, str] = {}
        self.start: dict[str, float] = {}
        self.end: dict[str, float] = {}
        self.notes: list[str] = []
        self.pid: int | None = None
        self.children = bool(self.protocol and self.protocol.children)
        self.cpu_start: float | None = None
        self.cpu_end: float | None = None
        self.where = ""
        self.identity: list[tuple[Any, ...] | None] = []  # each snapshot's server (None: not known)

    @property
    def supported(self) -> bool:
        return self.protocol is not None and self.server is not None

    async def begin(self) -> None:
        await self._bounded(True, ANSWER_TIMEOUT_S)
        if self.pid is not None:
            self.cpu_start = process_cpu_s(self.pid, self.children)

    def stop_cpu(self) -> None:
        """At the end of the measured phase (before the sessions close)."""
        if self.pid is not None:
            self.cpu_end = process_cpu_s(self.pid, self.children)

    async def finish(self, cut_short: bool = False) -> None:
        if self.pid is not None and self.cpu_end is None:
            self.stop_cpu()
        await self._bounded(False, CUT_SHORT_TIMEOUT_S if cut_short else ANSWER_TIMEOUT_S)

    async def _bounded(self, first: bool, timeout_s: float) -> None:
        try:
            await asyncio.wait_for(self._session(first), timeout_s)
        except TimeoutError:
            (self.start if first else self.end).clear()
            self._note(
                f"the server did not answer within {timeout_s:g} s: its counters at the "
                f"{'start' if first else 'end'} of the run are left out"
            )

    async def _session(self, first: bool) -> None:
        try:
            conn = await self.driver.connect()
        except PySysbenchError as exc:
            self._note(f"no connection for it ({exc})")
            return
        try:
            self.where = getattr(conn, "where", "") or self.where
            if first:
                await self._settings(conn)
            # asked outside the two snapshots (before the first, after the last): its own
            # SELECT is not counted in their difference
            identity = await self._identity(conn) if first else None
            counters = await self._counters(conn)
            (self.start if first else self.end).update(counters)
            self.identity.append(identity if first else await self._identity(conn))
        finally:
            try:
                await conn.close()
            except PySysbenchError:
                pass

    async def _identity(self, conn: Connection) -> tuple[Any, ...] | None:
        """Which server answered (host, port, its id or start time); None when it will not say."""
        sql = self.protocol.identity_sql if self.protocol else ""
        try:
            rows = await conn.fetchall(sql) if sql else []
        except PySysbenchError:
            return None
        return tuple(str(v) for v in rows[0]) if rows else None

    def _two_servers(self) -> bool:
        """The start and end snapshots came from different servers (a proxy in the path):
        their difference means nothing."""
        known = [i for i in self.identity if i is not None]
        if len(known) < 2 or known[0] == known[-1]:
            return False
        self._note(
            "the sessions at the start and at the end reached different servers (a proxy or load "
            f"balancer in the path: {':'.join(known[0][:2])}, then {':'.join(known[-1][:2])}): the "
            "server's counters and CPU are left out (--server-nodes reads every node)"
        )
        return True

    def _note(self, text: str) -> None:
        note = f"server context: {text}"
        if note not in self.notes:
            self.notes.append(note)

    async def _rows(self, conn: Connection, sql: str, what: str) -> list[tuple[Any, ...]]:
        try:
            return await conn.fetchall(sql)
        except PySysbenchError as exc:
            self._note(f"{what} left out: the server refused '{sql[:60]}...' ({str(exc).splitlines()[0][:120]})")
            return []

    async def _settings(self, conn: Connection) -> None:
        proto = self.protocol
        assert proto is not None  # a context is used only when supported
        rows = await self._rows(conn, proto.version_sql, "the server's family")
        if rows:
            self.server = recognise(self.family, " ".join(str(v) for v in rows[0] if v is not None))
        server = self.server
        assert server is not None  # supported: the protocol has a family for a server nobody recognised
        rows = await self._rows(conn, proto.settings_sql.format(names=_in(server.settings)), "settings")
        self.settings = {str(k): str(v) for k, v in rows}
        self._find_pid()

    def _find_pid(self) -> None:
        if not is_local(self.where):
            return  # another machine: its CPU is not ours to read
        proto = self.protocol
        assert proto is not None  # a context is used only when supported
        path = self.settings.get(proto.pid_setting, "")
        if path and proto.pid_file_name:
            path = os.path.join(path, proto.pid_file_name)
        pid = _pid_from(path) if path else None
        if pid is None or _stat(pid) is None:
            self._note(
                "server CPU left out: "
                + (
                    "the server does not say where its pid file is"
                    if not path
                    else f"cannot read the server's pid file or process ({path})"
                )
            )
            return
        self.pid = pid

    async def _counters(self, conn: Connection) -> dict[str, float]:
        out: dict[str, float] = {}
        assert self.protocol is not None and self.server is not None  # a context is used only when supported
        proto, status = self.protocol, self.server.status
        if not proto.status_by_column:
            rows = await self._rows(conn, proto.status_sql.format(names=_in(status)), "metrics")
            for name, value in rows:
                if (v := as_number(value)) is not None:
                    out[str(name)] = v
        else:
            sql = proto.status_sql.format(columns=", ".join(status))
            rows = await self._rows(conn, sql, f"{sql.split(' FROM ')[1].split()[0]} metrics")
            if rows:
                for name, value in zip(status, rows[0]):
                    if (v := as_number(value)) is not None:
                        out[name] = v
        for view in proto.whole_views:
            rows = await self._rows(conn, f"SELECT * FROM {view}", f"{view} metrics")
            if rows:
                # column names are not returned by fetchall: read them from the catalogue
                names = await self._rows(
                    conn,
                    f"SELECT attname FROM pg_attribute WHERE attrelid = '{view}'"
                    "::regclass AND attnum > 0 ORDER BY attnum",
                    f"{view} metrics",
                )
                prefix = view.removeprefix("pg_stat_")
                for (name,), value in zip(names, rows[0]):
                    if (v := as_number(value)) is not None:
                        out[f"{prefix}.{name}"] = v
        return out

    def result(self, *, events: int, queries: int) -> dict[str, Any]:
        if self._two_servers():
            self.end.clear()
            self.cpu_start = self.cpu_end = None
        metrics: dict[str, float | None] = {}  # a gauge's start is None when the first snapshot missed it
        for name, end in self.end.items():
            if self.protocol and name in self.protocol.gauges:
                metrics[f"{name}_start"] = self.start.get(name)
                metrics[f"{name}_end"] = end
            elif name in self.start:
                metrics[name] = end - self.start[name]
        derived: dict[str, float] = {}
        m = cast(dict[str, float], metrics)  # the figures derived below read deltas, never a gauge's start
        first, misses, first_counts_misses = self.protocol.hit_ratio if self.protocol else ("", "", True)
        accesses = m.get(first, 0) + (0 if first_counts_misses else m.get(misses, 0))
        if accesses:
            derived["hit_ratio"] = 1 - m.get(misses, 0) / accesses
        if events:
            if "Innodb_row_lock_waits" in m:
                derived["lock_waits_per_trx"] = m["Innodb_row_lock_waits"] / events
                derived["lock_wait_ms_per_trx"] = m.get("Innodb_row_lock_time", 0) / events
            if "deadlocks" in m:
                derived["deadlocks_per_trx"] = m["deadlocks"] / events
            if "Innodb_data_fsyncs" in m:
                derived["fsyncs_per_trx"] = m["Innodb_data_fsyncs"] / events
        server_cpu = None
        if self.cpu_start is not None and self.cpu_end is not None:
            server_cpu = max(0.0, self.cpu_end - self.cpu_start)
            if queries:
                if cpu_per_query_measurable(server_cpu):
                    derived["server_cpu_us_per_query"] = server_cpu / queries * 1e6
                else:  # a few ticks are mostly rounding: 0 ticks is not "no CPU"
                    self._note(
                        f"the server's CPU over the run, {server_cpu:.2f} s, is under "
                        f"{MIN_CPU_TICKS / TICKS:.2f} s, and /proc counts it in ticks of "
                        f"{1000 / TICKS:g} ms: no server CPU per query for this run"
                    )
        hidden = (self.protocol.pid_setting,) if self.protocol else ()
        settings = {k: v for k, v in self.settings.items() if k not in hidden}
        return {
            "server": self.server.name if self.server else "",
            "settings": settings,
            "metrics": metrics,
            "derived": derived,
            "notes": list(self.notes),
            "server_cpu_s": server_cpu,
        }
