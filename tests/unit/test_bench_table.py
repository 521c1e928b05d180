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
    sys.modules[spec.name] = module  # its dataclasses look their module up there
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


def test_the_server_cell_shows_each_tools_own_server_cost(bench):
    # the server spent 40 us per query under sysbench and 75 under pysysbench: the limit comes
    # from the median over both, and the cell names each tool's own beside it
    sb = [bench.Measure(qps=30_000, queries=300_000, cpu_s=5.0, rss_mb=300.0, server_cpu_s=12.0) for _ in range(3)]
    py = [bench.Measure(qps=24_000, queries=240_000, cpu_s=3.6, rss_mb=110.0, server_cpu_s=18.0) for _ in range(3)]
    row = cells(bench.case_row("point_select 1000 thr pgsql", 100_000, sb, py))
    assert row[10] == "57.5 (40.0 / 75.0)"


def test_no_server_on_this_host_shows_no_server_cost(bench):
    row = cells(bench.case_row("point_select 8 thr mysql", 10_000, measures(bench, [100]), measures(bench, [80])))
    assert row[10] == "n/a" and row[11] == "n/a"


def cpu_measures(bench, us_per_query):
    return [bench.Measure(qps=100.0, queries=1000, cpu_s=us * 1000 * 1e-6, rss_mb=10.0) for us in us_per_query]


def must_cells(bench, name, threads, py_qps):
    """The must row of ``name`` with sysbench at 100 QPS in every round."""
    return cells(bench.must_row(name, threads, measures(bench, [100] * len(py_qps)), measures(bench, py_qps)))


def test_the_must_table_says_holds_only_when_the_whole_interval_clears_the_bound(bench):
    row = must_cells(bench, "point_select 8 thr mysql", 8, [120, 121, 119, 122, 118])
    assert row[0] == "point_select 8 thr mysql"
    assert row[1] == "holds: 1.20 (1.18 to 1.22); 5 of 5 rounds >= 1.0"
    # the same 20 us per query on both sides: no spread, the ratio is the bound, and <= holds
    assert row[2] == "holds: 1.00 (1.00 to 1.00); 5 of 5 rounds <= 1.0"


def test_rounds_on_both_sides_of_the_bound_are_within_noise(bench):
    # differences -10, +30, -15, +20, 0: mean +5, 95 % margin 24.0 (t = 2.776 at 4 df)
    row = must_cells(bench, "read_only 8 thr pgsql", 8, [90, 130, 85, 120, 100])
    assert row[1] == "within noise: 1.05 (0.81 to 1.29); 3 of 5 rounds >= 1.0"


def test_a_1000_thread_case_is_held_to_its_own_bound_and_has_no_cpu_bound(bench):
    row = must_cells(bench, "point_select 1000 thr pgsql", 1000, [100, 101, 99, 100, 100])
    assert row[1] == "misses: 1.00 (0.99 to 1.01); 0 of 5 rounds >= 1.1"
    assert row[2] == ""


def test_more_client_cpu_than_sysbench_misses_the_cpu_bound(bench):
    sb = cpu_measures(bench, [10, 10, 10, 10])
    py = cpu_measures(bench, [12, 12.5, 11.5, 12])
    row = cells(bench.must_row("point_select 8 thr mysql", 8, sb, py))
    assert row[2].startswith("misses: 1.20 (") and row[2].endswith("); 0 of 4 rounds <= 1.0")


def test_one_round_gives_no_verdict_and_other_thread_counts_no_row(bench):
    row = must_cells(bench, "point_select 8 thr mysql", 8, [80])
    assert row[1] == "0.80: one round, noise unknown; 0 of 1 rounds >= 1.0"
    assert bench.must_row("point_select 64 thr mysql", 64, measures(bench, [100]), measures(bench, [80])) is None
