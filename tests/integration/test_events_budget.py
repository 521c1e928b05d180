"""--events is one budget for the whole run (engine/budget.py), as sysbench's one counter:
the total is exact whatever the split over threads and worker processes, also when
--events is below the worker count (a worker's share of 0 once ran unlimited: to --time,
or forever with --time=0), and a fast thread takes more events than a slow one.  Both the
C counter and its Python twin (PYSYSBENCH_NATIVE=off); the dry-run driver and SQLite."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

DRY_RUN = ["--db-driver=mysql", "--mysql-dry-run"]
NATIVE = ["on", "off"]
# far below the 120 s of CLI_TIMEOUT_S: a run that ignored --events would hit --time or never end
MUST_END_S = 60


@pytest.fixture(params=NATIVE)
def native(request, monkeypatch):
    monkeypatch.setenv("PYSYSBENCH_NATIVE", request.param)
    return request.param


def _summary(path: Path) -> dict:
    return json.loads(path.read_text())["summary"]


@pytest.mark.parametrize(
    "threads, workers, events, time_s",
    [
        (2, 2, 1, 100),  # used to run to --time: about 100,000 events on this machine per second
        (2, 2, 1, 0),  # used never to end
        (32, 16, 10, 100),  # used to run 225,861 events
        (32, 16, 10, 0),
    ],
)
def test_events_below_the_worker_count_are_exact(run_cli, tmp_path, native, threads, workers, events, time_s):
    out = tmp_path / "r.json"
    proc = run_cli.ok(
        "oltp_point_select",
        *DRY_RUN,
        f"--threads={threads}",
        f"--workers={workers}",
        f"--events={events}",
        f"--time={time_s}",
        f"--result-file={out}",
        "run",
        timeout=MUST_END_S,
    )
    assert f"total number of events:              {events}\n" in proc.stdout, proc.stdout
    s = _summary(out)
    assert s["events"] == sum(s["thread_events"]) == events
    assert len(s["thread_events"]) == threads
    assert s["total_time_s"] < 30  # ended by --events, not by --time


def test_events_exact_with_spawned_worker_processes(run_cli, tmp_path, native, monkeypatch):
    """A spawned worker maps the budget's file by its path (a forked one inherits the mapping)."""
    monkeypatch.setenv("PYSYSBENCH_WORKER_START", "spawn")
    out = tmp_path / "r.json"
    run_cli.ok(
        "oltp_point_select",
        *DRY_RUN,
        "--threads=4",
        "--workers=2",
        "--events=3",
        "--time=0",
        f"--result-file={out}",
        "run",
        timeout=MUST_END_S,
    )
    assert _summary(out)["events"] == 3


def test_events_exact_on_sqlite_with_two_worker_processes(run_cli, tmp_path, native):
    db = ["--db-driver=sqlite", f"--sqlite-db={tmp_path / 'sb.db'}", "--tables=1", "--table-size=100"]
    run_cli.ok("oltp_point_select", *db, "prepare")
    out = tmp_path / "r.json"
    run_cli.ok(
        "oltp_point_select",
        *db,
        "--threads=2",
        "--workers=2",
        "--events=1",
        "--time=0",
        f"--result-file={out}",
        "run",
        timeout=MUST_END_S,
    )
    assert _summary(out)["events"] == 1


SLOW_THREAD = """\
ffi.cdef[[int usleep(unsigned int);]]
function thread_init(thread_id)
   tid = thread_id
end
function event()
   if tid == 1 then ffi.C.usleep(500000) end
end
"""


def test_a_fast_thread_takes_more_events(run_cli, tmp_path, native):
    """sysbench 1.0.20, this script, --events=20 --threads=2: thread 0 (no wait) ran 19
    events, thread 1 (0.5 s each) 1.  With a share per worker process it was 10/10 (and
    took 5 s); with the one budget thread 0 takes what thread 1 cannot."""
    script = tmp_path / "slow_thread.lua"
    script.write_text(SLOW_THREAD)
    out = tmp_path / "r.json"
    run_cli.ok(
        str(script),
        "--threads=2",
        "--workers=2",
        "--events=20",
        "--time=0",
        f"--result-file={out}",
        "run",
        timeout=MUST_END_S,
    )
    fast, slow = _summary(out)["thread_events"]
    assert fast + slow == 20 and fast > 10 > slow, (fast, slow)
