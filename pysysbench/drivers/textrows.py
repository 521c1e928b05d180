"""Text result sets on the lean wire (the Lua API's ``con:query``).

The hot path never decodes rows (:mod:`.wirescan`).  A Lua script, though, reads
what ``con:query(sql)`` returned, as text, exactly as sysbench's C client hands it
over: MySQL's text protocol (COM_QUERY) sends every value as a length-encoded
string (0xFB for NULL), PostgreSQL's simple query protocol sends text DataRows.
These scanners collect the first result set of one response once it is complete;
they take the same buffer as the wirescan functions.

``mysql_rows(buf, deprecate_eof, cache_metadata)`` -> None while incomplete, else
``(end, columns, rows, affected, errno, sqlstate, message)``; ``columns`` is -1
when the first result had no result set (an OK packet).

``pg_rows(buf)`` -> None while incomplete, else ``(end, columns, rows, tag, error)``;
``columns`` -1 without a RowDescription, ``error`` the ErrorResponse body or None.
"""

from __future__ import annotations

from .wirescan import MORE_RESULTS, _lenenc, mysql_packet


def _mysql_err(buf, start: int, end: int) -> tuple[int, str, bytes]:
    errno = buf[start + 1] | buf[start + 2] << 8
    at = start + 3
    state = ""
    if at < end and buf[at] == 0x23:    # '#' + 5-character SQLSTATE
        state = bytes(buf[at + 1:at + 6]).decode("ascii", "replace")
        at += 6
    return errno, state, bytes(buf[at:end])


def _mysql_row(buf, start: int, end: int, columns: int) -> tuple:
    out = []
    at = start
    for _ in range(columns):
        if at >= end:
            out.append(None)
            continue
        if buf[at] == 0xFB:
            out.append(None)
            at += 1
            continue
        n, at = _lenenc(buf, at)
        out.append(bytes(buf[at:at + n]).decode("utf-8", "replace"))
        at += n
    return tuple(out)


def _mysql_status_eof(buf, start: int, length: int, deprecate_eof: bool) -> int:
    if deprecate_eof:
        _, at = _lenenc(buf, start + 1)
        _, at = _lenenc(buf, at)
        return buf[at] | buf[at + 1] << 8 if at + 1 < start + length else 0
    return buf[start + 3] | buf[start + 4] << 8 if length >= 5 else 0


def mysql_rows(buf, deprecate_eof: bool, cache_metadata: bool = False):
    n = len(buf)
    pos = 0
    columns = -2            # -2: nothing seen yet; -1: the first result was an OK packet
    rows: list[tuple] = []
    affected = 0
    while True:
        p = mysql_packet(buf, pos, n)
        if p is None:
            return None
        start, length, pos = p
        first = buf[start] if length else 0
        if first == 0x00:                                   # OK
            count, at = _lenenc(buf, start + 1)
            _, at = _lenenc(buf, at)
            affected += count
            status = buf[at] | buf[at + 1] << 8 if at + 1 < start + length else 0
            if columns == -2:
                columns = -1
            if status & MORE_RESULTS:
                continue
            return pos, columns, rows, affected, 0, "", b""
        if first == 0xFF:
            errno, state, msg = _mysql_err(buf, start, start + length)
            return pos, max(columns, -1), rows, affected, errno, state, msg
        if first == 0xFB:
            return pos, -1, rows, 0, 2027, "HY000", b"LOCAL INFILE request"
        count, at = _lenenc(buf, start)
        keep = columns == -2
        if keep:
            columns = count
        follow = 0 if cache_metadata and at < start + length and buf[at] == 0 else count
        for _ in range(follow + (0 if deprecate_eof else 1)):
            p = mysql_packet(buf, pos, n)
            if p is None:
                return None
            pos = p[2]
        while True:
            p = mysql_packet(buf, pos, n)
            if p is None:
                return None
            start, length, pos = p
            first = buf[start] if length else 0
            if first == 0xFE and (length < 9 or (deprecate_eof and length < 0xFFFFFF)):
                status = _mysql_status_eof(buf, start, length, deprecate_eof)
                break
            if first == 0xFF:
                errno, state, msg = _mysql_err(buf, start, start + length)
                return pos, columns, rows, affected, errno, state, msg
            if keep:
                rows.append(_mysql_row(buf, start, start + length, count))
        if not status & MORE_RESULTS:
            return pos, columns, rows, affected, 0, "", b""


def _pg_row(buf, at: int) -> tuple:
    count = buf[at] << 8 | buf[at + 1]
    at += 2
    out = []
    for _ in range(count):
        size = int.from_bytes(buf[at:at + 4], "big", signed=True)
        at += 4
        if size < 0:
            out.append(None)
            continue
        out.append(bytes(buf[at:at + size]).decode("utf-8", "replace"))
        at += size
    return tuple(out)


def pg_rows(buf):
    n = len(buf)
    pos = 0
    columns = -1
    rows: list[tuple] = []
    tag = None
    error = None
    results = 0
    while True:
        if n - pos < 5:
            return None
        kind = buf[pos]
        end = pos + 1 + int.from_bytes(buf[pos + 1:pos + 5], "big")
        if end > n:
            return None
        if kind == 0x5A:                       # 'Z' ReadyForQuery
            return end, columns, rows, tag, error
        if kind == 0x54 and results == 0:      # 'T' RowDescription of the first result
            columns = buf[pos + 5] << 8 | buf[pos + 6]
        elif kind == 0x44 and results == 0:    # 'D' DataRow
            rows.append(_pg_row(buf, pos + 5))
        elif kind == 0x43:                     # 'C' CommandComplete
            if results == 0:
                tag = bytes(buf[pos + 5:end - 1])
            results += 1
        elif kind == 0x45 and error is None:   # 'E' ErrorResponse
            error = bytes(buf[pos + 5:end])
        pos = end
