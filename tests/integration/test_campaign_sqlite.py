"""Campaigns end to end on SQLite: ``pysysbench campaign run`` in-process (the
same code path as a typed ``pysysbench TEST run``), result files with labels
and campaign identity, peak finding, the report, passwords kept out of every
file, a second invocation that skips everything, and a real Ctrl-C (SIGINT to
a child process) followed by a resume that runs only what is missing.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from pysysbench.cli.main import main
from pysysbench.stats import results

REPO = Path(__file__).resolve().parents[2]
SECRET = "hunter2-not-in-any-file"

CAMPAIGN = f"""
name = "it-sqlite"
[labels]
version = "sqlite-test"
template = "default"
[connection]
db-driver = "sqlite"
sqlite-db = "{{results_dir}}/sbtest.db"
mysql-password = "{SECRET}"
[data]
tables = 2
table-size = 500
[prepare]
threads = 2
[run]
time = 1
[sql]
after-prepare = ["ANALYZE"]
capture = ["SELECT 'sqlite_version', sqlite_version()"]
[[workload]]
test = "oltp_point_select"
threads = [1, 2]
time = 2
[[workload]]
name = "rw"
test = "oltp_read_write"
threads = "auto"
auto = {{ start = 1, max = 2, refine = 0 }}
"""


def write_campaign(tmp_path: Path, text: str = CAMPAIGN) -> str:
    path = tmp_path / "campaign.toml"
    path.write_text(text)
    return str(path)


def manifest(results_dir: Path) -> dict:
    return json.loads((results_dir / "manifest.json").read_text())


def test_campaign_runs_stores_reports_and_resumes(tmp_path, capsys):
    res = tmp_path / "res"
    path = write_campaign(tmp_path)
    assert main(["campaign", "run", path, f"--results-dir={res}", "--progress=plain", "--label", "host=ci"]) == 0
    out = capsys.readouterr().out
    assert "campaign 'it-sqlite' complete: 4 runs executed" in out and "report:" in out
    m = manifest(res)
    assert m["status"] == "complete" and m["labels"] == {"version": "sqlite-test", "template": "default", "host": "ci"}
    assert sorted(m["runs"]) == [
        "oltp_point_select-t0001-r1",
        "oltp_point_select-t0002-r1",
        "rw-t0001-r1",
        "rw-t0002-r1",
    ]
    assert m["peaks"]["rw"]["threads"] in (1, 2) and m["peaks"]["rw"]["metric"] == "tps"
    doc = results.load(str(res / "oltp_point_select-t0002-r1.json"))
    assert doc["exit_code"] == 0 and doc["summary"]["threads"] == 2 and doc["summary"]["tps"] > 0
    assert doc["labels"]["host"] == "ci" and doc["campaign"]["workload"] == "oltp_point_select"
    assert doc["campaign"]["server_settings"]["sqlite_version"] == doc["server_version"].split()[-1]
    assert len(doc["intervals"]) >= 1 and doc["intervals"][0]["time_s"] > 0
    assert "--mysql-password=***" in doc["command_line"]
    assert (res / "logs" / "oltp_point_select-t0002-r1.log").read_text().count("SQL statistics:") == 1
    assert (res / "report" / "report.md").read_text().startswith("# Benchmark report: it-sqlite")
    for f in res.rglob("*"):
        if f.is_file() and f.suffix in (".json", ".log", ".md", ".html"):
            assert SECRET not in f.read_text(), f

    assert (
        main(["campaign", "run", path, f"--results-dir={res}", "--progress=plain", "--label", "host=ci", "--no-report"])
        == 0
    )
    out = capsys.readouterr().out
    assert "0 runs executed, 4 taken from earlier invocations" in out and "already prepared" in out


def test_ctrl_c_then_resume(tmp_path):
    res = tmp_path / "res"
    path = write_campaign(
        tmp_path, CAMPAIGN.replace("threads = [1, 2]", "threads = [1, 2, 3]").replace("time = 1", "time = 2")
    )
    env = dict(os.environ, PYTHONPATH=str(REPO))
    child = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pysysbench",
            "campaign",
            "run",
            path,
            f"--results-dir={res}",
            "--progress=plain",
            "--no-report",
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    first = res / "oltp_point_select-t0001-r1.json"
    deadline = time.monotonic() + 60
    while not first.exists() and child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(1.0)  # into the second run
    child.send_signal(signal.SIGINT)
    out, _ = child.communicate(timeout=60)
    assert child.returncode == 130, out
    assert "rerun the same command to resume" in out
    m = manifest(res)
    assert m["status"] == "interrupted" and m["runs"]["oltp_point_select-t0001-r1"]["status"] == "ok"
    stored = results.load(str(first))["started_at"]

    assert main(["campaign", "run", path, f"--results-dir={res}", "--progress=plain", "--no-report"]) == 0
    m = manifest(res)
    assert m["status"] == "complete"
    assert m["runs"]["oltp_point_select-t0001-r1"]["status"] == "stored"
    assert m["runs"]["oltp_point_select-t0002-r1"]["status"] == "ok"  # interrupted: measured again
    assert results.load(str(first))["started_at"] == stored
    assert results.load(str(res / "oltp_point_select-t0003-r1.json"))["exit_code"] == 0


VARIANTS = """
name = "it-variants"
[connection]
db-driver = "sqlite"
sqlite-db = "{results_dir}/sbtest.db"
[data]
tables = 1
table-size = 300
[prepare]
threads = 1
[run]
time = 1
repeats = 2
[[variant]]
name = "wal"
labels = { journal = "wal" }
connection = { sqlite-journal-mode = "wal" }
[[variant]]
name = "delete"
labels = { journal = "delete" }
connection = { sqlite-journal-mode = "delete" }
[[workload]]
test = "oltp_point_select"
threads = [1]
"""


def test_interleaved_variants_end_to_end_and_paired_compare(tmp_path, capsys):
    """[[variant]]s (issue 20 pt 1): rounds alternate the variants, each run carries its
    variant, and compare --by=variant pairs the rounds and says so."""
    res = tmp_path / "res"
    assert (
        main(
            [
                "campaign",
                "run",
                write_campaign(tmp_path, VARIANTS),
                f"--results-dir={res}",
                "--progress=plain",
                "--no-report",
            ]
        )
        == 0
    )
    manifest = json.loads((res / "manifest.json").read_text())
    order = list(manifest["runs"])
    assert order == [
        "oltp_point_select-wal-t0001-r1",
        "oltp_point_select-delete-t0001-r1",
        "oltp_point_select-wal-t0001-r2",
        "oltp_point_select-delete-t0001-r2",
    ]
    doc = results.load(str(res / "oltp_point_select-delete-t0001-r2.json"))
    assert doc["labels"] == {"journal": "delete", "variant": "delete"}
    assert doc["options"]["sqlite-journal-mode"] == "delete" and doc["campaign"]["repeat"] == 2
    capsys.readouterr()
    assert main(["compare", str(res), "--by=variant", "--metric=tps"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert out.index("variant=wal") < out.index("variant=delete")  # the campaign's order: wal is the baseline
    assert "paired noise" in out and "ran interleaved in one campaign" in out and "1 verdicts made" in out
