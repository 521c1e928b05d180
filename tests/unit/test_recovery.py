"""Time to recover from a fault (stats/recovery.py) on synthetic interval series."""

from __future__ import annotations

from pysysbench.stats.recovery import recovery, recovery_text


def series(qps: list[float], codes: dict[int, dict[str, int]] | None = None, every: float = 1.0) -> list[dict]:
    """Intervals of ``every`` s ending at every, 2 * every, ...; ``codes``: interval index -> errors by code."""
    out = []
    for i, q in enumerate(qps):
        iv = {"time_s": (i + 1) * every, "interval_s": every, "qps": q}
        if codes and i in codes:
            iv["errors_by_code"] = codes[i]
        out.append(iv)
    return out


def test_recovered_at_the_start_of_the_first_whole_interval_back_to_90_percent_of_the_median():
    # median before the kill at 3.2 s: of 100, 120, 110 -> 110; 90 % = 99
    ivs = series([100, 120, 110, 40, 0, 50, 98, 99, 120], {3: {"2013": 2}, 4: {"1158": 1, "2013": 1}, 8: {"1213": 5}})
    r = recovery(ivs, 3.2)
    assert r["baseline_qps"] == 110
    # the interval 3-4 s holds the kill (mixed), 6-7 s has 98 < 99, 7-8 s has 99: recovered at 7.0
    assert r["recovered_s"] == 7.0 and r["time_to_recover_s"] == 3.8
    # errors of the intervals overlapping 3.2 .. 7.0, not those of 8-9 s
    assert r["errors_by_code"] == {"1158": 1, "2013": 3}


def test_no_dip_recovers_at_once_and_a_kill_on_an_interval_boundary_counts_the_next_interval():
    r = recovery(series([100, 100, 100, 100]), 2.01)  # the interval 2-3 s began 0.01 s before the kill
    assert r["recovered_s"] == 2.01 and r["time_to_recover_s"] == 0.0


def test_not_recovered_by_the_end_and_no_interval_before_the_kill():
    ivs = series([100, 100, 10, 20, 80], {3: {"12701": 4}})
    r = recovery(ivs, 2.0)
    assert r["recovered_s"] is None and r["time_to_recover_s"] is None
    assert r["errors_by_code"] == {"12701": 4}  # the fault window runs to the end of the run
    early = recovery(series([0, 100]), 0.5)
    assert early["baseline_qps"] is None and early["time_to_recover_s"] is None


def test_the_window_lasts_until_the_node_answers_again():
    """QPS back at once (the other nodes carry it), a session finding its connection to the
    killed node gone 1.5 s later: its error is the fault's while the node is still down."""
    ivs = series([100, 100, 100, 100, 100, 100], {3: {"2013": 1}, 5: {"1213": 1}})
    assert recovery(ivs, 2.05)["errors_by_code"] == {}  # the old window: the kill's interval only
    r = recovery(ivs, 2.05, answered_s=3.6)
    assert r["recovered_s"] == 2.05 and r["time_to_recover_s"] == 0.0
    assert r["errors_by_code"] == {"2013": 1}  # 3-4 s began before 3.6; 5-6 s is after the fault
    assert recovery(ivs, 2.05, answered_s=None)["errors_by_code"] == {}


def test_half_second_intervals():
    ivs = series([50, 50, 50, 50, 0, 0, 46, 50], every=0.5)
    r = recovery(ivs, 2.0)
    assert r["recovered_s"] == 3.0 and r["time_to_recover_s"] == 1.0


def test_the_printed_lines():
    fault = {"node": "data1", "lab": "spider", "killed_s": 2.05, "restarted_s": 3.05, "answered_s": 3.4}
    fault["recovery"] = recovery(series([100, 100, 0, 95, 100], {2: {"1158": 2}}), 2.05)
    first, second = recovery_text(fault)
    assert first == "fault: data1 of lab spider killed at 2.0 s, restarted at 3.0 s, answering again at 3.4 s"
    assert (
        second == "    time to recover: 0.9 s (QPS back to 90% of 100.0 at 3.0 s); errors in the fault window: 1158: 2"
    )
