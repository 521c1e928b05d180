"""The Lua engine on real servers: sysbench's own Debian scripts and scripts written
the way third-party suites write theirs (spec sysbench-lua-api.md, section 9).

* ``--lua-bundled=on`` runs the sysbench package's ``oltp_*.lua`` files through the
  Lua engine: per event the server executes the statements the native workloads
  send (same capture and expectations as test_statement_counts.py), and their
  ``prepare`` makes the same tables and rows as the native one.
* ``lua/tpcc_like.lua`` (+ its sibling ``tpcc_common.lua`` found by ``require``):
  declared options, a parallel custom ``prepare`` and ``check``, ``query_row`` with
  several values, ``fetch_row`` with ``nfields``, bulk inserts, ``ffi.C.sb_counter_inc``
  and ``usleep``, ``report_csv`` from a report hook, ``sysbench.opt``.
* ``lua/legacy_main.lua``: the 0.5 API with ``dofile`` of a sibling through ``test``.
* Errors as sysbench prints them (SQLite, no server needed).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from test_statement_counts import check_report, expected_kinds, run_args

pytest.importorskip("lupa")

LUA_DIR = Path(__file__).resolve().parent / "lua"
SCRIPTS = "/usr/share/sysbench"
DATA = ["--tables=2", "--table-size=200"]


def _columns(db) -> list[tuple]:
    if db.name == "mysql":
        sql = (
            "SELECT table_name, column_name, column_type, is_nullable, column_default FROM "
            "information_schema.columns WHERE table_schema='sbtest' AND table_name LIKE 'sbtest%' "
            "ORDER BY table_name, ordinal_position"
        )
    else:
        sql = (
            "SELECT table_name, column_name, data_type, is_nullable, column_default FROM "
            "information_schema.columns WHERE table_schema='public' AND table_name LIKE 'sbtest%' "
            "ORDER BY table_name, ordinal_position"
        )
    return [tuple(str(v) for v in r) for r in db.rows(sql)]


def _data(db) -> list[tuple]:
    return [tuple(db.rows(f"SELECT COUNT(*), MIN(id), MAX(id), COUNT(DISTINCT id) FROM sbtest{t}")[0]) for t in (1, 2)]


@pytest.mark.skipif(not os.path.isfile(f"{SCRIPTS}/oltp_read_write.lua"), reason="no sysbench package scripts")
@pytest.mark.private_server("pgsql")  # capture() on PostgreSQL reads pg_stat_statements
@pytest.mark.parametrize("workload", ["oltp_read_write", "oltp_point_select", "oltp_write_only"])
def test_debian_scripts_send_the_native_statements(server_db, workload, run_cli, parse_summary):
    db = server_db
    run_cli.ok(workload, *db.opts, *DATA, "prepare")
    native = (_columns(db), _data(db))
    run_cli.ok(workload, *db.opts, *DATA, "cleanup")

    proc = run_cli.ok("--lua-bundled=on", workload, *db.opts, *DATA, "--threads=2", "prepare")
    assert "Creating table 'sbtest2'..." in proc.stdout, proc.stdout
    assert (_columns(db), _data(db)) == native

    with db.capture() as cap:
        proc = run_cli.ok("--lua-bundled=on", f"{SCRIPTS}/{workload}.lua", *db.opts, *DATA, *run_args(), "run")
    rep = parse_summary(proc.stdout)
    check_report(workload, rep, 30, None)
    assert cap.event_kinds() == expected_kinds(workload, 30), dict(cap.event_kinds())
    run_cli.ok("--lua-bundled=on", workload, *db.opts, *DATA, "cleanup")
    assert db.tables() == []


def test_third_party_style_script(server_db, run_cli, parse_summary):
    db = server_db
    args = [*db.opts, "--tables=2", "--threads=2"]
    try:
        proc = run_cli.ok("tpcc_like.lua", *args, "prepare", cwd=LUA_DIR)
        assert "thread 0 prepares lua_item1" in proc.stdout and "thread 1 prepares lua_item2" in proc.stdout
        proc = run_cli.ok("tpcc_like.lua", *args, "check", cwd=LUA_DIR)
        assert "check lua_item1: 50 rows, 5 null" in proc.stdout, proc.stdout
        assert "check lua_item2: 50 rows, 5 null" in proc.stdout, proc.stdout

        proc = run_cli.ok(
            "tpcc_like.lua",
            *args,
            "--events=30",
            "--time=0",
            "--report-interval=1",
            "--report_csv=yes",
            "run",
            cwd=LUA_DIR,
        )
        rep = parse_summary(proc.stdout)
        # each thread cycles new_order = BEGIN, SELECT, UPDATE (to the same value: MariaDB reports no
        # changed row, an "other"; PostgreSQL's tag counts the row, a "write"), COMMIT; stock_level =
        # SELECT; rollback = BEGIN, ROLLBACK and one error counted through ffi.C.  The threads take
        # their events from the one --events budget, as sysbench's: not necessarily 15 each
        done = re.findall(r"thread [01] done after (\d+) events \(use_fk=true, trx_level=RR\)", proc.stdout)
        per_thread = [int(n) for n in done]
        assert len(per_thread) == 2 and sum(per_thread) == 30, proc.stdout
        new_order = sum((n + 2) // 3 for n in per_thread)
        stock_level = sum((n + 1) // 3 for n in per_thread)
        rollback = sum(n // 3 for n in per_thread)
        updates = 0 if db.name == "mysql" else new_order
        assert (rep["read"], rep["write"], rep["other"]) == (
            new_order + stock_level,
            updates,
            3 * new_order + 2 * rollback - updates,
        ), rep
        assert rep["events"] == 30 and rep["ignored_errors"] == rollback, rep
        bad = run_cli("tpcc_like.lua", *args, "--no-such-option=1", "run", cwd=LUA_DIR)
        assert bad.returncode == 1 and "invalid option: --no-such-option=1" in bad.stderr
    finally:
        run_cli("tpcc_like.lua", *args, "cleanup", cwd=LUA_DIR)
    assert db.scalar("SELECT COUNT(*) FROM information_schema.tables WHERE table_name LIKE 'lua_item%'") == 0


def test_legacy_api_with_dofile(server_db, run_cli, parse_summary):
    db = server_db
    script = str(LUA_DIR / "legacy_main.lua")
    args = [*db.opts, f"--test={script}", "--legacy-rows=30"]
    try:
        proc = run_cli.ok(*args, "prepare")
        assert "prepared 30 rows" in proc.stdout
        before = int(db.scalar("SELECT SUM(v) FROM lua_legacy"))
        proc = run_cli.ok(*args, "--max-requests=20", "--num-threads=2", "run")
        rep = parse_summary(proc.stdout)
        assert (rep["read"], rep["write"], rep["other"]) == (20, 20, 40), rep
        assert int(db.scalar("SELECT SUM(v) FROM lua_legacy")) == before + 20  # the bound parameter was re-read
    finally:
        run_cli(*args, "cleanup")


# --- no server needed -----------------------------------------------------------------


def _script(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_errors_as_sysbench_prints_them(sqlite_opts, run_cli, tmp_path):
    # relative names, as typed: LuaJIT shortens long chunk names with "..." (so does sysbench)
    def run(name: str, text: str, *args: str):
        _script(tmp_path, name, text)
        return run_cli(name, *sqlite_opts, *args, cwd=tmp_path)

    proc = run("syn.lua", "foo\n", "run")
    assert proc.returncode == 1 and "FATAL: syn.lua:2: '=' expected near '<eof>'" in proc.stdout, proc.stdout
    proc = run("noev.lua", "function foo() end\n", "run")
    assert proc.returncode == 1 and "FATAL: cannot find the event() function in noev.lua" in proc.stdout
    proc = run("rterr.lua", "function event()\n  error('boom')\nend\n", "--events=1", "run")
    assert proc.returncode == 1 and "FATAL: `thread_run' function failed: rterr.lua:2: boom" in proc.stdout
    proc = run("missing.lua", "function event()\n  no_such_function()\nend\n", "--events=1", "run")
    assert proc.returncode == 1
    assert "missing.lua:2: attempt to call global 'no_such_function' (a nil value)" in proc.stdout
    proc = run("initerr.lua", "function init() error('in init') end\nfunction event() end\n", "run")
    assert proc.returncode == 1 and "FATAL: `init' function failed: initerr.lua:1: in init" in proc.stdout

    proc = run_cli("no_such_script.lua", *sqlite_opts, "run", cwd=tmp_path)
    assert proc.returncode == 1
    assert "Cannot find benchmark 'no_such_script.lua': no such built-in test, file or module" in proc.stdout


def test_errors_inside_the_api_name_the_scripts_line(sqlite_opts, run_cli, tmp_path):
    """An error raised inside sysbench's API (a nil SQL text, a bad argument to an FFI symbol,
    a host function's failure) is told at the script's line that made the call, as
    sysbench 1.0.20 tells an FFI call's error -- never at pysysbench's temporary .luac file
    (was: `/tmp/pysysbench-sysbench-*.luac:0: attempt to get length of a nil value`, and
    `(not a string)` for a host function's error)."""

    def run(name: str, body: str):
        _script(tmp_path, name, f"local ffi = require('ffi')\nfunction event()\n  {body}\nend\n")
        proc = run_cli(name, *sqlite_opts, "--events=1", "run", cwd=tmp_path)
        assert proc.returncode == 1, proc.stdout
        assert ".luac" not in proc.stdout + proc.stderr and "(not a string)" not in proc.stdout, proc.stdout
        return proc.stdout

    failed = "FATAL: `thread_run' function failed: "
    # sysbench 1.0.20 prints this line for the same script
    out = run("ffiarg.lua", 'ffi.C.sb_rand_uniform("abc", 1)')
    assert (
        failed + "ffiarg.lua:3: bad argument #1 to 'sb_rand_uniform' (cannot convert 'string' to 'unsigned int')" in out
    ), out
    out = run("counter.lua", 'ffi.C.sb_counter_inc(0, "x")')
    assert (
        failed + "counter.lua:3: bad argument #2 to 'sb_counter_inc' (cannot convert 'string' to 'sb_counter_type')"
        in out
    ), out
    out = run("sleeparg.lua", 'ffi.C.usleep("x")')
    assert failed + "sleeparg.lua:3: bad argument #1 to 'usleep' (cannot convert 'string' to 'unsigned int')" in out, (
        out
    )
    # inside the API's Lua (sysbench: [string "sysbench.sql.lua"]:269: attempt to get length of local 'query')
    out = run("nilquery.lua", "local con = sysbench.sql.driver():connect(); con:query(nil)")
    assert failed + "nilquery.lua:3: attempt to get length of a nil value" in out, out
    out = run("nilstr.lua", "sysbench.rand.string(nil)")
    assert failed + "nilstr.lua:3: attempt to get length of a nil value" in out, out
    out = run("indexnil.lua", "local t = nil; return t.x")
    assert failed + "indexnil.lua:3: attempt to index local 't' (a nil value)" in out, out


def test_declared_options_help_and_values(sqlite_opts, run_cli, tmp_path):
    opts = _script(
        tmp_path,
        "opts.lua",
        """
sysbench.cmdline.options = {
  num = {"a number", 10}, flag = {"a bool", false}, list = {"a list", {"a", "b"}},
  ["dash-opt"] = {"dash", "x"}, int_opt = {"an int", 3, sysbench.cmdline.ARG_INT},
}
function event()
  local o = sysbench.opt
  print(o.num + 1, o.flag, #o.list, o.dash_opt, o.int_opt, type(o.threads))
  return true
end
""",
    )
    proc = run_cli.ok(opts, *sqlite_opts, "help")
    assert (
        "opts.lua options:\n"
        "  --dash-opt=STRING dash [x]\n"
        "  --flag[=on|off]   a bool [off]\n"
        "  --int_opt=N       an int [3]\n"
        "  --list=[LIST,...] a list [a,b]\n"
        "  --num=N           a number [10]\n\n"
    ) in proc.stdout
    proc = run_cli.ok(opts, *sqlite_opts, "--num=1.5x", "--flag", "--list=a,,b,c", "--dash-opt=y", "run")
    assert "2.5\ttrue\t3\ty\t3\tnumber" in proc.stdout
    proc = run_cli(opts, *sqlite_opts, "--int-opt=12abc", "run")
    assert proc.returncode == 1 and "Invalid value for the 'int_opt' option: '12abc'" in proc.stderr


RESTART = """
function thread_init()
  con = sysbench.sql.driver():connect()
  con:query("DROP TABLE IF EXISTS lua_ig")
  con:query("CREATE TABLE lua_ig (a INT NOT NULL)")
  n = 0
end
function sysbench.hooks.before_restart_event(e)
  print("before_restart_event:", e.errcode, e.sql_state, e.query)
end
function event()
  n = n + 1
  print("event attempt " .. n)
  if n == 1 then
    local ok, e = pcall(con.query, con, "INSERT INTO lua_ig VALUES (NULL)")
    print("pcall:", ok, type(e), e.errcode)
    con:query("INSERT INTO lua_ig VALUES (NULL)")
  elseif n == 2 then
    con:query("INSERT INTO lua_ig VALUES (NULL)")
  end
  print("event completes")
end
function thread_done() con:query("DROP TABLE lua_ig") end
"""


def test_ignorable_errors_restart_the_event(server_db, run_cli, parse_summary, tmp_path):
    """spec A.3: an error in the ignore list restarts the whole event (a pcall sees the
    descriptor table), before_restart_event runs before each attempt, the event counts
    once, every failure is an ignored error -- and the process exits cleanly (a restart
    once left a Lua object to the interpreter's final garbage collection: SIGSEGV)."""
    db = server_db
    ignore = "--mysql-ignore-errors=1048" if db.name == "mysql" else "--pgsql-ignore-errors=23502"
    script = _script(tmp_path, "restart.lua", RESTART)
    proc = run_cli(script, *db.opts, ignore, "--events=1", "--time=0", "run")
    assert proc.returncode == 0, run_cli.describe(proc)
    lines = [x for x in proc.stdout.splitlines() if x.startswith(("event", "pcall", "before"))]
    state = "23000" if db.name == "mysql" else "23502"
    hook = f"before_restart_event:\t1\t{state}\tINSERT INTO lua_ig VALUES (NULL)"
    assert lines == [
        "event attempt 1",
        "pcall:\tfalse\ttable\t1",
        hook,
        "event attempt 2",
        hook,
        "event attempt 3",
        "event completes",
    ], proc.stdout
    rep = parse_summary(proc.stdout)
    assert rep["events"] == 1 and rep["ignored_errors"] == 3, rep
