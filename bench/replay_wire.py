#!/usr/bin/env python3
"""The client's own cost per event, without the server or the kernel: a profiling aid.

Runs pysysbench (any arguments, MySQL or PostgreSQL driver) with every lean-wire
connection answered in-process: the first response to each prepared statement comes
from the real server, later executions of that statement get a replay of it,
delivered on the next loop turn.  What is left is pysysbench's Python and C per event --
event composition, random draws, the statement path, strands, recording -- plus
the replay itself (a few percent).  Deterministic under callgrind, so two versions
can be compared by instructions per event on a machine whose timings are noisy:

    # instructions per event = (Ir(2N events) - Ir(N events)) / N
    valgrind --tool=callgrind --callgrind-out-file=/dev/null \\
        .venv/bin/python bench/replay_wire.py oltp_point_select --db-driver=mysql \\
        --mysql-host=127.0.0.1 --mysql-user=sbtest --mysql-db=bench --tables=4 \\
        --table-size=10000 --threads=8 --time=0 --events=10000 run

(``--time=N`` runs, e.g. 3 and 8 s, compare the same way per reported event.)
Runs in one process (``--workers=1`` is added): worker processes would start
without the replay.  Needs the `bench` tables (bench/compare_sysbench.py prepares them) and a server
for the handshake and the first responses.  Not a test double: nothing here is
used by the test suite.
"""

from __future__ import annotations

import asyncio
import resource
import runpy
import sys
import time

from pysysbench.drivers import wire
from pysysbench.drivers.mysql.scan import mysql_scan_fast
from pysysbench.drivers.pgsql.scan import pg_scan_fast
from pysysbench.drivers.pgsql.wire import PgWire

COM_STMT_EXECUTE = b"\x17"


def mysql_key(data: bytes) -> bytes | None:
    """COM_STMT_EXECUTE: the command and statement id; anything else is not replayed."""
    return data[4:9] if data[4:5] == COM_STMT_EXECUTE else None


def pg_key(data: bytes) -> bytes | None:
    """Bind + Execute + Sync of a named statement: the statement's name; anything else
    (Parse, simple queries) is not replayed."""
    if data[:1] != b"B":
        return None
    portal_end = data.index(b"\0", 5)
    return b"B" + data[portal_end + 1 : data.index(b"\0", portal_end + 1)]


class ReplayTransport:
    """Passes everything but repeated executions of a prepared statement to the real transport."""

    def __init__(self, real, protocol, key):
        self.real = real
        self.key = key
        self.protocol = protocol
        self.answers: dict[bytes, bytes] = {}
        self.learning: bytes | None = None
        self.received = bytearray()
        self.loop = asyncio.get_running_loop()

    def write(self, data: bytes) -> None:
        key = self.key(data)
        answer = self.answers.get(key) if key is not None else None
        if answer is None:
            self.learning = key
            self.received = bytearray()
            self.real.write(data)
            return
        self.loop.call_soon(self.protocol.data_received, answer)

    def is_closing(self) -> bool:
        return self.real.is_closing()

    def __getattr__(self, name):
        return getattr(self.real, name)


def _scanner(protocol):
    kind = getattr(protocol, "kind", 0)
    if kind == 1:
        return lambda buf: mysql_scan_fast(buf, protocol.deprecate_eof, protocol.cache_metadata)
    if kind == 2:
        return pg_scan_fast
    return protocol.scan


_init = wire.Wire.__init__
_received = wire.Wire.data_received


def _replaying_init(self, transport, *args, **kw):
    _init(self, transport, *args, **kw)
    self.transport = ReplayTransport(transport, self, pg_key if isinstance(self, PgWire) else mysql_key)
    self.fd = -1  # every statement through ReplayTransport.write (no direct send on the socket)


def _learning_received(self, data):
    t = self.transport
    if isinstance(t, ReplayTransport) and t.learning is not None:
        t.received += data
        if _scanner(self)(bytes(t.received)) is not None:
            t.answers[t.learning] = bytes(t.received)
            t.learning = None
    return _received(self, data)


def main() -> None:
    if "--db-driver=mysql" not in sys.argv and "--db-driver=pgsql" not in sys.argv:
        sys.exit("replay_wire: the lean wire's drivers only (--db-driver=mysql or --db-driver=pgsql)")
    wire.Wire.__init__ = _replaying_init
    wire.Wire.data_received = _learning_received
    args = sys.argv[1:]
    if not any(a.startswith("--workers") for a in args):
        args.append("--workers=1")  # the replay is installed in this process only
    sys.argv = ["pysysbench", *args]
    t0, r0 = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
    try:
        runpy.run_module("pysysbench", run_name="__main__")
    finally:
        r1 = resource.getrusage(resource.RUSAGE_SELF)
        cpu = r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime
        print(f"replay_wire: wall {time.perf_counter() - t0:.2f} s, CPU {cpu:.2f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
