"""PostgreSQL driver on asyncpg (prepared statements, binary protocol).

Ignorable SQLSTATEs default to sysbench's three (40P01 deadlock, 23505 unique
violation, 40001 serialization failure): a ROLLBACK is sent (not counted) and
the event restarts.  ``--pgsql-ignore-errors`` (sysbench issue 334) replaces that
list, as ``--mysql-ignore-errors`` replaces MySQL's; listing a connection-failure
class (08xxx, 57P0x) or ``all`` makes a lost connection reconnect instead of ending
the run.  ``--pgsql-dry-run`` sends nothing, as ``--mysql-dry-run`` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...core import switches
from ...core.errors import (
    ConnectError,
    FatalSQLError,
    IgnorableError,
    MissingTableError,
    PySysbenchError,
    ReconnectError,
    TableExistsError,
    listing,
)
from ...core.options import PORT, Option, OptType, Values
from .. import tls
from ..base import (
    TOO_MANY_CONNECTIONS,
    Connection,
    Counters,
    Dialect,
    Driver,
    DriverCaps,
    Statement,
    StatementFailure,
    register,
    split_placeholders,
    substitute,
    text_rows,
)
from ..wire import count_result
from . import libpq

GROUP = "pgsql options"
READ_TAGS = ("SELECT", "FETCH", "SHOW")
LOST_CONNECTION_CODE = "08006"
TERMINATE = b"X\x00\x00\x00\x04"
SSL_MODES = ("disable", "allow", "prefer", "require", "verify-ca", "verify-full")
TLS_WORDING = tls.Wording(
    ca_option="--pgsql-ssl-ca",
    mode_option="--pgsql-sslmode",
    chain_only="--pgsql-sslmode=verify-ca",
    unverified="--pgsql-sslmode=require with no root CA to encrypt without verifying",
)
LOADING_COMMENT = "pysysbench: prepare did not finish"

OPTIONS = [
    Option(
        "pgsql-host",
        OptType.LIST,
        ["localhost"],
        "PostgreSQL server host (a list spreads connections over nodes)",
        GROUP,
        sysbench_type=OptType.STRING,  # sysbench's (1.0.20 and 1.1.0): a Lua script sees one as a string
    ),
    Option(
        "pgsql-port",
        OptType.LIST,
        ["5432"],
        "PostgreSQL server port (a list spreads connections over nodes)",
        GROUP,
        bounds=PORT,
        sysbench_type=OptType.INT,  # ... and one port as a number
    ),
    Option("pgsql-user", OptType.STRING, "sbtest", "PostgreSQL user", GROUP),
    Option(
        "pgsql-password",
        OptType.STRING,
        "",
        f"PostgreSQL password (or env {switches.PGSQL_PASSWORD.name})",
        GROUP,
        secret=True,
    ),
    Option("pgsql-db", OptType.STRING, "sbtest", "PostgreSQL database name", GROUP),
    Option(
        "pgsql-sslmode",
        OptType.STRING,
        "prefer",
        "SSL mode {disable, allow, prefer, require, verify-ca, verify-full}",
        GROUP,
        choices=SSL_MODES,
        unchecked_in="1.1",  # 1.1.0 hands it to libpq, which refuses a bad one at connect
    ),
    Option(
        "pgsql-ssl-ca",
        OptType.STRING,
        "",
        "root CA certificate file to verify the server with "
        "(libpq's sslrootcert; --pgsql-sslmode=require, verify-ca or verify-full)",
        GROUP,
    ),
    Option("pgsql-ssl-cert", OptType.STRING, "", "client certificate file for SSL", GROUP),
    Option("pgsql-ssl-key", OptType.STRING, "", "client key file for SSL", GROUP),
    Option(
        "pgsql-ignore-errors",
        OptType.LIST,
        ["40P01", "23505", "40001"],
        'SQLSTATEs to ignore (restart the event), or "all"; a connection-failure code (08006) also reconnects',
        GROUP,
    ),
    Option(
        "pgsql-dry-run",
        OptType.BOOL,
        False,
        "Dry run, pretend that all PostgreSQL client API calls are successful without executing them",
        GROUP,
    ),
]


DIALECT = Dialect(
    id_auto_inc="SERIAL",
    family="postgresql",
    table_exists_sql="SELECT to_regclass(?) IS NOT NULL",
    regex_mismatch=lambda col, pattern: f"{col}::text !~ '{pattern}'",
    max_connections_sql="SHOW max_connections",
    max_connections_hint="ALTER SYSTEM SET max_connections = {need}, then restart PostgreSQL",
    # superusers may take every slot; others not superuser_reserved_connections (and, from
    # PostgreSQL 16, reserved_connections)
    reserved_connections_sql=(
        "SELECT CASE WHEN rolsuper THEN 0 ELSE "
        "current_setting('superuser_reserved_connections')::int + "
        "coalesce(nullif(current_setting('reserved_connections', true), ''), '0')::int END "
        "FROM pg_roles WHERE rolname = current_user"
    ),
    # a role without pg_read_all_stats sees other users' rows with backend_type NULL; of
    # those, the ones of a user in a database are sessions (the server's own processes and
    # autovacuum workers have no user)
    open_connections_sql=(
        "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' "
        "OR (backend_type IS NULL AND datid IS NOT NULL AND usesysid IS NOT NULL)"
    ),
    # fast prepare: a table comment flags a table while it loads
    mark_loading_sql=lambda t: [f"COMMENT ON TABLE {t} IS '{LOADING_COMMENT}'"],
    mark_loaded_sql=lambda t, comment: [
        f"COMMENT ON TABLE {t} IS " + ("'" + comment.replace("'", "''") + "'" if comment else "NULL")
    ],
    table_comment_sql="SELECT obj_description(to_regclass(?), 'pg_class')",
    loading_check_sql=f"SELECT obj_description(to_regclass(?), 'pg_class') = '{LOADING_COMMENT}'",
    # ids are loaded explicitly: move the SERIAL sequence past them (no sequence: setval(NULL) is NULL)
    after_load_sql=lambda t, rows: [f"SELECT setval(pg_get_serial_sequence('{t}', 'id'), {rows})"],
    # COPY into a heap without its primary key, then one sorted index build: 10-15 % faster
    # (pg_restore's order); the constraint keeps its name, <table>_pkey
    drop_primary_key_sql=lambda t: [f"ALTER TABLE {t} DROP CONSTRAINT {t}_pkey"],
    add_primary_key_sql=lambda t: [f"ALTER TABLE {t} ADD PRIMARY KEY (id)"],
)


def _sqlstate(exc: BaseException) -> str:
    code = getattr(exc, "sqlstate", None)
    if code:
        return str(code)
    return LOST_CONNECTION_CODE  # OSError, InterfaceError, ...: the connection is gone


def _is_connection_failure(code: str) -> bool:
    return code.startswith("08") or code in ("57P01", "57P02", "57P03")


def _placeholders(sql: str) -> str:
    parts = sql.split("?")
    out = [parts[0]]
    for i, part in enumerate(parts[1:], 1):
        out.append(f"${i}")
        out.append(part)
    return "".join(out)


class PgConnection(Connection):
    dialect = DIALECT

    def __init__(self, driver: PgDriver, counters: Counters, endpoint: dict[str, Any]):
        self.driver = driver
        self.counters = counters
        self.endpoint = endpoint
        self.where = f"{endpoint['host']}:{endpoint['port']}"
        self.conn: Any = None

    async def open(self) -> None:
        import asyncpg

        mode = self.driver.values.pgsql_sslmode
        if mode not in SSL_MODES:  # libpq's words (only the sysbench 1.1 face takes any mode, as 1.1.0)
            text = f'Connection to database failed: invalid sslmode value: "{mode}"'
            raise ConnectError(text, "", lambda: (text + "\n",))
        try:
            self.conn = await asyncpg.connect(**self.endpoint)
        except Exception as exc:
            ep, failure = self.endpoint, exc  # sysbench's pgsql_drv_connect: libpq's text, then a blank line
            raise ConnectError(
                self.driver.connect_message(ep, exc),
                _sqlstate(exc),
                lambda: (f"Connection to database failed: {libpq.connect_message(ep['host'], ep['port'], failure)}",),
            ) from None
        if self.driver.fast_path:
            from ..wire import library_changed
            from .wire import PgWire

            try:
                transport = self.conn._transport
            except AttributeError as exc:
                self.driver.fast_path = library_changed("asyncpg", exc)
                return
            self.wire = PgWire(transport)

    async def _fail(self, exc: BaseException, sql: str, sent: str | None = None) -> None:
        """``sent``: the statement as the server got it (placeholders numbered), for
        libpq's caret under an error position."""
        error = self.driver.failure(self.counters, _sqlstate(exc), str(exc), sql)
        if isinstance(error, FatalSQLError):  # libpq's text, only where the run ends on it
            error.client_text = libpq.error_message(libpq.server_fields(exc), sent or sql)
        elif isinstance(error, IgnorableError):  # as sysbench: roll back, then the event restarts
            try:
                if self.wire is not None:
                    await self.wire.query("ROLLBACK")
                else:
                    await self.conn.execute("ROLLBACK")
            except Exception:
                pass  # the restarted event will surface a broken connection
        raise error from None

    async def prepare(self, sql: str) -> Statement:
        if self.driver.ps_mode == "disable":
            parts = split_placeholders(sql)
            query = self.query

            async def text_stmt(*args: Any) -> None:
                await query(substitute(parts, args))

            return text_stmt
        if self.wire is not None:
            return await self._wire_statement(sql)
        try:
            ps = await self.conn.prepare(_placeholders(sql))
        except Exception as exc:
            await self._fail(exc, sql, _placeholders(sql))
        fetch = ps.fetch
        status = ps.get_statusmsg
        is_read = bool(ps.get_attributes())
        c = self.counters
        fail = self._fail

        async def stmt(*args: Any) -> None:
            try:
                await fetch(*args)
            except Exception as exc:
                await fail(exc, sql)
            if is_read:
                c.reads += 1
                return
            rows = status().rpartition(" ")[2]
            if rows.isdigit() and rows != "0":
                c.writes += 1
            else:
                c.others += 1

        return stmt

    async def _wire_statement(self, sql: str) -> Statement:
        try:
            name, is_read = await self.wire.prepare(_placeholders(sql))
        except Exception as exc:
            await self._fail(exc, sql, _placeholders(sql))
        stmt: Statement = self.wire.statement(name, is_read, self.counters, StatementFailure(self, sql))
        return stmt

    async def query(self, sql: str) -> None:
        c = self.counters
        try:
            if self.wire is not None:
                tag = (await self.wire.query(sql)).decode("utf-8", "replace")
            else:
                tag = await self.conn.execute(sql)
        except Exception as exc:
            await self._fail(exc, sql)
        word, _, count = tag.rpartition(" ")
        if tag.startswith(READ_TAGS):
            c.reads += 1
        elif count.isdigit() and int(count) > 0:
            c.writes += 1
        else:
            c.others += 1

    async def query_rows(self, sql: str) -> tuple[int, list[tuple[Any, ...]]] | None:
        try:
            if self.wire is not None:
                columns, rows, raw = await self.wire.query_rows(sql)
                tag = raw.decode("utf-8", "replace")
            else:
                ps = await self.conn.prepare(sql)
                columns = len(ps.get_attributes()) if ps.get_attributes() else -1
                rows = text_rows(await ps.fetch())
                tag = ps.get_statusmsg() or ""
        except Exception as exc:
            await self._fail(exc, sql)
        count = tag.rpartition(" ")[2]
        count_result(self.counters, columns >= 0, count.isdigit() and int(count) > 0)
        return (columns, rows) if columns >= 0 else None

    async def fetchall(self, sql: str) -> list[tuple[Any, ...]]:
        try:
            with self.native():
                return [tuple(r) for r in await self.conn.fetch(sql)]
        except Exception as exc:
            await self._fail(exc, sql)
            raise  # unreachable

    async def fetch_params(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        try:
            with self.native():
                return [tuple(r) for r in await self.conn.fetch(_placeholders(sql), *params)]
        except Exception as exc:
            await self._fail(exc, sql)
            raise  # unreachable

    async def execute_params(self, sql: str, params: Sequence[Any]) -> None:
        try:
            with self.native():
                await self.conn.execute(_placeholders(sql), *params)
        except Exception as exc:
            await self._fail(exc, sql)

    async def execute_many(self, sql: str, rows: Any) -> None:
        try:
            with self.native():
                await self.conn.executemany(_placeholders(sql), rows)
        except Exception as exc:
            await self._fail(exc, sql)

    async def close(self) -> None:
        if self.end_wire(TERMINATE) and self.conn is not None:
            self.conn.terminate()
            self.conn = None
        if self.conn is not None:
            try:
                await self.conn.close(timeout=5)
            except Exception:
                self.conn.terminate()
            self.conn = None

    async def reconnect(self) -> None:
        self.end_wire(TERMINATE)  # a periodic --reconnect ends the old session politely
        if self.conn is not None:
            self.conn.terminate()
            self.conn = None  # not kept through the retries while the server is away
        await self.open()

    async def copy_in(self, table: str, columns: Sequence[str], chunks: Any) -> int:
        try:
            with self.native():
                status = await self.conn.copy_to_table(table, source=chunks, columns=list(columns))
        except Exception as exc:
            await self._fail(exc, f"COPY {table} ({', '.join(columns)}) FROM STDIN")
        return int(status.rpartition(" ")[2])


@register
class PgDriver(Driver):
    name = "pgsql"
    description = "PostgreSQL driver (PostgreSQL, KunlunBase, CockroachDB, ... via asyncpg)"
    options = OPTIONS
    # 1.1.0's --pgsql-host is one string, --pgsql-port a number (pysysbench: a list of either)
    option_prefix = "pgsql"
    password_env = switches.PGSQL_PASSWORD.name
    ignore_option = "pgsql-ignore-errors"
    retryable = ("40001", "40P01")  # serialization failure, deadlock
    caps = DriverCaps(server_prepare=True, auto_inc_insert_omits_id=True, bulk_methods=("copy", "multi-insert"))
    dialect = DIALECT

    def __init__(self, values: Values) -> None:
        super().__init__(values)
        self.ignore = {e.strip().upper() if e.strip().lower() != "all" else "all" for e in values.pgsql_ignore_errors}
        self.fast_path = bool(values.get("db_fast_path", True))
        self.password = values.pgsql_password or switches.PGSQL_PASSWORD.raw() or ""
        self.endpoints = self._endpoints()
        self.tls = self._tls()
        # asyncpg's ssl argument: the mode's name (disable, allow, prefer) or our context
        self._ssl: Any = self.tls.context if self.tls is not None else self.values.pgsql_sslmode

    def failure(self, counters: Counters, code: str, msg: str, sql: str) -> PySysbenchError:
        """What a statement's SQLSTATE ``code`` becomes, counted (spec 5.10): a reconnect (a
        connection failure, when 08006 or ``all`` is listed), an ignorable error when
        ``--pgsql-ignore-errors`` lists it, else fatal."""
        ignore = self.ignore
        listed = "all" in ignore or code in ignore or (_is_connection_failure(code) and LOST_CONNECTION_CODE in ignore)
        raw = {"errmsg": msg, "sqlstate": code}
        if listed and _is_connection_failure(code):
            counters.count_error(code, reconnect=True)
            return ReconnectError(f"PostgreSQL error {code}: {msg}", code, sql, **raw)
        counters.count_error(code)
        if listed:
            return IgnorableError(f"Ignoring error {code} {msg}", code, sql, **raw)
        if code == "42P01":
            return MissingTableError(f"PostgreSQL error 42P01: {msg}: run prepare first", code, sql, **raw)
        if code == "42P07":
            return TableExistsError(f"PostgreSQL error 42P07: {msg}: run cleanup first", code, sql, **raw)
        hint = (
            "; to reconnect and go on instead, pass --pgsql-ignore-errors=all (or add 08006)"
            if _is_connection_failure(code)
            else ""
        )
        return FatalSQLError(f"PostgreSQL error {code} ({msg}) for query '{sql}'{hint}", code, sql, **raw)

    def _endpoints(self) -> list[dict[str, Any]]:
        v = self.values
        ports = [int(p) for p in v.pgsql_port] or [5432]  # numbers 1..65535: checked with the options
        return [{"host": h, "port": p} for h in (v.pgsql_host or ["localhost"]) for p in ports]

    def describe(self, endpoint: dict[str, Any]) -> str:
        return f"host '{endpoint['host']}', port {endpoint['port']}"

    def target(self) -> str:
        return "PostgreSQL server on " + listing(self.describe(e) for e in self.endpoints)

    def node_targets(self) -> list[str]:
        return ["PostgreSQL server on " + self.describe(e) for e in self.endpoints]

    def connect_message(self, endpoint: dict[str, Any], exc: BaseException) -> str:
        code = getattr(exc, "sqlstate", None) or ""
        v = self.values
        text = str(exc) or type(exc).__name__
        failed = tls.handshake_error(exc) if self.tls is not None else None
        if failed is not None and self.tls is not None:  # failed is None without TLS: this narrows the type
            text, hint = f"TLS/SSL error: {tls.reason(failed)}", self.tls.failure_hint(failed)
        elif code == "3D000":
            hint = f"create it (CREATE DATABASE {DIALECT.quote_name(v.pgsql_db)}) or pass --pgsql-db"
        elif code in ("28000", "28P01"):
            hint = "check --pgsql-user and --pgsql-password"
        elif code == "53300":  # "too many clients already", "remaining connection slots are reserved ..."
            hint = TOO_MANY_CONNECTIONS
        elif isinstance(exc, OSError):
            hint = "is the server running? check --pgsql-host/--pgsql-port"
        else:
            hint = "check the connection options"
        return f"unable to connect to PostgreSQL server on {self.describe(endpoint)}: {text}; {hint}"

    def endpoint(self, index: int) -> dict[str, Any]:
        v = self.values
        ep = dict(self.endpoints[index % len(self.endpoints)])
        ep.update(user=v.pgsql_user, password=self.password or None, database=v.pgsql_db, ssl=self._ssl, timeout=30)
        return ep

    def _tls(self) -> tls.TLS | None:
        """libpq's rules: require verifies the chain when a root CA is given or found where
        libpq looks ($PGSSLROOTCERT, ~/.postgresql/root.crt), verify-ca always (the system's
        trusted CAs when none is), verify-full the host name too; disable / allow / prefer
        never verify (asyncpg does them), so a file given with them is an error."""
        v = self.values
        mode = v.pgsql_sslmode
        ca, cert, key = tls.given_files(v, "pgsql")
        if mode not in SSL_MODES:  # the sysbench 1.1 face's: refused at connect (PgConnection.open)
            return None
        if mode in ("disable", "allow", "prefer"):
            tls.refuse_unused(
                (ca, cert, key),
                "--pgsql-sslmode=require, verify-ca or verify-full "
                f"(--pgsql-sslmode={mode} would not use it and checks no certificate)",
            )
            return None
        ca = ca or tls.libpq_file("PGSSLROOTCERT", "root.crt")
        cert, key = tls.cert_and_key(  # libpq: "certificate present, but not private key file"
            cert,
            key,
            lambda: tls.libpq_file("PGSSLCERT", "postgresql.crt"),
            lambda: tls.libpq_file("PGSSLKEY", "postgresql.key"),
            "~/.postgresql/postgresql.key",
            "--pgsql-ssl-cert and --pgsql-ssl-key",
        )
        return tls.build(
            TLS_WORDING,
            verify=ca is not None or mode != "require",
            check_hostname=mode == "verify-full",
            ca=ca,
            cert=cert,
            key=key,
            crl=tls.libpq_file("PGSSLCRL", "root.crl"),
        )

    async def connect(self, counters: Counters | None = None, index: int = 0) -> Connection:
        if self.values.pgsql_dry_run:
            from ..dryrun import DryRunConnection

            return DryRunConnection(counters or Counters(), DIALECT, self.failure)
        conn = PgConnection(self, counters or Counters(), self.endpoint(index))
        await conn.open()
        if self._ssl in ("prefer", "allow"):
            self._settle_ssl(conn)
        return conn

    def _settle_ssl(self, conn: PgConnection) -> None:
        """With sslmode prefer/allow asyncpg builds an SSL context (loading the CA
        store) and asks the server for TLS on every connection: 1000 connections
        spent ~0.3 s of CPU on it.  Once a server has answered without TLS, later
        connections go plain directly -- what prefer would give them anyway."""
        transport = getattr(conn.conn, "_transport", None)
        if transport is not None and transport.get_extra_info("ssl_object") is None:
            self._ssl = "disable"
