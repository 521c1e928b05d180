"""Unit tests for sysbench's 1024-bucket logarithmic latency histogram (spec 5.7)."""

from __future__ import annotations

import math
import random

import pytest

from pysysbench.stats.histogram import (
    MAX_MS,
    MIN_MS,
    N_BUCKETS,
    M,
    bucket_index,
    bucket_value_ms,
    diff,
    merge_into,
    new_counts,
    percentile_ms,
)

MS = 1_000_000  # ns per ms


def reference_index(latency_ns: int) -> int:
    """The C formula, written out with floor() and explicit clamps."""
    v_ms = latency_ns / 1e6
    i = math.floor((math.log(v_ms) - math.log(MIN_MS)) * M + 0.5)
    return min(max(i, 0), N_BUCKETS - 1)


def test_constants():
    assert N_BUCKETS == 1024
    assert MIN_MS == 0.001 and MAX_MS == 100000.0
    assert M == pytest.approx(55.5355, abs=1e-4)
    assert M == pytest.approx(1023 / math.log(1e8), rel=1e-15)


def test_bucket_values_span_the_range():
    assert bucket_value_ms(0) == pytest.approx(0.001, rel=1e-12)
    assert bucket_value_ms(1023) == pytest.approx(100000.0, rel=1e-12)
    ratio = bucket_value_ms(1) / bucket_value_ms(0)
    assert ratio == pytest.approx(1.018, abs=1e-3)  # "buckets are ~1.8 % apart"


def test_round_trip_every_bucket():
    # Buckets are >= 18 ns wide even at 0.001 ms, so the integer ns nearest to a
    # bucket's value always maps back to that bucket.
    for i in range(N_BUCKETS):
        assert bucket_index(round(bucket_value_ms(i) * MS)) == i


def test_matches_c_formula_on_random_and_boundary_values():
    rng = random.Random(7)
    samples = [rng.randint(1, 10**12) for _ in range(20000)]
    samples += [int(10 ** rng.uniform(0, 12)) for _ in range(20000)]
    for b in range(1, N_BUCKETS):
        edge_ns = math.exp((b - 0.5) / M + math.log(MIN_MS)) * MS
        samples += range(max(1, int(edge_ns) - 2), int(edge_ns) + 3)
    for ns in samples:
        assert bucket_index(ns) == reference_index(ns), ns


def test_exactly_10_ms_lands_where_c_puts_it():
    # 10 ms is the geometric middle of the range, exactly on a rounding boundary;
    # only the C operation order gives 512 (a folded multiply-add gives 511).
    assert bucket_index(10 * MS) == reference_index(10 * MS) == 512


@pytest.mark.parametrize("ns", [0, -5, 1, 999])
def test_tiny_and_non_positive_values_go_to_bucket_0(ns):
    assert bucket_index(ns) == 0


def test_huge_values_go_to_last_bucket():
    assert bucket_index(100_000 * MS) == 1023
    assert bucket_index(10**15) == 1023
    assert bucket_index(10**30) == 1023


def test_percentile_empty_is_bucket_0():
    h = new_counts()
    assert percentile_ms(h, 95) == bucket_value_ms(0)
    assert "%.2f" % percentile_ms(h, 95) == "0.00"


def test_percentile_target_zero_is_first_bucket():
    # n=1, p=10: target = floor(0.1 + 0.5) = 0, reached before any count: bucket 0.
    h = new_counts()
    h[500] = 1
    assert percentile_ms(h, 10) == bucket_value_ms(0)
    assert percentile_ms(h, 50) == bucket_value_ms(500)


def test_percentile_rule_small_example():
    h = new_counts()
    h[10], h[20], h[30], h[40] = 1, 1, 1, 1
    # n=4: p50 -> target 2 -> bucket 20; p95 -> floor(3.8+0.5)=4 -> bucket 40;
    # p60 -> floor(2.4+0.5)=2 -> bucket 20; p63 -> floor(2.52+0.5)=3 -> bucket 30.
    assert percentile_ms(h, 50) == bucket_value_ms(20)
    assert percentile_ms(h, 95) == bucket_value_ms(40)
    assert percentile_ms(h, 60) == bucket_value_ms(20)
    assert percentile_ms(h, 63) == bucket_value_ms(30)
    assert percentile_ms(h, 100) == bucket_value_ms(40)


def test_percentile_appendix_a4():
    rows = {
        441: 1,
        442: 1,
        443: 3,
        444: 2,
        445: 2,
        446: 2,
        448: 6,
        449: 2,
        450: 1,
        451: 3,
        452: 4,
        453: 2,
        454: 1,
        455: 1,
        456: 2,
        457: 2,
        460: 1,
        465: 1,
        468: 1,
        495: 1,
        498: 1,
    }
    h = new_counts()
    for i, c in rows.items():
        h[i] = c
    assert sum(h) == 40
    assert "%.3f" % bucket_value_ms(468) == "4.569"
    assert "%.2f" % percentile_ms(h, 95) == "4.57"


def test_merge_and_diff():
    a, b = new_counts(), new_counts()
    a[3], a[7] = 2, 5
    b[3], b[1023] = 1, 4
    total = list(a)
    merge_into(total, b)
    assert total[3] == 3 and total[7] == 5 and total[1023] == 4 and sum(total) == 12
    assert diff(total, a) == b
    assert len(new_counts()) == N_BUCKETS and not any(new_counts())
