"""Server context in the result file (issue 20 pt 5), against private servers: the
counter deltas match the queries this test itself sends, the curated settings are
there, a setting the user may not read degrades to one note, and the option turns
it all off.

Private servers (nothing else talks to them, so a server-wide counter counts only
this test's queries).  Ports: PYSYSBENCH_CONTEXT_MY_PORT / _PG_PORT (default 3394 /
5494, beside the fault tests' servers).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import REPO
from private_servers import PrivateMariaDB, PrivatePostgres

from pysysbench.engine.servercontext import cpu_per_query_measurable

MY_PORT = int(os.environ.get("PYSYSBENCH_CONTEXT_MY_PORT", "3394"))
PG_PORT = int(os.environ.get("PYSYSBENCH_CONTEXT_PG_PORT", "5494"))
DATA = ["--tables=1", "--table-size=200"]
EVENTS = 700


def cli(*args: str, cwd) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run(
        [sys.executable, "-m", "pysysbench", *args], capture_output=True, text=True, timeout=180, env=env, cwd=cwd
    )


@pytest.fixture(scope="module")
def mariadb():
    server = PrivateMariaDB(MY_PORT)
    server.start()
    yield server
    server.destroy()


@pytest.fixture(scope="module")
def postgres():
    server = PrivatePostgres(PG_PORT)
    server.start()
    yield server
    server.destroy()


def run(server, tmp_path, *extra) -> dict:
    proc = cli("oltp_point_select", *server.options, *DATA, "--force", "prepare", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    path = tmp_path / "r.json"
    proc = cli(
        "oltp_point_select",
        *server.options,
        *DATA,
        "--threads=2",
        f"--events={EVENTS}",
        "--time=0",
        f"--result-file={path}",
        *extra,
        "run",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(path.read_text())


def test_mariadb_deltas_count_the_selects_this_test_sent(mariadb, tmp_path):
    doc = run(mariadb, tmp_path)
    ctx = doc["server_context"]
    assert ctx["server"] == "MariaDB"  # recognised from its version (the registry)
    assert ctx["metrics"]["Com_select"] == EVENTS  # one point select per event, nothing else
    assert ctx["metrics"]["Innodb_buffer_pool_read_requests"] >= EVENTS
    assert 0.0 <= ctx["derived"]["hit_ratio"] <= 1.0
    assert ctx["derived"]["lock_waits_per_trx"] == 0.0
    assert ctx["settings"]["innodb_flush_log_at_trx_commit"] in ("0", "1", "2")
    assert "innodb_buffer_pool_size" in ctx["settings"] and "pid_file" not in ctx["settings"]
    cpu = ctx["server_cpu_s"]
    assert cpu is not None  # same host
    if cpu_per_query_measurable(cpu):
        assert ctx["derived"]["server_cpu_us_per_query"] > 0 and ctx["notes"] == []
    else:  # 700 point selects can take under 5 ticks of a fast server's CPU: said, not shown as 0
        assert "server_cpu_us_per_query" not in ctx["derived"]
        assert len(ctx["notes"]) == 1 and "no server CPU per query" in ctx["notes"][0], ctx["notes"]
    from pysysbench.stats import results

    results.load(str(tmp_path / "r.json"))  # the reader's check knows the new fields


def test_postgres_deltas_and_a_setting_the_user_cannot_read(postgres, tmp_path):
    doc = run(postgres, tmp_path)
    ctx = doc["server_context"]
    assert ctx["server"] == "PostgreSQL"
    # autocommit point selects: one transaction each; the context's own sessions add a few
    assert EVENTS <= ctx["metrics"]["xact_commit"] <= EVENTS + 20
    assert ctx["metrics"]["blks_hit"] + ctx["metrics"]["blks_read"] >= EVENTS
    assert 0.0 < ctx["derived"]["hit_ratio"] <= 1.0
    assert ctx["settings"]["max_connections"] == "100" and ctx["settings"]["fsync"] == "off"
    # sbtest is no superuser: pg_settings hides data_directory, so the server CPU is left out, with one note
    assert ctx["server_cpu_s"] is None
    assert len(ctx["notes"]) == 1 and "server CPU left out" in ctx["notes"][0]


def test_server_context_off(mariadb, tmp_path):
    doc = run(mariadb, tmp_path, "--server-context=off")
    assert doc["server_context"] is None
