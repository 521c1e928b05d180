"""``history check``, ``trend`` and ``dashboard`` end to end, on a real SQLite store (and a
PostgreSQL one) filled from real result files.

pysysbench runs oltp_point_select on SQLite (a real result file, with its real per-second
values); the series is eight copies of it as commits c1-c8, the copies from run 5 on with
every TPS and QPS figure (summary and per-interval) scaled by 0.5: a known step at run 5.
The copies of one run share its noise, so the step's place is certain; its size is large
because the run's own per-second spread is each level's noise floor, and on this shared
machine a loaded second makes that spread 25 % and more (a 0.9 step then stays unproven,
and the gate rightly says 2).  This test covers the plumbing (store -> series -> gate ->
exit code, lines, JSON, pages); tests/unit/test_history_detect.py covers 10 % steps on
measured noise.  No mocks.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import statistics
import sys
from pathlib import Path

import pytest
from conftest import DB_NAME, DB_USER, PG_HOST, PG_PORT, _exclusive, _pg_query, _unreachable
from test_history_store import cli, ok

from pysysbench.history.store import pg_url

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "golden"))
from test_report_html import Chromium, open_page, problems  # noqa: E402

STEP = 0.5
SERIES = "oltp_point_select @ 1 thread (sqlite)"
SLUG = "oltp_point_select-t1-sqlite"


def scaled_copy(src: Path, dst: Path, k: int, factor: float) -> None:
    doc = json.loads(src.read_text())
    for key in ("tps", "qps"):
        doc["summary"][key] *= factor
        for iv in doc["intervals"]:
            iv[key] *= factor
    doc["started_at"] = f"2026-12-{k:02d}T03:00:00+00:00"  # the copies are later runs
    dst.write_text(json.dumps(doc))


def spread(path: Path) -> float:
    """The per-second TPS's coefficient of variation in a result file."""
    tps = [iv["tps"] for iv in json.loads(path.read_text())["intervals"]]
    return statistics.pstdev(tps) / statistics.fmean(tps)


@pytest.fixture(scope="module")
def step_store(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("hcheck")
    db = root / "sb.db"
    common = ("oltp_point_select", f"--sqlite-db={db}", "--table-size=1000", "--tables=1")
    ok(*common, "prepare")
    tried = [root / f"real{i}.json" for i in (1, 2)]
    for path in tried:
        ok(*common, "--time=4", "--report-interval=1", f"--result-file={path}", "run")
    real = min(tried, key=spread)  # the steadier of two: a loaded second widens the noise floor
    folder = root / "series"
    folder.mkdir()
    store = root / "h.sqlite"
    for k in range(1, 9):
        run = folder / f"run{k}.json"
        scaled_copy(real, run, k, STEP if k >= 5 else 1.0)
        ok("history", f"--history-db={store}", "import", str(run), "--label", f"commit=c{k}")
    return {"root": root, "store": store, "real": real}


def check(store: Path, *args: str):
    return cli("history", f"--history-db={store}", "check", "--by=commit", *args)


def test_check_names_the_first_run_of_the_step(step_store):
    proc = check(step_store["store"])
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    (line,) = [x for x in lines if x.startswith("regression:")]
    assert line.startswith(f"regression: {SERIES}: tps -50.0% [")
    assert f"from {step_store['root'] / 'series' / 'run5.json'} (c5) on" in line
    assert lines[-1] == (
        "history check: 1 series x 2 metric(s) (tps, p95): 1 regression(s), 0 not enough data, 1 ok; exit 1"
    )
    doc = json.loads(check(step_store["store"], "--output-format=json").stdout)
    assert doc["code"] == 1 and doc["by"] == "commit"
    tps = next(v for v in doc["verdicts"] if v["metric"] == "tps")
    assert tps["code"] == 1 and tps["runs"] == 8 and tps["threads"] == 1 and tps["driver"] == "sqlite"
    (finding,) = tps["findings"]
    assert finding["index"] == 4 and finding["after_run"].endswith("run5.json") and finding["kind"] == "regression"
    assert finding["effect"] == pytest.approx(-0.5) and finding["low"] < finding["effect"] < finding["high"] < 0


def test_check_against_a_baseline(step_store):
    same_level = check(step_store["store"], "--against=last-3", "--metric=tps")
    assert same_level.returncode == 0, same_level.stdout
    assert same_level.stdout.splitlines() == [
        "history check: 1 series x 1 metric(s) (tps): 0 regression(s), 0 not enough data, 1 ok; exit 0"
    ]
    short = check(step_store["store"], "--against=c1", "--metric=tps")
    assert short.returncode == 2 and "1 baseline run(s) for --against=c1; at least 3 are needed" in short.stdout
    bad = check(step_store["store"], "--against=last-0")
    assert bad.returncode == 1 and bad.stdout == "" and bad.stderr.strip().endswith("N must be 1 or more")


def test_check_without_enough_data_is_2_never_0(step_store, tmp_path):
    empty = cli("history", f"--history-db={tmp_path / 'empty.sqlite'}", "check")
    assert empty.returncode == 2
    assert empty.stdout.splitlines() == [
        f"history check: no runs match; nothing to decide (store: {tmp_path / 'empty.sqlite'}); exit 2"
    ]
    young = tmp_path / "young.sqlite"
    ok("history", f"--history-db={young}", "import", str(step_store["real"]))
    for extra in ((), ("--allow-short",)):  # nothing decided: --allow-short does not make it 0
        proc = cli("history", f"--history-db={young}", "check", *extra)
        assert proc.returncode == 2, proc.stdout
        assert f"not enough data: {SERIES}: tps: 1 run(s); at least 6 are needed (3 per level)" in proc.stdout
    none_match = check(step_store["store"], "--threads=64")
    assert none_match.returncode == 2 and len(none_match.stdout.splitlines()) == 1


def test_trend_and_dashboard_pages(step_store, tmp_path):
    store = step_store["store"]
    out = tmp_path / "trend"
    proc = cli("history", f"--history-db={store}", "trend", "--by=commit", f"--output={out}")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"history trend: 1 series, 12 files written to {out}"
    page = (out / "oltp_point_select-t1-sqlite.html").read_text()
    assert f"<h1>{SERIES}</h1>" in page
    assert "change point at run 5: regression: tps -50.0%" in page and "run5.json (c5)" in page
    assert (out / "oltp_point_select-t1-sqlite-tps.png").read_bytes().startswith(b"\x89PNG")
    runs = sorted(out.glob("runs/*.json"))
    assert len(runs) == 8 and all(f'href="runs/{p.name}"' in page for p in runs)
    assert json.loads(runs[0].read_text())["document"]["test"] == "oltp_point_select"
    dash = tmp_path / "dash"
    ok("history", f"--history-db={store}", "dashboard", "--by=commit", f"--output={dash}")
    index = (dash / "index.html").read_text()
    assert SERIES in index and "regression</span> tps -50.0%" in index and "from run5.json (c5) on" in index
    assert "ok</span> p95: no regression beyond noise over 8 runs" in index


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        pytest.skip("headless Chromium is not installed")
    b = Chromium(binary, tmp_path_factory.mktemp("chromium-profile"))
    yield b
    b.close()


def test_pages_open_cleanly_in_chromium(step_store, browser, tmp_path):
    dash = tmp_path / "dash"
    ok("history", f"--history-db={step_store['store']}", "dashboard", "--by=commit", f"--output={dash}")
    for name, charts in (("index.html", 1), ("oltp_point_select-t1-sqlite.html", 2)):
        facts, events = open_page(browser, dash / name, tmp_path / f"{name}.png")
        assert problems(events) == []
        assert facts["scripts"] == 0 and len(facts["images"]) == charts
        assert all(i["ok"] and i["w"] >= 300 and i["shown"] > 200 for i in facts["images"]), facts
    assert facts["title"] == f"History: {SERIES}" and facts["headings"] == [
        "throughput (transactions/s)",
        "95% latency (ms)",
    ]


@pytest.fixture
def pg_store():
    """A private schema of the machine's PostgreSQL (database sbtest), dropped afterwards."""
    reason = _unreachable("pgsql", PG_PORT)
    if reason:
        pytest.fail(reason)
    schema = f"pysysbench_hcheck_{os.getpid()}"
    with _exclusive():
        try:
            yield pg_url(user=DB_USER, host=PG_HOST, port=PG_PORT, database=DB_NAME, schema=schema)
        finally:
            asyncio.run(_pg_query(f"DROP SCHEMA IF EXISTS {schema} CASCADE", user=DB_USER))


@pytest.mark.pgsql
def test_check_on_a_postgresql_store(step_store, pg_store, tmp_path):
    """The same series in a private schema of the machine's PostgreSQL, ordered by start."""
    url = pg_store
    ok("history", f"--history-db={url}", "import", str(step_store["root"] / "series"))
    proc = cli("history", f"--history-db={url}", "check", "--metric=tps")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stdout.startswith(f"regression: {SERIES}: tps -50.0% [")
    assert f"from {step_store['root'] / 'series' / 'run5.json'} (2026-12-05T03:00:00+00:00) on" in proc.stdout
    ok("history", f"--history-db={url}", "trend", "--metric=tps", f"--output={tmp_path / 'pg'}")
    assert "change point at run 5: regression: tps -50.0%" in (tmp_path / "pg" / f"{SLUG}.html").read_text()
