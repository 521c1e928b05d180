"""A MySQL server's refusal before its greeting is read from the packet it sent
(pysysbench.drivers.mysql.session.refusal; the servers' side in
tests/integration/test_connection_limits.py)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from pysysbench.drivers.mysql.session import ClosedAtOnce, refusal, refusal_packet


def packet(body: bytes, seq: int = 0) -> bytes:
    return len(body).to_bytes(3, "little") + bytes([seq]) + body


@pytest.mark.parametrize(
    "body",
    [
        b"\xff\x10\x04Too many connections",  # MariaDB: no SQL state before the greeting
        b"\xff\x10\x04#08004Too many connections",  # MySQL: with one
    ],
)
def test_error_packet_before_the_greeting(body):
    found = refusal_packet(packet(body))
    assert found.args == (1040, "Too many connections")


def test_anything_else_is_not_a_refusal():
    greeting = packet(b"\x0a10.11.6-MariaDB\x00" + bytes(40))
    assert refusal_packet(greeting) is None
    assert refusal_packet(b"\xff\x10") is None


def test_buffered_packet_wins_over_asyncmys_transport_error():
    data = b"junk" + packet(b"\xff\x10\x04Too many connections")
    conn = SimpleNamespace(_proto=SimpleNamespace(buffer=bytearray(data), pos=4, length=len(data)))
    transport_error = RuntimeError("Transport does not expose socket instance")
    assert refusal(conn, transport_error).args == (1040, "Too many connections")
    empty = SimpleNamespace(_proto=SimpleNamespace(buffer=bytearray(16), pos=0, length=0))
    assert isinstance(refusal(empty, transport_error), ClosedAtOnce)
    other = OSError("refused")
    assert refusal(SimpleNamespace(_proto=None), other) is other
