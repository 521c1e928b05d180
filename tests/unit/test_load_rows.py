"""The fast prepare's row generation (pysysbench.load.rows / layout / source.ranges):
k equals Rand's k for the same uniform doubles (every distribution), digits are
uniform, records have sysbench's formats, ids are 1..N whatever the split, and
--data-size picks the table size."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from pysysbench.core.errors import ConfigError
from pysysbench.core.rand import DISTRIBUTIONS
from pysysbench.load.layout import BLOCK_ROWS, Layout, RandParams, block_range
from pysysbench.load.placement import count, node_of
from pysysbench.load.rows import RowGenerator, VectorRand, digit_bytes
from pysysbench.load.sizing import derived_options, table_size_for
from pysysbench.load.source import RangeJob, ranges

ROWS = 4000
PG_MODULUS_3 = [2, 0, 1, 0, 2, 0, 1, 0, 2, 1, 2, 2]  # PostgreSQL 15, ids 1..12, MODULUS 3
BOUNDS = [(1, 1), (1, 7), (1, 1000), (1, 1_000_000), (5, 50_000)]


class Recorder:
    """A uniform source for VectorRand that keeps what it handed out."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.calls: list[np.ndarray] = []

    def __call__(self, shape) -> np.ndarray:
        x = self.rng.random(shape)
        self.calls.append(x)
        return x


def scalar_ks(params: RandParams, a: int, b: int, draws_per_row: list[list[float]]) -> list[int]:
    """Rand.default fed row i's draws, row by row."""
    r = params.scalar(0)
    out = []
    for draws in draws_per_row:
        it = iter(draws)
        r._u = lambda it=it: float(next(it))
        out.append(r.default(a, b))
    return out


def per_row_draws(params: RandParams, a: int, b: int, rec: Recorder, n: int) -> list[list[float]]:
    """The doubles each row consumed, in Rand's order, from VectorRand's calls."""
    rows: list[list[float]] = [[] for _ in range(n)]
    t = params.rand_type
    if t in ("uniform", "pareto"):
        for i, u in enumerate(rec.calls[0]):
            rows[i].append(u)
    elif t == "gaussian":
        for i, g in enumerate(rec.calls[0]):
            rows[i].extend(g)
    elif t == "special":
        first = rec.calls[0]
        gauss_rows = np.flatnonzero(first * ((b - a) * params.scalar(0)._res_mult) < (b - a))
        for i, u in enumerate(first):
            rows[i].append(u)
        if gauss_rows.size:
            for i, g in zip(gauss_rows, rec.calls[1]):
                rows[i].extend(g)
    else:  # zipfian: rejected rows draw again in the next call, in row order
        todo = list(range(n))
        for call in rec.calls:
            for i, u in zip(todo, call):
                rows[i].append(u)
            todo = [i for i in todo if _needs_more(params, a, b, rows[i])]
    return rows


def _needs_more(params, a, b, draws) -> bool:
    r = params.scalar(0)
    it = iter(draws)
    r._u = lambda: float(next(it))
    try:
        r.zipfian(a, b)
    except StopIteration:
        return True
    return False


@pytest.mark.parametrize("rand_type", DISTRIBUTIONS)
@pytest.mark.parametrize("a,b", BOUNDS)
def test_vector_k_equals_scalar_k(rand_type, a, b):
    """Same uniform doubles in, same k out: VectorRand is Rand.default over arrays."""
    params = RandParams(rand_type=rand_type)
    rec = Recorder(hash((rand_type, a, b)) & 0xFFFF)
    vec = VectorRand(params, rec).default(a, b, ROWS)
    expected = scalar_ks(params, a, b, per_row_draws(params, a, b, rec, ROWS))
    assert vec.tolist() == expected


@pytest.mark.parametrize("a,b", BOUNDS)
def test_11s_vector_gaussian_is_rands(a, b):
    """sysbench 1.1.0's gaussian (Rand._gaussian_11): ``a`` for every row, no draw, in both."""
    params = RandParams(rand_type="gaussian", release="1.1")
    rec = Recorder(5)
    vec = VectorRand(params, rec).default(a, b, ROWS)
    assert vec.tolist() == scalar_ks(params, a, b, [[] for _ in range(ROWS)]) == [a] * ROWS
    assert rec.calls == []


def test_special_parameters_are_honoured():
    params = RandParams(rand_type="special", spec_iter=3, spec_pct=5.0, spec_res=50.0)
    rec = Recorder(7)
    vec = VectorRand(params, rec).default(1, 10_000, ROWS)
    assert vec.tolist() == scalar_ks(params, 1, 10_000, per_row_draws(params, 1, 10_000, rec, ROWS))


def test_digits_are_uniform_and_unbiased():
    digits = digit_bytes(np.random.PCG64(3), 2_000_000)
    assert set(np.unique(digits).tolist()) <= set(range(48, 58))
    counts = np.bincount(digits - 48, minlength=10)
    expected = len(digits) / 10
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    assert chi2 < 27.9, counts  # chi-square, 9 degrees of freedom, p = 0.001


TSV = re.compile(rb"(\d{7})\t(\d{7})\t(?:\d{11}-){9}\d{11}\t(?:\d{11}-){4}\d{11}\n")
SQL = re.compile(rb"\((\d{7}),(\d{7}),'(?:\d{11}-){9}\d{11}','(?:\d{11}-){4}\d{11}'\),")


@pytest.mark.parametrize("fmt,pattern", [("tsv", TSV), ("sql", SQL)])
def test_record_formats(fmt, pattern):
    size = 1_000_000
    gen = RowGenerator(size, RandParams(), 42, fmt)
    lay = gen.layout
    block = bytes(gen.block(3, 2))
    assert len(block) == BLOCK_ROWS * lay.row_bytes
    ids, ks = [], []
    for at in range(0, len(block), lay.row_bytes):
        m = pattern.fullmatch(block[at : at + lay.row_bytes])
        assert m, block[at : at + lay.row_bytes]
        ids.append(int(m.group(1)))
        ks.append(int(m.group(2)))
    assert ids == list(range(2 * BLOCK_ROWS + 1, 3 * BLOCK_ROWS + 1))
    assert 1 <= min(ks) and max(ks) <= size


def test_last_block_stops_at_table_size_and_width_follows_it():
    gen = RowGenerator(20_000, RandParams(rand_type="uniform"), 1, "tsv")
    assert gen.layout.width == 5 and gen.layout.row_bytes == 2 * 5 + 182
    block = bytes(gen.block(1, 1))
    assert len(block) == (20_000 - BLOCK_ROWS) * gen.layout.row_bytes
    assert block.rsplit(b"\n", 2)[-2].startswith(b"20000\t")


def test_same_seed_same_rows_whatever_the_split():
    """Blocks are seeded by (seed, table, block): any split of the ids gives the same rows."""
    size = 5 * BLOCK_ROWS + 123
    whole = b"".join(bytes(b) for b in RowGenerator(size, RandParams(), 9, "tsv").blocks(2, 1, size))
    for parts in (2, 3, 7):
        gen = RowGenerator(size, RandParams(), 9, "tsv")
        pieces = b"".join(bytes(b) for lo, hi in ranges(size, parts) for b in gen.blocks(2, lo, hi))
        assert pieces == whole
    other_table = b"".join(bytes(b) for b in RowGenerator(size, RandParams(), 9, "tsv").blocks(3, 1, size))
    assert other_table != whole


@pytest.mark.parametrize("placement", ["mod", "pg-hash"])
@pytest.mark.parametrize("shards", [2, 3, 7])
@pytest.mark.parametrize("fmt", ["tsv", "sql"])
def test_a_node_gets_the_records_of_its_ids_from_the_whole_table(shards, fmt, placement):
    """--load-nodes: node i's rows are the whole table's records the placement puts on node i,
    over any range split, and RangeJob counts them."""
    size = 2 * BLOCK_ROWS + 77
    gen = RowGenerator(size, RandParams(), 9, fmt)
    width = gen.layout.row_bytes
    whole = b"".join(bytes(b) for b in gen.blocks(1, 1, size))
    records = [whole[i : i + width] for i in range(0, len(whole), width)]
    where = node_of(np.arange(1, size + 1), shards, placement)
    for shard in range(shards):
        blocks = (gen.blocks(1, lo, hi, shard, shards, placement) for lo, hi in ranges(size, 2))
        mine = b"".join(bytes(b) for part in blocks for b in part)
        assert mine == b"".join(r for r, w in zip(records, where) if w == shard)
        job = RangeJob(1, 1, size, size, RandParams(), 9, fmt, shard, shards, placement)
        assert job.rows == len(mine) // width == int(np.count_nonzero(where == shard)) > 0


@pytest.mark.parametrize("first,last", [(1, 1), (1, 10), (5, 5), (16385, 40000), (3, 2)])
def test_a_node_s_rows_are_counted(first, last):
    for shards in (1, 2, 3, 5):
        for shard in range(shards):
            want = sum(1 for i in range(first, last + 1) if i % shards == shard)
            assert count(first, last, shard, shards, "mod") == want
            ids = np.arange(first, last + 1)
            assert count(first, last, shard, shards, "pg-hash") == int(np.sum(node_of(ids, shards, "pg-hash") == shard))


def test_postgresql_s_placement_of_known_ids():
    """PostgreSQL 15's routing of ids 1..12 into PARTITION BY HASH (id) with MODULUS 3 (read off
    the server: ``SELECT id, tableoid::regclass``); tests/integration/test_load_nodes.py
    compares 20,000 ids against a live server for several moduli."""
    assert node_of(np.arange(1, 13), 3, "pg-hash").tolist() == PG_MODULUS_3


@pytest.mark.parametrize(
    "size,parts", [(1, 4), (BLOCK_ROWS, 3), (BLOCK_ROWS + 1, 3), (10 * BLOCK_ROWS + 5, 4), (100, 1)]
)
def test_ranges_cover_ids_on_block_boundaries(size, parts):
    rs = ranges(size, parts)
    assert len(rs) == min(parts, math.ceil(size / BLOCK_ROWS))
    assert rs[0][0] == 1 and rs[-1][1] == size
    for (_lo, hi), (nlo, _) in zip(rs, rs[1:]):
        assert nlo == hi + 1 and (nlo - 1) % BLOCK_ROWS == 0
    for lo, hi in rs:
        assert list(block_range(lo, hi))


def test_layout_offsets():
    lay = Layout.for_table("tsv", 10_000)
    row = bytearray(lay.template)
    assert row[lay.id_at : lay.id_at + lay.width] == b"00000"
    assert row[lay.k_at : lay.k_at + lay.width] == b"00000"
    assert len(lay.group_at) == 15 and all(row[g : g + 11] == b"#" * 11 for g in lay.group_at)


# --------------------------------------------------------------------------- --data-size


class FakeDriver:
    name = "fake"

    class dialect:
        family = "fake"


@pytest.fixture(autouse=True)
def fake_row_bytes(monkeypatch):
    """The fake family's measured row size: (table, k index)."""
    from pysysbench.load import sizing

    monkeypatch.setitem(sizing.ROW_BYTES, "fake", (200, 40))


def values(**kw):
    from pysysbench.command.cmdline import base_registry
    from pysysbench.core.options import Values
    from pysysbench.workloads.oltp_common import OLTP_OPTIONS

    reg = base_registry()
    reg.extend(OLTP_OPTIONS)
    v = Values(reg)
    for name, value in kw.items():
        v.set(reg.get(name), value)
    return v


def test_data_size_chooses_table_size():
    v = values(data_size=240 * 4 * 1000, tables=4)
    assert table_size_for(v, FakeDriver) == 1000
    v.freeze(derived_options(v, FakeDriver))
    assert v.table_size == 1000  # derived once: run and result files see it
    assert not v.is_set("table_size") and table_size_for(v, FakeDriver) == 1000  # a worker's figure
    v = values(data_size=200 * 1000, tables=1, create_secondary=False)
    assert table_size_for(v, FakeDriver) == 1000  # no k index: 200 bytes a row


def test_data_size_and_table_size_conflict():
    with pytest.raises(ConfigError, match="both given"):
        table_size_for(values(data_size=10**9, table_size=5), FakeDriver)


def test_without_data_size_table_size_is_kept():
    assert table_size_for(values(table_size=1234), FakeDriver) == 1234
