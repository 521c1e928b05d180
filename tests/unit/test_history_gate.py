"""history/gate.py: every series' decision folded into one exit code, the worst winning."""

from __future__ import annotations

import pytest

from pysysbench.history import gate as hg
from pysysbench.history import series as hs


def rows(workload, tps_values, threads=4):
    return [
        {
            "id": hash((workload, threads, i)) % 10**9,
            "source": f"/r/{workload}-{i + 1}.json",
            "workload": workload,
            "threads": threads,
            "driver": "sqlite",
            "started_at": f"2026-01-{i + 1:02d}",
            "labels": {},
            "tps": tps,
            "qps": None,
            "latency_p95_ms": None,
            "latency_p99_ms": None,
            "errors_per_s": None,
            "intervals": [{"tps": tps * f, "interval_s": 1.0} for f in (0.99, 1.0, 1.01)],
            "options": {},
        }
        for i, tps in enumerate(tps_values)
    ]


STEADY = [100, 101, 99, 100, 102, 98, 100, 101]
DROP = [100, 101, 99, 100, 80, 81, 79, 80]
SHORT = [100, 101]


def code(*parts, allow_short=False, against=None):
    found = hs.build([r for p in parts for r in p])
    return hg.gate(found, ["tps"], against=against, allow_short=allow_short)


def test_the_worst_code_wins():
    assert code(rows("a", STEADY)).code == 0
    result = code(rows("a", STEADY), rows("b", DROP), rows("c", SHORT))
    assert result.code == 1 and (result.count(0), result.count(1), result.count(2)) == (1, 1, 1)
    assert code(rows("a", STEADY), rows("c", SHORT)).code == 2
    assert code(rows("a", STEADY), rows("c", SHORT), allow_short=True).code == 0
    assert code(rows("c", SHORT), allow_short=True).code == 2  # nothing decided is never 0
    assert code().code == 2 and code().note


def test_lines_name_the_series_the_effect_and_the_first_changed_run():
    result = code(rows("a", STEADY), rows("b", DROP), rows("c", SHORT))
    lines = hg.lines(result, "/s.sqlite")
    assert lines[0].startswith("regression: b @ 4 threads (sqlite): tps -20.0% [")
    assert "from /r/b-5.json (2026-01-05) on; 4 run(s) against 4 before" in lines[0]
    assert lines[1] == "not enough data: c @ 4 threads (sqlite): tps: 2 run(s); at least 6 are needed (3 per level)"
    assert lines[2].endswith("1 regression(s), 1 not enough data, 1 ok; exit 1")
    doc = hg.as_json(result, "/s.sqlite", "started")
    assert [v["workload"] for v in doc["verdicts"]] == ["a", "b", "c"] and doc["code"] == 1


def test_against():
    assert code(rows("a", DROP), against="last-3").code == 0
    assert code(rows("a", DROP), against="2026-01-01").code == 2  # one baseline run
    assert "no run is labelled" in code(rows("a", DROP), against="v9").verdicts[0].decision.reason
    with pytest.raises(ValueError, match="N must be 1 or more"):
        code(rows("a", DROP), against="last-0")


def test_runs_without_the_metric_are_said_to_be_left_out():
    failed = rows("a", [100, 101])
    failed[1]["tps"], failed[1]["intervals"] = None, []
    (v,) = code(failed).verdicts
    assert (
        v.decision.reason
        == "tps: 1 run(s); at least 6 are needed (3 per level) (1 run(s) without a value of tps left out)"
    )
