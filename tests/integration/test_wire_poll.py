"""The worker's wires read in C (engine/worker.py's WirePump over drivers/wire.c's
WirePoll) in real runs on MariaDB and PostgreSQL: the pump, not the event loop, reads a
run's responses; a run gives the same statements with it and without it
(PYSYSBENCH_WIRE_POLL=off); a session the server kills mid-run goes back to the event
loop, which reports it, and the thread's new session is read by the pump again; a Lua
script's connections are read by it too.  tests/unit/test_wire_poll_socketpair.py checks the poll
itself over a socket pair."""

from __future__ import annotations

import re
import threading
import time

import pytest

from pysysbench.cli.main import main
from pysysbench.engine import worker
from pysysbench.runtime import native

pytestmark = pytest.mark.skipif(native.WirePoll is None, reason="the C extension is not built")


def _pumps(monkeypatch) -> list:
    """The WirePumps the run's workers start (the run is in-process: --workers=1)."""
    made: list = []
    start = worker.WirePump.start

    def recording(self, loop):
        made.append(self)
        return start(self, loop)

    monkeypatch.setattr(worker.WirePump, "start", recording)
    return made


def _value(out: str, name: str) -> int:
    return int(re.search(rf"^\s+{name}:\s+(\d+)", out, re.M).group(1))


def _prepare(db, capfd) -> None:
    assert main(["oltp_point_select", *db.opts, "--tables=1", "--table-size=1000", "prepare"]) == 0
    capfd.readouterr()


def test_the_pump_reads_a_runs_responses_and_the_statements_are_the_same_without_it(server_db, capfd, monkeypatch):
    db = server_db
    _prepare(db, capfd)
    pumps = _pumps(monkeypatch)
    run = [
        "oltp_read_only",
        *db.opts,
        "--tables=1",
        "--table-size=1000",
        "--threads=3",
        "--workers=1",
        "--time=1",
        "run",
    ]
    assert main(run) == 0
    out = capfd.readouterr().out
    queries = _value(out, "total")
    assert len(pumps) == 1 and pumps[0].taken == 3 and pumps[0].stopped
    # each response one read or more: nearly all of them read by the pump, not the loop
    assert pumps[0].reads >= 0.95 * queries, (pumps[0].reads, queries)
    assert not pumps[0].wires and pumps[0].poll.count == 0  # back with the event loop after the run
    per_event = _value(out, "read") / _value(out, "transactions")

    monkeypatch.setattr(worker, "WIRE_POLL", False)
    del pumps[:]
    assert main(run) == 0
    out = capfd.readouterr().out
    assert pumps == []
    assert _value(out, "read") / _value(out, "transactions") == per_event == 14


def test_a_killed_session_goes_back_to_the_loop_and_its_new_one_is_read_by_the_pump(server_db, capfd, monkeypatch):
    db = server_db
    _prepare(db, capfd)
    pumps = _pumps(monkeypatch)
    ignore = "--mysql-ignore-errors=2013,2006" if db.name == "mysql" else "--pgsql-ignore-errors=08006"
    find = (
        "SELECT id FROM information_schema.processlist WHERE db=DATABASE() AND id <> CONNECTION_ID()"
        if db.name == "mysql"
        else "SELECT pid FROM pg_stat_activity WHERE datname=current_database() AND pid <> pg_backend_pid()"
    )
    kill = "KILL CONNECTION {}" if db.name == "mysql" else "SELECT pg_terminate_backend({})"
    killed: list = []

    def killer():
        time.sleep(1.0)
        ids = [r[0] for r in db.admin(find)]
        if ids:
            db.admin(kill.format(ids[0]))
            killed.append(ids[0])

    t = threading.Thread(target=killer)
    t.start()
    try:
        assert (
            main(
                [
                    "oltp_point_select",
                    *db.opts,
                    "--tables=1",
                    "--table-size=1000",
                    "--threads=2",
                    "--workers=1",
                    "--time=3",
                    ignore,
                    "run",
                ]
            )
            == 0
        )
    finally:
        t.join()
    out = capfd.readouterr().out
    assert killed, "no session to kill"
    assert _value(out, "reconnects") >= 1, out
    pump = pumps[0]
    # the two threads' first wires and the new one of the thread whose session was killed
    assert pump.taken >= 3, pump.taken
    assert pump.reads >= 0.9 * _value(out, "total"), (pump.reads, out)


def test_threads_whose_events_do_not_wait_run_while_the_loop_waits_not_the_pump(server_db, capfd, monkeypatch):
    # bulk_insert's events only fill a buffer (one statement per 512 KiB): the threads are
    # ready to run, not waiting on a wire, so the pump must not hold the loop for a turn.
    # It did: each event waited 5 ms for the pump's turn, 200 events a second
    db = server_db
    assert main(["bulk_insert", *db.opts, "--threads=2", "prepare"]) == 0
    pumps = _pumps(monkeypatch)
    assert main(["bulk_insert", *db.opts, "--threads=2", "--workers=1", "--events=60000", "--time=0", "run"]) == 0
    out = capfd.readouterr().out
    seconds = float(re.search(r"total time:\s+([\d.]+)s", out).group(1))
    assert _value(out, "transactions") == 60000
    assert len(pumps) == 1 and pumps[0].taken == 2
    # the pump waits only while both threads wait on their INSERT (a few per thread)
    assert pumps[0].waits < 50 and seconds < 20, (pumps[0].waits, seconds)
    assert main(["bulk_insert", *db.opts, "--threads=2", "cleanup"]) == 0


LUA = """
function thread_init()
   con = sysbench.sql.driver():connect()
   st = con:prepare("SELECT 1")
end
function event()
   st:execute()
   assert(tonumber(con:query_row("SELECT 2")) == 2)
end
"""


def test_a_lua_scripts_connections_are_read_by_the_pump(server_db, tmp_path, capfd, monkeypatch):
    pytest.importorskip("lupa")
    db = server_db
    pumps = _pumps(monkeypatch)
    script = tmp_path / "pumped.lua"
    script.write_text(LUA)
    assert main([str(script), *db.opts, "--threads=2", "--workers=1", "--time=1", "run"]) == 0
    out = capfd.readouterr().out
    queries = _value(out, "total")
    assert queries > 100 and len(pumps) == 1 and pumps[0].taken == 2
    assert pumps[0].reads >= 0.9 * queries, (pumps[0].reads, queries)


SLEEPY = """
function thread_init()
   con = sysbench.sql.driver():connect()
end
function event()
   con:query("{sleep}")
end
"""


def test_a_client_waiting_on_a_slow_server_leaves_the_wait_to_the_event_loop(server_db, tmp_path, capfd, monkeypatch):
    # every query takes 0.3 s: the pump waited in turns of YIELD_EVERY_NS (5 ms), 60 turns a
    # query, each a trip through the event loop and Python; after IDLE_TURNS empty turns the
    # loop waits on the poll as a reader (its own timers' timeouts) until a response comes
    pytest.importorskip("lupa")
    db = server_db
    pumps = _pumps(monkeypatch)
    script = tmp_path / "sleepy.lua"
    script.write_text(SLEEPY.replace("{sleep}", "SELECT SLEEP(0.3)" if db.name == "mysql" else "SELECT pg_sleep(0.3)"))
    argv = [str(script), *db.opts, "--threads=1", "--workers=1", "--events=6", "--time=0", "run"]
    assert main(argv) == 0
    out = capfd.readouterr().out
    assert _value(out, "total") == 6 and len(pumps) == 1
    pump = pumps[0]
    assert pump.idles >= 5, (pump.idles, pump.waits)  # once for nearly every query
    assert pump.waits <= 6 * (worker.IDLE_TURNS + 8), (pump.idles, pump.waits)
