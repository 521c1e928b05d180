"""What a run reports while it runs and at its end (issue 18 point 4), on the dry-run
driver (no server): the reporter and the checkpoints fire on time whatever the
driver does, every interval line is printed with the threads that ran, the busy
figure is the client's CPU share of the measured phase.

Each test runs the CLI in a child process, as a user would."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STAMP = re.compile(r"^\[ (\d+)s \] (thds: (\d+)|Checkpoint report:)", re.M)


def cli(*args: str, timeout: float = 60) -> str:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("PYSYSBENCH_FACE", None)
    proc = subprocess.run(
        [sys.executable, "-m", "pysysbench", *args], capture_output=True, text=True, timeout=timeout, env=env
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def intervals(text: str) -> list[tuple[int, int]]:
    return [(int(m.group(1)), int(m.group(3))) for m in STAMP.finditer(text) if m.group(3)]


def checkpoints(text: str) -> list[int]:
    return [int(m.group(1)) for m in STAMP.finditer(text) if not m.group(3)]


def test_reporter_and_checkpoints_fire_while_the_driver_never_yields():
    # oltp_insert sends plain-text statements, which the dry run completes without
    # ever suspending: on main the reporter printed nothing and both checkpoints '[ 3s ]'
    out = cli("oltp_insert", "--mysql-dry-run", "--time=3", "--report-interval=1", "--report-checkpoints=1,2", "run")
    assert checkpoints(out) == [1, 2], out
    assert intervals(out) == [(1, 1), (2, 1), (3, 1)], out


@pytest.mark.parametrize("extra", [[], ["--warmup-time=1"]])
def test_every_interval_line_is_printed_with_all_threads(extra):
    # on main the last line was missing or showed fewer threads ('thds: 3' of 4)
    out = cli("oltp_point_select", "--mysql-dry-run", "--threads=4", "--time=2", "--report-interval=1", *extra, "run")
    assert intervals(out) == [(1, 4), (2, 4)], out


BUSY_START = '''
import asyncio, time
from pysysbench.workloads.base import Workload

class SlowStart(Workload):
    """Start-up burns CPU, the measured phase waits."""
    name = "slow_start"
    commands = ("run",)

    async def thread_init(self, ctx):
        end = time.process_time() + 1.5
        while time.process_time() < end:
            pass

    async def event(self, ctx):
        await asyncio.sleep(0.01)
'''


def test_busy_figure_counts_the_measured_phase_only(tmp_path):
    # on main: 'WARNING: the client kept 15x% of its 2 worker process(es) busy' for a
    # client that waits 10 ms per event (the 1.5-s start-up counted against 1 s)
    path = tmp_path / "slow_start.py"
    path.write_text(BUSY_START)
    result = tmp_path / "r.json"
    out = cli(str(path), "--mysql-dry-run", "--threads=2", "--workers=2", "--time=1", f"--result-file={result}", "run")
    assert "WARNING: the client kept" not in out, out
    client = json.loads(result.read_text())["client"]
    assert client["busy_fraction"] < 0.5, client
    assert all(w["busy_fraction"] <= 1.0 for w in client["per_worker"]), client


def test_busy_figure_never_exceeds_one_worker_per_process(tmp_path):
    result = tmp_path / "r.json"
    cli(
        "oltp_point_select",
        "--mysql-dry-run",
        "--threads=2",
        "--workers=1",
        "--time=1",
        f"--result-file={result}",
        "run",
    )
    client = json.loads(result.read_text())["client"]
    assert 0.0 <= client["busy_fraction"] <= 1.0, client
    assert all(0.0 <= w["busy_fraction"] <= 1.0 for w in client["per_worker"]), client
