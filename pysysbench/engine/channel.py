"""The link between the parent and one worker process: pickled messages in
length-prefixed frames over a socket pair, read and written by the event loop.

A frame is an 8-byte big-endian length and the pickle of one message.  The
reading side keeps whatever the socket delivers in a buffer and hands a message
on only once its whole frame is in, so a report of any size may arrive in any
number of pieces.  Writes go through the loop's transport, which keeps what the
socket cannot take at once and sends it as the peer reads: a sender never
blocks, even on a peer that stopped reading, and frames never interleave.

``multiprocessing.Connection`` is not used on the loop: it reads a blocking
descriptor, and the loop makes its descriptor non-blocking, so a report that
arrived in pieces (a worker of 1,000 threads sends tens of kilobytes) raised
``BlockingIOError`` half-way and the worker was taken for dead (issue 16).
"""

from __future__ import annotations

import asyncio
import socket
import struct
from collections.abc import Callable
from typing import Any

try:  # the C pickler that pickle.dumps / pickle.loads are; pickle.py's own import (its Python
    # pickler, opcode tables and dispatch) was 4 M instructions of a run with worker processes
    from _pickle import dumps as _dumps
    from _pickle import loads as _loads
except ImportError:  # pragma: no cover - an interpreter without the accelerator
    from pickle import dumps as _dumps
    from pickle import loads as _loads

HIGHEST_PROTOCOL = -1  # pickle's rule: a negative protocol is its highest

HEADER = struct.Struct("!Q")
FLUSH_TIMEOUT_S = 5.0  # closing: how long buffered frames may take to reach a peer that reads


def encode(msg: Any) -> bytes:
    """One frame holding ``msg``."""
    body = _dumps(msg, HIGHEST_PROTOCOL)
    return HEADER.pack(len(body)) + body


class FrameDecoder:
    """Bytes in as they arrive, whole messages out."""

    def __init__(self) -> None:
        self._buf = bytearray()

    def feed(self, data: bytes) -> list[Any]:
        buf = self._buf
        buf += data
        out = []
        pos = 0
        while len(buf) - pos >= HEADER.size:
            (size,) = HEADER.unpack_from(buf, pos)
            end = pos + HEADER.size + size
            if len(buf) < end:
                break
            out.append(_loads(buf[pos + HEADER.size : end]))
            pos = end
        if pos:
            del buf[:pos]
        return out


class Channel(asyncio.Protocol):
    """One end of a link: ``on_message(msg)`` for every message received,
    ``on_lost()`` once when the link ends (peer gone, or closed here)."""

    def __init__(self, on_message: Callable[[Any], None], on_lost: Callable[[], None]):
        self._decoder = FrameDecoder()
        self._on_message = on_message
        self._on_lost = on_lost
        self._transport: asyncio.Transport | None = None
        self._lost = asyncio.get_running_loop().create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        for msg in self._decoder.feed(data):
            self._on_message(msg)

    def eof_received(self) -> bool:
        return False  # the peer closed: close this end too (connection_lost follows)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self._lost.done():
            self._lost.set_result(None)
            self._on_lost()

    def send(self, msg: Any) -> bool:
        """Queue ``msg`` for the peer; False when the link is already closing."""
        t = self._transport
        if t is None or t.is_closing():
            return False
        t.write(encode(msg))
        return True

    async def close(self, flush_timeout_s: float = FLUSH_TIMEOUT_S) -> None:
        """Close after what was sent has left (within ``flush_timeout_s``)."""
        t = self._transport
        if t is None:
            return
        if not t.is_closing():
            t.close()
        try:
            await asyncio.wait_for(asyncio.shield(self._lost), flush_timeout_s)
        except TimeoutError:
            t.abort()

    def abort(self) -> None:
        """Drop the link now, whatever is still buffered."""
        if self._transport is not None:
            self._transport.abort()


async def open_channel(sock: socket.socket, on_message: Callable[[Any], None], on_lost: Callable[[], None]) -> Channel:
    """Put one end of a socket pair on the running loop."""
    loop = asyncio.get_running_loop()
    _, channel = await loop.connect_accepted_socket(lambda: Channel(on_message, on_lost), sock=sock)
    return channel


def send_blocking(sock: socket.socket, msg: Any) -> None:
    """Send one message from outside the loop (a worker failing before its loop runs)."""
    sock.setblocking(True)
    sock.sendall(encode(msg))
