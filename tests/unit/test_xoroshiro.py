"""xoroshiro128+, one generator per language: core/rand.py's Xoroshiro128Plus and core/rand.c's
xoro_* draw bit for bit the same numbers with both users' constants (XORO_SYSBENCH: sysbench.rand,
--rand-compat; XORO_2018: the built-in tests) and both seedings (sysbench's glibc words, splitmix64);
and the streams are the ones the generators drew before they were one (the golden values), so
that the ids, strings and statements of a seeded run never change."""

from __future__ import annotations

import ctypes
import hashlib

import pytest

from pysysbench.core.rand import XORO_2018, XORO_SYSBENCH, Xoroshiro128Plus
from pysysbench.core.rand_compat import GlibcRandom, thread_state
from pysysbench.runtime import native

DRAWS = 10_000
needs_c = pytest.mark.skipif(native.xoro_draws is None, reason="the C extension is off or not built")


def digest(values: list) -> str:
    text = "\n".join(v.hex() if isinstance(v, float) else str(v) for v in values)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def py_draws(state: tuple[int, int], params, doubles: bool) -> list:
    x = Xoroshiro128Plus(*state, params)
    draw = x.double if doubles else x.next
    return [draw() for _ in range(DRAWS)]


def glibc_state(seed: int) -> tuple[int, int]:
    return thread_state(GlibcRandom(seed))


def splitmix_state(seed: int) -> tuple[int, int]:
    x = Xoroshiro128Plus.from_splitmix64(seed, XORO_2018)
    return x.s0, x.s1


# (state, params, first output, digests of 10,000 outputs and of 10,000 doubles), captured from
# the four generators the code had before (Python and C alike)
GOLDEN = [
    (glibc_state(1), XORO_SYSBENCH, 14972179374201007161, "c719d06e09aa77e7", "5d4e23b99fc03bfa"),
    (glibc_state(42), XORO_SYSBENCH, 6678695823595818893, "d47f9fbb6b280502", "fd4bd0b5152bb99f"),
    (glibc_state(12345), XORO_SYSBENCH, 3182008865668427984, "1d3c48ae07bb8edd", "1a0981efad89d125"),
    ((1, 2), XORO_SYSBENCH, 3, "90046fcdef104460", "01d41996e3046ff0"),
    ((2**64 - 1, 0x0123456789ABCDEF), XORO_SYSBENCH, 81985529216486894, "3254a9cfd134bac9", "5209bd682576ef46"),
    (splitmix_state(0), XORO_2018, 5807750865143411619, "039c59c1cbdecee9", "b69f24e1a29153e3"),
    (splitmix_state(1), XORO_2018, 5761717516557699368, "044d36fa5c6b50c4", "254ce25a23f35a64"),
    (splitmix_state(42 * 1_000_003 + 3), XORO_2018, 2889821238936414336, "adf8207bbfd7d80f", "586d50a6fcc1060b"),
    (splitmix_state(2**64 - 1), XORO_2018, 14878039250348781289, "0073c8cae5423095", "206cb070ecf23de4"),
]


@pytest.mark.parametrize("state, params, first, outputs, doubles", GOLDEN)
def test_python_streams_are_the_golden_ones(state, params, first, outputs, doubles):
    u = py_draws(state, params, False)
    assert u[0] == first
    assert digest(u) == outputs
    assert digest(py_draws(state, params, True)) == doubles


@needs_c
@pytest.mark.parametrize("state, params, first, outputs, doubles", GOLDEN)
def test_c_streams_are_the_golden_ones(state, params, first, outputs, doubles):
    u = native.xoro_draws(*state, params, DRAWS)
    assert u[0] == first
    assert digest(u) == outputs
    assert digest(native.xoro_draws(*state, params, DRAWS, True)) == doubles


SEEDS = [0, 1, 5, 42, 12345, 2**31 - 1, 2**32 - 1, 2**63 + 7, 2**64 - 1]
SEEDINGS = {"glibc": lambda seed: glibc_state(seed & 0xFFFFFFFF), "splitmix64": splitmix_state}


@needs_c
@pytest.mark.parametrize("params", [XORO_SYSBENCH, XORO_2018], ids=["sysbench", "2018"])
@pytest.mark.parametrize("seeding", sorted(SEEDINGS))
def test_the_c_twin_draws_what_the_python_draws(params, seeding):
    for seed in SEEDS:
        state = SEEDINGS[seeding](seed)
        assert native.xoro_draws(*state, params, DRAWS) == py_draws(state, params, False), seed
        assert native.xoro_draws(*state, params, DRAWS, True) == py_draws(state, params, True), seed


@needs_c
def test_the_c_splitmix64_seeds_as_the_python():
    for seed in SEEDS:
        assert native.splitmix64_state(seed) == splitmix_state(seed)


@pytest.mark.skipif(native.FILE is None, reason="the C extension is off or not built")
def test_the_ffi_symbols_lua_calls_draw_sysbenchs_stream():
    """sysbench.lua's pysysbench_rand_u64 / _double (lua/bridge.c), as LuaJIT's FFI calls them."""
    lib = ctypes.CDLL(native.FILE)
    lib.pysysbench_rand_u64.restype = ctypes.c_uint64
    lib.pysysbench_rand_double.restype = ctypes.c_double
    for seed in (1, 42):
        state = glibc_state(seed)
        s = (ctypes.c_uint64 * 2)(*state)
        assert [lib.pysysbench_rand_u64(s) for _ in range(1000)] == py_draws(state, XORO_SYSBENCH, False)[:1000]
        s = (ctypes.c_uint64 * 2)(*state)
        assert [lib.pysysbench_rand_double(s) for _ in range(1000)] == py_draws(state, XORO_SYSBENCH, True)[:1000]


def test_the_parameters_of_the_two_users():
    assert tuple(XORO_SYSBENCH) == (55, 14, 36, 52)
    assert tuple(XORO_2018) == (24, 16, 37, 53)
    x = Xoroshiro128Plus(1, 2)
    assert [x.next() for _ in range(3)] == py_draws((1, 2), XORO_SYSBENCH, False)[:3]  # the default: sysbench's
    assert all(0.0 <= d < 1.0 for d in py_draws(splitmix_state(5), XORO_2018, True))
