"""Comparison arithmetic and the noise verdict (``pysysbench compare``), and the
CSV / JSON-lines export, on synthetic result documents."""

from __future__ import annotations

import csv
import io
import json
import math

import pytest

from pysysbench.cli.main import main
from pysysbench.core.errors import UsageError
from pysysbench.report import compare as cmp
from pysysbench.report import export
from pysysbench.report.model import METRICS, load_runs, run_of
from pysysbench.stats import results


def doc(workload="oltp_read_write", threads=8, repeat=1, tps=1000.0, p95=5.0, labels=None, campaign="c"):
    return {
        "format": results.FORMAT,
        "format_version": 1,
        "test": "oltp_read_write",
        "driver": "mysql",
        "server_version": "10.11",
        "started_at": "2024-01-01T00:00:00+00:00",
        "exit_code": 0,
        "error": None,
        "options": {"percentile": 95},
        "command_line": ["oltp_read_write", "run"],
        "labels": labels or {},
        "intervals": [
            {
                "time_s": 1.0,
                "interval_s": 1.0,
                "threads": threads,
                "events": int(tps),
                "tps": tps,
                "qps": tps * 20,
                "reads": 1,
                "writes": 2,
                "others": 3,
                "errors": 0,
                "reconnects": 0,
                "latency_pct_ms": p95,
            }
        ],
        "campaign": {"name": campaign, "workload": workload, "threads": threads, "repeat": repeat},
        "summary": {
            "tps": tps,
            "qps": tps * 20,
            "errors_per_s": 0.0,
            "threads": threads,
            "events": 10,
            "total_time_s": 10.0,
            "queries": {"read": 14, "write": 4, "other": 2},
            "latency_ms": {"p95": p95, "p99": p95 * 2, "avg": p95 / 2},
            "histogram": {},
        },
    }


def group(name, *docs):
    return cmp.Group(name, tuple(run_of(f"{name}-{i}.json", d) for i, d in enumerate(docs)))


def cell(c: cmp.Comparison, workload="oltp_read_write", threads=8) -> cmp.CompareCell:
    return next(x for x in c.rows[workload] if x.threads == threads)


def test_ratio_and_verdict_with_repeats():
    a = group("a", doc(tps=1000), doc(tps=1010, repeat=2), doc(tps=990, repeat=3))
    b = group("b", doc(tps=1100), doc(tps=1110, repeat=2), doc(tps=1090, repeat=3))
    x = cell(cmp.compare([a, b], "tps"))
    assert x.samples[0].mean == 1000 and x.samples[1].mean == 1100
    assert math.isclose(x.diffs[1].ratio, 1.1)
    assert x.verdicts[0] is None and x.verdicts[1] == cmp.Verdict("better", "better")


def test_difference_inside_the_noise_is_same():
    a = group("a", doc(tps=1000), doc(tps=1200, repeat=2), doc(tps=800, repeat=3))
    b = group("b", doc(tps=1100), doc(tps=1300, repeat=2), doc(tps=900, repeat=3))
    x = cell(cmp.compare([a, b], "tps"))
    assert x.verdicts[1].text == "same (within noise)" and x.diffs[1].noise > 0.1


def test_latency_lower_is_better():
    a = group("a", doc(p95=10.0), doc(p95=10.2, repeat=2))
    b = group("b", doc(p95=8.0), doc(p95=8.1, repeat=2))
    x = cell(cmp.compare([a, b], "p95"))
    assert x.diffs[1].ratio < 1 and x.verdicts[1].kind == "better"
    assert METRICS["p95"].higher_is_better is False


@pytest.mark.parametrize(
    "tps_b,text", [(1200, "better? (no repeats)"), (800, "worse? (no repeats)"), (1030, "same? (no repeats)")]
)
def test_single_runs_say_noise_is_unknown(tps_b, text):
    x = cell(cmp.compare([group("a", doc(tps=1000)), group("b", doc(tps=tps_b))], "tps"))
    assert x.verdicts[1].text == text and x.verdicts[1].kind == "unsure" and x.diffs[1].noise is None


def test_min_effect_floor():
    a = group("a", doc(tps=1000.0), doc(tps=1000.1, repeat=2), doc(tps=999.9, repeat=3))
    b = group("b", doc(tps=1005.0), doc(tps=1005.1, repeat=2), doc(tps=1004.9, repeat=3))
    assert cell(cmp.compare([a, b], "tps")).verdicts[1].kind == "same"  # +0.5 % < 1 %
    assert cell(cmp.compare([a, b], "tps", min_effect=0.001)).verdicts[1].kind == "better"


def test_three_groups_and_missing_cells():
    a = group("a", doc(threads=8), doc(threads=16))
    b = group("b", doc(threads=8, tps=500))
    c = group("c", doc(threads=16, tps=2000), doc(workload="oltp_insert", threads=4))
    comp = cmp.compare([a, b, c], "tps")
    assert list(comp.rows) == ["oltp_read_write", "oltp_insert"]
    x16 = cell(comp, threads=16)
    assert x16.samples[1] is None and x16.verdicts[1] is None and x16.verdicts[2].text == "better? (no repeats)"
    ins = cell(comp, "oltp_insert", 4)
    assert ins.samples[0] is None and ins.diffs[2] is None
    data, classes = cmp.table(comp, "oltp_read_write")
    assert data.headers == ["Threads", "a: TPS", "b: TPS", "c: TPS", "b / a", "verdict", "c / a", "verdict"]
    assert data.rows[0][:4] == ["8", "1,000.00", "500.00", "-"]
    assert data.rows[0][4] == "0.500 (-50.0%)" and classes[0][5] == "unsure"


def test_table_shows_spread_and_noise():
    a = group("a", doc(tps=1000), doc(tps=1010, repeat=2), doc(tps=990, repeat=3))
    b = group("b", doc(tps=1100), doc(tps=1110, repeat=2), doc(tps=1090, repeat=3))
    data, _ = cmp.table(cmp.compare([a, b], "tps"), "oltp_read_write")
    assert data.rows[0][1] == "1,000.00 ± 10.00" and data.rows[0][3].startswith("1.100 (+10.0%) (noise ±")


def write_results(tmp_path, name, docs):
    d = tmp_path / name
    d.mkdir()
    for i, x in enumerate(docs):
        results.save(str(d / f"r{i}.json"), x)
    (d / "manifest.json").write_text(json.dumps({"format": "pysysbench-campaign-manifest"}))
    return d


def test_groups_from_directories_are_named_by_their_labels(tmp_path):
    a = write_results(tmp_path, "a", [doc(labels={"template": "default", "v": "1"})])
    b = write_results(tmp_path, "b", [doc(labels={"template": "hp", "v": "1"}, tps=1200)])
    groups = cmp.make_groups([str(a), str(b)])
    assert [g.name for g in groups] == ["template=default", "template=hp"]


def test_groups_by_label_and_by_selector(tmp_path):
    root = write_results(
        tmp_path, "all", [doc(labels={"template": "default"}), doc(labels={"template": "hp"}, tps=900)]
    )
    by = cmp.make_groups([str(root)], by="template")
    assert [g.name for g in by] == ["template=default", "template=hp"]
    sel = cmp.make_groups(["template=hp", "template=default"], pool_dirs=[str(root)])
    assert [len(g.runs) for g in sel] == [1, 1] and sel[0].runs[0].value("tps") == 900
    with pytest.raises(UsageError, match="need at least two groups"):
        cmp.make_groups([str(root)])
    with pytest.raises(UsageError, match="has no label 'nope'"):
        cmp.make_groups([str(root)], by="nope")
    with pytest.raises(UsageError, match="group 'template=x' has no successful run"):
        cmp.make_groups(["template=x", "template=hp"], pool_dirs=[str(root)])


def test_compare_cli_prints_ratios_and_verdicts_and_writes_files(tmp_path, capsys):
    a = write_results(tmp_path, "a", [doc(labels={"v": "1"}, tps=t, repeat=i) for i, t in enumerate((990, 1010))])
    b = write_results(tmp_path, "b", [doc(labels={"v": "2"}, tps=t, repeat=i) for i, t in enumerate((1490, 1510))])
    assert main(["compare", str(a), str(b), f"--output={tmp_path / 'out'}"]) == 0
    out = capsys.readouterr().out
    assert "v=2 / v=1" in out and "1.500 (+50.0%)" in out and "better" in out
    md = (tmp_path / "out" / "compare.md").read_text()
    assert "| 8 | 1,000.00 ± 14.14 | 1,500.00 ± 14.14 | 1.500 (+50.0%)" in md
    assert 'class="num better"' not in md and "better" in (tmp_path / "out" / "compare.html").read_text()


def test_compare_cli_errors(tmp_path, capsys):
    assert main(["compare", str(tmp_path / "nope"), str(tmp_path)]) == 1
    assert "no such result file or directory" in capsys.readouterr().err
    a = write_results(tmp_path, "a", [doc()])
    assert main(["compare", str(a), str(a), "--metric=speed"]) == 1
    assert "unknown metric 'speed'" in capsys.readouterr().err


def _header_columns(out: str) -> list[str]:
    """Each column's header text of the first table rich drew, its folded lines joined."""
    lines = out.splitlines()
    top = next(i for i, line in enumerate(lines) if line.startswith("┏"))
    end = next(i for i, line in enumerate(lines) if line.startswith("┡"))
    cells = [line.split("┃")[1:-1] for line in lines[top + 1 : end]]
    return ["".join(row[i] for row in cells).replace(" ", "") for i in range(len(cells[0]))]


def test_compare_prints_long_group_names_whole(tmp_path, capsys):
    long_a = "mariadb-10.11.6-high-performance-template-2024"
    long_b = "mariadb-10.11.6-high-stability-template-2024"
    a = write_results(tmp_path, "a", [doc(labels={"template": long_a})])
    b = write_results(tmp_path, "b", [doc(labels={"template": long_b}, tps=1200)])
    assert main(["compare", str(a), str(b), "--metric=tps"]) == 0  # on a pipe: 80 columns
    out = capsys.readouterr().out
    assert "…" not in out
    assert _header_columns(out)[1:4] == [
        f"template={long_a}:TPS",
        f"template={long_b}:TPS",
        f"template={long_b}/template={long_a}",
    ]
    assert f"template={long_a}: 1 runs, e.g. {a / 'r0.json'}" in out.splitlines()


def _with_data(d, tables, table_size):
    d["options"] = dict(d["options"], tables=tables, table_size=table_size)
    return d


def test_compare_warns_when_the_sides_ran_other_data_sets_or_thread_counts(tmp_path, capsys):
    a = group("a", _with_data(doc(threads=8), 16, 10000), _with_data(doc(threads=16), 16, 10000))
    b = group("b", _with_data(doc(threads=16), 8, 2000), _with_data(doc(threads=32), 8, 2000))
    notes = cmp.notes([a, b], [cmp.compare([a, b], "tps")])
    assert notes[:3] == [
        "Different set-up (a vs b): table count 16 vs 8: the sides ran on different data sets, so the ratios "
        "measure that as well as the change.",
        "Different set-up (a vs b): table size 10,000 vs 2,000: the sides ran on different data sets, so the "
        "ratios measure that as well as the change.",
        "Different thread counts (a vs b): oltp_read_write ran at 8, 16 vs 16, 32 threads (only 16 compared).",
    ]
    same = group("c", _with_data(doc(threads=8), 16, 10000), _with_data(doc(threads=16), 16, 10000))
    assert not any(n.startswith("Different") for n in cmp.notes([a, same], [cmp.compare([a, same], "tps")]))
    legacy = doc(threads=8)  # a 0.5 script's run: the data set is in --oltp-tables-count / --oltp-table-size
    legacy["options"] = {"oltp-tables-count": 16, "oltp-table-size": 500}
    notes = cmp.notes([a, group("d", legacy)], [])
    assert "table size 10,000 vs 500" in notes[0] and "thread counts" in notes[1] and "(only 8 compared)" in notes[1]
    da = write_results(tmp_path, "da", [_with_data(doc(labels={"v": "1"}), 16, 10000)])
    db = write_results(tmp_path, "db", [_with_data(doc(labels={"v": "2"}), 16, 2000)])
    assert main(["compare", str(da), str(db), "--metric=tps"]) == 0
    assert "Different set-up (v=1 vs v=2): table size 10,000 vs 2,000" in capsys.readouterr().out


# --- export ---------------------------------------------------------------------------------------


def test_export_csv_and_jsonl(tmp_path, capsys):
    d = write_results(tmp_path, "r", [doc(labels={"template": "hp"}), doc(threads=16, tps=2000)])
    runs = load_runs([str(d)])
    text = export.render(runs, "csv")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == 2 and rows[0]["label.template"] == "hp" and rows[1]["label.template"] == ""
    assert rows[1]["threads"] == "16" and float(rows[1]["tps"]) == 2000 and rows[0]["lat_p95_ms"] == "5.0"
    lines = export.render(runs, "jsonl", intervals=True).splitlines()
    first = json.loads(lines[0])
    assert len(lines) == 2 and first["latency_pct_ms"] == 5.0 and first["percentile"] == 95
    assert main(["export", str(d), "--format=jsonl", f"--output={tmp_path / 'x.jsonl'}"]) == 0
    assert len((tmp_path / "x.jsonl").read_text().splitlines()) == 2
    assert "export: 2 rows ->" in capsys.readouterr().out
    assert main(["export", str(d), "--format=csv"]) == 0
    assert capsys.readouterr().out.startswith("file,campaign,workload,test,label.template,threads")
    assert main(["export", str(d), "--format=xml"]) == 1
