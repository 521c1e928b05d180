"""--latency-log (issue 20 pt 7): one CSV line per transaction of the measured phase,
sampled by --latency-log-rate, memory bounded by chunked appends; off by default with
the plain recorder on the hot path."""

from __future__ import annotations

import csv
import json

from pysysbench.cli.main import main
from pysysbench.stats import latencylog
from pysysbench.stats.recorder import CRecorder, PyRecorder


def _run(tmp_path, *extra):
    db = f"--sqlite-db={tmp_path / 'sb.db'}"
    assert main(["oltp_point_select", db, "--tables=1", "--table-size=200", "prepare"]) == 0
    result = tmp_path / "r.json"
    assert (
        main(
            [
                "oltp_point_select",
                db,
                "--tables=1",
                "--table-size=200",
                "--threads=2",
                "--events=3000",
                "--time=0",
                f"--result-file={result}",
                *extra,
                "run",
            ]
        )
        == 0
    )
    return json.loads(result.read_text())


def test_every_transaction_is_a_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(latencylog, "CHUNK", 100)  # several chunked appends
    doc = _run(tmp_path, f"--latency-log={tmp_path / 'lat.csv'}")
    rows = list(csv.DictReader((tmp_path / "lat.csv").open()))
    assert len(rows) == doc["summary"]["events"] == 3000
    assert {r["thread"] for r in rows} == {"0", "1"} and all(r["error"] == "" for r in rows)
    lat = sorted(float(r["latency_us"]) for r in rows)
    assert abs(lat[len(lat) // 2] / 1000 - doc["summary"]["latency_ms"]["p50"]) < 0.05 + 0.5 * lat[len(lat) // 2] / 1000
    assert float(rows[0]["time_s"]) > 1.6e9  # Unix time


def test_sampling_keeps_about_the_rate(tmp_path, capsys):
    _run(tmp_path, f"--latency-log={tmp_path / 'lat.csv'}", "--latency-log-rate=0.1")
    n = sum(1 for _ in (tmp_path / "lat.csv").open()) - 1
    assert 150 < n < 450


def test_off_by_default_the_hot_path_keeps_the_plain_recorder(tmp_path):
    from pysysbench.command.cmdline import parse
    from pysysbench.command.library import configure
    from pysysbench.engine.spec import RunSpec
    from pysysbench.engine.worker import Worker

    def spec(*args):
        inv = parse(["oltp_point_select", f"--sqlite-db={tmp_path / 'w.db'}", *args, "run"])
        workload, driver = configure(inv)
        return RunSpec.build(inv.values, workload.source, driver)

    assert isinstance(Worker(spec("--tables=1"), None, None, range(2)).recorder, (PyRecorder, CRecorder))
    assert isinstance(
        Worker(spec(f"--latency-log={tmp_path / 'x.csv'}"), None, None, range(2)).recorder, latencylog.LoggingRecorder
    )


def test_bad_path_is_one_line_before_the_run(tmp_path, capsys):
    assert (
        main(["oltp_point_select", f"--sqlite-db={tmp_path / 'sb.db'}", "--latency-log=/proc/none/x.csv", "run"]) != 0
    )
    assert "latency log '/proc/none/x.csv'" in capsys.readouterr().err + capsys.readouterr().out
