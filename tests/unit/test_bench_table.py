"""bench/compare_sysbench.py's table row: the per-round ratios and their median.

The ratio column divides the two tools' median QPS; the rounds' own ratios (each a pair
of back-to-back runs) can tell another story, and the row must show it.
"""

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "compare_sysbench.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("compare_sysbench_under_test", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module      # its dataclasses look their module up there
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop(spec.name, None)


def measures(bench, qps):
    return [bench.Measure(qps=q, queries=int(q * 10), cpu_s=q * 10 * 20e-6, rss_mb=10.0) for q in qps]


def cells(row):
    return [c.strip() for c in row.strip().strip("|").split("|")]


def test_the_row_shows_the_median_of_the_rounds_where_the_ratio_of_medians_passes(bench):
    # sysbench's median round is a slow one (60), pysysbench's a fast one (90): 1.50 by the
    # ratio column, while four of five rounds ran pysysbench slower than the sysbench run beside it
    sb = measures(bench, [100, 100, 60, 60, 60])
    py = measures(bench, [90, 90, 55, 55, 100])
    row = cells(bench.case_row("point_select 8 thr mysql", 10_000, sb, py))
    assert row[4] == "1.50"
    assert row[-1] == "0.90, 0.90, 0.92, 0.92, 1.67 (median 0.92)"


def test_one_round_has_no_median(bench):
    row = cells(bench.case_row("point_select 8 thr mysql", 10_000, measures(bench, [100]), measures(bench, [80])))
    assert row[4] == "0.80"
    assert row[-1] == "0.80"
