"""--rand-compat=sysbench: glibc random(), xoroshiro128+, seeding and the spec's
test vectors (spec 4.3, 4.7), bit for bit."""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util

import pytest

from pysysbench.command.cmdline import parse
from pysysbench.core.options import Registry, Values
from pysysbench.core.rand import C_TEMPLATE, PAD_TEMPLATE, Rand, Unique, Xoroshiro128Plus
from pysysbench.core.rand_compat import CompatStreams, GlibcRandom, compat_streams, compat_warnings, thread_state
from pysysbench.drivers.base import Counters, substitute


def stream(seed: int, **kwargs) -> tuple[Rand, Xoroshiro128Plus]:
    """A worker's Rand fed by sysbench's stream after srandom(seed)."""
    src = Xoroshiro128Plus(*thread_state(GlibcRandom(seed)))
    rand = Rand(0, **kwargs)
    rand._u = src.double
    return rand, src


# --- glibc random() ------------------------------------------------------------------


def test_glibc_seed_1_vector():
    g = GlibcRandom(1)
    assert [g.random() for _ in range(6)] == [1804289383, 846930886, 1681692777, 1714636915, 1957747793, 424238335]


def test_glibc_seed_0_is_seed_1():
    a, b = GlibcRandom(0), GlibcRandom(1)
    assert [a.random() for _ in range(50)] == [b.random() for _ in range(50)]


_LIBC = ctypes.util.find_library("c")


@pytest.mark.skipif(_LIBC is None or "libc.so.6" not in (_LIBC or ""), reason="needs glibc")
@pytest.mark.parametrize("seed", [1, 2, 42, 7, 12345, 2**31 - 1, 2**31, 2**31 + 5, 2**32 - 1, 987654321])
def test_glibc_matches_the_c_library(seed):
    libc = ctypes.CDLL(_LIBC)
    libc.srandom(ctypes.c_uint(seed))
    expected = [libc.random() for _ in range(1000)]
    g = GlibcRandom(seed)
    assert [g.random() for _ in range(1000)] == expected


# --- the spec 4.7 vectors ---------------------------------------------------------------


def test_seed5_histogram_draw_between_events():
    rand, src = stream(5)
    first = rand.uniform(1, 1000000)
    src.skip()  # the histogram shard draw after event 1
    assert (first, rand.uniform(1, 1000000)) == (633751, 420787)


def test_seed7_two_events_percentile_0():
    rand, _ = stream(7)
    events = []
    for _ in range(2):
        events.append(
            (
                [rand.special(1, 10000) for _ in range(3)],
                [rand.gaussian(1, 10000) for _ in range(3)],
                [rand.pareto(1, 10000) for _ in range(3)],
                rand.string("##-@@-x"),
                repr(rand.uniform_double()),
            )
        )
    assert events == [
        ([5005, 5016, 4991], [4833, 5063, 5328], [2571, 1, 7965], "18-lp-x", "0.313602690797135"),
        ([5022, 5046, 5346], [3459, 5151, 4020], [204, 1, 1], "98-el-x", "0.12057904457374691"),
    ]
    # the spec prints %.17g: 0.31360269079713499 is the same double
    assert float("0.31360269079713499") == 0.313602690797135


def test_upstream_startup_stream_and_unique():
    libc = GlibcRandom(1)  # upstream: nothing calls random() before sysbench
    main_state = thread_state(libc)
    r5, r6 = libc.random(), libc.random()  # right-to-left argument evaluation: r6 seeds the index
    unique = Unique(r6, r5)
    assert [unique.next() for _ in range(4)] == [2672933100, 2916245674, 2834291422, 4086920756]
    rand = Rand(0)
    rand._u = Xoroshiro128Plus(*main_state).double
    assert rand.uniform(1, 1000000) == 811644
    assert rand.string("###########-###") == "38686419122-877"


def test_upstream_prepare_rows():
    libc = GlibcRandom(1)
    rand = Rand(0)
    rand._u = Xoroshiro128Plus(*thread_state(libc)).double
    rows = []
    for _ in range(2):  # oltp_common draws c, pad, then k
        c, pad = rand.string(C_TEMPLATE), rand.string(PAD_TEMPLATE)
        rows.append((rand.special(1, 3), c, pad))
    assert rows[0][0] == 2 and rows[0][1].startswith("83868641912-28773972837-60736120486-")
    assert rows[0][2].startswith("67847967377-48000963322-")
    assert rows[1][0] == 2 and rows[1][1].startswith("38014276128-") and rows[1][2].startswith("23183251411-")


class _Recorder:
    """A connection that records the literal SQL of --db-ps-mode=disable."""

    def __init__(self):
        self.sql: list[str] = []

    async def prepare(self, sql):
        parts = sql.split("?")

        async def stmt(*args):
            self.sql.append(substitute(parts, args))

        return stmt


def test_oltp_read_write_seed42_first_statements():
    """Spec 4.7: --tables=2 --table_size=1000 --rand-seed=42, first two events."""
    from pysysbench.workloads.base import ThreadContext
    from pysysbench.workloads.oltp import OltpReadWrite

    inv = parse(
        [
            "oltp_read_write",
            "--tables=2",
            "--table-size=1000",
            "--rand-seed=42",
            "--rand-compat=sysbench",
            "--db-ps-mode=disable",
            "run",
        ]
    )

    class _Driver:
        name = "dry"
        caps = type("Caps", (), {"auto_inc_insert_omits_id": False})()

    workload = OltpReadWrite(inv.values, _Driver())
    conn = _Recorder()
    ctx = ThreadContext(
        tid=0, threads=1, conn=conn, rand=Rand(0), counters=Counters(), values=inv.values, driver=_Driver()
    )
    compat_streams(inv.values, 1).attach(ctx)

    async def two_events():
        await workload.thread_init(ctx)
        for _ in range(2):
            await workload.event(ctx)
            ctx.after_event()

    asyncio.run(two_events())
    assert len(conn.sql) == 40
    assert conn.sql[:4] == [
        "BEGIN",
        "SELECT c FROM sbtest1 WHERE id=503",
        "SELECT c FROM sbtest1 WHERE id=503",
        "SELECT c FROM sbtest1 WHERE id=502",
    ]
    assert conn.sql[19] == "COMMIT" and conn.sql[20] == "BEGIN"


# --- seeding and options ------------------------------------------------------------------


def _values(*args: str) -> Values:
    return parse(["oltp_read_write", *args, "run"]).values


def test_off_by_default():
    assert compat_streams(_values(), 1) is None


def test_threads_take_four_calls_each_in_order():
    v = _values("--rand-compat=sysbench", "--rand-seed=9", "--threads=3")
    streams = compat_streams(v, 3)
    libc = GlibcRandom(9)
    assert streams.states == [thread_state(libc) for _ in range(3)]


def test_background_threads_seed_first():
    v = _values("--rand-compat=sysbench", "--rand-seed=9", "--report-interval=1")
    libc = GlibcRandom(9)
    thread_state(libc)  # the reporter thread
    assert compat_streams(v, 1).states == [thread_state(libc)]


def test_histogram_draw_only_with_percentile():
    class Ctx:
        tid = 0
        rand = Rand(0)
        after_event = None

    on = CompatStreams(3, 1, 0, histogram_draw=True)
    ctx = Ctx()
    on.attach(ctx)
    assert ctx.after_event is not None
    off = compat_streams(_values("--rand-compat=sysbench", "--rand-seed=3", "--percentile=0"), 1)
    ctx2 = Ctx()
    ctx2.rand = Rand(0)
    off.attach(ctx2)
    assert ctx2.after_event is None


def test_warnings():
    assert compat_warnings(_values("--rand-compat=sysbench", "--rand-seed=1")) == []
    w = compat_warnings(_values("--rand-compat=sysbench", "--rand-seed=1", "--threads=2"))
    assert len(w) == 1 and "--threads=1" in w[0]
    w = compat_warnings(_values("--rand-compat=sysbench"))
    assert len(w) == 1 and "--rand-seed" in w[0]
    inv = parse(["oltp_read_write", "--rand-compat=sysbench", "--threads=4", "run"])
    assert sum(line.startswith("WARNING: --rand-compat") for line in inv.warnings) == 2


def test_bad_choice_is_rejected():
    from pysysbench.core.errors import InvalidOption

    with pytest.raises(InvalidOption, match="rand-compat"):
        parse(["oltp_read_write", "--rand-compat=lua", "run"])


def test_registry_lists_the_option():
    assert any(o.name == "rand-compat" for o in Registry(parse([]).values.registry))
