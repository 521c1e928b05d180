"""``con:reconnect()`` and 1.1's ``--reconnect=N`` on PostgreSQL (issue 41).

sysbench 1.0.20's PostgreSQL driver has no reconnect (the call only logs that it is
not supported); 1.1.0's closes the session and opens a new one, counted in
``reconnects`` and ``reconn/s``, and 1.1's oltp_common.lua re-prepares its statements
after each ``--reconnect=N``-th event.  Checked on the server: the backend serving
the connection changes, and every reconnect is a session of its own in
``pg_stat_database``.  On this session's private PostgreSQL (the runs open many
sessions)."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest
from conftest import REPO

SCRIPTS_11 = Path(os.environ.get("PYSYSBENCH_CONFORMANCE_DIR", REPO.parent / "shared" / "conformance")) / (
    "sysbench-1.1/src/lua"
)

pytestmark = pytest.mark.private_server("pgsql")

# a statement prepared before the reconnect, closed, and prepared again on the new session
PID_SCRIPT = """
function sysbench.hooks.report_cumulative(stat)
  print("reconnects = " .. stat.reconnects)
end
function thread_init()
  con = sysbench.sql.driver():connect()
end
function event()
  local stmt = con:prepare("UPDATE t SET a = a + ?")
  local p = stmt:bind_create(sysbench.sql.type.INT)
  stmt:bind_param(p)
  p:set(1)
  stmt:execute()
  local before = con:query_row("SELECT pg_backend_pid()")
  stmt:close()
  con:reconnect()
  stmt = con:prepare("UPDATE t SET a = a + ?, b = ?")
  p = stmt:bind_create(sysbench.sql.type.INT)
  local f = stmt:bind_create(sysbench.sql.type.FLOAT)
  stmt:bind_param(p, f)
  p:set(10)
  f:set(0.5)
  stmt:execute()
  local after = con:query_row("SELECT pg_backend_pid()")
  print(before == after and "same backend" or "new backend")
  print(string.format("a = %s, b = %s", con:query_row("SELECT a, b FROM t")))
end
"""


def _sessions(db) -> int:
    return int(db.admin("SELECT sessions FROM pg_stat_database WHERE datname = 'sbtest'")[0][0])


@pytest.mark.parametrize(
    "compat, backend, reconnects, b",
    [("1.1", "new backend", 1, "0.5"), ("1.0", "same backend", 0, "0")],
    ids=["1.1", "1.0"],
)
def test_con_reconnect_opens_a_new_session_under_11(pgsql_db, run_cli, tmp_path, compat, backend, reconnects, b):
    db = pgsql_db
    for sql in ("DROP TABLE IF EXISTS t", "CREATE TABLE t (a INT, b REAL)", "INSERT INTO t VALUES (0, 0)"):
        db.rows(sql)
    script = tmp_path / "reconnect.lua"
    script.write_text(PID_SCRIPT)
    try:
        proc = run_cli.ok(f"--sysbench-compat={compat}", *db.opts, "--events=1", str(script), "run")
    finally:
        db.rows("DROP TABLE IF EXISTS t")
    assert backend in proc.stdout, proc.stdout
    assert f"reconnects = {reconnects}" in proc.stdout, proc.stdout
    # both executes of the statement ran: re-prepared on the new session under 1.1; a FLOAT
    # parameter's value is sent by 1.1 (1.0.20 sends 0)
    assert f"a = 11, b = {b}" in proc.stdout, proc.stdout
    alert = "ALERT: reconnect is not supported by the current driver"
    assert (alert in proc.stdout + proc.stderr) == (compat == "1.0"), proc.stdout + proc.stderr


@pytest.mark.skipif(
    not (SCRIPTS_11 / "oltp_read_write.lua").exists(), reason=f"no sysbench 1.1 scripts in {SCRIPTS_11}"
)
def test_reconnect_option_of_11_scripts_reopens_postgresql_sessions(pgsql_db, run_cli):
    db = pgsql_db
    script = str(SCRIPTS_11 / "oltp_read_write.lua")
    args = ["--sysbench-compat=1.1", *db.opts, "--tables=1", "--table-size=100", script]
    here = SCRIPTS_11  # where require("oltp_common") finds 1.1's, as for a user in that folder
    run_cli.ok(*args, "prepare", cwd=here)
    sessions = _sessions(db)
    run = ["--threads=1", "--time=2", "--events=0", "--report-interval=1", "--reconnect=5", "run"]
    proc = run_cli.ok(*args, *run, cwd=here)
    run_cli.ok(*args, "cleanup", cwd=here)
    out = proc.stdout
    transactions = int(re.search(r"^\s+transactions:\s+(\d+)", out, re.M).group(1))
    got = int(re.search(r"^\s+reconnects:\s+(\d+)\s+\((\S+) per sec\.\)", out, re.M).group(1))
    assert transactions >= 10 and got == transactions // 5, out
    assert re.search(r"^\s+ignored errors:\s+0\s", out, re.M), out  # the re-prepared statements all ran
    rates = [float(r) for r in re.findall(r"reconn/s: (\d+\.\d+)", out)]
    assert rates and max(rates) > 0, out
    # each reconnect was a session of its own on the server (its end reported as the backend exits)
    deadline = time.monotonic() + 10
    while _sessions(db) - sessions < got + 1 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _sessions(db) - sessions >= got + 1, (sessions, _sessions(db), got)
