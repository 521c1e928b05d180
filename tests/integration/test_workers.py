"""Worker processes (``--workers``): a run split over several processes must
report exactly what its workers measured, merged exactly.

Checked against the local MariaDB and SQLite: totals equal the sum of the
workers' counts (and the exact ``--events`` limit), the reported percentile
equals the one recomputed from the merged histogram in the result file, the
per-thread fairness list covers every thread, a crashed worker stops the run
with a clear error and a partial result file, and the text output has the
same shape as a one-process run.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO, parse_summary_text

from pysysbench.engine.local import STOP_GRACE_S
from pysysbench.engine.procs import CANCEL_TIMEOUT_S, WORKER_TIMEOUT_S
from pysysbench.stats.histogram import percentile_ms

PREPARE = ["--tables=4", "--table-size=500"]


def _result(path: Path) -> dict:
    return json.loads(path.read_text())


def _hist_counts(doc: dict) -> list[int]:
    counts = [0] * 1024
    for index, n in doc["summary"]["histogram"].items():
        counts[int(index)] = n
    return counts


@pytest.mark.mysql
def test_split_run_totals_equal_sum_of_workers(run_cli, mysql_opts, tmp_path):
    run_cli.ok("oltp_read_write", *mysql_opts, *PREPARE, "prepare")
    out = tmp_path / "r.json"
    proc = run_cli.ok(
        "oltp_read_write",
        *mysql_opts,
        *PREPARE,
        "--threads=4",
        "--workers=2",
        "--events=600",
        "--time=0",
        "--percentile=99",
        f"--result-file={out}",
        "run",
    )
    doc = _result(out)
    s = doc["summary"]
    text = parse_summary_text(proc.stdout)
    assert s["events"] == text["events"] == 600  # the --events limit is exact across processes
    workers = doc["client"]["per_worker"]
    assert len(workers) == 2 and doc["client"]["workers"] == 2
    assert sum(w["events"] for w in workers) == s["events"]
    assert all(w["events"] > 0 for w in workers)
    assert len(s["thread_events"]) == 4 and sum(s["thread_events"]) == s["events"]
    assert s["queries"]["total"] == text["total"] == text["read"] + text["write"] + text["other"]
    counts = _hist_counts(doc)
    assert sum(counts) == s["events"]
    assert s["latency_ms"]["percentile_value"] == percentile_ms(counts, 99)
    printed = re.search(r"99th percentile:\s+([\d.]+)", proc.stdout).group(1)
    assert printed == f"{percentile_ms(counts, 99):.2f}"
    assert doc["client"]["cpu_s"] > 0 and doc["client"]["cpu_s_per_query"] > 0


def test_client_ids_never_collide_across_worker_processes(run_cli, server_db):
    """oltp_insert --auto_inc=off draws ids from one permutation for the whole run:
    every thread of every worker process takes its own share, so no insert hits a
    duplicate key (a duplicate would stop the run: 1062 / 23505 are not ignored here)."""
    # MariaDB does not ignore 1062 by default; PostgreSQL ignores 23505 unless told otherwise
    ignore = "--mysql-ignore-errors=1213" if server_db.name == "mysql" else "--pgsql-ignore-errors=40P01"
    run_cli.ok("oltp_insert", *server_db.opts, "--tables=2", "--auto_inc=off", "prepare")
    proc = run_cli.ok(
        "oltp_insert",
        *server_db.opts,
        "--tables=2",
        "--auto_inc=off",
        "--threads=6",
        "--workers=3",
        "--events=3000",
        "--time=0",
        ignore,
        "run",
    )
    assert parse_summary_text(proc.stdout)["write"] == 3000
    assert re.search(r"ignored errors:\s+0 ", proc.stdout), proc.stdout
    rows = sum(int(server_db.scalar(f"SELECT COUNT(*) FROM sbtest{t}")) for t in (1, 2))
    distinct = sum(int(server_db.scalar(f"SELECT COUNT(DISTINCT id) FROM sbtest{t}")) for t in (1, 2))
    assert rows == distinct == 3000


@pytest.mark.mysql
def test_same_output_shape_with_one_and_two_workers(run_cli, mysql_opts):
    run_cli.ok("oltp_point_select", *mysql_opts, *PREPARE, "prepare")
    shapes = []
    for workers in (1, 2):
        proc = run_cli.ok(
            "oltp_point_select",
            *mysql_opts,
            *PREPARE,
            "--threads=2",
            f"--workers={workers}",
            "--time=2",
            "--report-interval=1",
            "run",
        )
        lines = [re.sub(r"\d+(\.\d+)?", "N", line) for line in proc.stdout.splitlines()]
        # keep the labels, drop the variable-width padding and the racy last report line
        shapes.append([re.sub(r"\s+", " ", line) for line in lines if not line.startswith("[ ")])
    assert shapes[0] == shapes[1]


def test_sqlite_with_two_worker_processes(run_cli, sqlite_opts, tmp_path):
    run_cli.ok("oltp_read_only", *sqlite_opts, *PREPARE, "prepare")
    out = tmp_path / "r.json"
    run_cli.ok(
        "oltp_read_only",
        *sqlite_opts,
        *PREPARE,
        "--threads=2",
        "--workers=2",
        "--events=200",
        "--time=0",
        f"--result-file={out}",
        "run",
    )
    doc = _result(out)
    assert doc["summary"]["events"] == 200
    assert doc["summary"]["queries"]["read"] == 200 * 14


DRY_RUN = ["--db-driver=mysql", "--mysql-dry-run"]


def test_dry_run_threads_take_turns(run_cli, tmp_path):
    """A dry-run statement yields to the event loop as a real one does: every thread
    runs events (not only the first, which never gave the loop back), the reporter
    prints its lines and a worker process answers its parent while the run goes on."""
    out = tmp_path / "r.json"
    proc = run_cli.ok(
        "oltp_point_select",
        *DRY_RUN,
        "--threads=4",
        "--workers=1",
        "--time=3",
        "--report-interval=1",
        f"--result-file={out}",
        "run",
    )
    assert re.search(r"^\[ 1s \] thds: 4 tps: [1-9]", proc.stdout, re.M), proc.stdout
    per_thread = _result(out)["summary"]["thread_events"]
    assert len(per_thread) == 4 and min(per_thread) > max(per_thread) / 2, per_thread


@pytest.mark.parametrize("threads", [2000, 4000])
def test_thousands_of_threads_per_worker_process(run_cli, tmp_path, threads):
    """A worker's report grows with its threads (tens of kilobytes at 1,000): it
    arrives in pieces, and the parent once took the first piece's end for the
    worker's death ("worker process 1 died unexpectedly (exit code None)" within
    2-6 s, while it ran on).  Default worker count (two on two cores)."""
    out = tmp_path / "r.json"
    proc = run_cli(
        "oltp_point_select",
        *DRY_RUN,
        f"--threads={threads}",
        "--time=5",
        "--report-interval=1",
        f"--result-file={out}",
        "run",
        timeout=180,
    )
    assert proc.returncode == 0 and "FATAL" not in proc.stdout, run_cli.describe(proc)
    assert len(re.findall(rf"^\[ \d+s \] thds: {threads} ", proc.stdout, re.M)) >= 3, proc.stdout
    doc = _result(out)
    workers = doc["client"]["per_worker"]
    assert len(workers) == 2 and not any(w["died"] for w in workers)
    assert len(doc["summary"]["thread_events"]) == threads
    assert sum(w["events"] for w in workers) == doc["summary"]["events"] > 0


def test_stopped_worker_process_ends_the_run_with_a_clear_error(tmp_path):
    """A worker that stops answering (SIGSTOP here; hung, swapping) is found by the
    heartbeat: killed after WORKER_TIMEOUT_S of silence, the run ends with one
    FATAL line and the partial result file (it used to wait forever, printing nothing)."""
    proc, stdout, took, stopped = _stop_a_worker(tmp_path, interrupt=False, timeout_s=WORKER_TIMEOUT_S + 30)
    assert proc.returncode == 1, stdout
    assert WORKER_TIMEOUT_S - 1 < took < WORKER_TIMEOUT_S + 6, took
    fatal = [line for line in stdout.splitlines() if line.startswith("FATAL:")]
    assert len(fatal) == 1 and f"(pid {stopped}) sent nothing for" in fatal[0], stdout
    assert "General statistics:" in stdout, stdout  # the report of what was measured, on stdout too
    doc = _result(tmp_path / "r.json")
    assert doc["exit_code"] == 1 and "sent nothing for" in doc["error"] and doc["summary"]["events"] > 0
    assert [w["died"] for w in doc["client"]["per_worker"]].count(True) == 1


def test_interrupt_with_a_stopped_worker_process_ends_within_the_bound(tmp_path):
    """Ctrl-C when a worker cannot act on it: the grace for the events in flight,
    then the cancel, then the worker that did not end is killed -- a few seconds,
    not forever."""
    proc, stdout, took, stopped = _stop_a_worker(
        tmp_path, interrupt=True, timeout_s=STOP_GRACE_S + CANCEL_TIMEOUT_S + 30
    )
    assert took < STOP_GRACE_S + CANCEL_TIMEOUT_S + 4, took
    assert proc.returncode == 1, stdout
    assert f"(pid {stopped}) did not stop within" in stdout
    doc = _result(tmp_path / "r.json")
    assert doc["exit_code"] == 1 and doc["summary"]["events"] > 0


def _stop_a_worker(tmp_path: Path, interrupt: bool, timeout_s: float):
    """SIGSTOP one worker of a dry run 2 s in (then Ctrl-C it if ``interrupt``):
    (process, stdout, seconds to its end, pid of the stopped worker), after
    checking that nothing printed a traceback and the stopped worker is gone."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pysysbench",
            "oltp_point_select",
            *DRY_RUN,
            "--threads=4",
            "--time=120",
            "--report-interval=1",
            f"--result-file={tmp_path / 'r.json'}",
            "run",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=REPO,
    )
    stopped = None
    try:
        _wait_for_line(proc, "[ 2s ]", timeout_s=60)
        stopped = _children(proc.pid)[-1]
        os.kill(stopped, signal.SIGSTOP)
        if interrupt:
            os.kill(proc.pid, signal.SIGINT)
        sent = time.monotonic()
        stdout, stderr = proc.communicate(timeout=timeout_s)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        time.sleep(0.5)
        left = stopped is not None and _alive(stopped)
        if left:
            os.kill(stopped, signal.SIGKILL)
    assert not left, "the stopped worker was left behind"
    assert "Traceback" not in stdout + stderr, stderr
    return proc, stdout, took, stopped


def test_killed_worker_ends_the_run_with_the_report_on_stdout(tmp_path):
    """kill -9 of a worker process mid-run (dry run): exit code 1, one FATAL line, and the
    usual final report of what was measured on stdout (it was only in the result file),
    with the same totals as the result file."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    out = tmp_path / "r.json"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pysysbench",
            "oltp_point_select",
            *DRY_RUN,
            "--threads=2",
            "--workers=2",
            "--time=60",
            "--report-interval=1",
            f"--result-file={out}",
            "run",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=REPO,
    )
    try:
        _wait_for_line(proc, "[ 2s ]", timeout_s=60)
        kids = _children(proc.pid)
        os.kill(kids[-1], signal.SIGKILL)
        stdout, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert proc.returncode == 1, stdout + stderr
    assert "Traceback" not in stdout + stderr, stderr
    fatal = [line for line in stdout.splitlines() if line.startswith("FATAL:")]
    assert len(fatal) == 1 and f"(pid {kids[-1]}) died unexpectedly" in fatal[0], stdout
    report = parse_summary_text(stdout)
    doc = _result(out)
    assert doc["exit_code"] == 1 and "died unexpectedly" in doc["error"]
    assert report["events"] == doc["summary"]["events"] > 0, stdout
    assert "Latency (ms):" in stdout and "Threads fairness:" in stdout, stdout


@pytest.mark.mysql
def test_crashed_worker_stops_run_and_keeps_partial_results(mysql_opts, run_cli, tmp_path):
    run_cli.ok("oltp_point_select", *mysql_opts, *PREPARE, "prepare")
    out = tmp_path / "crash.json"
    proc = _start_two_workers(mysql_opts, "--time=30", f"--result-file={out}")
    try:
        _wait_for_line(proc, "[ 2s ]", timeout_s=60)
        kids = _children(proc.pid)
        assert kids, "no worker processes found"
        os.kill(kids[-1], signal.SIGKILL)
        stdout, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, stdout + stderr
    fatal = [line for line in stdout.splitlines() if line.startswith("FATAL:")]
    assert len(fatal) == 1 and "died unexpectedly" in fatal[0], stdout
    assert "Traceback" not in stdout + stderr
    doc = _result(out)
    assert doc["exit_code"] == 1 and "died unexpectedly" in doc["error"]
    assert doc["summary"]["events"] > 0  # what was measured is kept
    assert [w["died"] for w in doc["client"]["per_worker"]].count(True) == 1
    time.sleep(0.5)
    assert not [k for k in kids if _alive(k)], "worker processes left behind"


@pytest.mark.mysql
@pytest.mark.parametrize("setting", ["on", "off"])
def test_worker_sessions_option_decides_the_workers_session(mysql_opts, run_cli, setting):
    """--worker-sessions=on (the default) puts each worker process in a session of its own
    (its own autogroup for Linux's scheduler); off leaves them in the parent's; either way
    they end with the run."""
    run_cli.ok("oltp_point_select", *mysql_opts, *PREPARE, "prepare")
    proc = _start_two_workers(mysql_opts, "--time=2", f"--worker-sessions={setting}")
    try:
        _wait_for_line(proc, "[ 1s ]", timeout_s=60)
        kids = _children(proc.pid)
        assert len(kids) == 2, "expected two worker processes"
        sessions, parent = {os.getsid(k) for k in kids}, os.getsid(proc.pid)
        stdout, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, stdout + stderr
    if setting == "on":
        assert sessions == set(kids), "each worker should lead a session of its own"
    else:
        assert sessions == {parent}
    time.sleep(0.5)
    assert not [k for k in kids if _alive(k)], "worker processes left behind"


@pytest.mark.mysql
def test_workers_end_when_their_parent_is_killed(mysql_opts, run_cli):
    """Workers in sessions of their own are outside the parent's process group, so
    nothing but the parent's pipe tells them it is gone: they must end on it."""
    run_cli.ok("oltp_point_select", *mysql_opts, *PREPARE, "prepare")
    proc = _start_two_workers(mysql_opts, "--time=60")
    try:
        _wait_for_line(proc, "[ 1s ]", timeout_s=60)
        kids = _children(proc.pid)
        assert len(kids) == 2, "expected two worker processes"
        proc.kill()
        proc.communicate(timeout=30)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and [k for k in kids if _alive(k)]:
            time.sleep(0.1)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert not [k for k in kids if _alive(k)], "worker processes outlived their killed parent"


def _start_two_workers(mysql_opts: list[str], *options: str) -> subprocess.Popen:
    """A point-select run of 2 threads on 2 worker processes, reporting every second."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pysysbench",
            "oltp_point_select",
            *mysql_opts,
            *PREPARE,
            "--threads=2",
            "--workers=2",
            "--report-interval=1",
            *options,
            "run",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=REPO,
    )


def _wait_for_line(proc: subprocess.Popen, prefix: str, timeout_s: float) -> None:
    """Read stdout until a line starts with ``prefix``; keep what was read."""
    deadline = time.monotonic() + timeout_s
    seen = []
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        seen.append(line)
        if line.startswith(prefix):
            return
    raise AssertionError(f"no line starting with {prefix!r}:\n{''.join(seen)}")


def _children(pid: int) -> list[int]:
    """Worker processes of ``pid`` (not multiprocessing's resource tracker): forked ones
    have the parent's command line, spawned ones multiprocessing's ``spawn_main``."""
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
    kids = []
    for child in out.split():
        try:
            with open(f"/proc/{child}/cmdline", "rb") as fh:
                if b"resource_tracker" not in fh.read():
                    kids.append(int(child))
        except FileNotFoundError:
            continue
    return kids


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.parametrize("start", ["", "spawn"])
def test_workers_forked_by_default_and_nothing_printed_twice(tmp_path, start):
    """Worker processes are forked from the parent (they inherit its imported modules;
    a spawned one imports everything again: 0.55 s of CPU with two workers), and
    PYSYSBENCH_WORKER_START=spawn spawns them.  Forked children inherit the parent's
    unflushed stdout buffer: nothing the parent wrote may come out twice through a pipe."""
    env = dict(os.environ, PYTHONPATH=str(REPO), PYSYSBENCH_WORKER_START=start)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pysysbench",
            "oltp_point_select",
            *DRY_RUN,
            "--threads=4",
            "--workers=2",
            "--time=3",
            "--report-interval=1",
            "run",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=REPO,
    )
    try:
        _wait_for_line(proc, "[ 1s ]", timeout_s=60)
        kids = _children(proc.pid)
        with open(f"/proc/{proc.pid}/cmdline", "rb") as fh:
            parent_cmdline = fh.read()
        cmdlines = []
        for kid in kids:
            with open(f"/proc/{kid}/cmdline", "rb") as fh:
                cmdlines.append(fh.read())
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, stdout + stderr
    assert len(kids) == 2, "expected two worker processes"
    if start == "spawn":
        assert all(b"spawn_main" in c for c in cmdlines), cmdlines
    else:
        assert cmdlines == [parent_cmdline] * 2, "the workers should be forked from the parent"
    assert stdout.count("Running the test with following options:") == 0  # read by _wait_for_line
    assert stdout.count("Threads started!") == 0 and "General statistics" in stdout
    assert stdout.count("General statistics") == 1 and stdout.count("SQL statistics") == 1


@pytest.mark.mysql
def test_metrics_endpoint_serves_counters_merged_over_worker_processes(run_cli, mysql_opts, tmp_path):
    """--metrics-addr during a 2-worker run (issue 20 pt 6): the events counter is the
    workers' sum and keeps increasing while the run goes."""
    import socket
    import urllib.request

    pytest.importorskip("prometheus_client")
    run_cli.ok("oltp_point_select", *mysql_opts, *PREPARE, "prepare")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = tmp_path / "r.json"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pysysbench",
            "oltp_point_select",
            *mysql_opts,
            *PREPARE,
            "--threads=4",
            "--workers=2",
            "--time=12",
            f"--metrics-addr=127.0.0.1:{port}",
            f"--result-file={out}",
            "run",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )

    def events() -> float | None:
        try:
            text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
        except OSError:
            return None
        m = re.search(r'^pysysbench_events_total\{test="oltp_point_select"\} ([\d.e+]+)$', text, re.M)
        assert m and "pysysbench_latency_seconds_bucket" in text and 'kind="read"' in text, text[:300]
        return float(m.group(1))

    seen: list[float] = []
    deadline = time.monotonic() + 60
    while len(seen) < 3 and time.monotonic() < deadline and proc.poll() is None:
        value = events()
        if value:
            seen.append(value)
        time.sleep(1.5)
    output, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0, output
    assert len(seen) == 3 and seen[0] < seen[1] < seen[2], seen
    doc = _result(out)
    assert len(doc["client"]["per_worker"]) == 2 and seen[-1] <= doc["summary"]["events"]
