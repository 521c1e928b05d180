"""The PostgreSQL lean wire client: Parse once, then Bind / Execute / Sync per
statement (or a simple Query); parameters as text, responses scanned (:mod:`.scan`),
never decoded.

The shared machinery -- the :class:`~pysysbench.drivers.wire.Wire` base, the strand
hand-off, the errors -- is drivers/wire.py's; the C twin of what is PostgreSQL's here
(the Bind message, what a response counts as) is this folder's wire.c.
"""

from __future__ import annotations

import asyncio
import struct
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from ...runtime.handoff import here
from ...runtime.native import pg_bind
from ..wire import LostConnection, SlowStatement, TextResult, Wire, WireError, _CStatement
from .libpq import fields_of
from .scan import pg_scan, pg_scan_fast

_I32 = struct.Struct("!i")
_I16 = struct.Struct("!h")
_SYNC = b"S\x00\x00\x00\x04"
_EXECUTE = b"E\x00\x00\x00\x09\x00\x00\x00\x00\x00"  # unnamed portal, all rows
_TAIL = _EXECUTE + _SYNC
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


def _py_pg_bind(head: bytes, args: tuple[Any, ...], tail: bytes) -> bytes:
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


class _Statement(SlowStatement):
    """Bind / Execute / Sync of one prepared statement (``meta``: whether it returns rows)."""

    __slots__ = ()

    async def __call__(self, *args: Any) -> None:
        try:
            end, tag, error, described = await self.wire.request(pg_bind_fast(self.head, args, _TAIL), pg_scan_fast)
            if error is not None:
                PgWire._raise(error)
        except Exception as exc:
            await self.fail(exc)
        c = self.counters
        if self.meta:
            c.reads += 1
            return
        rows = tag.rpartition(b" ")[2] if tag else b""
        if rows.isdigit() and rows != b"0":
            c.writes += 1
        else:
            c.others += 1


class PgWire(Wire):
    """Parse once, then Bind / Execute / Sync per statement; parameters as text,
    results left in text and never decoded."""

    __slots__ = ("_names",)

    def __init__(self, transport: asyncio.Transport):
        super().__init__(transport)
        self._names = 0

    def _lost_error(self) -> WireError:
        return LostConnection("08006", "connection to the server was lost", sqlstate="08006")

    @staticmethod
    def _error(error: bytes) -> WireError:
        code, message = pg_error_fields(error)
        exc = WireError(code, message, sqlstate=code)
        exc.pg_fields = fields_of(error)  # libpq's text of it, where sysbench prints that
        return exc

    @staticmethod
    def _raise(error: bytes) -> None:
        raise PgWire._error(error)

    async def prepare(self, sql: str) -> tuple[bytes, bool]:
        """(statement name, whether it returns rows); WireError for a server error."""
        self._names += 1
        name = f"pysysbench_{self._names}".encode() + b"\x00"
        data = (
            _pg_message(b"P", name + sql.encode() + b"\x00\x00\x00")
            + _pg_message(b"D", _DESCRIBE_PREFIX + name)
            + _SYNC
        )
        end, tag, error, described = await self.request(data, pg_scan_fast)
        if error is not None:
            self._raise(error)
        return name, described == 1

    def statement(
        self, name: bytes, is_read: bool, counters: Any, fail: Callable[[BaseException], Any]
    ) -> Callable[..., Awaitable[None]]:
        """The coroutine function of one prepared statement: binds its arguments
        (as text) to ``name``, runs it and counts the result in ``counters`` (reads
        when it returns rows, else writes when the command tag counts rows); a
        server error goes to ``fail`` (a coroutine function that raises)."""
        head = b"\x00" + name + b"\x00\x00"  # unnamed portal; all parameters as text
        slow = _Statement(self, head, is_read, counters, fail)
        if _CStatement is None:
            return slow
        return _CStatement(
            2, self, here, self.write, head, _TAIL, -1, None, "", counters, fail, self._error, slow, is_read
        )

    async def query(self, sql: str) -> bytes:
        end, tag, error, described = await self.request(_pg_message(b"Q", sql.encode() + b"\x00"), pg_scan_fast)
        if error is not None:
            self._raise(error)
        return tag or b""

    async def query_rows(self, sql: str) -> tuple[int, list[tuple[Any, ...]], bytes]:
        """Simple query keeping the first result set: (columns or -1, rows as text, command tag)."""
        sink = TextResult()
        end, tag, error, described = await self.request(
            _pg_message(b"Q", sql.encode() + b"\x00"), partial(pg_scan, sink=sink)
        )
        if error is not None:
            self._raise(error)
        return sink.columns, sink.rows, tag or b""
