"""Golden test: the Markdown report of stored result files.

The input is ``data/campaign-results/`` (two labelled runs of the tiny SQLite
campaign ``data/report-fixture.toml``: template a with 2 repeats, template b
with 1). The expected text ``data/report-expected.md`` has ``{N}`` where a
measured figure stands (a number with decimals, optionally ``± sd``); everything
else -- headers, columns, thread counts, run counts, peak placement, chart links,
environment, reproduction commands -- must match exactly.  The figures
themselves are checked against the result files separately.
"""

from __future__ import annotations

import re
import statistics
from pathlib import Path

import pytest

from pysysbench.cli.main import main
from pysysbench.report import document, markdown
from pysysbench.report.model import load_runs
from pysysbench.stats import results

DATA = Path(__file__).parent / "data"
RESULTS = DATA / "campaign-results"
NUMBER = r"\d[\d,]*\.\d+(?: ± \d[\d,]*\.\d+)?"


@pytest.fixture(scope="module")
def report():
    return document.build(load_runs([str(RESULTS)]))


def golden_regex(expected: str) -> re.Pattern:
    parts = [re.escape(p) for p in expected.split("{N}")]
    return re.compile(NUMBER.join(parts), re.S)


def test_markdown_matches_golden(report):
    actual = markdown.render(report)
    expected = (DATA / "report-expected.md").read_text()
    if not golden_regex(expected).fullmatch(actual):
        for n, (a, e) in enumerate(zip(actual.splitlines(), expected.splitlines()), 1):
            assert golden_regex(e).fullmatch(a), f"line {n} differs:\n  actual:   {a}\n  expected: {e}"
        assert len(actual.splitlines()) == len(expected.splitlines()), "different number of lines"


def test_table_figures_come_from_the_result_files(report):
    docs = [results.load(str(p)) for p in sorted((RESULTS / "a").glob("rw-t0002-r*.json"))]
    tps = [d["summary"]["tps"] for d in docs]
    p99 = [d["summary"]["latency_ms"]["p99"] for d in docs]
    rw = next(s for s in report.sections if s.workload == "rw")
    row = next(r for r in rw.table.rows if r[:2] == ["a", "2"])
    assert row[2] == f"{statistics.mean(tps):,.2f} ± {statistics.stdev(tps):,.2f}"
    assert row[5] == f"{statistics.mean(p99):,.2f} ± {statistics.stdev(p99):,.2f}"
    assert row[-1] == "2"
    single = results.load(str(RESULTS / "b" / "oltp_point_select-t0001-r1.json"))["summary"]
    ps = next(s for s in report.sections if s.workload == "oltp_point_select")
    assert next(r for r in ps.table.rows if r[:2] == ["b", "1"])[3] == f"{single['qps']:,.2f}"


def test_charts_are_png(report):
    charts = [c for s in report.sections for c in s.charts]
    assert [c.kind for c in charts] == ["scaling", "qps", "timeseries", "percentiles"] * 2
    for c in charts:
        assert c.png.startswith(b"\x89PNG\r\n\x1a\n") and 2_000 < len(c.png) < 100_000


def test_cli_writes_markdown_html_and_charts(tmp_path, capsys):
    out = tmp_path / "rep"
    assert main(["report", str(RESULTS / "a"), str(RESULTS / "b"), f"--output={out}", "--title=Fixture"]) == 0
    assert "8 charts" in capsys.readouterr().out
    md = (out / "report.md").read_text()
    assert md.startswith("# Fixture\n")
    for link in re.findall(r"\]\((charts/[^)]+)\)", md):
        assert (out / link).read_bytes().startswith(b"\x89PNG")
    assert (out / "report.html").stat().st_size > 50_000


def test_report_of_nothing_is_a_clear_error(tmp_path, capsys):
    assert main(["report", str(tmp_path)]) == 1
    assert capsys.readouterr().err.strip() == "no result files found: give result files or directories holding them"
