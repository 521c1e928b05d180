"""Report figures a performance engineer relies on (issue 20): the peak summary keeps
"within 5 %" and "within noise" apart and warns with few repeats; unsteady runs,
saturated clients and drift are flagged from the stored data."""

from __future__ import annotations

from pysysbench.report import tables
from pysysbench.report.model import cells, run_of

from test_campaign_compare import doc


def _cells(points, workload="oltp_point_select"):
    runs = [run_of(f"{workload}-{t}-{i}.json", doc(workload=workload, threads=t, repeat=i + 1, tps=v))
            for t, values in points.items() for i, v in enumerate(values)]
    return cells(runs)


def test_within_5_percent_and_within_noise_are_separate_facts():
    # the case: 2 noisy repeats; 5 threads at -22 % is "within noise" but not within 5 %
    cl = _cells({5: [20000, 27000], 10: [30500, 31500], 20: [31500, 32500]})
    (p,) = tables.peaks(cl["oltp_point_select"])
    assert p.threads == 20
    assert p.saturation_threads == 10           # 31,000 is within 5 % of 32,000
    assert p.noise_threads == 5                 # the wide margin swallows -26 %
    row = tables.summary_table(cl).rows[0]
    assert row[-2] == "10 threads (-3.1%)"
    assert row[-1].startswith("5 threads (-26.6%, noise ±")
    headers = tables.summary_table(cl).headers
    assert headers[-2:] == ["within 5% of peak from", "within noise of peak from"]


def test_few_repeats_warn_and_single_runs_say_noise_is_unknown():
    two = _cells({5: [100, 110], 10: [200, 210]})
    notes = tables.summary_notes(two)
    assert len(notes) == 1 and "2 repeats per cell (<= 3)" in notes[0]
    single = _cells({5: [100], 10: [200]})
    (p,) = tables.peaks(single["oltp_point_select"])
    assert p.noise_threads is None and tables.within_noise_text(p) == "unknown (single runs)"
    assert "single run" in tables.summary_notes(single)[0]
    five = _cells({5: [100, 101, 99, 100, 100], 10: [200, 201, 199, 200, 200]})
    assert tables.summary_notes(five) == []
