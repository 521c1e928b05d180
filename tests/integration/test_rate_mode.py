"""Rate mode (``--rate``) against the real servers, with the C extension (engine/arrivals.c,
the C event loops) and without it (the Python generator, engine/worker.py): the rate is
kept, each interval reports the queue and the concurrency, a low rate ends at the time
limit, and a queue the threads cannot keep up with stops the run with sysbench's message."""

from __future__ import annotations

import re
import time

import pytest

NATIVE = [pytest.param("on", id="c"), pytest.param("off", id="python")]
QUEUE_RE = re.compile(r"^\[ \d+s \] queue length: (\d+), concurrency: (\d+)$", re.M)


def prepare(run_cli, db) -> None:
    run_cli.ok("oltp_point_select", *db.opts, "--tables=1", "--table-size=1000", "prepare")


@pytest.mark.parametrize("native", NATIVE)
@pytest.mark.parametrize("path", ["bundled", "lua"])
def test_the_rate_is_kept_and_the_queue_reported(db, run_cli, parse_summary, monkeypatch, native, path):
    monkeypatch.setenv("PYSYSBENCH_NATIVE", native)
    prepare(run_cli, db)
    test = "oltp_point_select" if path == "bundled" else "/usr/share/sysbench/oltp_point_select.lua"
    if path == "lua" and db.name == "sqlite":
        pytest.skip("sysbench's own .lua files know no SQLite driver")
    proc = run_cli.ok(test, *db.opts, "--tables=1", "--table-size=1000", "--threads=4", "--time=4",
                      "--rate=150", "--report-interval=1", "--rand-seed=3", "run")  # fmt: skip
    events = parse_summary(proc.stdout)["events"]
    assert 420 <= events <= 780, run_cli.describe(proc)  # 600 expected (sd 24.5)
    queue = QUEUE_RE.findall(proc.stdout)
    assert len(queue) >= 3, run_cli.describe(proc)
    assert all(int(q) < 50 and int(c) <= 4 for q, c in queue), queue
    avg = float(re.search(r"^\s+avg:\s+([\d.]+)$", proc.stdout, re.M).group(1))
    assert avg < 50, run_cli.describe(proc)


@pytest.mark.parametrize("native", NATIVE)
def test_a_low_rate_ends_at_the_time_limit(server_db, run_cli, monkeypatch, native):
    monkeypatch.setenv("PYSYSBENCH_NATIVE", native)
    prepare(run_cli, server_db)
    started = time.monotonic()
    proc = run_cli.ok("oltp_point_select", *server_db.opts, "--tables=1", "--table-size=1000", "--threads=2",
                      "--time=2", "--rate=1", "run")  # fmt: skip
    total = float(re.search(r"total time:\s+([\d.]+)s", proc.stdout).group(1))
    assert 1.9 <= total < 2.6, run_cli.describe(proc)
    assert time.monotonic() - started < 20


@pytest.mark.parametrize("native", NATIVE)
def test_a_queue_the_threads_cannot_keep_up_with_stops_the_run(server_db, run_cli, monkeypatch, native):
    monkeypatch.setenv("PYSYSBENCH_NATIVE", native)
    prepare(run_cli, server_db)
    proc = run_cli("oltp_point_select", *server_db.opts, "--tables=1", "--table-size=1000", "--threads=1",
                   "--time=30", "--rate=5000000", "run")  # fmt: skip
    assert proc.returncode == 1, run_cli.describe(proc)
    assert "The event queue is full" in proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stdout + proc.stderr
    total = re.search(r"total time:\s+([\d.]+)s", proc.stdout)
    assert total is None or float(total.group(1)) < 10, run_cli.describe(proc)
