"""Lean wire clients for the hot path (``--db-fast-path=on``, the default).

asyncmy and asyncpg open the sessions (authentication, TLS, character sets) and
serve everything off the hot path (result rows for checks, bulk loads).  Once a
session is open, the driver moves its transport to a :class:`Wire` protocol that
sends the benchmark's statements itself and only looks for where each response
ends (:mod:`.wirescan`): no row is decoded, no result object is built, one future
per statement.  A bare loop of point selects costs half the client CPU of the
library path, a whole run about a third less (docs/performance.md); on a machine where client and server share the cores,
every microsecond the client saves goes to the server.

Statements use the servers' binary prepared-statement protocols (MySQL
COM_STMT_PREPARE / COM_STMT_EXECUTE; PostgreSQL Parse once, then Bind / Execute /
Sync) or plain text (COM_QUERY / simple Query), exactly the messages the
libraries send; the server sees the same statements as with sysbench.
"""

from __future__ import annotations

import asyncio
import logging
import struct
import types
from contextlib import contextmanager
from functools import partial
from typing import Any, Callable

from ..handoff import here
from ..native import Statement, WireCore, pg_bind
from .wirescan import TextResult, mysql_error, mysql_packet, mysql_scan, mysql_scan_fast, pg_scan, pg_scan_fast

_log = logging.getLogger(__name__)


def library_changed(library: str, exc: BaseException) -> bool:
    """The session's transport could not be taken from ``library`` (an internal
    attribute moved in another version): say so once and go on through the library.
    Returns the new fast-path setting (False)."""
    # a log record, not a print: this runs in worker processes too, where no CLI prints
    # (with no handler configured, logging writes a warning's bare message to stderr)
    _log.warning(f"WARNING: this {library} keeps its connection differently ({exc}); statements go through "
                 f"{library} (as with --db-fast-path=off), which costs more client CPU per statement")
    return False


class WireError(Exception):
    """A server error: ``args`` = (code, message) as the drivers' error mapping expects."""

    def __init__(self, code: Any, message: str, sqlstate: str | None = None):
        super().__init__(code, message)
        if sqlstate is not None:
            self.sqlstate = sqlstate

    def __str__(self) -> str:
        return str(self.args[1])


class LostConnection(WireError):
    """The transport closed while a response was due."""


@types.coroutine
def _response(wire: "Wire"):
    """Await a response as a strand does: yield the wire, which resumes the strand
    with the scanned response (or the connection's loss)."""
    return (yield wire)


SCAN_CALL = 0      # Wire.kind: the response is scanned by ``Wire.scan`` (a request())


def _plain_fd(transport: asyncio.BaseTransport) -> int:
    """The file descriptor of a transport's plain (not TLS) socket, or -1."""
    if transport.get_extra_info("sslcontext") is not None or transport.get_extra_info("ssl_object") is not None:
        return -1
    sock = transport.get_extra_info("socket")
    try:
        return sock.fileno() if sock is not None else -1
    except Exception:
        return -1


class _PyWireCore:
    """The receiving half of :class:`Wire`; the C twin is drivers/wire.c's ``WireCore``
    (used when built), which also scans statement responses itself (``kind`` 1 / 2)."""

    __slots__ = ("strand", "waiter", "scan", "pending", "lost", "kind", "deprecate_eof", "cache_metadata", "fd",
                 "direct")

    def data_received(self, data: bytes) -> None:
        strand = self.strand
        if strand is None and self.waiter is None:
            return   # nothing asked (a late notice): dropped
        pending = self.pending
        if pending:
            pending += data
            data = pending
        result = self.scan(data)
        if result is None:
            if not pending:
                pending += data
            return
        if pending:
            pending.clear()
        if strand is not None:
            self.strand = None
            strand.resume(result)
            return
        waiter = self.waiter
        self.waiter = None
        if not waiter.done():
            waiter.set_result(result)


_CStatement = Statement
_WireCore = WireCore or _PyWireCore


class Wire(_WireCore, asyncio.Protocol):
    """Request / response over a transport taken from a library connection.

    ``request(data, scan)`` writes ``data`` and resolves with ``scan(buffer)`` once
    it returns non-None (the scanner is given everything received since the
    request).  Under a strand the response resumes the strand straight from
    ``data_received``; under an asyncio Task it settles a Future.  Bytes after the
    end of a response, or with no request pending, are dropped (the servers send
    none on this request/response path).  The statements of :meth:`statement` are
    C objects when the extension is built: under a strand they write their message,
    arm the wire (``kind``) and return an awaitable, with no Python frame."""

    __slots__ = ("transport", "previous", "loop")

    def __init__(self, transport: asyncio.BaseTransport):
        self.transport = transport
        self.previous = transport.get_protocol()
        self.waiter: asyncio.Future | None = None
        self.strand: Any = None
        self.scan: Callable[[Any], Any] | None = None
        self.kind = SCAN_CALL
        self.deprecate_eof = 0
        self.cache_metadata = 0
        self.pending = bytearray()
        self.lost: BaseException | None = None
        self.loop = asyncio.get_running_loop()
        # the C statements send on the socket itself while nothing is queued in the transport
        # (Wire.direct, set by each complete response, cleared by every other write); not
        # through TLS, whose bytes only the transport can make
        self.fd = _plain_fd(transport)
        self.direct = 0
        transport.set_protocol(self)

    @property
    def busy(self) -> bool:
        """A request is waiting for its response (an event cut short at shutdown)."""
        return self.waiter is not None or self.strand is not None

    def close(self, goodbye: bytes) -> None:
        """End the session: the protocol's goodbye message, then the socket is closed
        once it is written (no reply is awaited)."""
        self.fd, self.direct = -1, 0
        if self.lost is None and not self.transport.is_closing():
            self.transport.write(goodbye)
            self.transport.close()

    def release(self) -> None:
        """Give the transport back to the library's protocol (between requests)."""
        self.direct = 0          # the library may write while it has the transport
        if self.transport.get_protocol() is self:
            self.transport.set_protocol(self.previous)

    def take(self) -> None:
        if self.lost is None and self.transport.get_protocol() is not self:
            self.transport.set_protocol(self)

    @contextmanager
    def released(self):
        self.release()
        try:
            yield
        finally:
            self.take()

    def connection_lost(self, exc: BaseException | None) -> None:
        self.fd, self.direct = -1, 0
        self.lost = exc or ConnectionResetError("connection closed by the server")
        waiter = self.waiter
        self.waiter = None
        if waiter is not None and not waiter.done():
            waiter.set_exception(self._lost_error())
        strand = self.strand
        if strand is not None:
            self.strand = None
            self.loop.call_soon(strand.fail, self._lost_error())
        prev = self.previous
        try:   # let the library know too, so its close() does not wait for a dead socket
            prev.connection_lost(exc)
        except Exception:
            pass

    def _lost_error(self) -> WireError:
        raise NotImplementedError

    def request(self, data: bytes, scan: Callable[[Any], Any]):
        """Send ``data``; the awaitable of its scanned response."""
        if self.lost is not None or self.transport.is_closing():
            raise self._lost_error()
        self.scan = scan
        self.kind = SCAN_CALL
        self.direct = 0
        strand = here.strand
        if strand is not None:
            self.strand = strand
            self.transport.write(data)
            return _response(self)
        waiter = self.waiter = self.loop.create_future()
        self.transport.write(data)
        return waiter


# --- MySQL / MariaDB ----------------------------------------------------------------

COM_QUERY = 0x03
COM_STMT_PREPARE = 0x16
COM_STMT_EXECUTE = 0x17
CR_SERVER_LOST = 2013
_U32 = struct.Struct("<I")


def _command(code: int, body: bytes) -> bytes:
    """One command packet (sequence id 0); commands over 16 MiB are not ours to send."""
    n = len(body) + 1
    return _U32.pack(n)[:3] + b"\x00" + bytes((code,)) + body


def count_result(c: Any, fields: int, affected: int) -> None:
    """spec 5.11: a result set is a read, changed rows a write, anything else other
    (the C statement counts the same way)."""
    if fields:
        c.reads += 1
    elif affected:
        c.writes += 1
    else:
        c.others += 1


def _prepare_scan(deprecate_eof: bool, buf):
    """Response to COM_STMT_PREPARE: ("ok", statement id, params, columns) once all
    its packets are in, or ("error", errno, message)."""
    n = len(buf)
    first = mysql_packet(buf, 0, n)
    if first is None:
        return None
    start, length, pos = first
    if buf[start] == 0xFF:
        return ("error", *mysql_error(buf, start, start + length))
    stmt_id, columns, params = struct.unpack_from("<IHH", buf, start + 1)
    packets = 0
    for count in (params, columns):
        if count:
            packets += count + (0 if deprecate_eof else 1)
    for _ in range(packets):
        p = mysql_packet(buf, pos, n)
        if p is None:
            return None
        pos = p[2]
    return ("ok", stmt_id, params, columns)


def mysql_failure(errno: int, message: bytes) -> WireError:
    """The exception for a MySQL error packet (number, message without SQLSTATE)."""
    return WireError(errno, message.decode("utf-8", "replace"))


def _py_pack_params(args: tuple, encoding: str) -> bytes:
    """null bitmap + new-params-bound flag + types + values (the fallback of asyncmy's packer)."""
    bitmap = bytearray((len(args) + 7) // 8)
    types = bytearray()
    values = bytearray()
    for i, v in enumerate(args):
        if v is None:
            bitmap[i // 8] |= 1 << (i % 8)
            types += b"\x06\x00"
        elif isinstance(v, bool):
            types += b"\x01\x00"
            values.append(1 if v else 0)
        elif isinstance(v, int):
            if v >= 1 << 63:
                types += b"\x08\x80"
                values += v.to_bytes(8, "little")
            else:
                types += b"\x08\x00"
                values += v.to_bytes(8, "little", signed=True)
        elif isinstance(v, float):
            types += b"\x05\x00"
            values += struct.pack("<d", v)
        else:
            data = v if isinstance(v, (bytes, bytearray)) else str(v).encode(encoding)
            types += b"\xfd\x00"
            size = len(data)
            if size < 251:
                values.append(size)
            elif size < 1 << 16:
                values += b"\xfc" + size.to_bytes(2, "little")
            elif size < 1 << 24:
                values += b"\xfd" + size.to_bytes(3, "little")
            else:
                values += b"\xfe" + size.to_bytes(8, "little")
            values += data
    return bytes(bitmap) + b"\x01" + bytes(types) + bytes(values)


def _param_packer() -> Callable[[tuple, str], bytes]:
    """asyncmy's C packer of COM_STMT_EXECUTE parameters when this asyncmy has it
    (imported here, not at module import: SQLite runs never load asyncmy)."""
    try:
        from asyncmy.protocol import pack_binary_params
        return pack_binary_params
    except ImportError:   # pragma: no cover - depends on the asyncmy build
        return _py_pack_params


class MySQLWire(Wire):
    """COM_STMT_EXECUTE / COM_QUERY with responses scanned, never decoded."""

    __slots__ = ("encoding", "_scan", "_pack")

    def __init__(self, transport: asyncio.BaseTransport, deprecate_eof: bool, encoding: str = "utf8",
                 cache_metadata: bool = False):
        super().__init__(transport)
        self.deprecate_eof = int(deprecate_eof)
        # MARIADB_CLIENT_CACHE_METADATA negotiated: result sets of a prepared statement
        # come without their column definitions after the first (mysql.py asks for it)
        self.cache_metadata = int(cache_metadata)
        self.encoding = encoding
        self._scan = lambda buf, _scan=mysql_scan_fast, _eof=deprecate_eof, _meta=cache_metadata: \
            _scan(buf, _eof, _meta)
        self._pack = _param_packer()

    def _lost_error(self) -> WireError:
        return LostConnection(CR_SERVER_LOST, "Lost connection to server during query")

    async def prepare(self, sql: str) -> tuple[int, int]:
        """(statement id, parameter count); WireError for a server error."""
        r = await self.request(_command(COM_STMT_PREPARE, sql.encode(self.encoding)),
                               partial(_prepare_scan, self.deprecate_eof))
        if r[0] == "error":
            raise mysql_failure(r[1], r[2])
        return r[1], r[2]

    def statement(self, stmt_id: int, nparams: int, counters: Any, fail: Callable[[BaseException], None]):
        """The coroutine function of one prepared statement: sends COM_STMT_EXECUTE
        with its arguments and counts the result as read / write / other in
        ``counters``; a server error goes to ``fail`` (which raises).  With the C
        extension the statement is drivers/wire.c's ``Statement`` that does the same under a
        strand and falls back to this coroutine everywhere else."""
        head = bytes((COM_STMT_EXECUTE,)) + _U32.pack(stmt_id) + b"\x00\x01\x00\x00\x00"
        pack, encoding, u32 = self._pack, self.encoding, _U32.pack
        request, scan, failure, count = self.request, self._scan, mysql_failure, count_result
        no_params = _command(COM_STMT_EXECUTE, head[1:])
        c = counters

        async def stmt(*args: Any) -> None:
            try:
                if len(args) != nparams:
                    raise WireError(2031, f"statement expects {nparams} parameters, got {len(args)}")
                if nparams:
                    body = head + pack(args, encoding)
                    data = u32(len(body))[:3] + b"\x00" + body
                else:
                    data = no_params
                end, fields, affected, errno, msg = await request(data, scan)
                if errno:
                    raise failure(errno, msg)
            except Exception as exc:
                fail(exc)
            count(c, fields, affected)
        if _CStatement is None:
            return stmt
        return _CStatement(1, self, here, self.transport.write, head, b"", nparams, pack, encoding, c, fail,
                           failure, stmt, False)

    async def query(self, sql: str) -> tuple[int, int]:
        end, fields, affected, errno, msg = await self.request(
            _command(COM_QUERY, sql.encode(self.encoding)), self._scan)
        if errno:
            raise mysql_failure(errno, msg)
        return fields, affected

    async def query_rows(self, sql: str) -> tuple[int, list[tuple], int]:
        """COM_QUERY keeping the first result set: (columns or -1, rows as text, affected rows)."""
        sink = TextResult()
        scan = partial(mysql_scan, deprecate_eof=bool(self.deprecate_eof), cache_metadata=bool(self.cache_metadata),
                       sink=sink)
        end, fields, affected, errno, msg = await self.request(_command(COM_QUERY, sql.encode(self.encoding)), scan)
        if errno:
            exc = mysql_failure(errno, msg)
            exc.sqlstate = sink.sqlstate
            raise exc
        return sink.columns, sink.rows, affected


# --- PostgreSQL ---------------------------------------------------------------------

_I32 = struct.Struct("!i")
_I16 = struct.Struct("!h")
_SYNC = b"S\x00\x00\x00\x04"
_EXECUTE = b"E\x00\x00\x00\x09\x00\x00\x00\x00\x00"    # unnamed portal, all rows
_DESCRIBE_PREFIX = b"S"


def _pg_message(kind: bytes, body: bytes) -> bytes:
    return kind + _I32.pack(len(body) + 4) + body


def pg_error_fields(body: bytes) -> tuple[str, str]:
    """(SQLSTATE, message) of an ErrorResponse body."""
    code, message = "XX000", "server error"
    for field in body.split(b"\x00"):
        if field[:1] == b"C":
            code = field[1:].decode("ascii", "replace")
        elif field[:1] == b"M":
            message = field[1:].decode("utf-8", "replace")
    return code, message


def _pg_text(value: Any) -> bytes | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return b"t" if value else b"f"
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    return str(value).encode()


def _py_pg_bind(head: bytes, args: tuple, tail: bytes) -> bytes:
    """A Bind message of ``args`` as text parameters, then ``tail``: 'B', length,
    ``head`` (portal, statement name, no parameter format codes), the parameter count,
    each parameter as int32 length + text (-1 = NULL), no result format codes.  The
    C twin is drivers/pgsql/wire.c's ``pg_bind``."""
    parts = [head, _I16.pack(len(args))]
    for value in args:
        text = b"%d" % value if type(value) is int else _pg_text(value)
        if text is None:
            parts.append(b"\xff\xff\xff\xff")
            continue
        parts.append(_I32.pack(len(text)))
        parts.append(text)
    parts.append(b"\x00\x00")
    body = b"".join(parts)
    return b"B" + _I32.pack(len(body) + 4) + body + tail


pg_bind_fast = pg_bind or _py_pg_bind


class PgWire(Wire):
    """Parse once, then Bind / Execute / Sync per statement; parameters as text,
    results left in text and never decoded."""

    __slots__ = ("_names",)

    def __init__(self, transport: asyncio.BaseTransport):
        super().__init__(transport)
        self._names = 0

    def _lost_error(self) -> WireError:
        return LostConnection("08006", "connection to the server was lost", sqlstate="08006")

    @staticmethod
    def _error(error: bytes) -> WireError:
        code, message = pg_error_fields(error)
        return WireError(code, message, sqlstate=code)

    @staticmethod
    def _raise(error: bytes) -> None:
        raise PgWire._error(error)

    async def prepare(self, sql: str) -> tuple[bytes, bool]:
        """(statement name, whether it returns rows); WireError for a server error."""
        self._names += 1
        name = f"pysysbench_{self._names}".encode() + b"\x00"
        data = (_pg_message(b"P", name + sql.encode() + b"\x00\x00\x00")
                + _pg_message(b"D", _DESCRIBE_PREFIX + name) + _SYNC)
        end, tag, error, described = await self.request(data, pg_scan_fast)
        if error is not None:
            self._raise(error)
        return name, described == 1

    def statement(self, name: bytes, is_read: bool, counters: Any, fail: Callable[[BaseException], Any]):
        """The coroutine function of one prepared statement: binds its arguments
        (as text) to ``name``, runs it and counts the result in ``counters`` (reads
        when it returns rows, else writes when the command tag counts rows); a
        server error goes to ``fail`` (a coroutine function that raises)."""
        head = b"\x00" + name + b"\x00\x00"          # unnamed portal; all parameters as text
        request, scan, bind, raise_error = self.request, pg_scan_fast, pg_bind_fast, self._raise
        tail = _EXECUTE + _SYNC
        c = counters

        async def stmt(*args: Any) -> None:
            try:
                end, tag, error, described = await request(bind(head, args, tail), scan)
                if error is not None:
                    raise_error(error)
            except Exception as exc:
                await fail(exc)
            if is_read:
                c.reads += 1
                return
            rows = tag.rpartition(b" ")[2] if tag else b""
            if rows.isdigit() and rows != b"0":
                c.writes += 1
            else:
                c.others += 1
        if _CStatement is None:
            return stmt
        return _CStatement(2, self, here, self.transport.write, head, tail, -1, None, "", c, fail, self._error,
                           stmt, is_read)

    async def query(self, sql: str) -> bytes:
        end, tag, error, described = await self.request(_pg_message(b"Q", sql.encode() + b"\x00"), pg_scan_fast)
        if error is not None:
            self._raise(error)
        return tag or b""

    async def query_rows(self, sql: str) -> tuple[int, list[tuple], bytes]:
        """Simple query keeping the first result set: (columns or -1, rows as text, command tag)."""
        sink = TextResult()
        end, tag, error, described = await self.request(_pg_message(b"Q", sql.encode() + b"\x00"),
                                                        partial(pg_scan, sink=sink))
        if error is not None:
            self._raise(error)
        return sink.columns, sink.rows, tag or b""
