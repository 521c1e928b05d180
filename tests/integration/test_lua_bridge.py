"""lua/bridge.c against its Python twin on real servers: a Lua state's prepared statements
go from the Lua coroutine to the wire through the engine's C event loop, everything else
the coroutine asks for is left to the Python bridge (lua/state.py), and a run gives the same
statements, counts and output either way (lua/bridge_mix.lua mixes both kinds)."""

from __future__ import annotations

import os
import platform
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pysysbench.cli.main import main
from pysysbench.lua import state as lua_state
from pysysbench.runtime import native

pytest.importorskip("lupa")

SCRIPT = Path(__file__).resolve().parent / "lua" / "bridge_mix.lua"
REPO = Path(__file__).resolve().parents[2]
IGNORE = {"mysql": "--mysql-ignore-errors=1062", "pgsql": "--pgsql-ignore-errors=23505"}
RUN = ["--threads=2", "--workers=1", "--time=60", "--rand-seed=7"]
# the table as both runs leave it: counts, sums, and a digest of every c in id order
ROWS = {
    "mysql": "SELECT COUNT(*), SUM(k), COUNT(c), MD5(GROUP_CONCAT(COALESCE(c, '-') ORDER BY id SEPARATOR '|')) "
    "FROM sbtest_bridge",
    "pgsql": "SELECT COUNT(*), SUM(k), COUNT(c), MD5(STRING_AGG(COALESCE(c, '-'), '|' ORDER BY id)) FROM sbtest_bridge",
}


def _outcome(text: str, parse_summary) -> tuple:
    threads = sorted(re.findall(r"^thread \d+: .*$", text, re.M))
    return parse_summary(text), threads


def _python_twin(db, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYSYSBENCH_NATIVE="off", PYTHONPATH=str(REPO))
    return subprocess.run(
        [sys.executable, "-m", "pysysbench", str(SCRIPT), *db.opts, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=REPO,
    )


def _kept_sources(monkeypatch) -> list:
    """The LuaEvents every state of the run makes (LuaState.native_events), kept for the test."""
    sources = []
    made = lua_state.LuaState.native_events

    def keep(self):
        src = made(self)
        sources.append(src)
        return src

    monkeypatch.setattr(lua_state.LuaState, "native_events", keep)
    return sources


@pytest.mark.skipif(native.LuaEvents is None, reason="the C extension is not built")
@pytest.mark.parametrize("stacks", ["on", "off"])
def test_the_bridge_serves_statements_in_c_and_leaves_the_rest_to_python(
    server_db, capfd, monkeypatch, parse_summary, stacks
):
    # stacks on (where the platform has them): each state runs on a C stack of its own and its
    # statements and event ends reach the loop through FFI calls; off: every one is yielded
    monkeypatch.setenv(lua_state.STACKS_ENV, stacks)
    db = server_db
    sources = _kept_sources(monkeypatch)
    try:
        assert main([str(SCRIPT), *db.opts, "prepare"]) == 0
        capfd.readouterr()
        assert main([str(SCRIPT), *db.opts, IGNORE[db.name], *RUN, "run"]) == 0
        c_out = capfd.readouterr().out
        c_rows = db.rows(ROWS[db.name])
        drawn = [r[0] for r in db.rows("SELECT c FROM sbtest_bridge WHERE c NOT LIKE '%-%' OR c LIKE '___-%'")]
        assert main([str(SCRIPT), *db.opts, "cleanup"]) == 0

        assert len(sources) == 2 and all(s is not None for s in sources)
        stacked = stacks == "on" and platform.machine() in ("x86_64", "AMD64") and lua_state.STACKS_PYTHON
        assert [s.stacked for s in sources] == [int(stacked)] * 2
        assert not any(s.parked for s in sources)  # every state left its stack at its end
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
        py_rows = db.rows(ROWS[db.name])
    finally:
        _python_twin(db, "cleanup")

    c, py = _outcome(c_out, parse_summary), _outcome(proc.stdout, parse_summary)
    assert c == py
    summary, threads = c
    assert threads == ["thread 0: n=61 rows=0", "thread 1: n=61 rows=0"]  # event 60 fails, 61 stops
    assert summary["ignored_errors"] == 2 * 12 and summary["reconnects"] == 0
    assert summary["transactions"] == 2 * (59 - 11)  # a failed event and its restart count once
    # the same rows, set_rand_str's strings included (drawn in C into the parameter's buffer, or
    # by the Python twin's Lua generator: the same draws), cut to the parameter's 40 characters
    assert [tuple(str(v) for v in r) for r in c_rows] == [tuple(str(v) for v in r) for r in py_rows]
    drawn = [d for d in drawn if re.fullmatch(r"[a-z]{3}-\d+", d)]
    assert len(drawn) >= 30 and all(len(d) == 40 for d in drawn), drawn[:3]
    assert len(set(drawn)) == len(drawn)


HANG = """
function thread_init()
   con = sysbench.sql.driver():connect()
   slow = con:prepare(SLOW)
   p = slow:bind_create(sysbench.sql.type.INT)
   slow:bind_param(p)
   n = 0
end
function event()
   n = n + 1
   if sysbench.tid == 1 and n == 3 then error("thread 1 gives up") end
   p:set(1)
   slow:execute()          -- thread 0 waits in here (its own C stack) when thread 1 fails
end
"""
SLOW = {"mysql": "SELECT SLEEP(0.3) + ?", "pgsql": "SELECT pg_sleep(0.3), $1::int"}


@pytest.mark.skipif(native.LuaEvents is None, reason="the C extension is not built")
@pytest.mark.skipif(
    platform.machine() not in ("x86_64", "AMD64") or not lua_state.STACKS_PYTHON,
    reason="no stackful events on this platform or Python",
)
def test_a_thread_stopped_inside_its_statement_leaves_its_stack_cleanly(server_db, tmp_path, capfd, monkeypatch):
    # thread 1's error ends the run while thread 0 waits inside pysysbench_exec (or at its
    # event's end): its state is unwound to an ordinary yield before Python enters it again and
    # closes it (no crash, no hang), and the error is reported as sysbench reports it
    db = server_db
    script = tmp_path / "hang.lua"
    script.write_text(HANG.replace("SLOW", repr(SLOW[db.name]).replace("'", '"')))
    sources = _kept_sources(monkeypatch)
    rc = main([str(script), *db.opts, "--threads=2", "--workers=1", "--time=20", "run"])
    out = capfd.readouterr()
    assert rc == 1, out
    assert "thread 1 gives up" in out.err + out.out, out
    assert len(sources) == 2 and all(s.stacked for s in sources)
    assert sources[0].unwinds >= 1 and not any(s.parked for s in sources), [(s.unwinds, s.parked) for s in sources]

    # the same in a process of its own, as a user runs it: one clear error, no traceback
    proc = subprocess.run(
        [sys.executable, "-m", "pysysbench", str(script), *db.opts, "--threads=2", "--workers=1", "--time=20", "run"],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
        cwd=REPO,
    )
    text = proc.stdout + proc.stderr
    assert proc.returncode == 1 and "thread 1 gives up" in text, text
    assert "Traceback" not in text and "Fatal Python error" not in text and "Segmentation" not in text, text


def _count_bare_turns(monkeypatch) -> list[int]:
    """[n]: how many bare yields (asyncio.sleep(0)'s None) the run's strands park on."""
    from pysysbench.engine import strand

    bare = [0]
    park = strand.Strand._park

    def counting(self, yielded):
        bare[0] += yielded is None
        return park(self, yielded)

    monkeypatch.setattr(strand.Strand, "_park", counting)
    return bare


TURNS = {
    "waits": """
function thread_init()
   con = sysbench.sql.driver():connect()
   st = con:prepare(ONE)
   p = st:bind_create(sysbench.sql.type.INT)
   st:bind_param(p)
end
function event()
   p:set(1)
   st:execute()
end
""",
    "never waits": "function event() local x = 0; for i = 1, 10 do x = x + i end end",
}
ONE = {"mysql": "SELECT ?", "pgsql": "SELECT $1::int"}


@pytest.mark.skipif(native.LuaEvents is None, reason="the C extension is not built")
@pytest.mark.parametrize("kind", sorted(TURNS))
def test_an_event_that_waited_takes_no_extra_turn_through_the_loop(server_db, tmp_path, capfd, monkeypatch, kind):
    # the C loop gives the event loop a bare turn (as asyncio.sleep(0)) after a window of events
    # that never waited; an event whose statement waited gave the loop its turn already. With the
    # window at 1 ns every event ends past it: the events with a statement take no bare turn, the
    # arithmetic ones one each (at 1000 threads every event outlasts the real 5 ms window, and a
    # bare turn per event was a second trip through the loop for each)
    from pysysbench.engine import worker

    db = server_db
    monkeypatch.setattr(worker, "YIELD_EVERY_NS", 1)
    bare = _count_bare_turns(monkeypatch)
    script = tmp_path / "turns.lua"
    script.write_text(TURNS[kind].replace("ONE", repr(ONE[db.name]).replace("'", '"')))
    assert main([str(script), *db.opts, "--threads=2", "--workers=1", "--time=1", "run"]) == 0
    out = capfd.readouterr().out
    events = int(re.search(r"total number of events:\s+(\d+)", out).group(1))
    assert events > 200, out
    if kind == "waits":
        assert bare[0] == 0, (bare[0], events)
    else:
        assert events - 2 <= bare[0] <= events + 2, (bare[0], events)


def test_the_python_loop_takes_one_turn_per_window_for_all_its_threads(server_db, tmp_path, capfd, monkeypatch):
    # --events runs the threads' events in the Python loop (engine/worker.py _python_loop): the
    # worker's threads share one window for their bare turns, so 8 threads with a 10-ms window
    # take about 100 turns a second in all, not 100 each
    from pysysbench.engine import worker

    db = server_db
    monkeypatch.setattr(worker, "YIELD_EVERY_NS", 10_000_000)
    bare = _count_bare_turns(monkeypatch)
    script = tmp_path / "turns.lua"
    script.write_text(TURNS["waits"].replace("ONE", repr(ONE[db.name]).replace("'", '"')))
    assert main([str(script), *db.opts, "--threads=8", "--workers=1", "--events=100000000", "--time=1", "run"]) == 0
    out = capfd.readouterr().out
    seconds = float(re.search(r"total time:\s+([\d.]+)s", out).group(1))
    assert 50 * seconds <= bare[0] <= 150 * seconds + 8, (bare[0], seconds)


ENDING = """
function thread_init()
   con = sysbench.sql.driver():connect()
   n = 0
end
function event()
   n = n + 1
   con:query("SELECT 1")
   if sysbench.tid == 1 and n == 3 then return true end   -- thread 1 ends before the run does
end
function thread_done()
   con:disconnect()
end
"""


def _watch_held_sessions(monkeypatch) -> tuple[list, list]:
    """The connections the run's threads hand to Worker.close_later, and whether each was
    closed (its wire gone) when the engine's Worker.close began and when it ended."""
    from pysysbench.engine import worker

    later, closed = [], []
    keep, close = worker.Worker.close_later, worker.Worker.close

    def record(self, conn):
        later.append(conn)
        keep(self, conn)

    async def closing(self):
        closed.append([c.wire is None for c in later])
        await close(self)
        closed.append([c.wire is None for c in later])

    monkeypatch.setattr(worker.Worker, "close_later", record)
    monkeypatch.setattr(worker.Worker, "close", closing)
    return later, closed


def test_sessions_a_script_ends_with_the_run_close_after_it(server_db, tmp_path, monkeypatch):
    # at the run's end the script's disconnects wait for the engine's close after the run (1000
    # sessions ending while the last events are in flight cost the server a second inside the
    # run's total time); a thread that ends before the run does closes its session at once
    db = server_db
    later, closed = _watch_held_sessions(monkeypatch)
    script = tmp_path / "ending.lua"
    script.write_text(ENDING)
    assert main([str(script), *db.opts, "--threads=2", "--workers=1", "--time=1", "run"]) == 0
    assert len(later) == 1  # thread 0's; thread 1 closed its own at once
    assert closed == [[False], [True]]  # open until the engine's close, closed by it


SLOW_LAST = {"mysql": "SELECT SLEEP(1.5)", "pgsql": "SELECT pg_sleep(1.5)"}


def test_a_session_held_for_the_runs_end_closes_after_a_grace_if_the_run_goes_on(server_db, tmp_path, monkeypatch):
    # thread 1's last event outlasts the time limit by over a second: thread 0's session (which
    # could hold locks that event waits on) does not wait for the run's end, only CLOSE_LATER_S
    from pysysbench.engine import worker

    db = server_db
    monkeypatch.setattr(worker, "CLOSE_LATER_S", 0.2)
    later, closed = _watch_held_sessions(monkeypatch)
    script = tmp_path / "slow_last.lua"
    script.write_text(
        ENDING.replace(
            "if sysbench.tid == 1 and n == 3 then return true end",
            f"if sysbench.tid == 1 and n == 2 then con:query({SLOW_LAST[db.name]!r}) end",
        )
    )
    assert main([str(script), *db.opts, "--threads=2", "--workers=1", "--time=1", "run"]) == 0
    # thread 0's closed within the grace, thread 1's (its last event outlasting the limit) by close()
    assert len(later) == 2 and closed == [[True, False], [True, True]]
