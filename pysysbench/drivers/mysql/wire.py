"""The MySQL / MariaDB lean wire client: COM_STMT_PREPARE once, then COM_STMT_EXECUTE
per statement (or COM_QUERY), responses scanned (:mod:`.scan`), never decoded.

The shared machinery -- the :class:`~pysysbench.drivers.wire.Wire` base, the strand
hand-off, the errors -- is drivers/wire.py's; the C twin of what is MySQL's here (the
COM_STMT_EXECUTE packets, what a response counts as) is this folder's wire.c.
"""

from __future__ import annotations

import asyncio
import struct
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from ...runtime.handoff import here
from ..wire import LostConnection, SlowStatement, TextResult, Wire, WireError, _CStatement, count_result
from .scan import Buffer, mysql_error, mysql_packet, mysql_scan, mysql_scan_fast

COM_QUERY = 0x03
COM_STMT_PREPARE = 0x16
COM_STMT_EXECUTE = 0x17
COM_STMT_CLOSE = 0x19
CR_SERVER_LOST = 2013
_U32 = struct.Struct("<I")


def _command(code: int, body: bytes) -> bytes:
    """One command packet (sequence id 0); commands over 16 MiB are not ours to send."""
    n = len(body) + 1
    return _U32.pack(n)[:3] + b"\x00" + bytes((code,)) + body


def _prepare_scan(deprecate_eof: int, buf: Buffer) -> tuple[Any, ...] | None:
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


def _py_pack_params(args: tuple[Any, ...], encoding: str) -> bytes:
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


def _param_packer() -> Callable[[tuple[Any, ...], str], bytes]:
    """asyncmy's C packer of COM_STMT_EXECUTE parameters when this asyncmy has it
    (imported here, not at module import: SQLite runs never load asyncmy)."""
    try:
        from asyncmy.protocol import pack_binary_params

        return pack_binary_params
    except ImportError:  # pragma: no cover - depends on the asyncmy build
        return _py_pack_params


class _Statement(SlowStatement):
    """COM_STMT_EXECUTE of one prepared statement (``meta``: its parameter count)."""

    __slots__ = ()
    wire: MySQLWire  # the slot SlowStatement holds: a MySQL statement's wire is a MySQLWire

    async def __call__(self, *args: Any) -> None:
        try:
            nparams, wire = self.meta, self.wire
            if len(args) != nparams:
                raise WireError(2031, f"statement expects {nparams} parameters, got {len(args)}")
            body = self.head + wire._pack(args, wire.encoding) if nparams else self.head
            end, fields, affected, errno, msg = await wire.request(
                _U32.pack(len(body))[:3] + b"\x00" + body, wire._scan
            )
            if errno:
                raise mysql_failure(errno, msg)
        except Exception as exc:
            self.fail(exc)
        count_result(self.counters, fields, affected)


class MySQLWire(Wire):
    """COM_STMT_EXECUTE / COM_QUERY with responses scanned, never decoded."""

    __slots__ = ("encoding", "_scan", "_pack")

    def __init__(
        self, transport: asyncio.Transport, deprecate_eof: bool, encoding: str = "utf8", cache_metadata: bool = False
    ):
        super().__init__(transport)
        self.deprecate_eof = int(deprecate_eof)
        # MARIADB_CLIENT_CACHE_METADATA negotiated: result sets of a prepared statement
        # come without their column definitions after the first (session.py asks for it)
        self.cache_metadata = int(cache_metadata)
        self.encoding = encoding
        self._scan = lambda buf, _scan=mysql_scan_fast, _eof=deprecate_eof, _meta=cache_metadata: _scan(
            buf, _eof, _meta
        )
        self._pack = _param_packer()

    def _lost_error(self) -> WireError:
        return LostConnection(CR_SERVER_LOST, "Lost connection to server during query")

    async def prepare(self, sql: str) -> tuple[int, int]:
        """(statement id, parameter count); WireError for a server error."""
        r = await self.request(
            _command(COM_STMT_PREPARE, sql.encode(self.encoding)), partial(_prepare_scan, self.deprecate_eof)
        )
        if r[0] == "error":
            raise mysql_failure(r[1], r[2])
        return r[1], r[2]

    def close_statement(self, stmt_id: int) -> None:
        """COM_STMT_CLOSE (the server sends no response)."""
        self.write(_command(COM_STMT_CLOSE, _U32.pack(stmt_id)))

    def statement(
        self, stmt_id: int, nparams: int, counters: Any, fail: Callable[[BaseException], None]
    ) -> Callable[..., Awaitable[None]]:
        """The coroutine function of one prepared statement: sends COM_STMT_EXECUTE
        with its arguments and counts the result as read / write / other in
        ``counters``; a server error goes to ``fail`` (which raises).  With the C
        extension the statement is drivers/wire.c's ``Statement`` that does the same under a
        strand and falls back to this coroutine everywhere else."""
        head = bytes((COM_STMT_EXECUTE,)) + _U32.pack(stmt_id) + b"\x00\x01\x00\x00\x00"
        slow = _Statement(self, head, nparams, counters, fail)
        if _CStatement is None:
            return slow
        return _CStatement(
            1,
            self,
            here,
            self.write,
            head,
            b"",
            nparams,
            self._pack,
            self.encoding,
            counters,
            fail,
            mysql_failure,
            slow,
            False,
        )

    async def query(self, sql: str) -> tuple[int, int]:
        end, fields, affected, errno, msg = await self.request(
            _command(COM_QUERY, sql.encode(self.encoding)), self._scan
        )
        if errno:
            raise mysql_failure(errno, msg)
        return fields, affected

    async def query_rows(self, sql: str) -> tuple[int, list[tuple[Any, ...]], int, list[Any]]:
        """COM_QUERY keeping its results: (columns or -1, rows as text, affected rows) of the
        first, and the later ones of a response with several (TextResult.rest)."""
        sink = TextResult()
        fields, affected = await self._kept(_command(COM_QUERY, sql.encode(self.encoding)), sink)
        return sink.columns, sink.rows, affected, sink.rest

    async def execute_kept(self, stmt_id: int, nparams: int, args: tuple[Any, ...]) -> tuple[int, int, list[Any]]:
        """COM_STMT_EXECUTE keeping the results after the first (a CALL's, in Python: the
        C statement keeps none): (field count of the first, affected rows, TextResult.rest)."""
        if len(args) != nparams:
            raise WireError(2031, f"statement expects {nparams} parameters, got {len(args)}")
        body = bytes((COM_STMT_EXECUTE,)) + _U32.pack(stmt_id) + b"\x00\x01\x00\x00\x00"
        if nparams:
            body += self._pack(args, self.encoding)
        sink = TextResult(text=False)
        fields, affected = await self._kept(_U32.pack(len(body))[:3] + b"\x00" + body, sink)
        return fields, affected, sink.rest

    async def _kept(self, packet: bytes, sink: TextResult) -> tuple[int, int]:
        scan = partial(
            mysql_scan, deprecate_eof=bool(self.deprecate_eof), cache_metadata=bool(self.cache_metadata), sink=sink
        )
        end, fields, affected, errno, msg = await self.request(packet, scan)
        if errno:
            exc = mysql_failure(errno, msg)
            exc.sqlstate = sink.sqlstate
            raise exc
        return fields, affected
