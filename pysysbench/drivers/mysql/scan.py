"""Where a MySQL / MariaDB response ends, without decoding it (the hot path's only parsing).

pysysbench's workloads discard the rows their statements return (as sysbench's C
client does: it fetches them into buffers it never reads), so the lean wire client
(:mod:`.wire`) does not decode rows at all: it only needs to know when a response is
complete, what kind it was (rows / affected rows) and the error, if any.
:func:`mysql_scan` answers exactly that for a buffer holding the bytes received so
far.  The C twin (``mysql_scan`` of this folder's wire.c) does the same (the unit
tests check both against each other); this module is its reference and the fallback
when the C is not used (pysysbench/runtime/native.py).

``mysql_scan(buf, deprecate_eof, cache_metadata=False)`` -> ``None`` while incomplete, else
``(end, field_count, affected_rows, errno, message)``: the response to one
COM_QUERY or COM_STMT_EXECUTE, every result set of it (SERVER_MORE_RESULTS_EXISTS),
``field_count`` of the first, ``affected_rows`` summed, ``errno`` 0 or the error
packet's (then ``message``, bytes, without the SQLSTATE marker); ``errno`` -1 for
a LOCAL INFILE request (not handled on this path).  ``cache_metadata``: the
connection negotiated MariaDB's MARIADB_CLIENT_CACHE_METADATA, so every column count
packet ends with a byte saying whether the column definitions follow.  An optional
:class:`~pysysbench.drivers.wire.TextResult` sink receives the first result set's rows
as text and every later result of the response (the Lua API's ``con:query`` and
``con:next_result()``, through the Python function only).
"""

from __future__ import annotations

from typing import Any

from ...runtime.native import mysql_scan as mysql_scan_c
from ..wire import TextResult

Buffer = bytes | bytearray | memoryview  # what a response is scanned from
MysqlScan = tuple[int, int, int, int, bytes] | None  # (end, fields, affected, errno, message), None: incomplete

MORE_RESULTS = 0x0008
MAX_PACKET = 0xFFFFFF


def _lenenc(buf: Buffer, pos: int) -> tuple[int, int]:
    """A length-encoded integer at ``pos``: (value, position after it)."""
    first = buf[pos]
    if first < 0xFB:
        return first, pos + 1
    if first == 0xFC:
        return buf[pos + 1] | buf[pos + 2] << 8, pos + 3
    if first == 0xFD:
        return buf[pos + 1] | buf[pos + 2] << 8 | buf[pos + 3] << 16, pos + 4
    return int.from_bytes(buf[pos + 1 : pos + 9], "little"), pos + 9


def mysql_packet(buf: Buffer, pos: int, n: int) -> tuple[int, int, int] | None:
    """One logical packet at ``pos``: (payload start, first physical payload length,
    position after it), or None when it is not all there.  A payload of 16 MiB - 1
    continues in the next physical packet."""
    start = pos + 4
    first_len = -1
    while True:
        if n - pos < 4:
            return None
        length = buf[pos] | buf[pos + 1] << 8 | buf[pos + 2] << 16
        if n - pos - 4 < length:
            return None
        if first_len < 0:
            first_len = length
        pos += 4 + length
        if length != MAX_PACKET:
            return start, first_len, pos


def mysql_error(buf: Buffer, start: int, end: int, sink: TextResult | None = None) -> tuple[int, bytes]:
    errno = buf[start + 1] | buf[start + 2] << 8
    at = start + 3
    if at < end and buf[at] == 0x23:  # '#' + 5-character SQLSTATE
        if sink is not None:
            sink.sqlstate = bytes(buf[at + 1 : at + 6]).decode("ascii", "replace")
        at += 6
    return errno, bytes(buf[at:end])


def _mysql_row(buf: Buffer, start: int, end: int, columns: int) -> tuple[Any, ...]:
    """One text-protocol row: a length-encoded string per column, 0xFB for NULL."""
    out: list[str | None] = []
    at = start
    for _ in range(columns):
        if at >= end or buf[at] == 0xFB:
            out.append(None)
            at += 1
            continue
        n, at = _lenenc(buf, at)
        out.append(bytes(buf[at : at + n]).decode("utf-8", "replace"))
        at += n
    return tuple(out)


def mysql_scan(
    buf: Buffer, deprecate_eof: bool, cache_metadata: bool = False, sink: TextResult | None = None
) -> MysqlScan:
    n = len(buf)
    pos = 0
    field_count = -1
    affected = 0
    if sink is not None:
        sink.rest = []  # (a scan starts over on each new chunk of the response)
    while True:
        p = mysql_packet(buf, pos, n)
        if p is None:
            return None
        start, length, pos = p
        if length == 0:
            return pos, max(field_count, 0), affected, 2027, b"malformed packet"
        first = buf[start]
        if first == 0x00:  # OK
            rows, at = _lenenc(buf, start + 1)
            _, at = _lenenc(buf, at)
            affected += rows
            status = buf[at] | buf[at + 1] << 8 if at + 1 < start + length else 0
            if field_count < 0:
                field_count = 0
            elif sink is not None:
                sink.rest.append((-1, [], rows))
            if status & MORE_RESULTS:
                continue
            return pos, field_count, affected, 0, b""
        if first == 0xFF:
            errno, msg = mysql_error(buf, start, start + length, sink)
            return pos, max(field_count, 0), affected, errno, msg
        if first == 0xFB:
            return pos, 0, 0, -1, b"LOCAL INFILE request"
        columns, at = _lenenc(buf, start)
        keep = _rows_of(sink, columns, field_count < 0)
        if field_count < 0:
            field_count = columns
        # column definitions (unless the server skipped them: metadata byte 0), then
        # an EOF packet unless CLIENT_DEPRECATE_EOF
        follow = 0 if cache_metadata and at < start + length and buf[at] == 0 else columns
        for _ in range(follow + (0 if deprecate_eof else 1)):
            p = mysql_packet(buf, pos, n)
            if p is None:
                return None
            pos = p[2]
        got = _mysql_rows(buf, pos, n, deprecate_eof, columns, keep, sink)
        if got is None:
            return None
        pos, status, error = got
        if error is not None:
            return pos, field_count, affected, error[0], error[1]
        if not status & MORE_RESULTS:
            return pos, field_count, affected, 0, b""


def _rows_of(sink: TextResult | None, columns: int, first: bool) -> list[tuple[Any, ...]] | None:
    """Where a result set's rows go when a sink asks for them: the first result's, or a
    later result of the sink's ``rest``."""
    if sink is None:
        return None
    if first:
        sink.columns, sink.rows = columns, []
        return sink.rows
    rows: list[tuple[Any, ...]] = []
    sink.rest.append((columns, rows, 0))
    return rows


def _mysql_rows(
    buf: Buffer,
    pos: int,
    n: int,
    deprecate_eof: bool,
    columns: int,
    keep: list[tuple[Any, ...]] | None,
    sink: TextResult | None,
) -> tuple[int, int, tuple[int, bytes] | None] | None:
    """One result set's rows up to its terminator (EOF, or an OK packet flagged 0xFE):
    (position after it, its status flags, None), or (position, 0, (errno, message)) for an
    error packet; None when the response is not all there.  Rows go to ``keep`` when given
    (as text, or as empty tuples when the sink says the rows are binary)."""
    text = sink is None or sink.text
    while True:
        p = mysql_packet(buf, pos, n)
        if p is None:
            return None
        start, length, pos = p
        first = buf[start] if length else 0
        if first == 0xFE and (length < 9 or (deprecate_eof and length < MAX_PACKET)):
            return pos, _end_status(buf, start, length, deprecate_eof), None
        if first == 0xFF:
            return pos, 0, mysql_error(buf, start, start + length, sink)
        if keep is not None:
            keep.append(_mysql_row(buf, start, start + length, columns) if text else ())


def _end_status(buf: Buffer, start: int, length: int, deprecate_eof: bool) -> int:
    """The status flags of a result set's terminator: an OK packet's (CLIENT_DEPRECATE_EOF), or an EOF's."""
    if deprecate_eof:
        _, at = _lenenc(buf, start + 1)
        _, at = _lenenc(buf, at)
        return buf[at] | buf[at + 1] << 8 if at + 1 < start + length else 0
    return buf[start + 3] | buf[start + 4] << 8 if length >= 5 else 0


# the same function in C, when the C extension is used (pysysbench/runtime/native.py)
mysql_scan_fast = mysql_scan_c or mysql_scan
