"""Where a PostgreSQL response ends, without decoding it (the hot path's only parsing).

As for MySQL (drivers/mysql/scan.py), the lean wire client (:mod:`.wire`) never
decodes rows: :func:`pg_scan` only finds where a response ends, its command tag and
its error.  The C twin (``pg_scan`` of this folder's wire.c) does the same (the unit
tests check both against each other); this module is its reference and the fallback
when the C is not used (pysysbench/runtime/native.py).

``pg_scan(buf)`` -> ``None`` while incomplete, else ``(end, tag, error, described)``:
everything up to and including ReadyForQuery; ``tag`` the last CommandComplete
(bytes, without its NUL) or None, ``error`` the ErrorResponse body or None,
``described`` 1 when a RowDescription came, 0 when NoData came, -1 for neither.  An
optional :class:`~pysysbench.drivers.wire.TextResult` sink receives the first result
set's rows as text (the Lua API's ``con:query``, through the Python function only).
"""

from __future__ import annotations

from typing import Any

from ...runtime.native import pg_scan as pg_scan_c
from ..wire import TextResult

Buffer = bytes | bytearray | memoryview  # what a response is scanned from


def _pg_row(buf: Buffer, at: int) -> tuple[Any, ...]:
    """One DataRow: a 32-bit length (-1 for NULL) and the text of each column."""
    count = buf[at] << 8 | buf[at + 1]
    at += 2
    out = []
    for _ in range(count):
        size = int.from_bytes(buf[at : at + 4], "big", signed=True)
        at += 4
        out.append(None if size < 0 else bytes(buf[at : at + size]).decode("utf-8", "replace"))
        at += max(size, 0)
    return tuple(out)


def pg_scan(buf: Buffer, sink: TextResult | None = None) -> tuple[int, Any, Any, int] | None:
    n = len(buf)
    pos = 0
    tag = None
    error = None
    described = -1
    while True:
        if n - pos < 5:
            return None
        kind = buf[pos]
        length = int.from_bytes(buf[pos + 1 : pos + 5], "big")
        end = pos + 1 + length
        if end > n:
            return None
        if kind == 0x5A:  # 'Z' ReadyForQuery
            return end, tag, error, described
        if kind == 0x43:  # 'C' CommandComplete
            tag = bytes(buf[pos + 5 : end - 1]) if tag is None or sink is None else tag
        elif kind == 0x45 and error is None:  # 'E' ErrorResponse
            error = bytes(buf[pos + 5 : end])
        elif kind == 0x54:  # 'T' RowDescription
            if sink is not None and described < 0 and tag is None:
                sink.columns = buf[pos + 5] << 8 | buf[pos + 6]
            described = 1
        elif kind == 0x44 and sink is not None and tag is None:  # 'D' DataRow of the first result
            sink.rows.append(_pg_row(buf, pos + 5))
        elif kind == 0x6E and described < 0:  # 'n' NoData
            described = 0
        pos = end


# the same function in C, when the C extension is used (pysysbench/runtime/native.py)
pg_scan_fast = pg_scan_c or pg_scan
