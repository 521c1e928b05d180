"""The worker's wires read in C (drivers/wire.c's ``WirePoll``, engine/worker.py's
``WirePump``): a polled wire's responses are read by the poll and not by the event loop,
in pieces as in one, and a wire whose socket ends or whose response raises goes back to
the event loop, which then reports it as it always does.  Over a socket pair with a
request's own scanner (kind 0), no server: tests/integration/test_wire_poll.py runs the
pump under real runs against MariaDB and PostgreSQL."""

from __future__ import annotations

import asyncio
import socket
import time

import pytest

from pysysbench.drivers import wire
from pysysbench.runtime.native import WirePoll

if WirePoll is None:
    pytest.skip("the C extension is not built", allow_module_level=True)

uvloop = pytest.importorskip("uvloop")


class PairWire(wire.Wire):
    __slots__ = ()

    def _lost_error(self):
        return wire.LostConnection(2013, "lost")


def until_ms(ms: float) -> int:
    return time.perf_counter_ns() + int(ms * 1e6)


def newline_scan(buf):
    """A response is everything up to a newline."""
    data = bytes(buf)
    return data if data.endswith(b"\n") else None


async def _pair():
    ours, theirs = socket.socketpair()
    ours.setblocking(False)
    loop = asyncio.get_running_loop()
    transport, _ = await loop.connect_accepted_socket(asyncio.Protocol, ours)
    return PairWire(transport), theirs


def run(coro):
    return uvloop.run(coro)


def test_a_polled_wire_is_read_by_the_poll_in_pieces_and_not_by_the_event_loop():
    async def main():
        w, peer = await _pair()
        poll = WirePoll()
        assert w.polled_by(poll) and poll.count == 1
        assert not w.polled_by(poll)  # once
        assert poll.waiting == 0
        fut = w.request(b"q\n", newline_scan)
        assert poll.waiting == 1  # a response is due on it
        assert peer.recv(10) == b"q\n"
        peer.send(b"hal")
        await asyncio.sleep(0.02)  # the event loop's turns: it does not read
        assert not fut.done() and bytes(w.pending) == b""
        assert poll.run(until_ms(5)) == 1  # one read, an incomplete response: kept
        assert not fut.done() and bytes(w.pending) == b"hal"
        peer.send(b"f\n")
        assert poll.run(until_ms(50)) == 1
        assert fut.done() and fut.result() == b"half\n" and bytes(w.pending) == b""
        assert poll.waiting == 0
        # nothing to read: run waits until its time, not longer
        t0 = time.perf_counter()
        assert poll.run(until_ms(20)) == 0
        assert 0.015 < time.perf_counter() - t0 < 0.5
        w.unpoll()
        assert poll.count == 0 and w.poll is None
        fut = w.request(b"r\n", newline_scan)  # the event loop reads it again
        peer.recv(10)
        peer.send(b"ok\n")
        assert await asyncio.wait_for(fut, 2) == b"ok\n"
        w.transport.close()
        peer.close()

    run(main())


def test_a_socket_that_ends_goes_back_to_the_event_loop_which_reports_the_loss():
    async def main():
        w, peer = await _pair()
        poll = WirePoll()
        assert w.polled_by(poll)
        fut = w.request(b"q\n", newline_scan)
        peer.recv(10)
        peer.close()
        back = poll.run(until_ms(50))
        assert back == [(w, None)] and poll.count == 0
        assert not fut.done()
        w.unpoll()  # as the pump does: the event loop reads again
        with pytest.raises(wire.LostConnection):
            await asyncio.wait_for(fut, 2)

    run(main())


def test_a_response_that_raises_goes_back_with_its_exception_and_the_others_go_on():
    async def main():
        bad, bad_peer = await _pair()
        good, good_peer = await _pair()
        poll = WirePoll()
        assert bad.polled_by(poll) and good.polled_by(poll)

        def boom(buf):
            raise ValueError("garbled response")

        f1 = bad.request(b"q\n", boom)
        f2 = good.request(b"q\n", newline_scan)
        bad_peer.send(b"x\n")
        good_peer.send(b"y\n")
        back = poll.run(until_ms(50))
        assert len(back) == 1 and back[0][0] is bad and isinstance(back[0][1], ValueError)
        assert f2.done() and f2.result() == b"y\n"
        assert not f1.done() and poll.count == 1
        for w in (bad, good):
            w.transport.close()
        bad_peer.close()
        good_peer.close()

    run(main())


def test_release_close_and_loss_take_the_wire_out_of_the_poll():
    async def main():
        w, peer = await _pair()
        poll = WirePoll()
        assert w.polled_by(poll)
        w.release()  # the library has the transport: it reads
        assert poll.count == 0 and w.poll is None
        w.take()
        assert w.polled_by(poll)
        w.close(b"bye\n")
        assert poll.count == 0 and w.fd == -1
        assert not w.polled_by(poll)  # a closed wire stays with the loop
        peer.close()
        # a poll with nothing in it returns at once
        t0 = time.perf_counter()
        assert poll.run(until_ms(200)) == 0
        assert time.perf_counter() - t0 < 0.1

    run(main())


def test_a_wire_taken_out_by_another_wires_response_in_the_same_batch_is_not_read():
    async def main():
        a, a_peer = await _pair()
        b, b_peer = await _pair()
        poll = WirePoll()
        assert a.polled_by(poll) and b.polled_by(poll)

        def scan_and_let_b_go(buf):
            b.unpoll()  # as a script's disconnect of b in the middle of a's event would
            return bytes(buf)

        fa = a.request(b"q\n", scan_and_let_b_go)
        fb = b.request(b"q\n", newline_scan)
        a_peer.send(b"a\n")
        time.sleep(0.005)
        b_peer.send(b"for the loop\n")
        time.sleep(0.005)  # both ready before the poll waits: one batch, a's first
        got = poll.run(until_ms(20))
        assert fa.result() == b"a\n" and poll.count == 1  # a stays
        assert got == 1  # b's ready event came in the batch, after it had left
        assert await asyncio.wait_for(fb, 2) == b"for the loop\n"
        for w in (a, b):
            w.transport.close()
        a_peer.close()
        b_peer.close()

    run(main())
