"""MySQL / MariaDB driver on asyncmy (server-side prepared statements, binary protocol).

Host/port/socket lists rotate per new connection, host-major (spec 8.2).  Errors
listed in ``--mysql-ignore-errors`` (or ``all``) restart the event; lost-connection
errors in that list reconnect to the same server first (spec 5.10).
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Sequence
from typing import Any

from ...core import switches
from ...core.errors import (
    BulkLoadRefused,
    ConfigError,
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

GROUP = "mysql options"
DEFAULT_SOCKETS = ("/run/mysqld/mysqld.sock", "/var/run/mysqld/mysqld.sock", "/tmp/mysql.sock")
LOST_CONNECTION = {"2013", "2006", "2011", "2055"}
ER_NO_SUCH_TABLE = "1146"
ER_TABLE_EXISTS = "1050"
ER_UNSUPPORTED_PS = "1295"
RECV_BUFFER_BYTES = 16 * 1024
COM_QUIT_PACKET = b"\x01\x00\x00\x00\x01"
SSL_MODES = ("off", "on", "disabled", "preferred", "required", "verify_ca", "verify_identity")
# sysbench 1.1.0 (built on MariaDB's client library) declares --mysql-ssl a flag: these words too
SSL_FLAG_WORDS = {"true": "on", "1": "on", "false": "off", "0": "off"}
IN_CWD = "{} in the working directory (--mysql-ssl=on)"
TLS_WORDING = tls.Wording(
    ca_option="--mysql-ssl-ca",
    mode_option="--mysql-ssl",
    chain_only="--mysql-ssl=verify_ca",
    unverified="--mysql-ssl=required with no CA to encrypt without verifying",
)

OPTIONS = [
    Option("mysql-host", OptType.LIST, ["localhost"], "MySQL server host", GROUP),
    Option("mysql-port", OptType.LIST, ["3306"], "MySQL server port", GROUP, bounds=PORT),
    Option("mysql-socket", OptType.LIST, [], "MySQL socket", GROUP, show_default=False),
    Option("mysql-user", OptType.STRING, "sbtest", "MySQL user", GROUP),
    Option(
        "mysql-password",
        OptType.STRING,
        "",
        f"MySQL password (or env {switches.MYSQL_PASSWORD.name})",
        GROUP,
        secret=True,
    ),
    Option("mysql-db", OptType.STRING, "sbtest", "MySQL database name", GROUP),
    Option(
        "mysql-ssl",
        OptType.STRING,
        "off",
        "SSL mode {off, on, required, verify_ca, verify_identity}; 'on' uses client-key.pem, "
        "client-cert.pem and cacert.pem from the working directory when present",
        GROUP,
        # sysbench (1.0.20 and 1.1.0) declares it a flag: its words (true|false|1|0, bare on),
        # its 'invalid option' and a boolean sysbench.opt.mysql_ssl; the modes are ours
        choices=SSL_MODES + tuple(SSL_FLAG_WORDS),
        fold_case=True,
        sysbench_type=OptType.BOOL,
    ),
    Option("mysql-ssl-ca", OptType.STRING, "", "CA certificate file for SSL", GROUP),
    Option("mysql-ssl-cert", OptType.STRING, "", "client certificate file for SSL", GROUP),
    Option("mysql-ssl-key", OptType.STRING, "", "client key file for SSL", GROUP),
    Option("mysql-ssl-cipher", OptType.STRING, "", "use specific cipher for SSL connections", GROUP),
    Option("mysql-compression", OptType.BOOL, False, "use compression, if available in the client library", GROUP),
    # sysbench 1.1's; like 1.1.0 built on MariaDB's client library, any value is taken and unused
    Option(
        "mysql-compression-algorithms",
        OptType.STRING,
        "zlib",
        "compression algorithms to use",
        GROUP,
        extra=True,
        since="1.1",
    ),
    Option("mysql-debug", OptType.BOOL, False, "trace all client library calls", GROUP),
    Option("mysql-ignore-errors", OptType.LIST, ["1213", "1020", "1205"], 'list of errors to ignore, or "all"', GROUP),
    Option(
        "mysql-dry-run",
        OptType.BOOL,
        False,
        "Dry run, pretend that all MySQL client API calls are successful without executing them",
        GROUP,
    ),
]

LOADING_COMMENT = "pysysbench: prepare did not finish"
# LOAD DATA LOCAL refused: 1148 (server local_infile=OFF), 3948 (MySQL 8 wording), 2068 (client
# side); 1064 / 1235: a MySQL-protocol engine that does not parse or support the statement
ER_LOCAL_INFILE_REFUSED = {"1148", "3948", "2068", "1064", "1235"}
LOCAL_INFILE_PACKET_BYTES = 256 * 1024  # well below any max_allowed_packet (MySQL 5.5: 1 MiB)

# MariaDB's extended capabilities (the last 4 bytes of the handshake's filler, capability bits
# 32-63, read by the server when the client leaves CLIENT_MYSQL (bit 0) clear):
# MARIADB_CLIENT_CACHE_METADATA (bit 36, MariaDB 10.6+) lets the server skip the column
# definitions of a prepared statement's result sets after the first, as it does for MariaDB's
# own C client (sysbench's): 39 bytes fewer per point-select response, and less server work
CLIENT_MYSQL = 1
MARIADB_CLIENT_CACHE_METADATA = 1 << (36 - 32)
HANDSHAKE_EXT_CAPS_AT = 28  # client flags 4 + max packet 4 + charset 1 + filler 19


def mariadb_ext_caps(greeting: bytes) -> int:
    """The server's MariaDB extended capabilities from its initial handshake packet,
    0 when it is not MariaDB (CLIENT_MYSQL set) or the packet is too short."""
    try:
        at = greeting.index(b"\0", 1) + 1  # protocol version, server version
        at += 4 + 8 + 1  # thread id, auth data part 1, filler
        caps_low = greeting[at] | greeting[at + 1] << 8
        at += 2 + 1 + 2 + 2 + 1 + 6  # caps, charset, status, caps high, auth length, reserved
        if caps_low & CLIENT_MYSQL or len(greeting) < at + 4:
            return 0
        return int.from_bytes(greeting[at : at + 4], "little")
    except (ValueError, IndexError):
        return 0


def with_cache_metadata(payload: bytes, server_ext_caps: int) -> bytes | None:
    """The handshake response ``payload`` asking for MARIADB_CLIENT_CACHE_METADATA, or None
    when the server does not offer it or the client flags would hide the request."""
    if not server_ext_caps & MARIADB_CLIENT_CACHE_METADATA or len(payload) < HANDSHAKE_EXT_CAPS_AT + 4:
        return None
    if payload[0] & CLIENT_MYSQL:
        return None
    at = HANDSHAKE_EXT_CAPS_AT
    ext = int.from_bytes(payload[at : at + 4], "little") | MARIADB_CLIENT_CACHE_METADATA
    return payload[:at] + ext.to_bytes(4, "little") + payload[at + 4 :]


_metadata_connection_class: Any = None
VERSION_MODULE = "asyncmy.version"


def asyncmy_connection_class() -> Any:
    """asyncmy's Connection class (the first call imports asyncmy)."""
    made = VERSION_MODULE not in sys.modules and _version_without_metadata()
    from asyncmy.connection import Connection

    if made:  # an import sets a submodule on its package; one found in sys.modules is not
        package: Any = sys.modules["asyncmy"]
        package.version = sys.modules[VERSION_MODULE]
    return Connection


def _version_without_metadata() -> bool:
    """asyncmy's ``version`` module asks ``importlib.metadata`` for asyncmy's own version,
    which imports importlib.metadata (email, zipfile, csv, ...) and scans every sys.path
    entry: 66 M instructions, more than the rest of a run's MySQL sessions cost to start.
    Where it does, the module is made here with the same string read from the same
    ``Version:`` line of the METADATA file beside the package; anything unexpected (another
    version module, no or several dist-info folders) leaves the import to asyncmy."""
    import importlib.util
    import types

    try:
        spec = importlib.util.find_spec("asyncmy")  # finds the folder, imports nothing of it
        if spec is None or not spec.submodule_search_locations:
            return False
        folder = spec.submodule_search_locations[0]
        path = os.path.join(folder, "version.py")
        with open(path, encoding="utf-8") as fh:
            if 'version("asyncmy")' not in fh.read():
                return False
        site = os.path.dirname(folder)
        infos = [n for n in os.listdir(site) if n.startswith("asyncmy-") and n.endswith(".dist-info")]
        if len(infos) != 1:
            return False
        version = _metadata_version(os.path.join(site, infos[0], "METADATA"))
    except (AttributeError, IndexError, TypeError, ImportError, OSError, ValueError):
        return False
    if not version:
        return False
    module: Any = types.ModuleType(VERSION_MODULE, "asyncmy's version, read from its METADATA (pysysbench)")
    module.__file__ = path
    module.__VERSION__ = module.__version__ = version
    sys.modules[VERSION_MODULE] = module
    return True


def _metadata_version(path: str) -> str:
    """The ``Version:`` field of a METADATA file's header ('' when it has none)."""
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():  # the header ends at the first empty line
                break
            if line.startswith("Version:"):
                return line[len("Version:") :].strip()
    return ""


def metadata_connection_class() -> Any:
    """asyncmy's Connection, asking a MariaDB server for MARIADB_CLIENT_CACHE_METADATA in its
    handshake response (asyncmy leaves the extended capabilities zero).  Only for the lean
    wire (``--db-fast-path=on``), whose scanners read the metadata byte; asyncmy itself only
    runs text queries on such a connection, whose column definitions always follow."""
    global _metadata_connection_class
    if _metadata_connection_class is None:
        AsyncmyConnection = asyncmy_connection_class()

        class MetadataConnection(AsyncmyConnection):  # type: ignore[misc, valid-type]  # a base known at run time
            pysb_greeting: bytes | None = None
            pysb_handshake = True
            pysb_cache_metadata = False

            async def read_packet(self, *args: Any, **kwargs: Any) -> Any:
                packet = await super().read_packet(*args, **kwargs)
                if self.pysb_greeting is None:
                    self.pysb_greeting = bytes(packet.get_all_data())
                return packet

            def write_packet(self, payload: bytes) -> Any:
                if self.pysb_handshake:  # the first packet after the greeting: the handshake response
                    self.pysb_handshake = False
                    asked = with_cache_metadata(payload, mariadb_ext_caps(self.pysb_greeting or b""))
                    if asked is not None:
                        payload, self.pysb_cache_metadata = asked, True
                return super().write_packet(payload)

        _metadata_connection_class = MetadataConnection
    return _metadata_connection_class


def _quoted(text: str) -> str:
    """``text`` inside a MySQL string literal (the default sql_mode: backslash escapes)."""
    return text.replace("\\", "\\\\").replace("'", "''")


DIALECT = Dialect(
    id_auto_inc="INTEGER NOT NULL AUTO_INCREMENT",
    family="mysql",
    quote_name=lambda name: "`" + name.replace("`", "``") + "`",
    table_exists_sql="SELECT count(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?",
    regex_mismatch=lambda col, pattern: f"{col} NOT REGEXP '{pattern}'",
    max_connections_sql="SELECT @@max_connections",
    max_connections_hint="SET GLOBAL max_connections={need}; set it in my.cnf too to keep it",
    open_connections_sql="SHOW GLOBAL STATUS LIKE 'Threads_connected'",
    prepared_limit_sql="SELECT @@max_prepared_stmt_count",
    prepared_open_sql="SHOW GLOBAL STATUS LIKE 'Prepared_stmt_count'",
    prepared_limit_hint="SET GLOBAL max_prepared_stmt_count={need}; set it in my.cnf too to keep it",
    # fast prepare: a table comment flags a table while it loads (ALTER TABLE ... COMMENT is
    # instant on InnoDB and leaves SHOW CREATE TABLE as sysbench's once cleared)
    mark_loading_sql=lambda t: [f"ALTER TABLE {t} COMMENT = '{LOADING_COMMENT}'"],
    mark_loaded_sql=lambda t, comment: [f"ALTER TABLE {t} COMMENT = '{_quoted(comment)}'"],
    table_comment_sql=(
        "SELECT table_comment FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?"
    ),
    loading_check_sql=(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = DATABASE() "
        f"AND table_name = ? AND table_comment = '{LOADING_COMMENT}'"
    ),
)


def endpoint_name(endpoint: dict[str, Any]) -> str:
    """``host:port`` or the socket path: one database node in result files."""
    if endpoint.get("unix_socket"):
        return str(endpoint["unix_socket"])
    return f"{endpoint['host']}:{endpoint['port']}"


class ServerRefused(Exception):
    """The error packet a server sent instead of its greeting (args: errno, message)."""


def refusal_packet(data: bytes) -> ServerRefused | None:
    """The server's error from the first packet of a session (header, 0xff, errno,
    optional ``#SQLSTATE``, message), or None when ``data`` is not one."""
    if len(data) < 7 or data[4] != 0xFF:
        return None
    body = data[4 : 4 + int.from_bytes(data[:3], "little")]
    code = int.from_bytes(body[1:3], "little")
    text = body[3:]
    if text[:1] == b"#":
        text = text[6:]
    return ServerRefused(code, text.decode("utf-8", "replace"))


class ClosedAtOnce(ServerRefused):
    """The server closed the session before its greeting, without an error packet."""


def refusal(conn: Any, exc: BaseException) -> BaseException:
    """What a failed connect really met.  A server refusing a session (1040 Too many
    connections, 1129 host blocked) sends an error packet and closes at once; asyncmy
    may find the transport closed before it reads the packet and raise "Transport does
    not expose socket instance", but the packet is in its receive buffer."""
    proto: Any = getattr(conn, "_proto", None)
    try:
        packet = refusal_packet(bytes(proto.buffer[proto.pos : proto.length]))
    except (AttributeError, TypeError):
        packet = None
    if packet is not None:
        return packet
    if isinstance(exc, RuntimeError) and "socket instance" in str(exc):
        return ClosedAtOnce(2013, "Lost connection to MySQL server at 'reading initial communication packet'")
    return exc


def _errno(exc: BaseException) -> str:
    args = getattr(exc, "args", ())
    if args and isinstance(args[0], int) and args[0] > 0:
        return str(args[0])
    return "2013"  # socket-level failures: the connection is gone


def client_error(endpoint: dict[str, Any], exc: BaseException) -> tuple[str, str]:
    """(code, message) of a failed connect in libmysqlclient's words where the socket
    failed (asyncmy wraps that in a 2003 with Python's text): 2005 unknown host, 2002 no
    server on the socket, 2003 none on the host; else the server's or asyncmy's."""
    code, msg = _errno(exc), _message(exc)
    cause = None
    if code == "2003":
        cause = next((e for e in (exc.__cause__, exc.__context__) if isinstance(e, OSError)), None)
    sock = endpoint.get("unix_socket")
    if isinstance(cause, socket.gaierror):
        return "2005", f"Unknown MySQL server host '{endpoint.get('host')}' (0)"
    if cause is not None and sock:
        return "2002", f"Can't connect to local MySQL server through socket '{sock}' ({cause.errno or 0})"
    if cause is not None:
        return "2003", f"Can't connect to MySQL server on '{endpoint.get('host')}' ({cause.errno or 0})"
    return code, msg


def _message(exc: BaseException) -> str:
    args: tuple[Any, ...] = getattr(exc, "args", ())
    return str(args[1]) if len(args) > 1 else str(exc) or type(exc).__name__


class MySQLConnection(Connection):
    dialect = DIALECT

    def __init__(self, driver: MySQLDriver, counters: Counters, endpoint: dict[str, Any]):
        self.driver = driver
        self.counters = counters
        self.endpoint = endpoint
        self.where = endpoint_name(endpoint)
        self.conn: Any = None
        self.stmt_ids: dict[int, int] = {}  # id(statement) -> its server-side id (wire path)

    async def open(self) -> None:
        """Every session starts here: thread start-up, reconnects, prepare's loaders."""
        lean = self.driver.fast_path and not self.endpoint.get("ssl")
        self.conn = (metadata_connection_class() if lean else asyncmy_connection_class())(**self.endpoint)
        try:
            await self.conn.connect()
        except Exception as exc:  # asyncmy raises several unrelated classes here
            met = refusal(self.conn, exc)  # what the server said, even when asyncmy missed it
            raise ConnectError(
                self.driver.connect_message(self.endpoint, met),
                client_error(self.endpoint, met)[0],
                lambda: self.driver.sysbench_connect_lines(self.endpoint, met),
            ) from None
        _shrink_receive_buffer(self.conn)
        if self.driver.fast_path:
            from asyncmy.constants.CLIENT import DEPRECATE_EOF

            from ..wire import library_changed
            from .wire import MySQLWire

            conn = self.conn
            try:
                transport, flags, encoding = conn._transport, conn._client_flag, conn._encoding
            except AttributeError as exc:
                self.driver.fast_path = library_changed("asyncmy", exc)
                return
            self.wire = MySQLWire(
                transport, bool(flags & DEPRECATE_EOF), encoding, getattr(conn, "pysb_cache_metadata", False)
            )

    def _fail(self, exc: BaseException, sql: str, count: bool = True) -> None:
        raise self.driver.failure(
            self.counters, _errno(exc), _message(exc), sql, getattr(exc, "sqlstate", "") or ""
        ) from None

    async def prepare(self, sql: str) -> Statement:
        if self.driver.ps_mode == "disable":
            return self._text_statement(sql)
        if self.wire is not None:
            return await self._wire_statement(sql)
        try:
            ps = await self.conn.prepare(sql)
        except Exception as exc:
            if _errno(exc) == ER_UNSUPPORTED_PS:  # as sysbench: emulate this one statement
                return self._text_statement(sql)
            self._fail(exc, sql)
        execute = ps.execute
        c = self.counters
        fail = self._fail
        count = count_result

        async def stmt(*args: Any) -> None:
            try:
                r = await execute(args)
            except Exception as exc:
                fail(exc, sql)
            count(c, r.field_count, r.affected_rows)

        return stmt

    async def _wire_statement(self, sql: str) -> Statement:
        try:
            stmt_id, nparams = await self.wire.prepare(sql)
        except Exception as exc:
            if _errno(exc) == ER_UNSUPPORTED_PS:
                return self._text_statement(sql)
            self._fail(exc, sql)
        if _is_call(sql):
            return self._call_statement(sql, stmt_id, nparams)
        stmt: Statement = self.wire.statement(stmt_id, nparams, self.counters, StatementFailure(self, sql))
        self.stmt_ids[id(stmt)] = stmt_id
        return stmt

    def _call_statement(self, sql: str, stmt_id: int, nparams: int) -> Statement:
        """A prepared CALL: through the Python wire, which keeps the results after the first
        for next_result (a procedure's result sets; the C statement only counts them)."""

        async def call(*args: Any) -> None:
            self.pending = None
            try:
                fields, affected, rest = await self.wire.execute_kept(stmt_id, nparams, args)
            except Exception as exc:
                self._fail(exc, sql)
            self.pending = rest
            count_result(self.counters, fields, affected)

        return call

    async def close_statement(self, stmt: Statement) -> None:
        """COM_STMT_CLOSE for a statement of the wire path, as sysbench's ``stmt:close()``
        (mysql_stmt_close) sends; nothing for an emulated one."""
        stmt_id = self.stmt_ids.pop(id(stmt), None)
        if stmt_id is not None and self.wire is not None:
            self.wire.close_statement(stmt_id)

    def _text_statement(self, sql: str) -> Statement:
        parts = split_placeholders(sql)
        query = self.query

        async def text_stmt(*args: Any) -> None:
            await query(substitute(parts, args))

        return text_stmt

    async def query(self, sql: str) -> None:
        try:
            if self.wire is not None:
                fields, affected = await self.wire.query(sql)
            else:
                affected = await self.conn.query(sql)
                fields = self.conn._result.field_count
        except Exception as exc:
            self._fail(exc, sql)
        count_result(self.counters, fields, affected)

    async def query_rows(self, sql: str) -> tuple[int, list[tuple[Any, ...]]] | None:
        self.pending = None
        try:
            if self.wire is not None:
                columns, rows, affected, rest = await self.wire.query_rows(sql)
            else:
                async with self.conn.cursor() as cur:
                    affected = await cur.execute(sql)
                    columns = len(cur.description) if cur.description else -1
                    rows = text_rows(await cur.fetchall()) if columns >= 0 else []
                    rest = await _later_results(cur)
        except Exception as exc:
            self._fail(exc, sql)
        self.pending = rest
        count_result(self.counters, columns >= 0, affected)
        return (columns, rows) if columns >= 0 else None

    async def fetchall(self, sql: str) -> list[tuple[Any, ...]]:
        try:
            with self.native():
                async with self.conn.cursor() as cur:
                    await cur.execute(sql)
                    return list(await cur.fetchall())
        except Exception as exc:
            self._fail(exc, sql)
            raise  # unreachable

    async def close(self) -> None:
        if self.end_wire(COM_QUIT_PACKET) and self.conn is not None:
            self.conn.close()
            self.conn = None
        if self.conn is not None:
            try:
                await self.conn.ensure_closed()
            except Exception:  # closing a dead socket is not an error worth reporting
                self.conn.close()
            self.conn = None

    async def reconnect(self) -> None:
        self.pending = None
        self.end_wire(COM_QUIT_PACKET)  # a periodic --reconnect ends the old session politely
        if self.conn is not None:
            self.conn.close()
        await self.open()

    async def load_data_local(self, table: str, columns: Sequence[str], chunks: Any) -> int:
        """LOAD DATA LOCAL INFILE fed from ``chunks`` (an async iterator of bytes).

        The client's side of the exchange is done here rather than by asyncmy's
        ``LoadLocalFile``, which opens the echoed file name with a blocking
        ``open()``/``read()`` on the event loop (stalling every other connection of
        the process while a pipe is empty) and, in this asyncmy build, rejects the
        name the server echoes (bytes where it expects str).  The file name sent is
        a placeholder: the server only echoes it back."""
        with self.native():
            return await self._load_data_local(table, columns, chunks)

    async def _load_data_local(self, table: str, columns: Sequence[str], chunks: Any) -> int:
        from asyncmy.constants.COMMAND import COM_QUERY
        from asyncmy.protocol import OKPacketWrapper

        conn = self.conn
        # CHARACTER SET binary: the rows are ASCII, so skipping the charset conversion
        # stores the same bytes about 10 % faster (measured on MariaDB 10.11)
        sql = f"LOAD DATA LOCAL INFILE 'pysysbench-rows' INTO TABLE {table} CHARACTER SET binary ({', '.join(columns)})"
        try:
            await conn._execute_command(COM_QUERY, sql.encode())
            request = await conn.read_packet()  # raises on the server's error packet
            if not request.is_load_local_packet():
                raise FatalSQLError(f"MySQL server did not ask for the rows of '{sql}'", "2027", sql)
            try:
                async for chunk in chunks:
                    for at in range(0, len(chunk), LOCAL_INFILE_PACKET_BYTES):
                        conn.write_packet(chunk[at : at + LOCAL_INFILE_PACKET_BYTES])
                        await conn._proto.drain()
            finally:
                conn.write_packet(b"")  # end of file (also after a failed source)
            return OKPacketWrapper(await conn.read_packet()).affected_rows
        except PySysbenchError:
            raise
        except Exception as exc:
            code = _errno(exc)
            if code in ER_LOCAL_INFILE_REFUSED:
                raise BulkLoadRefused(f"MySQL error {code} ({_message(exc)})", code, sql) from None
            self._fail(exc, sql)
            raise  # unreachable


@register
class MySQLDriver(Driver):
    name = "mysql"
    description = "MySQL driver (MySQL, MariaDB, TiDB, PolarDB-X, ... via asyncmy)"
    options = OPTIONS
    option_prefix = "mysql"
    password_env = switches.MYSQL_PASSWORD.name
    ignore_option = "mysql-ignore-errors"
    # deadlock (a Galera certification conflict too), lock wait timeout, record changed under
    # snapshot isolation, XA branch rolled back for a deadlock or a timeout; TiDB's write
    # conflicts (9007, and 8002 for SELECT ... FOR UPDATE)
    retryable = ("1213", "1205", "1020", "1613", "1614", "8002", "9007")
    caps = DriverCaps(server_prepare=True, bulk_methods=("load-data", "multi-insert"))
    dialect = DIALECT

    def __init__(self, values: Values) -> None:
        super().__init__(values)
        self.ignore = {e.strip().lower() for e in values.mysql_ignore_errors}
        self.fast_path = bool(values.get("db_fast_path", True))
        self.endpoints = self._endpoints()
        self.password = values.mysql_password or switches.MYSQL_PASSWORD.raw() or ""
        self.tls = self._tls()

    def failure(self, counters: Counters, code: str, msg: str, sql: str, sqlstate: str = "") -> PySysbenchError:
        """What a statement's error ``code`` becomes, counted (spec 5.10): a reconnect or an
        ignorable error when ``--mysql-ignore-errors`` lists it (or ``all``), else fatal."""
        listed = "all" in self.ignore or code in self.ignore
        raw = {"errmsg": msg, "sqlstate": sqlstate}
        if listed and code in LOST_CONNECTION:
            counters.count_error(code, reconnect=True)
            return ReconnectError(f"MySQL error {code} ({msg})", code, sql, **raw)
        counters.count_error(code)
        if listed:
            return IgnorableError(f"Ignoring error {code} {msg}", code, sql, **raw)
        if code == ER_NO_SUCH_TABLE:
            return MissingTableError(f"MySQL error 1146: {msg}: run prepare first", code, sql, **raw)
        if code == ER_TABLE_EXISTS:
            return TableExistsError(f"MySQL error 1050: {msg}: run cleanup first", code, sql, **raw)
        hint = (
            "; to reconnect and go on instead, pass --mysql-ignore-errors=all (or add 2013,2006)"
            if code in LOST_CONNECTION
            else ""
        )
        return FatalSQLError(f"MySQL error {code} ({msg}) for query '{sql}'{hint}", code, sql, **raw)

    def check(self) -> None:
        for e in self.ignore:
            if e != "all" and not e.isdigit():
                raise ConfigError(f"Invalid value in --mysql-ignore-errors: '{e}' (expected error numbers or 'all')")

    def _endpoints(self) -> list[dict[str, Any]]:
        v = self.values
        if v.mysql_socket:
            return [{"unix_socket": s} for s in v.mysql_socket]
        ports = [int(p) for p in v.mysql_port] or [3306]  # numbers 1..65535: checked with the options
        out = []
        for host in v.mysql_host or ["localhost"]:
            for port in ports:
                sock = _default_socket() if host == "localhost" else None
                out.append({"unix_socket": sock} if sock else {"host": host, "port": port})
        return out

    def _tls(self) -> tls.TLS | None:
        """sysbench / libmariadb: the server certificate is verified whenever a CA is given
        (or, with 'on', found in the working directory), its host name with verify_identity."""
        v = self.values
        mode = v.mysql_ssl.lower()
        mode = SSL_FLAG_WORDS.get(mode, mode)
        ca, cert, key = tls.given_files(v, "mysql")
        if mode in ("off", "disabled", ""):
            tls.refuse_unused(
                (ca, cert, key),
                "--mysql-ssl=on, required, verify_ca or verify_identity "
                f"(with --mysql-ssl={v.mysql_ssl} no TLS is used)",
            )
            return None
        if mode == "on":  # sysbench 1.0.20's files
            ca = ca or tls.found("cacert.pem", IN_CWD.format("cacert.pem"))
            cert, key = tls.cert_and_key(  # sysbench takes the two files together
                cert,
                key,
                lambda: tls.found("client-cert.pem", IN_CWD.format("client-cert.pem")),
                lambda: tls.found("client-key.pem", IN_CWD.format("client-key.pem")),
                "client-key.pem",
                "--mysql-ssl-cert and --mysql-ssl-key",
            )
        return tls.build(
            TLS_WORDING,
            verify=ca is not None or mode in ("verify_ca", "verify_identity"),
            check_hostname=mode == "verify_identity",
            ca=ca,
            cert=cert,
            key=key,
            ciphers=("--mysql-ssl-cipher", v.mysql_ssl_cipher) if v.mysql_ssl_cipher else None,
        )

    def describe(self, endpoint: dict[str, Any]) -> str:
        if "unix_socket" in endpoint:
            return f"socket '{endpoint['unix_socket']}'"
        return f"host '{endpoint['host']}', port {endpoint['port']}"

    def target(self) -> str:
        return "MySQL server on " + listing(self.describe(e) for e in self.endpoints)

    def node_targets(self) -> list[str]:
        return ["MySQL server on " + self.describe(e) for e in self.endpoints]

    def connect_message(self, endpoint: dict[str, Any], exc: BaseException) -> str:
        code, msg = client_error(endpoint, exc)
        where = self.describe(endpoint)
        v = self.values
        failed = tls.handshake_error(exc) if self.tls is not None else None
        if failed is not None and self.tls is not None:  # libmariadb's wording: error 2026, OpenSSL's reason
            code, msg = "2026", f"TLS/SSL error: {tls.reason(failed)}"
            hint = self.tls.failure_hint(failed)
        elif code == "1045":
            hint = "check --mysql-user and --mysql-password"
        elif code in ("1049", "1044"):
            hint = (
                f"create the database (CREATE DATABASE {DIALECT.quote_name(v.mysql_db)}), grant the user "
                "access to it, or pass --mysql-db"
            )
        elif code == "1040":
            hint = TOO_MANY_CONNECTIONS
        elif isinstance(exc, ClosedAtOnce):
            hint = (
                "the server closed the session before greeting it: it may be at max_connections "
                "or blocking this host; see the server's error log"
            )
        elif code == "2005":
            hint = "check --mysql-host"
        elif code in ("2003", "2002", "2013"):
            hint = "is the server running? check --mysql-host/--mysql-port/--mysql-socket"
        else:
            hint = "check the connection options"
        return f"unable to connect to MySQL server on {where}: error {code}: {msg}; {hint}"

    def sysbench_connect_lines(self, endpoint: dict[str, Any], exc: BaseException) -> tuple[str, str]:
        """sysbench 1.0.20's mysql_drv_connect lines, the error in libmysqlclient's words
        (2005 unknown host, 2003 / 2002 no server on the host / the socket)."""
        sock = endpoint.get("unix_socket")
        if self.values.mysql_socket:
            first = f"unable to connect to MySQL server on socket '{sock}', aborting..."
        else:  # 'localhost' through the default socket is still named by host and port
            host, port = endpoint.get("host", "localhost"), endpoint.get("port", (self.values.mysql_port or [3306])[0])
            first = f"unable to connect to MySQL server on host '{host}', port {port}, aborting..."
        code, msg = client_error(endpoint, exc)
        failed = tls.handshake_error(exc) if self.tls is not None else None
        if failed is not None:
            code, msg = "2026", f"TLS/SSL error: {tls.reason(failed)}"
        return first, f"error {code}: {msg}"

    def endpoint(self, index: int) -> dict[str, Any]:
        v = self.values
        ep = dict(self.endpoints[index % len(self.endpoints)])
        ep.update(
            user=v.mysql_user,
            password=self.password,
            db=v.mysql_db,
            autocommit=True,
            charset="utf8mb4",
            local_infile=True,
        )
        if self.tls is not None:
            ep["ssl"] = self.tls.context
        return ep

    async def connect(self, counters: Counters | None = None, index: int = 0) -> Connection:
        if self.values.mysql_dry_run:
            from ..dryrun import DryRunConnection

            return DryRunConnection(counters or Counters(), DIALECT, self.failure)
        conn = MySQLConnection(self, counters or Counters(), self.endpoint(index))
        await conn.open()
        return conn


def _is_call(sql: str) -> bool:
    """A CALL statement: one that may return several results (a procedure's)."""
    text = sql.lstrip()
    after = text[4:5]
    return text[:4].lower() == "call" and not (after.isalnum() or after == "_")


async def _later_results(cur: Any) -> list[tuple[int, list[tuple[Any, ...]], int]]:
    """The results after the first of a query through the driver library (asyncmy's
    nextset()), as the lean wire keeps them (TextResult.rest)."""
    rest: list[tuple[int, list[tuple[Any, ...]], int]] = []
    while await cur.nextset():
        if cur.description:
            rest.append((len(cur.description), text_rows(await cur.fetchall()), 0))
        else:
            rest.append((-1, [], max(cur.rowcount, 0)))
    return rest


def _shrink_receive_buffer(conn: Any) -> None:
    """asyncmy gives every connection a 256 KiB receive buffer (260 MB for 1000
    connections); sysbench's results are small and the buffer grows on demand,
    so start idle connections with a small one.  Only while nothing is
    buffered: the protocol re-reads the attribute on every receive."""
    proto = getattr(conn, "_proto", None)
    if proto is not None and proto.length == proto.pos and len(proto.buffer) > RECV_BUFFER_BYTES:
        proto.buffer = bytearray(RECV_BUFFER_BYTES)
        proto.length = proto.pos = 0


def _default_socket() -> str | None:
    """sysbench's 'localhost' means the client library's default Unix socket."""
    for path in DEFAULT_SOCKETS:
        if os.path.exists(path):
            return path
    return None
