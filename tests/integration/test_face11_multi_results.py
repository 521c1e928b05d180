"""Multiple result sets under the 1.1 face (issue 41, sysbench's GH-304): a ``CALL`` of a
stored procedure returns one result set per SELECT in it and then its own status;
sysbench 1.1's ``con:next_result()`` / ``stmt:next_result()`` walk them and
``con:more_results()`` says whether one is left.  On this session's private MariaDB
(the script creates a procedure).  The expected lines and counts are what the
sysbench 1.1.0 binary printed for the same script on MariaDB 10.11."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.private_server("mysql")

SCRIPT = """
function event()
  local con = sysbench.sql.driver():connect()
  con:query("DROP PROCEDURE IF EXISTS pm")
  con:query("DROP TABLE IF EXISTS tm")
  con:query("CREATE TABLE tm (a INT)")
  con:query([[CREATE PROCEDURE pm (IN txt VARCHAR(20))
BEGIN
  SELECT 'first', txt;
  INSERT INTO tm VALUES (1), (2);
  SELECT a FROM tm ORDER BY a;
  SELECT 'last';
END]])
  local rs = con:query("CALL pm('text')")
  local n = 0
  while rs ~= nil do
    n = n + 1
    local more = con:more_results()
    local row = rs:fetch_row()
    print(n, rs.nrows, rs.nfields, row[1], row[2], more)
    rs = con:next_result()
  end
  print("more after the end", con:more_results())
  local stmt = con:prepare("CALL pm(?)")
  local p = stmt:bind_create(sysbench.sql.type.CHAR, 10)
  stmt:bind_param(p)
  p:set("bound")
  rs = stmt:execute()
  local sets = 0
  while rs ~= nil do
    sets = sets + 1
    rs = stmt:next_result()
  end
  print("prepared result sets", sets)
  print("rows", con:query_row("SELECT COUNT(*) FROM tm"))
  con:query("DROP PROCEDURE pm")
  con:query("DROP TABLE tm")
end
"""

EXPECTED = [
    "1\t1\t2\tfirst\ttext\ttrue",
    "2\t2\t1\t1\tnil\ttrue",
    "3\t1\t1\tlast\tnil\ttrue",
    "more after the end\tfalse",
    "prepared result sets\t3",  # the connection in step after the prepared CALL: the next query works
    "rows\t4",
]


def test_call_results_walked_with_next_result_under_11(mysql_db, run_cli, tmp_path):
    script = tmp_path / "multi.lua"
    script.write_text(SCRIPT)
    proc = run_cli.ok("--sysbench-compat=1.1", *mysql_db.opts, "--events=1", str(script), "run")
    lines = [line for line in proc.stdout.splitlines() if "\t" in line]
    assert lines == EXPECTED, proc.stdout
    # every result a statement of its own, as 1.1 counts them (its binary: 7 / 2 / 6)
    got = {k: int(v) for k, v in re.findall(r"^\s+(read|write|other):\s+(\d+)", proc.stdout, re.M)}
    assert got == {"read": 7, "write": 2, "other": 6}, proc.stdout


def test_no_next_result_under_10(mysql_db, run_cli, tmp_path):
    """sysbench 1.0.20's connections have no next_result: the face stays 1.0.20's."""
    script = tmp_path / "multi.lua"
    script.write_text(SCRIPT)
    proc = run_cli("--sysbench-compat=1.0", *mysql_db.opts, "--events=1", str(script), "run")
    assert proc.returncode != 0
    assert "attempt to call method 'more_results' (a nil value)" in proc.stdout + proc.stderr
