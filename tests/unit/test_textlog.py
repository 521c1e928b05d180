"""stats/textlog.py: sysbench's text output (0.5, 1.0.20, 1.1) read back into runs.

The fixtures under tests/data/textlog are real outputs: sysbench 1.0.20 and 1.1.0 against
MariaDB (oltp_read_write, oltp_point_select in a shell loop, cpu) and pysysbench's own (with
the result file the same run wrote); the 0.5 log is built by hand from the documented format
(spec 7.3), and the garbage, multi-run and truncated logs are cut from the real ones."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import pytest

from pysysbench.core.errors import UsageError
from pysysbench.stats import results, textlog

DATA = Path(__file__).resolve().parents[1] / "data" / "textlog"
SHARED = Path("/work/shared/conformance")


def _runs(name: str) -> list[textlog.TextRun]:
    return textlog.parse_file(str(DATA / name))


def _loads_as_result_file(tmp_path: Path, run: textlog.TextRun) -> dict:
    """The run's document, written and read back through the result file's own reader."""
    path = tmp_path / f"run{run.line}.json"
    results.save(str(path), run.to_result_doc())
    return results.load(str(path))


def test_real_sysbench_1_0_20(tmp_path):
    (run,) = _runs("sysbench-1.0.20-oltp_read_write.txt")
    assert (run.format, run.tool, run.version) == ("1.0", "sysbench", "1.0.20")
    assert run.version_line == "sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)"
    assert "secretpw" not in repr(run) and "--mysql-password=***" in run.command_line
    assert (run.test, run.command, run.threads, run.complete) == ("oltp_read_write", "run", 2, True)
    assert run.options["mysql-password"] == "***" and run.options["time"] == "3"
    assert [iv.time_s for iv in run.intervals] == [1.0, 2.0, 3.0]
    first = run.intervals[0]
    assert (first.threads, first.tps, first.qps, first.percentile, first.latency_pct_ms) == (
        2,
        712.94,
        14331.76,
        95,
        7.56,
    )
    assert (first.reads_per_s, first.writes_per_s, first.others_per_s, first.errors_per_s) == (
        10045.11,
        2855.77,
        1430.88,
        3.0,
    )
    s = run.summary
    assert (s.reads, s.writes, s.others, s.total_queries) == (28252, 8053, 4029, 40334)
    assert (s.transactions, s.tps, s.queries, s.qps, s.errors, s.errors_per_s) == (
        2011,
        668.09,
        40334,
        13399.61,
        7,
        2.33,
    )
    assert (s.total_time_s, s.events) == (3.009, 2011)
    assert (s.lat_min_ms, s.lat_avg_ms, s.lat_max_ms, s.percentile, s.lat_pct_ms, s.lat_sum_ms) == (
        0.67,
        2.99,
        48.81,
        95,
        9.22,
        6006.9,
    )
    assert (s.fairness_events_avg, s.fairness_events_stddev, s.fairness_time_avg_s) == (1005.5, 45.5, 3.0034)
    assert sum(n for _, n in run.histogram) == s.events  # every event is in the histogram
    doc = _loads_as_result_file(tmp_path, run)
    assert doc["driver"] == "mysql" and doc["test"] == "oltp_read_write"
    assert "--mysql-password=***" in doc["command_line"] and "secretpw" not in json.dumps(doc)
    assert doc["implementation"]["source"] == "sysbench text output"
    assert (doc["implementation"]["text_format"], doc["implementation"]["sysbench_version"]) == ("1.0", "1.0.20")
    assert sum(doc["summary"]["histogram"].values()) == 2011
    assert doc["summary"]["latency_ms"]["p95"] == 9.22 and doc["summary"]["tps"] == 668.09


def test_real_sysbench_1_1_0(tmp_path):
    (run,) = _runs("sysbench-1.1.0-oltp_read_write.txt")
    assert (run.format, run.version, run.threads, run.complete) == ("1.1", "1.1.0", 2, True)
    s = run.summary
    assert (s.eps, s.total_time_s, s.events, s.transactions, s.tps) == (399.2172, 3.0059, 1200, 1200, 399.22)
    assert (s.lat_pct_ms, s.lat_sum_ms) == (16.71, 6004.41)
    assert len(run.intervals) == 2 and sum(n for _, n in run.histogram) == 1200
    doc = _loads_as_result_file(tmp_path, run)
    assert doc["summary"]["tps"] == 399.2172  # eps has more digits than the SQL block's rate
    assert doc["implementation"]["text_format"] == "1.1"


@pytest.mark.parametrize(
    ("name", "fmt", "events", "eps"),
    [("sysbench-1.0.20-cpu.txt", "1.0", 1801, 896.09), ("sysbench-1.1.0-cpu.txt", "1.1", 2400, 1193.67)],
)
def test_real_cpu_runs_without_sql(tmp_path, name, fmt, events, eps):
    (run,) = _runs(name)
    assert (run.format, run.test, run.threads, run.complete) == (fmt, "cpu", 2, True)
    assert run.intervals[0].kind == "generic" and run.intervals[0].qps is None
    assert (run.summary.events, run.summary.cpu_events_per_s, run.summary.reads) == (events, eps, None)
    assert run.options["cpu-max-prime"] == "10000"
    doc = _loads_as_result_file(tmp_path, run)
    assert "queries" not in doc["summary"] and "qps" not in doc["summary"] and doc["driver"] == ""


def test_sysbench_05_and_04_logs(tmp_path):
    runs = _runs("sysbench-0.5-handmade.txt")
    assert [(r.format, r.version, r.threads, r.test) for r in runs] == [
        ("0.5", "0.5", 8, "oltp"),
        ("0.5", "0.5", 16, "oltp"),
        ("0.5", "0.4.12", 4, "oltp"),
    ]
    assert all(r.complete for r in runs)
    text = repr(runs)
    assert "s3cr3t" not in text and "--mysql-password=*** --report-interval=10 run" in runs[0].command_line
    first = runs[0]
    assert [iv.tps for iv in first.intervals] == [1608.84, 1650.1, 1631.0]
    assert (first.intervals[1].errors_per_s, first.intervals[1].kind, first.intervals[0].latency_pct_ms) == (
        0.1,
        "0.5",
        5.93,
    )
    s = first.summary
    assert (s.transactions, s.tps, s.read_write_requests, s.other_operations, s.errors) == (
        48899,
        1629.93,
        881226,
        97914,
        1,
    )
    assert (s.total_time_s, s.execution_time_s, s.lat_min_ms, s.lat_max_ms, s.percentile, s.lat_pct_ms) == (
        30.0005,
        239.8612,
        2.01,
        61.38,
        95,
        5.86,
    )
    summary = _loads_as_result_file(tmp_path, first)["summary"]
    assert summary["qps"] == pytest.approx(29373.27 + 3263.74)
    assert summary["latency_ms"]["sum"] == pytest.approx(239861.2)
    old = runs[2].summary
    assert (old.total_time_s, old.events, old.errors, old.lat_pct_ms, old.fairness_time_avg_s) == (
        83.0875,
        100000,
        0,
        4.71,
        83.0119,
    )


def test_multi_run_log_with_echoed_commands():
    runs = _runs("multi-run.txt")
    # the prepare and the cleanup echoed around the loop are not runs
    assert [(r.format, r.threads, r.test, r.command) for r in runs] == [
        ("1.0", 1, "oltp_point_select", "run"),
        ("1.0", 2, "oltp_point_select", "run"),
        ("1.1", 1, "oltp_point_select", "run"),
        ("1.1", 2, "oltp_point_select", "run"),
    ]
    assert [r.line for r in runs] == [12, 53, 94, 135]
    assert all(r.complete and r.source.endswith("multi-run.txt") for r in runs)
    assert runs[2].command_line.startswith("/root/.cache/sysbench-1.1.0/bin/sysbench oltp_point_select")
    assert [r.summary.events for r in runs] == [45458, 55968, 40098, 48732]


def test_garbage_around_a_run_is_skipped():
    (run,) = _runs("garbage-around.txt")
    assert (run.line, run.test, run.complete, run.summary.events) == (9, "cpu", True, 1801)


def test_killed_run_is_kept_incomplete(tmp_path):
    (run,) = _runs("truncated-intervals.txt")
    assert (run.complete, run.summary, len(run.intervals), run.threads) == (False, None, 3, 2)
    doc = _loads_as_result_file(tmp_path, run)
    assert doc["summary"] is None and doc["source"]["complete"] is False
    assert "ends before the run's report" in doc["error"]


def test_report_cut_in_the_middle_is_incomplete(tmp_path):
    (run,) = _runs("truncated-report.txt")
    assert run.format == "1.0" and not run.complete and not run.summary.complete
    assert (run.summary.events, run.summary.lat_min_ms, run.summary.lat_sum_ms) == (5893, 0.38, None)
    assert _loads_as_result_file(tmp_path, run)["summary"]["events"] == 5893


def test_checkpoints_and_rate_lines():
    (run,) = _runs("pysysbench-checkpoints-rate.txt")
    assert (run.tool, run.format, run.complete) == ("pysysbench", "1.0", True)
    assert [(t, s.events) for t, s in run.checkpoints] == [(2.0, 636)]
    assert run.summary.events == 304 and run.summary.percentile == 99
    assert [(iv.queue_length, iv.concurrency) for iv in run.intervals] == [(0, 0)] * 3
    assert (run.options["rate"], run.options["report-checkpoints"]) == ("300", "2")


def _close(parsed: float, exact: float, decimals: int) -> bool:
    return abs(parsed - exact) <= 0.5 * 10**-decimals + 1e-9


@pytest.mark.parametrize(("stem", "fmt"), [("py10", "1.0"), ("py11", "1.1"), ("py05", "0.5")])
def test_round_trip_with_the_result_file(stem, fmt):
    """pysysbench's text of a run equals the result file the run wrote, to the printed precision."""
    (run,) = _runs(f"pysysbench-{stem}.txt")
    truth = json.loads((DATA / f"pysysbench-{stem}.json").read_text())
    mine = run.to_result_doc()
    assert run.format == fmt and run.complete
    s, t = mine["summary"], truth["summary"]
    assert s["queries"] == t["queries"] and s["events"] == t["events"] and s["threads"] == t["threads"]
    assert s["errors"] == t["errors"] and s["reconnects"] == t["reconnects"]
    assert _close(s["tps"], t["tps"], 4 if fmt == "1.1" else 2)
    assert _close(s["qps"], t["qps"], 2 if fmt != "0.5" else 3)  # 0.5: the sum of two rounded rates
    assert _close(s["total_time_s"], t["total_time_s"], 4)
    for key in ("min", "avg", "max", "percentile_value") + (() if fmt == "0.5" else ("sum",)):
        assert _close(s["latency_ms"][key], t["latency_ms"][key], 2), key
    if fmt == "0.5":
        assert _close(s["latency_ms"]["sum"], t["latency_ms"]["sum"], 1)  # printed in seconds, 4 decimals
    if truth["options"]["histogram"]:
        assert s["histogram"] == t["histogram"]  # the printed values name their buckets exactly
        for p in ("p50", "p90", "p99", "p99.9"):
            assert s["latency_ms"][p] == pytest.approx(t["latency_ms"][p], rel=1e-12)
    assert len(mine["intervals"]) == len(truth["intervals"])
    for mine_iv, true_iv in zip(mine["intervals"], truth["intervals"], strict=True):
        assert _close(mine_iv["tps"], true_iv["tps"], 2) and _close(
            mine_iv["latency_pct_ms"], true_iv["latency_pct_ms"], 2
        )
        assert mine_iv["threads"] == true_iv["threads"] and mine_iv["time_s"] == round(true_iv["time_s"])
        if fmt != "0.5":
            assert _close(mine_iv["qps"], true_iv["qps"], 2)
    assert mine["command_line"] == truth["command_line"] and mine["test"] == truth["test"]
    assert mine["driver"] == truth["driver"] == "sqlite"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\n\n",
        "hello\nworld\n",
        "sysbench 1.0.20\n",
        "sysbench is great\n",
        "total: 5\nmin: 3\n[ 1s ] hi\n",
        "Threads fairness:\nLatency (ms):\n\nSQL statistics:\n",
        "\x00\xff" * 50,
    ],
)
def test_text_without_a_run_gives_no_runs(text):
    assert textlog.parse(text) == []


def test_bytes_are_read_and_other_input_is_refused(tmp_path):
    data = (DATA / "sysbench-1.0.20-cpu.txt").read_bytes()
    assert len(textlog.parse(data + b"\xff\xfe")) == 1
    with pytest.raises(UsageError, match="text, not int"):
        textlog.parse(123)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="cannot read sysbench log"):
        textlog.parse_file(str(tmp_path / "missing.log"))


def test_secrets_are_masked():
    line = "sysbench x --mysql-password=a1 --pgsql-password='b 2' --pgsql_password \"c\" --threads=2 run"
    masked = textlog.mask_secrets(line)
    assert masked == "sysbench x --mysql-password=*** --pgsql-password=*** --pgsql_password *** --threads=2 run"
    (run,) = textlog.parse(f"$ {line}\nRunning the test with following options:\nNumber of threads: 2\n")
    assert run.options["mysql-password"] == run.options["pgsql-password"] == "***"
    assert "a1" not in repr(run) and not run.complete


def _transcript_outputs(path: Path) -> str:
    """A cram transcript's expected output lines (two-space indented), commands echoed as ``$ ...``."""
    return "".join(
        line[2:] for line in path.read_text(errors="replace").splitlines(keepends=True) if line.startswith("  ")
    )


def test_conformance_transcripts_parse():
    files = sorted(SHARED.glob("sysbench-1.0.20-tests/t/*.t")) + sorted(SHARED.glob("sysbench-1.1/tests/t/*.t"))
    if not files:
        pytest.skip("the conformance suites are not on this machine")
    found = {str(path): textlog.parse(_transcript_outputs(path), source=str(path)) for path in files}
    runs = [run for group in found.values() for run in group]
    assert len(runs) >= 70  # every "Running the test" of the transcripts, and the grep-cut ones
    assert sum(run.complete for run in runs) > 30
    assert any(run.format == "1.1" for run in runs) and any(run.format == "1.0" for run in runs)


def test_a_thousand_runs_parse_quickly():
    pieces = [
        (DATA / name).read_text()
        for name in ("sysbench-1.0.20-oltp_read_write.txt", "multi-run.txt", "sysbench-1.1.0-cpu.txt")
    ]
    one_round = "".join(pieces)  # 1 + 4 + 1 runs
    per_round = len(textlog.parse(one_round))
    text = one_round * math.ceil(1000 / per_round)
    started = time.perf_counter()
    runs = textlog.parse(text, source="big.log")
    seconds = time.perf_counter() - started
    assert len(runs) >= 1000 and all(run.complete for run in runs)
    assert seconds < 10, f"{len(runs)} runs ({len(text) // 1024} KiB) took {seconds:.2f} s"


FORCED_SHUTDOWN = """\
[db1 ~]$ docker exec bench sysbench sleepy.lua --time=1 --forced-shutdown=1 --threads=2 run
WARNING: --num-threads is deprecated, use --threads instead
sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)

Running the test with following options:
Number of threads: 2
Initializing random number generator from current time

Forcing shutdown in 2 seconds

Initializing worker threads...

Threads started!

FATAL: The --max-time limit has expired, forcing shutdown...
SQL statistics:
    queries performed:
        read:                            0
        write:                           0
        other:                           0
        total:                           0
    transactions:                        0      (0.00 per sec.)
    queries:                             0      (0.00 per sec.)
    ignored errors:                      0      (0.00 per sec.)
    reconnects:                          0      (0.00 per sec.)

Number of unfinished transactions on forced shutdown: 2

General statistics:
    total time:                          2.0003s
    total number of events:              0

Latency (ms):
         min:                                    0.00
         avg:                                    0.00
         max:                                    0.00
         percentile stats:               disabled
         sum:                                    0.00

Threads fairness:
    events (avg/stddev):           1.0000/0.00
    execution time (avg/stddev):   0.0000/2.00

"""


def test_forced_shutdown_prompt_and_disabled_percentile(tmp_path):
    (run,) = textlog.parse(FORCED_SHUTDOWN)
    assert run.command_line.startswith("docker exec bench sysbench sleepy.lua")
    assert (run.test, run.threads, run.complete, run.line) == ("sleepy", 2, True, 1)
    assert run.fatal == ("The --max-time limit has expired, forcing shutdown...",)
    assert (run.summary.unfinished, run.summary.events, run.summary.percentile, run.summary.lat_pct_ms) == (
        2,
        0,
        0,
        None,
    )
    doc = _loads_as_result_file(tmp_path, run)
    assert doc["error"] is None and doc["summary"]["unfinished"] == 2 and "p95" not in doc["summary"]["latency_ms"]


def test_timestamped_and_crlf_logs_read_the_same():
    text = (DATA / "sysbench-1.0.20-oltp_read_write.txt").read_text()
    (plain,) = textlog.parse(text)
    stamped = "".join(f"2024-03-01T10:00:{i % 60:02d}.123+01:00 {line}" for i, line in enumerate(text.splitlines(True)))
    for variant in (stamped, text.replace("\n", "\r\n")):
        (run,) = textlog.parse(variant)
        assert (run.summary, run.intervals, run.histogram, run.command_line) == (
            plain.summary,
            plain.intervals,
            plain.histogram,
            plain.command_line,
        )


def test_real_builtin_tests(tmp_path):
    runs = _runs("sysbench-1.0.20-builtins.txt")
    assert [(r.test, r.complete, r.format) for r in runs] == [
        (t, True, "1.0") for t in ("memory", "threads", "mutex", "fileio")
    ]
    for run in runs:
        summary = _loads_as_result_file(tmp_path, run)["summary"]
        assert summary["tps"] == pytest.approx(run.summary.events / run.summary.total_time_s)
        assert "queries" not in summary and summary["latency_ms"]["percentile"] == 95


def test_real_1_1_fileio_report(tmp_path):
    """1.1.0's fileio report has IOPS lines, no event count and no thread fairness: it ends
    with its latency, and its rate is the requests' (fsyncs too) per second."""
    (run,) = _runs("sysbench-1.1.0-fileio.txt")
    assert (run.test, run.format, run.complete) == ("fileio", "1.1", True)
    s = run.summary
    assert (s.read_iops, s.write_iops, s.fsync_iops, s.lat_sum_ms) == (14285.17, 9523.45, 477.13, 1009.09)
    doc = _loads_as_result_file(tmp_path, run)
    assert doc["error"] is None and doc["summary"]["tps"] == pytest.approx(14285.17 + 9523.45 + 477.13)


def test_a_report_cut_short_without_its_start_is_a_run():
    """The tail of a log: the SQL statistics alone, no banner or command before them."""
    (run,) = textlog.parse(
        "SQL statistics:\n    queries performed:\n        read:                            21742\n"
        "    transactions:                        1521   (474.72 per sec.)\n"
    )
    assert not run.complete and run.summary.transactions == 1521 and run.summary.tps == 474.72
    assert run.to_result_doc()["error"] == "the log ends before the run's report (killed or truncated)"


def test_a_0_second_interval_line_is_read_without_its_inf_and_nan():
    """sysbench prints "%4.2f" of x/0: "tps:  inf qps: -nan" (padded: two spaces)."""
    (run,) = textlog.parse(
        "[ 0s ] thds: 1 tps:  inf qps: -nan (r/w/o: -nan/-nan/-nan) lat (ms,95%): 0.00 err/s: -nan reconn/s: -nan\n"
    )
    assert run.intervals[0].threads == 1 and run.intervals[0].latency_pct_ms == 0.0
    iv = run.to_result_doc()["intervals"][0]
    assert "tps" not in iv and "qps" not in iv and iv["latency_pct_ms"] == 0.0


def test_quoted_option_values_keep_their_spaces():
    line = """+ sysbench --mysql-password "p w" oltp_read_only --create_table_options='ENGINE=InnoDB ROW_FORMAT=COMPRESSED' run 2>&1 | tee log"""
    (run,) = textlog.parse(line + "\nRunning the test with following options:\n")
    assert run.test == "oltp_read_only" and run.options["create_table_options"] == "ENGINE=InnoDB ROW_FORMAT=COMPRESSED"
    assert run.args[-1] == "run" and "p w" not in repr(run) and run.command_line.endswith("run 2>&1 | tee log")
