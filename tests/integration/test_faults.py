"""Faults during a run: servers killed or restarted, connections killed,
Ctrl-C.  Each scenario runs against a PRIVATE server (see private_servers.py)
so that the shared servers other tests use are never disturbed, and each ends
with ``pysysbench check``: nothing lost, nothing duplicated.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import REPO
from private_servers import MY_GRANTS_PORT, PrivateMariaDB, PrivatePostgres

DATA = ["--tables=2", "--table-size=1000"]


@pytest.fixture(scope="module")
def mariadb():
    server = PrivateMariaDB()
    server.start()
    yield server
    server.destroy()


@pytest.fixture(scope="module")
def mariadb_grants():
    """A private MariaDB with grant tables: passwords are checked."""
    server = PrivateMariaDB(MY_GRANTS_PORT, grants=True)
    server.start()
    yield server
    server.destroy()


@pytest.fixture(scope="module")
def postgres():
    server = PrivatePostgres()
    server.start()
    yield server
    server.destroy()


def cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "pysysbench", *args], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=REPO)


def start(*args: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.Popen([sys.executable, "-m", "pysysbench", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, cwd=REPO, start_new_session=True)


class Reader:
    """Collects a process's stdout in a thread; ``wait_for`` blocks until a line appears."""

    def __init__(self, proc: subprocess.Popen):
        self.lines: list[str] = []
        self.cond = threading.Condition()
        self.thread = threading.Thread(target=self._read, args=(proc,), daemon=True)
        self.thread.start()

    def _read(self, proc: subprocess.Popen) -> None:
        for line in proc.stdout:
            with self.cond:
                self.lines.append(line.rstrip("\n"))
                self.cond.notify_all()

    def wait_for(self, prefix: str, timeout_s: float = 60) -> float:
        deadline = time.monotonic() + timeout_s
        with self.cond:
            while not any(line.startswith(prefix) for line in self.lines):
                left = deadline - time.monotonic()
                assert left > 0, f"no line starting with {prefix!r}:\n" + "\n".join(self.lines)
                self.cond.wait(left)
        return time.monotonic()

    def text(self) -> str:
        self.thread.join(30)
        return "\n".join(self.lines)


def fresh_data(server, workload: str = "oltp_read_write") -> None:
    cli(workload, *server.options, *DATA, "cleanup")
    proc = cli(workload, *server.options, *DATA, "prepare")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def assert_consistent(server) -> None:
    proc = cli("oltp_read_write", *server.options, *DATA, "check")
    assert proc.returncode == 0 and "Data check passed" in proc.stdout, proc.stdout + proc.stderr


def summary_value(text: str, label: str) -> int:
    return int(re.search(rf"^\s+{label}:\s+(\d+)", text, re.M).group(1))


def intervals(text: str) -> list[tuple[float, float]]:
    """(tps, reconn/s) of every intermediate line."""
    return [(float(m.group(1)), float(m.group(2)))
            for m in re.finditer(r"^\[ \d+s \] thds: \d+ tps: ([\d.]+) .* reconn/s: ([\d.]+)$", text, re.M)]


@pytest.mark.mysql
def test_mariadb_killed_and_restarted_run_reconnects(mariadb, tmp_path):
    fresh_data(mariadb)
    out = tmp_path / "r.json"
    proc = start("oltp_read_write", *mariadb.options, *DATA, "--threads=4", "--time=10", "--report-interval=1",
                 "--mysql-ignore-errors=all", f"--result-file={out}", "run")
    reader = Reader(proc)
    reader.wait_for("[ 2s ]")
    mariadb.kill()
    time.sleep(2)
    mariadb.start()
    assert proc.wait(60) == 0, reader.text() + proc.stderr.read()
    text = reader.text()
    assert summary_value(text, "reconnects") >= 1
    lines = intervals(text)
    assert any(tps == 0.0 for tps, _ in lines), "the outage does not show in the intermediate lines"
    assert any(reconn > 0 for _, reconn in lines)
    doc = json.loads(out.read_text())
    assert doc["exit_code"] == 0 and doc["summary"]["reconnects"] >= 1
    assert_consistent(mariadb)


@pytest.mark.mysql
def test_mariadb_killed_without_reconnect_is_fatal_and_keeps_results(mariadb, tmp_path):
    fresh_data(mariadb)
    out = tmp_path / "r.json"
    proc = start("oltp_read_write", *mariadb.options, *DATA, "--threads=2", "--time=20", "--report-interval=1",
                 f"--result-file={out}", "run")
    reader = Reader(proc)
    reader.wait_for("[ 2s ]")
    mariadb.kill()
    try:
        assert proc.wait(60) == 1
    finally:
        mariadb.start()
    text = reader.text()
    fatal = [line for line in text.splitlines() if line.startswith("FATAL:")]
    assert len(fatal) == 1 and "--mysql-ignore-errors" in fatal[0], text
    assert "Traceback" not in text + proc.stderr.read()
    doc = json.loads(out.read_text())
    assert doc["exit_code"] == 1 and doc["error"] and doc["summary"]["events"] > 0
    assert_consistent(mariadb)


@pytest.mark.mysql
def test_mariadb_single_connection_killed(mariadb):
    fresh_data(mariadb, "oltp_point_select")
    proc = start("oltp_point_select", *mariadb.options, *DATA, "--threads=2", "--time=5", "--report-interval=1",
                 "--mysql-ignore-errors=2013,2006", "run")
    reader = Reader(proc)
    reader.wait_for("[ 1s ]")
    ids = mariadb.sql("SELECT id FROM information_schema.processlist WHERE db='sbtest' AND command<>'Daemon'").split()
    assert ids
    mariadb.sql(f"KILL CONNECTION {ids[0]}")
    assert proc.wait(60) == 0, reader.text() + proc.stderr.read()
    assert summary_value(reader.text(), "reconnects") >= 1


@pytest.mark.pgsql
def test_postgres_restarted_run_reconnects(postgres, tmp_path):
    fresh_data(postgres)
    proc = start("oltp_read_write", *postgres.options, *DATA, "--threads=4", "--time=8", "--report-interval=1",
                 "--pgsql-ignore-errors=all", "run")
    reader = Reader(proc)
    reader.wait_for("[ 2s ]")
    postgres.restart()
    assert proc.wait(60) == 0, reader.text() + proc.stderr.read()
    text = reader.text()
    assert summary_value(text, "reconnects") >= 1
    assert any(reconn > 0 for _, reconn in intervals(text))
    assert_consistent(postgres)


@pytest.mark.pgsql
def test_postgres_backend_terminated(postgres):
    fresh_data(postgres, "oltp_point_select")
    proc = start("oltp_point_select", *postgres.options, *DATA, "--threads=2", "--time=5", "--report-interval=1",
                 "--pgsql-ignore-errors=40P01,23505,40001,08006", "run")
    reader = Reader(proc)
    reader.wait_for("[ 1s ]")
    postgres.sql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname='sbtest' "
                 "AND pid <> pg_backend_pid() LIMIT 1")
    assert proc.wait(60) == 0, reader.text() + proc.stderr.read()
    assert summary_value(reader.text(), "reconnects") >= 1


RECONNECT_TIMEOUT = 8


def assert_gave_up_reconnecting(proc: subprocess.Popen, reader: Reader, out: Path, changed: float, code: str,
                                words: tuple[str, ...]) -> None:
    """The run warned, then stopped within the bound with one FATAL line naming the
    error and what to do, and the result file counts the failed reconnects."""
    try:
        assert proc.wait(60) == 1, reader.text() + proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
    assert time.monotonic() - changed < RECONNECT_TIMEOUT + 8
    text = reader.text()
    warnings = [line for line in text.splitlines() if line.startswith("WARNING: reconnecting keeps failing")]
    assert warnings and f"{code}: " in warnings[0], text
    fatal = [line for line in text.splitlines() if line.startswith("FATAL:")]
    assert len(fatal) == 1 and "gave up reconnecting" in fatal[0], text
    assert f"--reconnect-timeout={RECONNECT_TIMEOUT}" in fatal[0] and all(w in fatal[0] for w in words), fatal[0]
    doc = json.loads(out.read_text())
    assert doc["exit_code"] == 1 and doc["error"] == fatal[0][len("FATAL: "):]
    assert doc["summary"]["reconnect_failures_by_code"][code] == doc["summary"]["reconnect_failures"] > 0
    assert sum(iv["reconnect_failures"] for iv in doc["intervals"]) > 0
    assert "changed" not in text + out.read_text()     # the new password is not printed


@pytest.mark.mysql
def test_mariadb_password_change_gives_up_reconnecting_with_a_clear_error(mariadb_grants, tmp_path):
    server = mariadb_grants
    fresh_data(server, "oltp_point_select")
    out = tmp_path / "r.json"
    proc = start("oltp_point_select", *server.options, *DATA, "--threads=4", "--time=120", "--report-interval=1",
                 "--mysql-ignore-errors=all", f"--reconnect-timeout={RECONNECT_TIMEOUT}", f"--result-file={out}",
                 "run")
    reader = Reader(proc)
    reader.wait_for("[ 2s ]")
    server.sql("ALTER USER sbtest@'%' IDENTIFIED BY 'changed'")
    try:
        for session in server.sql("SELECT id FROM information_schema.processlist WHERE user='sbtest'").split():
            subprocess.run(["mariadb", "-h127.0.0.1", f"-P{server.port}", "-uroot", "-e", f"KILL {session}"],
                           capture_output=True)
        assert_gave_up_reconnecting(proc, reader, out, time.monotonic(), "1045",
                                    ("error 1045", "Access denied", "--mysql-password"))
    finally:
        server.sql("ALTER USER sbtest@'%' IDENTIFIED BY ''")


@pytest.mark.pgsql
def test_postgres_password_change_gives_up_reconnecting_with_a_clear_error(postgres, tmp_path):
    fresh_data(postgres, "oltp_point_select")
    out = tmp_path / "r.json"
    with postgres.passwords("first"):
        proc = start("oltp_point_select", *postgres.options, *DATA, "--pgsql-password=first", "--threads=4",
                     "--time=120", "--report-interval=1", "--pgsql-ignore-errors=all",
                     f"--reconnect-timeout={RECONNECT_TIMEOUT}", f"--result-file={out}", "run")
        reader = Reader(proc)
        reader.wait_for("[ 2s ]")
        postgres.sql("ALTER ROLE sbtest PASSWORD 'changed'")
        postgres.sql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename='sbtest'")
        assert_gave_up_reconnecting(proc, reader, out, time.monotonic(), "28P01",
                                    ("password authentication failed", "--pgsql-password"))


@pytest.mark.mysql
def test_sigint_prints_partial_summary_quickly_and_leaves_no_process(mariadb, tmp_path):
    fresh_data(mariadb, "oltp_point_select")
    out = tmp_path / "r.json"
    proc = start("oltp_point_select", *mariadb.options, *DATA, "--threads=4", "--workers=2", "--time=60",
                 "--report-interval=1", f"--result-file={out}", "run")
    reader = Reader(proc)
    reader.wait_for("[ 5s ]", timeout_s=90)
    family = _descendants(proc.pid)
    sent = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)            # what Ctrl-C in a terminal does
    reader.wait_for("Threads fairness:", timeout_s=10)
    assert time.monotonic() - sent < 2.0, "the partial summary took more than 2 s"
    assert proc.wait(20) == 130
    text = reader.text()
    assert summary_value(text, "transactions") > 0
    assert json.loads(out.read_text())["exit_code"] == 130
    time.sleep(0.5)
    assert not [pid for pid in family if _alive(pid)], "processes left behind"


def _descendants(pid: int) -> list[int]:
    """``pid`` and every process below it (worker processes lead sessions of their own,
    so the process group does not hold them)."""
    family, todo = [], [pid]
    while todo:
        p = todo.pop()
        family.append(p)
        out = subprocess.run(["pgrep", "-P", str(p)], capture_output=True, text=True).stdout
        todo.extend(int(x) for x in out.split())
    return family


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
