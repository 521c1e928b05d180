"""The C statement of the lean wire (drivers/wire.c's ``Statement`` / ``Pending``)
against its contract, the Python statement coroutines (drivers/mysql/wire.py,
drivers/pgsql/wire.py): the same
bytes on the wire for every parameter mix, the same read / write / other counting,
errors raised through the driver's ``fail``, and the Python coroutine used whenever
no strand is running or the connection is gone.  Runs without a server: it checks
the encoder and the awaitable protocol; tests/integration/test_wire.py runs the
same objects against MariaDB and PostgreSQL."""

from __future__ import annotations

import asyncio
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pysysbench.drivers import wire
from pysysbench.drivers.base import Counters
from pysysbench.drivers.mysql import wire as mywire
from pysysbench.drivers.pgsql import wire as pgwire
from pysysbench.runtime.handoff import Here

if wire._CStatement is None:
    pytest.skip("the C extension is not built", allow_module_level=True)

HEAD = bytes((mywire.COM_STMT_EXECUTE,)) + struct.pack("<I", 7) + b"\x00\x01\x00\x00\x00"
PG_HEAD = b"\x00pysysbench_1\x00\x00\x00"
PG_TAIL = pgwire._EXECUTE + pgwire._SYNC


class Strand:
    """Stands for engine.strand.Strand: only its identity is used here."""


def python_packet(args: tuple) -> bytes:
    if not args:
        return mywire._command(mywire.COM_STMT_EXECUTE, HEAD[1:])
    body = HEAD + mywire._param_packer()(args, "utf8")
    return struct.pack("<I", len(body))[:3] + b"\x00" + body


def make(proto=1, nparams=1, is_read=False, fail=None, slow=None):
    core = wire._WireCore()
    here = Here()
    sent: list[bytes] = []
    counters = Counters()
    errors: list[BaseException] = []

    def raise_(exc):
        errors.append(exc)
        raise RuntimeError(f"classified: {exc}")

    if proto == 1:
        stmt = wire._CStatement(
            1,
            core,
            here,
            sent.append,
            HEAD,
            b"",
            nparams,
            mywire._param_packer(),
            "utf8",
            counters,
            fail or raise_,
            mywire.mysql_failure,
            slow or (lambda *a: ("slow", a)),
            False,
        )
    else:
        stmt = wire._CStatement(
            2,
            core,
            here,
            sent.append,
            PG_HEAD,
            PG_TAIL,
            -1,
            None,
            "",
            counters,
            fail,
            pgwire.PgWire._error,
            slow or (lambda *a: ("slow", a)),
            is_read,
        )
    return stmt, core, here, sent, counters, errors


def drive(pending, response):
    """Await ``pending`` as a strand does: the first send yields the wire, the
    second resumes it with the scanned response."""
    yielded = pending.send(None)
    try:
        pending.send(response)
    except StopIteration as stop:
        return yielded, stop.value
    raise AssertionError("the statement did not finish")


ints = st.integers(-(2**63), 2**64 - 1)
values = st.one_of(
    ints, st.none(), st.text(max_size=300), st.floats(allow_nan=False), st.booleans(), st.binary(max_size=300)
)


@settings(max_examples=300, deadline=None)
@given(args=st.one_of(st.lists(ints, max_size=12), st.lists(values, max_size=12)).map(tuple))
def test_mysql_packets_equal_the_python_statement(args):
    stmt, core, here, sent, counters, _ = make(nparams=len(args))
    here.strand = Strand()
    pending = stmt(*args)
    assert sent == [python_packet(args)]
    assert core.strand is here.strand and core.kind == 1
    assert drive(pending, (0, 1, 0, 0, b"")) == (core, None)
    assert (counters.reads, counters.writes, counters.others) == (1, 0, 0)


def test_mysql_counting_errors_and_slow_paths():
    stmt, core, here, sent, counters, errors = make(nparams=1)
    # outside a strand: the Python statement coroutine does the work
    assert stmt(5) == ("slow", (5,)) and sent == []
    here.strand = Strand()
    for response in [(0, 0, 3, 0, b""), (0, 0, 0, 0, b""), (0, 2, 0, 0, b"")]:
        drive(stmt(1), response)
    assert (counters.reads, counters.writes, counters.others) == (1, 1, 1)
    # a server error goes to fail(), which raises the classified error
    pending = stmt(1)
    pending.send(None)
    with pytest.raises(RuntimeError, match="classified: Duplicate"):
        pending.send((0, 0, 0, 1062, b"Duplicate entry"))
    assert errors[0].args == (1062, "Duplicate entry")
    # the wrong number of parameters and a lost connection are the Python statement's to report
    assert stmt(1, 2) == ("slow", (1, 2))
    core.lost = ConnectionResetError()
    assert stmt(1) == ("slow", (1,))


def test_connection_lost_while_waiting_goes_through_fail_and_cancel_does_not():
    stmt, core, here, sent, counters, errors = make(nparams=0)
    here.strand = Strand()
    pending = stmt()
    pending.send(None)
    with pytest.raises(RuntimeError, match="classified"):
        pending.throw(wire.LostConnection(2013, "Lost connection"))
    assert isinstance(errors[0], wire.LostConnection)
    pending = stmt()
    pending.send(None)
    with pytest.raises(asyncio.CancelledError):
        pending.throw(asyncio.CancelledError())
    assert len(errors) == 1
    with pytest.raises(RuntimeError, match="already awaited"):
        pending.send(None)


@pytest.mark.parametrize(
    "tag,is_read,counted",
    [
        (b"SELECT 5", True, "reads"),
        (b"UPDATE 1", False, "writes"),
        (b"UPDATE 0", False, "others"),
        (b"INSERT 0 1", False, "writes"),
        (b"DELETE 12", False, "writes"),
        (b"BEGIN", False, "others"),
        (b"COMMIT", False, "others"),
        (None, False, "others"),
        (b"UPDATE 00", False, "writes"),
    ],
)
def test_pg_counting_follows_the_command_tag(tag, is_read, counted):
    stmt, core, here, sent, counters, _ = make(proto=2, is_read=is_read)
    here.strand = Strand()
    pending = stmt(1, "x", None)
    assert sent == [pgwire._py_pg_bind(PG_HEAD, (1, "x", None), PG_TAIL)] and core.kind == 2
    drive(pending, (0, tag, None, -1))
    assert {"reads": counters.reads, "writes": counters.writes, "others": counters.others}[counted] == 1
    assert counters.reads + counters.writes + counters.others == 1


def test_pg_error_runs_the_async_fail_in_place():
    """PostgreSQL's fail() is a coroutine (an ignored error rolls back first): the
    awaitable runs it, passing on what it awaits, and raises what it raises."""
    rolled_back = []

    async def fail(exc):
        await asyncio.sleep(0)  # yields None, as a ROLLBACK round trip yields
        rolled_back.append(exc.sqlstate)
        raise RuntimeError(f"ignored {exc.sqlstate}")

    stmt, core, here, sent, counters, _ = make(proto=2, fail=fail)
    here.strand = Strand()
    pending = stmt(1)
    pending.send(None)
    error = b"SERROR\x00C23505\x00Mduplicate key\x00\x00"
    assert pending.send((0, None, error, -1)) is None  # fail()'s own yield, passed on
    with pytest.raises(RuntimeError, match="ignored 23505"):
        pending.send(None)
    assert rolled_back == ["23505"] and counters.others == 0
