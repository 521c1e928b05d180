"""history/series.py: runs grouped into series, ordered on a label axis, with each metric's values."""

from __future__ import annotations

import pytest

from pysysbench.history import series as hs


def row(
    run_id,
    *,
    workload="oltp_read_only",
    threads=4,
    driver="sqlite",
    started="2026-01-01T00:00:00+00:00",
    labels=None,
    tps=100.0,
    p95=2.0,
    source=None,
    intervals=None,
    percentile=95,
):
    return {
        "id": run_id,
        "source": source or f"/r/run-{run_id}.json",
        "workload": workload,
        "threads": threads,
        "driver": driver,
        "started_at": started,
        "labels": labels or {},
        "tps": tps,
        "qps": None if tps is None else tps * 20,
        "latency_p95_ms": p95,
        "latency_p99_ms": None,
        "errors_per_s": 0.0,
        "intervals": intervals or [],
        "options": {"percentile": percentile},
    }


def iv(tps, pct=2.0, errors=0, secs=1.0):
    return {"tps": tps, "qps": tps * 20, "latency_pct_ms": pct, "errors": errors, "interval_s": secs}


def test_one_series_per_workload_threads_driver():
    rows = [row(1), row(2, threads=8), row(3, driver="mysql"), row(4, workload="oltp_point_select"), row(5)]
    got = hs.build(rows)
    assert [(s.key.workload, s.key.threads, s.key.driver, len(s.runs)) for s in got] == [
        ("oltp_point_select", 4, "sqlite", 1),
        ("oltp_read_only", 4, "mysql", 1),
        ("oltp_read_only", 4, "sqlite", 2),
        ("oltp_read_only", 8, "sqlite", 1),
    ]
    assert got[2].key.name() == "oltp_read_only @ 4 threads (sqlite)"
    assert got[2].key.slug() == "oltp_read_only-t4-sqlite"


def test_version_axis_is_natural_order_and_leaves_out_unlabelled_runs():
    versions = ["v8.10", "v8.9", "v9.0", "v8.9", "v10.1"]
    rows = [row(i, labels={"version": v}, started=f"2026-01-0{i}") for i, v in enumerate(versions, 1)]
    rows.append(row(9))
    (s,) = hs.build(rows, "version")
    assert [r.label for r in s.runs] == ["v8.9", "v8.9", "v8.10", "v9.0", "v10.1"]
    assert [r.id for r in s.runs[:2]] == [2, 4]  # repeats keep their start order
    assert s.left_out == 1


def test_commit_axis_follows_each_commits_first_run_and_date_falls_back_to_the_start_day():
    commits = ["bbb", "aaa", "bbb", "ccc"]
    rows = [row(i, labels={"commit": c}, started=f"2026-01-0{i}") for i, c in enumerate(commits, 1)]
    (s,) = hs.build(rows, "commit")
    assert [r.label for r in s.runs] == ["bbb", "bbb", "aaa", "ccc"]
    rows = [row(1, started="2026-02-03T10:00:00"), row(2, labels={"date": "2026-01-15"}, started="2026-03-01")]
    (s,) = hs.build(rows, "date")
    assert [(r.id, r.label) for r in s.runs] == [(2, "2026-01-15"), (1, "2026-02-03")]
    (s,) = hs.build(rows, "started")
    assert [r.id for r in s.runs] == [1, 2]
    with pytest.raises(ValueError, match="unknown axis"):
        hs.build(rows, "branch")


def test_intervals_are_the_repeated_values_else_the_summary_alone():
    with_iv = row(1, intervals=[iv(90, 1.5, errors=2, secs=2.0), iv(110, 2.5)], tps=100.0, p95=2.2)
    (s,) = hs.build([with_iv, row(2, tps=95.0, p95=None)])
    first, second = s.runs
    assert first.values["tps"] == (90, 110) and first.values["errors"] == (1.0, 0.0)
    assert first.point("tps").values == (90, 110) and first.point("tps").summary is None
    assert first.point("p95").summary == 2.2 and first.point("p95").values == (1.5, 2.5)
    assert first.band("tps") == (90, 110)
    assert second.point("tps").values == (95.0,) and second.band("tps") is None
    assert second.point("p95") is None and s.points("p95") == [first.point("p95")]
    assert first.point("p99") is None  # no p99 summary, and the intervals carry p95
    p99_run = row(3, intervals=[iv(90, 7.0)], percentile=99)
    p99_run["latency_p99_ms"] = 7.5
    (s,) = hs.build([p99_run])
    assert s.runs[0].values["p99"] == (7.0,) and s.runs[0].values["p95"] == ()


def test_runs_of_one_log_are_named_by_their_place_in_it():
    rows = [row(1, source="/logs/a.log"), row(2, source="/logs/a.log"), row(3)]
    (s,) = hs.build(rows)
    assert [r.run for r in s.runs] == ["/logs/a.log#1", "/logs/a.log#2", "/r/run-3.json"]


def test_metric_names():
    assert hs.parse_metrics("tps, P95,tps") == ["tps", "p95"]
    with pytest.raises(ValueError, match="known metrics"):
        hs.parse_metrics("tps,latency")


def test_a_test_without_a_driver_and_a_log_without_a_start_time():
    (s,) = hs.build([row(7, workload="cpu", driver="", started="")])
    assert s.key.name() == "cpu @ 4 threads" and s.key.slug() == "cpu-t4"
    assert s.runs[0].label == "run 7"
