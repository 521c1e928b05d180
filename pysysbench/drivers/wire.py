"""The lean wire clients' shared machinery (``--db-fast-path=on``, the default).

asyncmy and asyncpg open the sessions (authentication, TLS, character sets) and
serve everything off the hot path (result rows for checks, bulk loads).  Once a
session is open, the driver moves its transport to a :class:`Wire` protocol that
sends the benchmark's statements itself and only looks for where each response
ends: no row is decoded, no result object is built, one future per statement.  A
bare loop of point selects costs half the client CPU of the library path, a whole
run about a third less (bench/journal/); on a machine where client and server
share the cores, every microsecond the client saves goes to the server.

This module is protocol-neutral: the :class:`Wire` base (request / response, the
strand hand-off, the receiving half whose C twin is drivers/wire.c's ``WireCore``),
the errors, how a result counts (spec 5.11) and the :class:`TextResult` sink.  Each
protocol's client, response scanner and C live in its driver's folder:
``drivers/mysql/`` (``wire.py`` ``MySQLWire``, ``scan.py``, ``wire.c``: the binary
prepared-statement protocol, COM_STMT_PREPARE / COM_STMT_EXECUTE, or COM_QUERY) and
``drivers/pgsql/`` (``PgWire``: Parse once, then Bind / Execute / Sync, or a simple
Query) -- exactly the messages the libraries send; the server sees the same
statements as with sysbench.
"""

from __future__ import annotations

import asyncio
import logging
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ..runtime.handoff import here
from ..runtime.native import Statement, WireCore

_log = logging.getLogger(__name__)


def library_changed(library: str, exc: BaseException) -> bool:
    """The session's transport could not be taken from ``library`` (an internal
    attribute moved in another version): say so once and go on through the library.
    Returns the new fast-path setting (False)."""
    # a log record, not a print: this runs in worker processes too, where no CLI prints
    # (with no handler configured, logging writes a warning's bare message to stderr)
    _log.warning(
        f"WARNING: this {library} keeps its connection differently ({exc}); statements go through "
        f"{library} (as with --db-fast-path=off), which costs more client CPU per statement"
    )
    return False


class WireError(Exception):
    """A server error: ``args`` = (code, message) as the drivers' error mapping expects."""

    sqlstate: str  # set when the protocol has one
    pg_fields: Any  # PostgreSQL: libpq's text of the error (drivers/pgsql/libpq.py)

    def __init__(self, code: Any, message: str, sqlstate: str | None = None):
        super().__init__(code, message)
        if sqlstate is not None:
            self.sqlstate = sqlstate

    def __str__(self) -> str:
        return str(self.args[1])


class LostConnection(WireError):
    """The transport closed while a response was due."""


@types.coroutine
def _response(wire: Wire):
    """Await a response as a strand does: yield the wire, which resumes the strand
    with the scanned response (or the connection's loss)."""
    return (yield wire)


SCAN_CALL = 0  # Wire.kind: the response is scanned by ``Wire.scan`` (a request())


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

    __slots__ = (
        "strand",
        "waiter",
        "scan",
        "pending",
        "lost",
        "kind",
        "deprecate_eof",
        "cache_metadata",
        "fd",
        "direct",
    )
    strand: Any
    waiter: asyncio.Future[Any] | None
    scan: Any  # the request's scanner (None between requests)
    pending: bytearray
    lost: BaseException | None
    kind: int
    deprecate_eof: int
    cache_metadata: int
    fd: int
    direct: int

    def data_received(self, data: bytes | bytearray) -> None:
        strand = self.strand
        if strand is None and self.waiter is None:
            return  # nothing asked (a late notice): dropped
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
        assert waiter is not None  # a response with no strand has a waiter (checked first)
        self.waiter = None
        if not waiter.done():
            waiter.set_result(result)


_CStatement = Statement
if TYPE_CHECKING:  # the C twin has the Python twin's interface
    _WireCore = _PyWireCore
else:
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

    __slots__ = ("transport", "write", "previous", "loop", "poll")

    def __init__(self, transport: asyncio.Transport) -> None:
        self.transport = transport
        self.write = transport.write  # one bound method for all the wire's C statements
        self.previous = transport.get_protocol()
        self.waiter = None
        self.strand = None
        self.scan = None
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
        self.poll: Any = None  # the WirePoll reading the socket instead of the event loop (polled_by)
        transport.set_protocol(self)

    @property
    def busy(self) -> bool:
        """A request is waiting for its response (an event cut short at shutdown)."""
        return self.waiter is not None or self.strand is not None

    def polled_by(self, poll: Any) -> bool:
        """Let ``poll`` (engine/worker.py's WirePump) read the socket instead of the event
        loop, until :meth:`unpoll`; False where it cannot (TLS, a lost connection)."""
        if self.poll is not None or self.fd < 0 or self.lost is not None or self.transport.is_closing():
            return False
        if not poll.add(self):
            return False
        self.poll = poll
        self.transport.pause_reading()
        return True

    def unpoll(self) -> None:
        """The event loop reads the socket again (a no-op unless polled)."""
        poll = self.poll
        if poll is None:
            return
        self.poll = None
        poll.remove(self)
        if not self.transport.is_closing():
            self.transport.resume_reading()

    def close(self, goodbye: bytes) -> None:
        """End the session: the protocol's goodbye message, then the socket is closed
        once it is written (no reply is awaited)."""
        self.unpoll()
        self.fd, self.direct = -1, 0
        if self.lost is None and not self.transport.is_closing():
            self.transport.write(goodbye)
            self.transport.close()

    def release(self) -> None:
        """Give the transport back to the library's protocol (between requests)."""
        self.direct = 0  # the library may write while it has the transport
        self.unpoll()  # and read
        if self.transport.get_protocol() is self:
            self.transport.set_protocol(self.previous)

    def take(self) -> None:
        if self.lost is None and self.transport.get_protocol() is not self:
            self.transport.set_protocol(self)

    @contextmanager
    def released(self) -> Iterator[None]:
        self.release()
        try:
            yield
        finally:
            self.take()

    def connection_lost(self, exc: Exception | None) -> None:
        self.unpoll()
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
        try:  # let the library know too, so its close() does not wait for a dead socket
            prev.connection_lost(exc)
        except Exception:
            pass

    def _lost_error(self) -> WireError:
        raise NotImplementedError

    def request(self, data: bytes, scan: Callable[[Any], Any]) -> Any:
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


class SlowStatement:
    """The Python twin of a prepared statement on the lean wire (what ``Wire.statement``
    returns without the C, and the C ``Statement``'s fallback): one small object, no closure
    -- a 1000-thread oltp_read_write holds 36,000 of them, and a closure's function, cells
    and bound methods took about 1.3 KB each (bench/journal/2026-12-03.md).  ``meta``: the
    protocol's one fact about the statement (MySQL: its parameter count; PostgreSQL:
    whether it returns rows); subclasses are awaitable callables."""

    __slots__ = ("wire", "head", "meta", "counters", "fail")

    def __init__(self, wire: Wire, head: bytes, meta: Any, counters: Any, fail: Callable[[BaseException], Any]):
        self.wire, self.head, self.meta, self.counters, self.fail = wire, head, meta, counters, fail


def count_result(c: Any, fields: int, affected: int) -> None:
    """spec 5.11: a result set is a read, changed rows a write, anything else other
    (the C statement counts the same way)."""
    if fields:
        c.reads += 1
    elif affected:
        c.writes += 1
    else:
        c.others += 1


class TextResult:
    """Where the scanners put the first result set's rows, when asked (the Lua API's
    ``con:query``; the hot path passes no sink and nothing is decoded): ``columns``
    -1 without a result set, ``rows`` tuples of text (None for NULL).  ``rest``: the
    results after the first of a response with several (a MySQL ``CALL``), each
    ``(columns, rows, affected)`` with columns -1 for one without a result set;
    ``text`` False: rows are binary (a prepared statement's), kept as empty tuples."""

    __slots__ = ("columns", "rows", "sqlstate", "rest", "text")

    def __init__(self, text: bool = True) -> None:
        self.columns = -1
        self.rows: list[tuple[Any, ...]] = []
        self.sqlstate = ""
        self.rest: list[tuple[int, list[tuple[Any, ...]], int]] = []
        self.text = text
