"""lua/bridge.c against its Python twin on real servers: a Lua state's prepared statements
go from the Lua coroutine to the wire through the engine's C event loop, everything else
the coroutine asks for is left to the Python bridge (lua/state.py), and a run gives the same
statements, counts and output either way (lua/bridge_mix.lua mixes both kinds)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pysysbench import native
from pysysbench.cli.main import main
from pysysbench.lua import state as lua_state

pytest.importorskip("lupa")

SCRIPT = Path(__file__).resolve().parent / "lua" / "bridge_mix.lua"
REPO = Path(__file__).resolve().parents[2]
IGNORE = {"mysql": "--mysql-ignore-errors=1062", "pgsql": "--pgsql-ignore-errors=23505"}
RUN = ["--threads=2", "--workers=1", "--time=60", "--rand-seed=7"]


def _outcome(text: str, parse_summary) -> tuple:
    threads = sorted(re.findall(r"^thread \d+: .*$", text, re.M))
    return parse_summary(text), threads


def _python_twin(db, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYSYSBENCH_NATIVE="off", PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "pysysbench", str(SCRIPT), *db.opts, *args], capture_output=True,
                          text=True, timeout=120, env=env, cwd=REPO)


@pytest.mark.skipif(native.LuaEvents is None, reason="the C extension is not built")
def test_the_bridge_serves_statements_in_c_and_leaves_the_rest_to_python(server_db, capfd, monkeypatch,
                                                                          parse_summary):
    db = server_db
    sources = []
    made = lua_state.LuaState.native_events

    def keep(self):
        src = made(self)
        sources.append(src)
        return src

    monkeypatch.setattr(lua_state.LuaState, "native_events", keep)
    try:
        assert main([str(SCRIPT), *db.opts, "prepare"]) == 0
        capfd.readouterr()
        assert main([str(SCRIPT), *db.opts, IGNORE[db.name], *RUN, "run"]) == 0
        c_out = capfd.readouterr().out
        c_rows = db.rows("SELECT COUNT(*), SUM(k), COUNT(c) FROM sbtest_bridge")
        assert main([str(SCRIPT), *db.opts, "cleanup"]) == 0

        assert len(sources) == 2 and all(s is not None for s in sources)
        # per thread: 72 events (60 and the 12 restarted) of 3 statements each; a query (every
        # 7th), a sleep (11th) and a failed insert (5th) are left to Python, with what follows
        assert all(s.statements >= 120 for s in sources), [s.statements for s in sources]
        # handed over once per event (Python finishes it): the queries of events 7, 14, 28, 42
        # and 49 and the sleeps of 22, 33 and 44 -- event 35's insert fails first, and the
        # events after a failed one (6, 11, 16, ...: 11, 21, 56 here) are restarted in Python
        assert [s.handovers for s in sources] == [8, 8]

        proc = _python_twin(db, "prepare")
        assert proc.returncode == 0, proc.stderr
        proc = _python_twin(db, IGNORE[db.name], *RUN, "run")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        py_rows = db.rows("SELECT COUNT(*), SUM(k), COUNT(c) FROM sbtest_bridge")
    finally:
        _python_twin(db, "cleanup")

    c, py = _outcome(c_out, parse_summary), _outcome(proc.stdout, parse_summary)
    assert c == py
    summary, threads = c
    assert threads == ["thread 0: n=61 rows=0", "thread 1: n=61 rows=0"]   # event 60 fails, 61 stops
    assert summary["ignored_errors"] == 2 * 12 and summary["reconnects"] == 0
    assert summary["transactions"] == 2 * (59 - 11)     # a failed event and its restart count once
    assert [tuple(int(v) for v in r) for r in c_rows] == [tuple(int(v) for v in r) for r in py_rows]
