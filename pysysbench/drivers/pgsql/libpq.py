"""libpq's texts where sysbench 1.0.20 prints them (``PQerrorMessage``): a failed
``PQprepare()`` and a failed connection.

sysbench's PostgreSQL driver logs ``PQprepare() failed: `` and ``Connection to database
failed: `` followed by libpq's whole message, which ends with a newline (so a blank line
follows).  A server error reads as libpq's default verbosity writes it: ``SEVERITY:
message``, the statement's line with a caret under the error position, then DETAIL, HINT,
QUERY and CONTEXT lines.  ``fields`` are the ErrorResponse's fields by asyncpg's names
(``severity``, ``message``, ``position``, ...), which the lean wire client reads too.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping

DISPLAY_SIZE = 60  # libpq: the statement line is cut to this many screen columns
MIN_RIGHT_CUT = 10  # ... keeping this many after the error position when it can

# ErrorResponse field codes -> asyncpg's attribute names
FIELD_NAMES = {
    b"S": "severity",
    b"V": "severity_en",
    b"C": "sqlstate",
    b"M": "message",
    b"D": "detail",
    b"H": "hint",
    b"P": "position",
    b"p": "internal_position",
    b"q": "internal_query",
    b"W": "context",
}


def fields_of(body: bytes) -> dict[str, str]:
    """The fields of an ErrorResponse body by name."""
    out: dict[str, str] = {}
    for field in body.split(b"\x00"):
        name = FIELD_NAMES.get(field[:1])
        if name is not None:
            out[name] = field[1:].decode("utf-8", "replace")
    return out


def _width(ch: str) -> int:
    """Screen columns of one character as libpq counts them (at least 1)."""
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def position_lines(query: str, position: int) -> str:
    """libpq's ``LINE n: ...`` and caret lines for a 1-based character position."""
    loc = position - 1
    if loc < 0:
        return ""
    text = list(query)
    col = [0] * (len(text) + 1)  # each character's first screen column
    loc_line, ibeg, iend, scr = 1, 0, -1, 0
    cno = 0
    for cno, ch in enumerate(text):
        col[cno] = scr
        if ch == "\t":
            text[cno] = " "
        elif ch in "\r\n":
            if cno < loc:
                if ch == "\r" or cno == 0 or text[cno - 1] != "\r":
                    loc_line += 1
                ibeg = cno + 1
            else:
                iend = cno
                break
        scr += _width(ch)
    else:
        cno = len(text)
    if iend < 0:
        iend = cno
        col[iend] = scr
    if loc > cno:
        return ""
    beg_trunc = end_trunc = False
    if col[iend] - col[ibeg] > DISPLAY_SIZE:
        if col[ibeg] + DISPLAY_SIZE >= col[loc] + MIN_RIGHT_CUT:
            while col[iend] - col[ibeg] > DISPLAY_SIZE:
                iend -= 1
            end_trunc = True
        else:
            while col[loc] + MIN_RIGHT_CUT < col[iend]:
                iend -= 1
                end_trunc = True
            while col[iend] - col[ibeg] > DISPLAY_SIZE:
                ibeg += 1
                beg_trunc = True
    prefix = f"LINE {loc_line}: " + ("..." if beg_trunc else "")
    line = prefix + "".join(text[ibeg:iend]) + ("..." if end_trunc else "")
    caret = " " * (sum(map(_width, prefix)) + col[loc] - col[ibeg]) + "^"
    return f"{line}\n{caret}\n"


def error_message(fields: Mapping[str, str], query: str | None) -> str:
    """``PQerrorMessage`` after a server error on ``query`` (the statement as sent)."""
    out = f"{fields['severity']}:  " if fields.get("severity") else ""
    out += fields.get("message", "")
    querytext, pos = None, 0
    if fields.get("position"):
        querytext, pos = query, int(fields["position"])
        if query is None:
            out += f" at character {fields['position']}"
    elif fields.get("internal_position"):
        querytext, pos = fields.get("internal_query"), int(fields["internal_position"])
        if querytext is None:
            out += f" at character {fields['internal_position']}"
    out += "\n"
    if querytext and pos > 0:
        out += position_lines(querytext, pos)
    for name, label in (("detail", "DETAIL"), ("hint", "HINT"), ("internal_query", "QUERY"), ("context", "CONTEXT")):
        if fields.get(name):
            out += f"{label}:  {fields[name]}\n"
    return out


def server_fields(exc: BaseException) -> dict[str, str]:
    """The error fields a driver's exception carries (asyncpg's or the wire client's)."""
    fields = getattr(exc, "pg_fields", None)
    if fields is not None:
        return dict(fields)
    as_dict = getattr(exc, "as_dict", None)
    if callable(as_dict):
        return {k: str(v) for k, v in as_dict().items() if v is not None}
    return {"severity": "ERROR", "message": str(exc)}


def _first_address(host: str, port: int) -> str | None:
    import socket

    try:
        return str(socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][4][0])  # an IP's text
    except (OSError, IndexError):
        return None


def connect_message(host: str, port: int, exc: BaseException) -> str:
    """libpq 15's ``PQerrorMessage`` after a failed connection to ``host``:``port``."""
    import ipaddress  # here: only a failed connection needs these (start-up's import diet)
    import os
    import re
    import socket

    if isinstance(exc, socket.gaierror):
        return f'could not translate host name "{host}" to address: {exc.strerror}\n'
    if host.startswith("/"):
        where = f'connection to server on socket "{host}/.s.PGSQL.{port}" failed: '
        ask = "\tIs the server running locally and accepting connections on that socket?\n"
    else:
        try:
            ipaddress.ip_address(host)
            addr = None  # a numeric host is its own address
        except ValueError:  # the address tried: from the error, else the host's first
            found = re.search(r"Connect call failed \('([^']+)', \d+", str(exc))
            addr = found.group(1) if found else _first_address(host, port)
        where = f'connection to server at "{host}"' + (f" ({addr})" if addr else "") + f", port {port} failed: "
        ask = "\tIs the server running on that host and accepting TCP/IP connections?\n"
    if isinstance(exc, OSError) and (exc.errno or exc.strerror):
        text = os.strerror(exc.errno) if exc.errno else str(exc.strerror)
        return where + text + "\n" + (ask if isinstance(exc, ConnectionRefusedError) else "")
    if severity := getattr(exc, "severity", None):
        return where + f"{severity}:  {exc}\n"
    return where + f"{exc}\n"
