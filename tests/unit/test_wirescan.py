"""The response scanners of the lean wire clients (drivers/mysql/scan.py, drivers/pgsql/scan.py):
the Python reference and the C extension must agree on every buffer, report
"incomplete" (None) for every proper prefix of a response, and find its end,
kind, counts and error exactly."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pysysbench.drivers.mysql import scan as myscan
from pysysbench.drivers.pgsql import scan as pgscan
from pysysbench.runtime import native

SCANNERS = [pytest.param((myscan.mysql_scan, pgscan.pg_scan), id="python")]
if myscan.mysql_scan_c is not None:
    SCANNERS.append(pytest.param((myscan.mysql_scan_c, pgscan.pg_scan_c), id="c"))


@pytest.mark.skipif(not native.WANTED, reason="PYSYSBENCH_NATIVE=off")
def test_c_extension_is_built():
    """pip install builds it here (gcc is on every machine of this project); without
    it the hot path silently pays the Python scanner's cost."""
    assert native.ENABLED, native.describe()
    assert myscan.mysql_scan_c is not None and myscan.mysql_scan_fast is myscan.mysql_scan_c


# --- MySQL -------------------------------------------------------------------------


def lenenc(n: int) -> bytes:
    if n < 251:
        return bytes((n,))
    if n < 1 << 16:
        return b"\xfc" + n.to_bytes(2, "little")
    if n < 1 << 24:
        return b"\xfd" + n.to_bytes(3, "little")
    return b"\xfe" + n.to_bytes(8, "little")


def packets(*payloads: bytes) -> bytes:
    out = b""
    for seq, p in enumerate(payloads, 1):
        out += len(p).to_bytes(3, "little") + bytes((seq & 0xFF,)) + p
    return out


def ok(affected: int = 0, status: int = 2, info: bytes = b"", marker: int = 0) -> bytes:
    return bytes((marker,)) + lenenc(affected) + lenenc(0) + struct.pack("<HH", status, 0) + info


def eof(status: int = 2) -> bytes:
    return b"\xfe" + struct.pack("<HH", 0, status)


def err(code: int, msg: bytes, state: bytes = b"42S02") -> bytes:
    return b"\xff" + struct.pack("<H", code) + b"#" + state + msg


def column() -> bytes:
    return b"\x03def\x06sbtest\x07sbtest1\x07sbtest1\x01c\x01c\x0c" + b"\x08\x00" + b"\x00" * 10


def result_set_of(
    rows: list[bytes], deprecate_eof: bool, columns: int = 1, status: int = 2, metadata: int | None = None
) -> list[bytes]:
    """``metadata``: None without MARIADB_CLIENT_CACHE_METADATA, else the column count
    packet's metadata byte (0: the column definitions are skipped)."""
    if metadata is None:
        out = [lenenc(columns)] + [column()] * columns
    else:
        out = [lenenc(columns) + bytes((metadata,))] + [column()] * (columns if metadata else 0)
    if not deprecate_eof:
        out.append(eof())
    out += [b"\x00\x00" + lenenc(len(r)) + r for r in rows]
    out.append(ok(status=status, marker=0xFE) if deprecate_eof else eof(status))
    return out


def mysql_cases(deprecate_eof: bool, metadata: int | None = None):
    rows = [b"%020d" % i * 6 for i in range(100)]

    def result_set(rows, deprecate_eof, columns=1, status=2):
        return result_set_of(rows, deprecate_eof, columns, status, metadata)

    return {
        "ok-update": (packets(ok(1, info=b"Rows matched: 1  Changed: 1  Warnings: 0")), (1, 0, 1, 0, b"")),
        "ok-none": (packets(ok(0)), (1, 0, 0, 0, b"")),
        "ok-big-affected": (packets(ok(70000)), (1, 0, 70000, 0, b"")),
        "error": (
            packets(err(1146, b"Table 'sbtest.sbtest9' doesn't exist")),
            (1, 0, 0, 1146, b"Table 'sbtest.sbtest9' doesn't exist"),
        ),
        "point-select": (packets(*result_set(rows[:1], deprecate_eof)), (1, 1, 0, 0, b"")),
        "range-select": (packets(*result_set(rows, deprecate_eof)), (1, 1, 0, 0, b"")),
        "empty-select": (packets(*result_set([], deprecate_eof, columns=3)), (1, 3, 0, 0, b"")),
        "two-results": (packets(*result_set(rows[:2], deprecate_eof, status=2 | 8), ok(3)), (1, 1, 3, 0, b"")),
        "error-mid-rows": (
            packets(*result_set(rows[:3], deprecate_eof)[:-1], err(1317, b"interrupted", b"70100")),
            (1, 1, 0, 1317, b"interrupted"),
        ),
    }


@pytest.mark.parametrize("scanners", SCANNERS)
@pytest.mark.parametrize("deprecate_eof", [False, True])
@pytest.mark.parametrize("metadata", [None, 1, 0], ids=["no-cache-metadata", "metadata-sent", "metadata-skipped"])
def test_mysql_responses(scanners, deprecate_eof, metadata):
    scan = scanners[0]
    cache = metadata is not None
    for name, (data, (_, fields, affected, errno, msg)) in mysql_cases(deprecate_eof, metadata).items():
        assert scan(data, deprecate_eof, cache) == (len(data), fields, affected, errno, msg), name
        for cut in range(len(data)):
            assert scan(data[:cut], deprecate_eof, cache) is None, (name, cut)


@pytest.mark.parametrize("scanners", SCANNERS)
@pytest.mark.parametrize("deprecate_eof", [False, True])
def test_mysql_skipped_metadata_with_two_result_sets(scanners, deprecate_eof):
    """Metadata byte 0 on the first result set, 1 on the second (a changed statement):
    each is read with its own rule and the end is the end of both."""
    first = result_set_of([b"a" * 30] * 2, deprecate_eof, status=2 | 8, metadata=0)
    second = result_set_of([b"b" * 30], deprecate_eof, columns=2, metadata=1)
    data = packets(*first, *second)
    assert scanners[0](data, deprecate_eof, True) == (len(data), 1, 0, 0, b"")
    for cut in range(len(data)):
        assert scanners[0](data[:cut], deprecate_eof, True) is None, cut


@pytest.mark.parametrize("scanners", SCANNERS)
def test_mysql_local_infile_request_is_refused(scanners):
    data = packets(b"\xfbpysysbench-rows")
    assert scanners[0](data, True)[3] == -1


@pytest.mark.parametrize("scanners", SCANNERS)
def test_mysql_packet_of_16_mib_continues(scanners):
    """A row of 16 MiB - 1 bytes or more spans several physical packets."""
    big = b"\x00\x00" + lenenc(20_000_000) + b"x" * 20_000_000
    phys = [big[:0xFFFFFF], big[0xFFFFFF:]]
    data = packets(lenenc(1), column(), *phys, ok(marker=0xFE))
    assert scanners[0](data, True) == (len(data), 1, 0, 0, b"")
    assert scanners[0](data[:-5], True) is None


# --- PostgreSQL --------------------------------------------------------------------


def msg(kind: bytes, body: bytes) -> bytes:
    return kind + struct.pack("!i", len(body) + 4) + body


Z_IDLE = msg(b"Z", b"I")


def pg_cases():
    row = msg(b"D", struct.pack("!hi", 1, 120) + b"7" * 120)
    error = b'SERROR\x00VERROR\x00C42P01\x00Mrelation "sbtest9" does not exist\x00\x00'
    return {
        "select": (msg(b"2", b"") + row + msg(b"C", b"SELECT 1\x00") + Z_IDLE, (b"SELECT 1", None, -1)),
        "range": (msg(b"2", b"") + row * 100 + msg(b"C", b"SELECT 100\x00") + Z_IDLE, (b"SELECT 100", None, -1)),
        "update": (msg(b"2", b"") + msg(b"C", b"UPDATE 1\x00") + msg(b"Z", b"T"), (b"UPDATE 1", None, -1)),
        "error": (msg(b"E", error) + Z_IDLE, (None, error, -1)),
        "notice-then-tag": (
            msg(b"N", b"SNOTICE\x00Mhi\x00\x00") + msg(b"C", b"BEGIN\x00") + Z_IDLE,
            (b"BEGIN", None, -1),
        ),
        "describe-rows": (
            msg(b"1", b"")
            + msg(b"t", b"\x00\x01\x00\x00\x00\x17")
            + msg(b"T", b"\x00\x01c\x00" + b"\x00" * 18)
            + Z_IDLE,
            (None, None, 1),
        ),
        "describe-nodata": (msg(b"1", b"") + msg(b"t", b"\x00\x00") + msg(b"n", b"") + Z_IDLE, (None, None, 0)),
    }


@pytest.mark.parametrize("scanners", SCANNERS)
def test_pg_responses(scanners):
    scan = scanners[1]
    for name, (data, (tag, error, described)) in pg_cases().items():
        assert scan(data) == (len(data), tag, error, described), name
        for cut in range(len(data)):
            assert scan(data[:cut]) is None, (name, cut)


# --- both scanners agree on arbitrary input (including garbage) ----------------------


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300), st.booleans(), st.booleans())
def test_c_and_python_agree_on_any_bytes(data, deprecate_eof, cache_metadata):
    if myscan.mysql_scan_c is None:
        pytest.skip("C extension not built")
    assert pgscan.pg_scan_c(data) == pgscan.pg_scan(data)
    try:
        expected = myscan.mysql_scan(data, deprecate_eof, cache_metadata)
    except IndexError:  # the Python reference does not bound-check malformed OK packets
        return
    assert myscan.mysql_scan_c(data, deprecate_eof, cache_metadata) == expected


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(sorted(mysql_cases(True))), min_size=1, max_size=1),
    st.booleans(),
    st.integers(min_value=0, max_value=10_000),
)
def test_mysql_split_anywhere(names, deprecate_eof, cut):
    data, expected = mysql_cases(deprecate_eof)[names[0]]
    cut %= len(data)
    for scan in (myscan.mysql_scan, myscan.mysql_scan_c or myscan.mysql_scan):
        assert scan(data[:cut], deprecate_eof) is None
        assert scan(data, deprecate_eof)[0] == len(data)


# --- the fallback parameter packer matches asyncmy's --------------------------------


@pytest.mark.parametrize(
    "args",
    [
        (1,),
        (-5, 2**62, 0),
        ("abc", None, 1.5),
        ("x" * 300, "é" * 70_000),
        (True, False, None, None, 7, "z"),
        (2**64 - 1,),
    ],
)
def test_python_param_packer_matches_asyncmy(args):
    from asyncmy.protocol import pack_binary_params

    from pysysbench.drivers.mysql.wire import _py_pack_params

    assert _py_pack_params(args, "utf8") == pack_binary_params(args, "utf8")


# --- PostgreSQL Bind messages: C and Python build the same bytes -------------------

PG_BIND_ARGS = [
    (),
    (1,),
    (-5, 2**62, 0),
    (2**70, -(2**70)),
    ("abc", None, 1.5),
    (True, False, None),
    ("x" * 300, "é" * 7000, b"\x00\xff", bytearray(b"ab")),
    (3.25, 1e300, float("inf")),
    (-(2**63), 2**63 - 1, -1, 0, 9, 10, -10, 99, 100, 10**18, -(10**18)),  # the C decimal formatter's edges
    tuple(range(-20, 20)) + ("more than the stack keeps", None),
]  # its heap path (> 16)


@pytest.mark.parametrize("args", PG_BIND_ARGS)
def test_pg_bind_c_matches_python(args):
    from pysysbench.drivers.pgsql import wire

    head, tail = b"\x00pysysbench_1\x00\x00\x00", b"E\x00\x00\x00\x09\x00\x00\x00\x00\x00S\x00\x00\x00\x04"
    expected = wire._py_pg_bind(head, args, tail)
    assert expected[:1] == b"B" and int.from_bytes(expected[1:5], "big") == len(expected) - 1 - len(tail)
    assert expected.endswith(tail)
    if myscan.mysql_scan_c is None:
        pytest.skip("C extension not built")
    assert native.pg_bind(head, args, tail) == expected


def test_library_without_the_expected_attribute_falls_back():
    """A driver library that keeps its transport elsewhere (another version) turns the
    fast path off with one warning instead of failing the run: one bare line on stderr,
    also from a worker process, where no CLI prints (a fresh interpreter here)."""
    import subprocess
    import sys

    code = (
        "from pysysbench.drivers.wire import library_changed; "
        "print(library_changed('asyncpg', AttributeError(\"no attribute '_transport'\")))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout == "False\n"
    err = proc.stderr
    assert err.startswith("WARNING: this asyncpg") and "--db-fast-path=off" in err and err.count("\n") == 1


# --- MariaDB's MARIADB_CLIENT_CACHE_METADATA in the handshake -------------------------


def greeting(version: bytes, caps_low: int, ext: int) -> bytes:
    return (
        b"\x0a"
        + version
        + b"\x00"
        + struct.pack("<I", 7)
        + b"12345678"
        + b"\x00"
        + struct.pack("<HBHH", caps_low, 45, 2, 0x81FF)
        + b"\x15"
        + b"\x00" * 6
        + struct.pack("<I", ext)
        + b"123456789012\x00mysql_native_password\x00"
    )


def handshake_response(flags: int) -> bytes:
    return struct.pack("<IIB23s", flags, 1 << 24, 45, b"") + b"sbtest\x00\x00bench\x00"


def test_cache_metadata_asked_only_of_a_mariadb_server_that_offers_it():
    from pysysbench.drivers.mysql.session import MARIADB_CLIENT_CACHE_METADATA, mariadb_ext_caps, with_cache_metadata

    mariadb = greeting(b"5.5.5-10.11.19-MariaDB", 0xF7FE, 0x1D)
    assert mariadb_ext_caps(mariadb) == 0x1D
    assert mariadb_ext_caps(greeting(b"8.0.36", 0xFFFF, 0x1D)) == 0  # CLIENT_MYSQL set: not MariaDB
    assert mariadb_ext_caps(b"\x0a5.5.5") == 0  # cut short

    response = handshake_response(0x013BA20C)
    asked = with_cache_metadata(response, 0x1D)
    assert len(asked) == len(response) and asked[:28] == response[:28] and asked[32:] == response[32:]
    assert struct.unpack_from("<I", asked, 28)[0] == MARIADB_CLIENT_CACHE_METADATA
    assert with_cache_metadata(response, 0x0D) is None  # a MariaDB before 10.6
    assert with_cache_metadata(handshake_response(0x013BA20D), 0x1D) is None  # CLIENT_MYSQL: ignored


def _ok(affected: int, status: int) -> bytes:
    return b"\x00" + bytes((affected, 0)) + status.to_bytes(2, "little") + b"\x00\x00"


def _packets(*payloads: bytes) -> bytes:
    return b"".join(len(p).to_bytes(3, "little") + bytes((i,)) + p for i, p in enumerate(payloads))


def test_mysql_scan_keeps_every_result_of_a_call_for_next_result():
    """A CALL's response: two result sets then the procedure's status (MORE_RESULTS on
    every terminator but the last); the sink keeps the first and, in rest, the others."""
    from pysysbench.drivers.mysql.scan import mysql_scan
    from pysysbench.drivers.wire import TextResult

    col = b"\x03def\x00\x00\x00\x01a\x00\x0c\x21\x00\x01\x00\x00\x00\xfd\x00\x00\x00\x00\x00"
    more = 0x0008 | 0x0002
    buf = _packets(
        b"\x01", col, b"\xfe\x00\x00" + more.to_bytes(2, "little"), b"\x01x",
        b"\xfe\x00\x00" + more.to_bytes(2, "little"),
        b"\x01", col, b"\xfe\x00\x00" + more.to_bytes(2, "little"), b"\x01y", b"\x01z",
        b"\xfe\x00\x00" + more.to_bytes(2, "little"),
        _ok(0, 0x0002),
    )  # fmt: skip
    sink = TextResult()
    got = mysql_scan(buf, False, sink=sink)
    assert got is not None and got[0] == len(buf) and got[1] == 1 and got[3] == 0
    assert (sink.columns, sink.rows) == (1, [("x",)])
    assert sink.rest == [(1, [("y",), ("z",)], 0), (-1, [], 0)]
    binary = TextResult(text=False)
    mysql_scan(buf, False, sink=binary)
    assert binary.rest == [(1, [(), ()], 0), (-1, [], 0)]
    assert mysql_scan(buf[:-3], False, sink=TextResult()) is None  # incomplete: scanned again later
