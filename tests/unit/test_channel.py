"""The parent <-> worker link (engine/channel.py): a message of any size arrives
whole and in order, however the socket cuts it up, in both directions.

The worker processes' reports grow with their threads (per-thread counts and
latency sums): at 1,000 threads per process they are tens of kilobytes and came
out of the socket in pieces, which the old reader took for the worker's death.
"""

from __future__ import annotations

import asyncio
import random
import socket
import threading

import pytest

from pysysbench.engine.channel import FrameDecoder, encode, open_channel

try:
    import uvloop

    LOOPS = [asyncio.run, uvloop.run]
except ImportError:  # pragma: no cover - uvloop is a dependency
    LOOPS = [asyncio.run]

BIG = {"snapshot": list(range(400_000)), "blob": random.Random(1).randbytes(3_000_000)}  # ~5 MB pickled


def pieces(data: bytes, rng: random.Random, most: int = 4096) -> list[bytes]:
    out, pos = [], 0
    while pos < len(data):
        n = rng.randint(1, most)
        out.append(data[pos : pos + n])
        pos += n
    return out


def test_multi_megabyte_message_fed_in_small_pieces_comes_out_whole_once():
    frames = encode(("reply", 7, BIG)) + encode(("done", {"x": 1})) + encode(("ready",))
    assert len(frames) > 4_000_000
    decoder = FrameDecoder()
    got = []
    for piece in pieces(frames, random.Random(2)):
        got.extend(decoder.feed(piece))
    assert got == [("reply", 7, BIG), ("done", {"x": 1}), ("ready",)]


def test_header_split_across_pieces_and_many_frames_in_one_piece():
    decoder = FrameDecoder()
    msgs = [("sample", i) for i in range(1000)]
    data = b"".join(encode(m) for m in msgs)
    assert decoder.feed(data[:3]) == []  # not even a whole length yet
    assert decoder.feed(data[3:]) == msgs  # the rest at once: every frame, in order
    assert decoder.feed(b"") == []


@pytest.mark.parametrize("run", LOOPS, ids=lambda r: r.__module__)
def test_big_messages_cross_a_socket_pair_written_in_small_pieces(run):
    """Reader on the event loop (the parent), writer cutting its frames into small
    sends from another thread, as a busy kernel delivers them."""

    async def main() -> list:
        mine, theirs = socket.socketpair()
        got: list = []
        lost = asyncio.Event()
        await open_channel(mine, got.append, lost.set)

        def write() -> None:
            data = encode(("reply", 1, BIG)) + encode(("done", "end"))
            for piece in pieces(data, random.Random(3), most=1500):
                theirs.sendall(piece)
            theirs.close()

        writer = threading.Thread(target=write)
        writer.start()
        await asyncio.wait_for(lost.wait(), 60)
        writer.join()
        return got

    assert run(main()) == [("reply", 1, BIG), ("done", "end")]


@pytest.mark.parametrize("run", LOOPS, ids=lambda r: r.__module__)
def test_sending_to_a_peer_that_reads_late_neither_blocks_nor_loses(run):
    """The worker's side: sending several megabytes to a parent that is not
    reading returns at once; the frames arrive whole once it reads, and closing
    lets the buffered frames out first."""

    async def main() -> tuple[list, list]:
        a, b = socket.socketpair()
        got_a: list = []
        got_b: list = []
        b_lost = asyncio.Event()
        sender = await open_channel(a, got_a.append, lambda: None)
        for i in range(3):
            assert sender.send(("reply", i, BIG))  # far beyond the socket buffer: must not block
        closing = asyncio.ensure_future(sender.close())
        await asyncio.sleep(0.2)  # the peer starts reading late
        await open_channel(b, got_b.append, b_lost.set)
        await asyncio.wait_for(asyncio.gather(closing, b_lost.wait()), 60)
        assert not sender.send(("late",))  # closed: refused, not raised
        return got_a, got_b

    got_a, got_b = run(main())
    assert got_a == [] and got_b == [("reply", i, BIG) for i in range(3)]
