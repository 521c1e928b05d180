"""Multi-node database target: a real 3-node MariaDB Galera cluster on loopback
(``scripts/galera.sh``), driven through a host/port list.

Checked: ``oltp_read_write --threads=6 --mysql-port=P1,P2,P3`` with two worker
processes completes; the global thread id drives the rotation, so every node
serves exactly 2 of the 6 connections (the servers' own process lists during the
run, and the result file); Galera certification conflicts surface as deadlocks
(1213) that the default ignore list restarts and that are counted per error code,
exactly across processes; the three nodes hold the same data afterwards (row
counts and CHECKSUM TABLE); and the real sysbench 1.0.20 with the same options
reports ignored errors per second on the same cluster too.

The cluster is started for this module and stopped at its end (unless it was
already running, e.g. started by hand: then it is left running).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time

import pytest
from conftest import REPO, parse_summary_text

SCRIPT = REPO / "scripts" / "galera.sh"
GALERA_DIR = "/var/tmp/pysysbench-galera"
PORTS = (3311, 3312, 3313)
NODES = [f"127.0.0.1:{p}" for p in PORTS]
DB = ["--db-driver=mysql", "--mysql-host=127.0.0.1", "--mysql-user=sbtest", "--mysql-db=sbtest"]
DATA = ["--tables=2", "--table-size=1000"]
ALL_NODES = f"--mysql-port={','.join(map(str, PORTS))}"
RUN = ["--threads=6", "--time=8", "--report-interval=1"]
START_TIMEOUT_S = 300
SYNC_TIMEOUT_S = 60


def _script(command: str, timeout: float = START_TIMEOUT_S) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(SCRIPT), command], capture_output=True, text=True, timeout=timeout)


def node_sql(node: int, sql: str) -> list[list[str]]:
    """Rows of a statement run as root on node 1..3 (over its own socket)."""
    proc = subprocess.run(
        [
            "mariadb",
            "--no-defaults",
            f"--socket={GALERA_DIR}/node{node}/mysqld.sock",
            "-uroot",
            "--batch",
            "--skip-column-names",
            "-e",
            sql,
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, f"node {node}: {sql}: {proc.stderr}"
    return [line.split("\t") for line in proc.stdout.splitlines()]


@pytest.fixture(scope="module")
def galera():
    if not os.path.exists("/usr/lib/galera/libgalera_smm.so") or not shutil.which("rsync"):
        pytest.fail(
            "Galera needs the Debian packages galera-4 and rsync (apt-get install galera-4 rsync; "
            ".ci/run installs them)"
        )
    was_running = _script("status", timeout=60).returncode == 0
    if not was_running:
        proc = _script("start")
        assert proc.returncode == 0, f"scripts/galera.sh start failed:\n{proc.stdout}\n{proc.stderr}"
    try:
        yield
    finally:
        if not was_running:
            proc = _script("stop")
            assert proc.returncode == 0, f"scripts/galera.sh stop failed:\n{proc.stdout}\n{proc.stderr}"


@pytest.fixture(scope="module")
def galera_data(galera, run_cli):
    """The tables, prepared through node 1 (Galera replicates them to the others)."""
    run_cli("oltp_read_write", *DB, *DATA, f"--mysql-port={PORTS[0]}", "cleanup")
    run_cli.ok("oltp_read_write", *DB, *DATA, f"--mysql-port={PORTS[0]}", "prepare")
    yield
    run_cli("oltp_read_write", *DB, *DATA, f"--mysql-port={PORTS[0]}", "cleanup")


def _sbtest_sessions(node: int) -> int:
    return int(node_sql(node, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER = 'sbtest'")[0][0])


def _wait_synced() -> None:
    """Until every node has applied the same last write set."""
    deadline = time.monotonic() + SYNC_TIMEOUT_S
    while True:
        seqnos = {node_sql(n, "SHOW GLOBAL STATUS LIKE 'wsrep_last_committed'")[0][1] for n in (1, 2, 3)}
        if len(seqnos) == 1:
            return
        assert time.monotonic() < deadline, f"nodes did not converge: {seqnos}"
        time.sleep(0.5)


def _err_per_s(stdout: str) -> float:
    return float(re.search(r"ignored errors:\s+\d+\s+\(([\d.]+) per sec\.\)", stdout).group(1))


def test_read_write_over_three_nodes(galera_data, tmp_path):
    out = tmp_path / "galera.json"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pysysbench",
            "oltp_read_write",
            *DB,
            *DATA,
            ALL_NODES,
            *RUN,
            "--workers=2",
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
        seen = []
        for line in proc.stdout:  # mid-run: ask each server who is connected
            seen.append(line)
            if line.startswith("[ 3s ]"):
                break
        during = [_sbtest_sessions(n) for n in (1, 2, 3)]
        rest, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    stdout = "".join(seen) + rest
    assert proc.returncode == 0, stdout + stderr
    assert during == [2, 2, 2], (during, stdout)

    doc = json.loads(out.read_text())
    s = doc["summary"]
    assert doc["connections"] == {node: 2 for node in NODES}
    text = parse_summary_text(stdout)
    # certification conflicts come back as deadlocks, restarted and counted per code
    assert s["errors"] == text["ignored_errors"] > 0, stdout
    assert s["errors_by_code"].get("1213", 0) > 0, s["errors_by_code"]
    assert sum(s["errors_by_code"].values()) == s["errors"] + s["reconnects"]
    assert any(float(x) > 0 for x in re.findall(r"err/s: ([\d.]+)", stdout)), stdout

    _wait_synced()  # the same data on every node
    for table in ("sbtest1", "sbtest2"):
        counts = {n: node_sql(n, f"SELECT COUNT(*) FROM sbtest.{table}")[0][0] for n in (1, 2, 3)}
        sums = {n: node_sql(n, f"CHECKSUM TABLE sbtest.{table}")[0][1] for n in (1, 2, 3)}
        assert len(set(counts.values())) == 1, (table, counts)
        assert len(set(sums.values())) == 1, (table, sums)

    if shutil.which("sysbench"):  # the reference on the same cluster, same options
        ref = subprocess.run(
            ["sysbench", "oltp_read_write", *DB[1:], *DATA, ALL_NODES, *RUN, "run"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert ref.returncode == 0, ref.stdout + ref.stderr
        assert _err_per_s(ref.stdout) > 0 and _err_per_s(stdout) > 0


def _cluster_status(node: int) -> str:
    return node_sql(node, "SHOW GLOBAL STATUS LIKE 'wsrep_cluster_status'")[0][1]


def _wait(predicate, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.5)


def test_wsrep_errors_of_an_isolated_node_are_ignored_and_counted(galera_data, tmp_path):
    """Node 3 cut off from the group mid-run (gmcast.isolate): its sessions get
    1047 (WSREP not ready) and 1180 (commit without a primary component) until it
    rejoins; with those codes in --mysql-ignore-errors the run goes on, and every
    error is counted under its own code, exactly across the two worker processes."""
    out = tmp_path / "isolated.json"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    ignore = "--mysql-ignore-errors=1213,1020,1205,1047,1180,1317"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pysysbench",
            "oltp_read_write",
            *DB,
            *DATA,
            ALL_NODES,
            "--threads=6",
            "--workers=2",
            "--time=20",
            "--report-interval=1",
            ignore,
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
        for line in proc.stdout:
            if line.startswith("[ 2s ]"):
                break
        node_sql(3, "SET GLOBAL wsrep_provider_options = 'gmcast.isolate=1'")
        try:
            _wait(lambda: _cluster_status(3) == "non-Primary", 30, "node 3 to leave the primary component")
            time.sleep(1)
        finally:
            node_sql(3, "SET GLOBAL wsrep_provider_options = 'gmcast.isolate=0'")
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, stdout + stderr
    s = json.loads(out.read_text())["summary"]
    assert s["errors_by_code"].get("1047", 0) > 0, s["errors_by_code"]
    assert sum(s["errors_by_code"].values()) == s["errors"] + s["reconnects"]
    assert s["errors"] == parse_summary_text(stdout)["ignored_errors"]
    _wait(
        lambda: all(
            node_sql(n, "SHOW GLOBAL STATUS LIKE 'wsrep_local_state_comment'")[0][1] == "Synced"
            and node_sql(n, "SHOW GLOBAL STATUS LIKE 'wsrep_cluster_size'")[0][1] == "3"
            for n in (1, 2, 3)
        ),
        SYNC_TIMEOUT_S,
        "node 3 to rejoin",
    )
    _wait_synced()
    for table in ("sbtest1", "sbtest2"):  # consistent again after the rejoin (IST)
        sums = {n: node_sql(n, f"CHECKSUM TABLE sbtest.{table}")[0][1] for n in (1, 2, 3)}
        assert len(set(sums.values())) == 1, (table, sums)
