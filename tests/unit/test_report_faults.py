"""A run with a lab fault (--fault) in the report: its figures in a table, its marks on the
timeline chart; a run without one adds neither."""

from __future__ import annotations

import pytest
from test_campaign_compare import doc

from pysysbench.report.document import build
from pysysbench.report.faults import fault_table, mark
from pysysbench.report.model import cells, run_of
from pysysbench.stats.results import loads

FAULT = {
    "node": "data1",
    "lab": "spider",
    "dir": "/tmp/lab",
    "at_s": 2.0,
    "down_s": 1.0,
    "killed_s": 2.0,
    "restarted_s": 3.0,
    "answered_s": 3.4,
    "error": None,
    "recovery": {
        "baseline_qps": 1200.0,
        "recovered_share": 0.9,
        "recovered_s": 4.0,
        "time_to_recover_s": 2.0,
        "errors_by_code": {"1158": 2, "12701": 1},
    },
}


def test_the_fault_table_and_none_without_a_fault():
    plain = run_of("a.json", doc(threads=2))
    faulty = run_of("b.json", {**doc(threads=4), "fault": FAULT})
    cl = cells([plain, faulty])["oltp_read_write"]
    t = fault_table(cl)
    assert t is not None and len(t.rows) == 1
    assert t.rows[0] == [
        "4",
        "r1",
        "data1 (spider)",
        "2.0 s",
        "3.0 s",
        "3.4 s",
        "1,200.0",
        "2.0 s",
        "1158: 2, 12701: 1",
    ]
    assert fault_table(cells([plain])["oltp_read_write"]) is None
    report = build([plain, faulty], with_charts=False)
    assert report.sections[0].faults == t
    not_back = {**FAULT, "recovery": {**FAULT["recovery"], "recovered_s": None, "time_to_recover_s": None}}
    row = fault_table(cells([run_of("c.json", {**doc(), "fault": not_back})])["oltp_read_write"]).rows[0]
    assert row[7] == "not recovered"


def test_a_result_file_with_a_fault_reads_and_a_damaged_one_is_named():
    import json

    loads(json.dumps({**doc(), "fault": FAULT}), "x.json")
    with pytest.raises(Exception, match="fault.killed_s"):
        loads(json.dumps({**doc(), "fault": {**FAULT, "killed_s": "soon"}}), "x.json")


def test_the_timeline_marks():
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    fig = Figure()
    top, bottom = fig.subplots(2, 1)
    mark(top, bottom, {**doc(), "fault": FAULT}, "blue")
    assert [round(line.get_xdata()[0], 1) for line in top.lines] == [2.0, 4.0]  # the kill, the recovery
    assert len(top.patches) == 1 and [t.get_text() for t in top.texts] == ["kill data1", "recovered (+2.0 s)"]
    empty = Figure().subplots(2, 1)
    mark(empty[0], empty[1], doc(), "blue")
    assert not empty[0].lines and not empty[0].patches
