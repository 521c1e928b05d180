"""The Lua engine without a database: sysbench's random stream (spec sysbench.md 4.7),
option conversion (lua-api spec 1.9), the logger's de-duplication, and the text
result-set scanners con:query uses."""

from __future__ import annotations

import re
import struct

import pytest

from pysysbench.cli.main import main
from pysysbench.core.options import OptType
from pysysbench.drivers.mysql.scan import mysql_scan
from pysysbench.drivers.pgsql.scan import pg_scan
from pysysbench.drivers.wire import TextResult
from pysysbench.lua import state as lua_state
from pysysbench.lua.log import Log
from pysysbench.lua.options import convert, strtod

pytest.importorskip("lupa")


def _run(tmp_path, capfd, text: str, *args: str) -> list[str]:
    script = tmp_path / "t.lua"
    script.write_text(text)
    assert main([str(script), "--threads=1", "--workers=1", f"--sqlite-db={tmp_path / 'x.db'}", *args, "run"]) == 0
    return [line for line in capfd.readouterr().out.splitlines() if line[:1].isdigit()]


def test_rand_is_sysbench_stream_bit_for_bit(tmp_path, capfd):
    # spec sysbench.md 4.7: --rand-seed=7, --percentile=0, one thread, no background thread
    lines = _run(
        tmp_path,
        capfd,
        """
function event()
  local r = sysbench.rand
  print(r.special(1,10000), r.special(1,10000), r.special(1,10000), r.gaussian(1,10000),
        r.gaussian(1,10000), r.gaussian(1,10000), r.pareto(1,10000), r.pareto(1,10000),
        r.pareto(1,10000), r.string("##-@@-x"), string.format("%.17g", r.uniform_double()))
end""",
        "--rand-seed=7",
        "--percentile=0",
        "--events=2",
    )
    assert lines == [
        "5005\t5016\t4991\t4833\t5063\t5328\t2571\t1\t7965\t18-lp-x\t0.31360269079713499",
        "5022\t5046\t5346\t3459\t5151\t4020\t204\t1\t1\t98-el-x\t0.12057904457374691",
    ]


def test_rand_histogram_draw_between_events(tmp_path, capfd):
    # --rand-seed=5 with the percentile on: one hidden draw after each event
    lines = _run(
        tmp_path, capfd, "function event() print(sysbench.rand.uniform(1, 1000000)) end", "--rand-seed=5", "--events=2"
    )
    assert lines == ["633751", "420787"]


def test_option_values_follow_sysbench():
    assert strtod("12.5x") == 12.5 and strtod("abc") == 0.0 and strtod("1e3") == 1000 and strtod("0x10") == 16
    assert convert(OptType.SIZE, "s", "1M", "") == 1 << 20 and convert(OptType.SIZE, "s", "12k7", "") == 12288
    assert convert(OptType.SIZE, "s", "3x", "") == 0
    assert convert(OptType.LIST, "l", "a,b,,c", "") == ["a", "b", "c"]
    assert convert(OptType.BOOL, "b", None, "") is True and convert(OptType.BOOL, "b", "off", "") is False
    for bad in ("1.5", "12abc", "99999999999"):
        with pytest.raises(Exception, match=f"Invalid value for the 'i' option: '{bad}'"):
            convert(OptType.INT, "i", bad, "")


def test_log_collapses_repeated_lines():
    out: list[str] = []
    log = Log(out.append, verbosity=1)
    for _ in range(3):
        log(1, "attempt to free an invalid result set")
    log(5, "debug: dropped at verbosity 1")
    log(0, "something else")
    assert out == [
        "ALERT: attempt to free an invalid result set",
        "(last message repeated 2 times)",
        "FATAL: something else",
    ]


def test_log_counts_the_text_whatever_the_level():
    # sysbench compares the message text, not the prefixed line
    out: list[str] = []
    log = Log(out.append, verbosity=2)
    log(1, "same")
    log(2, "same")
    log(0, "other")
    assert out == ["ALERT: same", "(last message repeated 1 times)", "FATAL: other"]


def test_repeat_notice_prints_below_verbosity_3(tmp_path, capfd):
    # sysbench 1.0.20 prints "(last message repeated N times)" with the next message
    # the verbosity lets through, at any level (api_sql_*.t runs at --verbosity=1)
    script = tmp_path / "t.lua"
    script.write_text(
        "function event() local c = sysbench.sql.driver():connect() c:disconnect()\n"
        "pcall(c.query, c, 'SELECT 1') pcall(c.query, c, 'SELECT 1') pcall(c.disconnect, c) end"
    )
    assert (
        main(
            [
                str(script),
                "--verbosity=1",
                "--events=1",
                "--threads=1",
                "--workers=1",
                f"--sqlite-db={tmp_path / 'x.db'}",
                "run",
            ]
        )
        == 0
    )
    assert capfd.readouterr().out.splitlines() == [
        "ALERT: attempt to use an already closed connection",
        "(last message repeated 1 times)",
        "ALERT: attempt to close an already closed connection",
    ]


def _my_packet(seq: int, payload: bytes) -> bytes:
    return struct.pack("<I", len(payload))[:3] + bytes([seq]) + payload


def test_mysql_text_rows():
    def lenenc(s: bytes) -> bytes:
        return bytes([len(s)]) + s

    resp = (
        _my_packet(1, b"\x02")
        + _my_packet(2, b"coldef-a")
        + _my_packet(3, b"coldef-b")
        + _my_packet(4, b"\xfe\x00\x00\x02\x00")  # EOF after the definitions
        + _my_packet(5, lenenc(b"1") + b"\xfb")
        + _my_packet(6, lenenc(b"2") + lenenc(b"x"))
        + _my_packet(7, b"\xfe\x00\x00\x02\x00")
    )
    assert mysql_scan(resp[:-3], False, sink=TextResult()) is None
    sink = TextResult()
    assert mysql_scan(resp, False, sink=sink) == mysql_scan(resp, False) == (len(resp), 2, 0, 0, b"")
    assert (sink.columns, sink.rows) == (2, [("1", None), ("2", "x")])
    sink = TextResult()
    err = _my_packet(1, b"\xff\x18\x04#23000Column 'a' cannot be null")
    assert mysql_scan(err, False, sink=sink)[3:] == (1048, b"Column 'a' cannot be null")
    assert (sink.sqlstate, sink.columns) == ("23000", -1)
    sink = TextResult()
    assert mysql_scan(_my_packet(1, b"\x00\x03\x00\x02\x00"), False, sink=sink)[2] == 3
    assert (sink.columns, sink.rows) == (-1, [])


def _pg(kind: bytes, body: bytes) -> bytes:
    return kind + struct.pack("!i", len(body) + 4) + body


def test_pg_text_rows():
    row = struct.pack("!h", 2) + struct.pack("!i", 1) + b"7" + struct.pack("!i", -1)
    resp = _pg(b"T", struct.pack("!h", 2) + b"...") + _pg(b"D", row) + _pg(b"C", b"SELECT 1\x00") + _pg(b"Z", b"I")
    sink = TextResult()
    assert pg_scan(resp, sink) == pg_scan(resp) == (len(resp), b"SELECT 1", None, 1)
    assert (sink.columns, sink.rows) == (2, [("7", None)])
    assert pg_scan(resp[:-2], TextResult()) is None
    sink = TextResult()
    assert pg_scan(_pg(b"C", b"UPDATE 3\x00") + _pg(b"Z", b"I"), sink)[1] == b"UPDATE 3"
    assert (sink.columns, sink.rows) == (-1, [])


def test_lua5_fallback_without_ffi(tmp_path):
    """A lupa without LuaJIT: scripts that do not use ffi still run, with one warning, on
    the same random stream (the generator in Python)."""
    import os
    import subprocess
    import sys

    script = tmp_path / "t.lua"
    script.write_text("function event() print(sysbench.rand.special(1, 10000), sb_rand_str('##')) end")
    env = dict(os.environ, PYSYSBENCH_LUA="lua51", PYTHONPATH=os.getcwd())
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pysysbench",
            str(script),
            "--rand-seed=7",
            "--percentile=0",
            "--events=1",
            "--workers=1",
            f"--sqlite-db={tmp_path / 'x.db'}",
            "run",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("WARNING: this lupa has no LuaJIT") == 1
    first = [line for line in proc.stdout.splitlines() if line[:1].isdigit()]
    assert first and first[0].split("\t")[0] == "5005"


def test_event_returning_a_true_value_stops_its_thread_uncounted(tmp_path, capfd):
    """spec 1.6: any value but nil/false (0 included) stops the thread; that event is not counted."""
    script = tmp_path / "stop.lua"
    script.write_text("function event() n = (n or 0) + 1; print('event ' .. n); if n == 3 then return 0 end end")
    assert (
        main([str(script), "--threads=1", "--workers=1", "--events=10", f"--sqlite-db={tmp_path / 'x.db'}", "run"]) == 0
    )
    out = capfd.readouterr().out
    assert [x for x in out.splitlines() if x.startswith("event")] == ["event 1", "event 2", "event 3"]
    assert "    total number of events:              2\n" in out


def test_states_allocate_with_malloc():
    # per-state memory at 1000 threads (bench/journal/2026-12-01.md): lupa's own
    # allocator (it counts what the state uses) instead of LuaJIT's per-state segments
    from pysysbench.lua.log import Log as LuaLog
    from pysysbench.lua.runtime import Seeds, Unique
    from pysysbench.lua.state import LuaState, Services

    services = Services({}, LuaLog(lambda line: None, 3), "mysql", {}, Unique(1), Seeds(1, 0, 1))
    st = LuaState(services, 0)
    try:
        used = st.rt.get_memory_used()
        assert used is not None and used > 50_000
    finally:
        st.release()


def test_the_main_host_closes_its_event_loop():
    """sysbench's main state runs on a helper thread's loop (lua/host.MainHost); closing the
    host closes that loop too, so the interpreter's teardown never finalizes it after its
    self-pipe socket ('Exception ignored in BaseEventLoop.__del__ ... Invalid file
    descriptor: -1' after a stdin script's output, cmdline.t)."""
    from pysysbench.lua.host import MainHost

    async def answer():
        return 42

    host = MainHost()
    assert host.run(answer()) == 42
    host.close()
    assert not host.thread.is_alive() and host.loop.is_closed()


def test_the_main_host_stops_for_the_worker_forks():
    """The main state's helper thread stops while the process group forks (childenv's
    PausedThreads): with it running, Lua runs spawned their workers, re-importing
    everything in each (about 0.5 s of client CPU per run)."""
    import threading

    from pysysbench.engine.procs import start_method
    from pysysbench.lua.host import MainHost
    from pysysbench.runtime.childenv import PausedThreads

    async def answer():
        return 7

    host = MainHost()
    try:
        assert threading.active_count() > 1 and start_method() == "spawn"
        with PausedThreads():
            assert not host.thread.is_alive()
            assert start_method() == "fork"
        assert host.thread.is_alive() and host.run(answer()) == 7
    finally:
        host.close()
    with PausedThreads() as paused:  # a closed host is no longer paused (nor started again)
        assert paused.paused == []
    assert not host.thread.is_alive()


def test_a_waiting_poll_keeps_the_gil_for_the_main_host_but_not_for_other_threads():
    """The main state's helper waits on its own loop: a worker's poll need not give the
    GIL up around each wait for it (about 500 instructions a query: a mutex, a condition
    signal, take_gil); another thread running Python (SQLite's strands) needs it given up."""
    import threading

    from pysysbench.engine.worker import WirePump
    from pysysbench.lua.host import MainHost

    assert not WirePump._others_run()
    host = MainHost()
    try:
        assert threading.active_count() > 1 and not WirePump._others_run()
        stop = threading.Event()
        other = threading.Thread(target=stop.wait)
        other.start()
        try:
            assert WirePump._others_run()
        finally:
            stop.set()
            other.join()
    finally:
        host.close()
    assert not WirePump._others_run()


def test_unique_numbers_differ_in_a_forked_worker():
    """random.unique() is one sequence per process: a forked worker starts its own, as a
    spawned one does (a copy of the parent's gave both workers the same numbers)."""
    import os

    from pysysbench.lua.runtime import Unique

    u = Unique(12345)
    expected = Unique(12345)()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.write(w, str(u()).encode())
        os._exit(0)
    os.close(w)
    child = int(os.read(r, 64))
    os.close(r)
    os.waitpid(pid, 0)
    assert u() == expected and child != expected


def test_events_that_never_wait_still_give_the_reporter_its_turns(tmp_path, capfd):
    """An event with no statement never suspends: the C event loop (lua/bridge.c's source)
    yields to the event loop every few ms, as the Python loop does, so the interval reports
    (and signals, and a worker's heartbeat) keep coming."""
    script = tmp_path / "arith.lua"
    script.write_text("function event() local x = 0; for i = 1, 10 do x = x + i end end")
    assert (
        main(
            [
                str(script),
                "--threads=2",
                "--workers=1",
                "--time=2",
                "--report-interval=1",
                f"--sqlite-db={tmp_path / 'x.db'}",
                "run",
            ]
        )
        == 0
    )
    out = capfd.readouterr().out
    # Two interval lines: the 1-s tick's sample was answered while the events ran (a reporter
    # that got no turn would print the final line only).  Its label is the elapsed time at
    # the answer, as in sysbench: on a loaded machine (CI's coverage pass) "[ 2s ]" as well.
    labels = [line.split(" thds")[0] for line in out.splitlines() if line.startswith("[ ")]
    assert len(labels) == 2 and labels[0] in ("[ 1s ]", "[ 2s ]") and labels[1] == "[ 2s ]", labels


FINALIZERS = """
-- (the global `debug` is sysbench's --debug option in a thread's state, as in sysbench)
local ffi = require("ffi")
ffi.cdef("struct fin_probe { int x; };")
local probe = ffi.metatype("struct fin_probe", {__gc = function() print("gc metatype") end})
function thread_init()
  held_proxy = newproxy(true)
  getmetatable(held_proxy).__gc = function() print("gc newproxy") end
  held_cdata = ffi.gc(ffi.new("int[1]"), function() print("gc ffi.gc") end)
  held_probe = probe()
  local u = newproxy(false)
  require("debug").setmetatable(u, {__gc = function() print("gc setmetatable") end})
  held_u = u
end
function event() end
"""


@pytest.mark.parametrize("threads", ["1", "2"])
def test_script_finalizers_run_when_its_state_ends(tmp_path, capfd, threads):
    # a state's end collects only when the script gave something a finalizer (sysbench.lua
    # marks it); each kind of finalizer a LuaJIT script can make still runs, once per state
    script = tmp_path / "fin.lua"
    script.write_text(FINALIZERS)
    assert (
        main(
            [
                str(script),
                f"--threads={threads}",
                "--workers=1",
                f"--sqlite-db={tmp_path / 'x.db'}",
                "--events=4",
                "run",
            ]
        )
        == 0
    )
    out = capfd.readouterr().out.splitlines()
    for kind in ("newproxy", "ffi.gc", "metatype", "setmetatable"):
        assert out.count(f"gc {kind}") == int(threads), (kind, out)


FILE_WRITER = """
function thread_init() out = assert(io.open(OUT .. sysbench.tid, "w")) end
function event() out:write("x\\n") end
"""


@pytest.mark.parametrize("opener", ["io.open", "io.output"])
def test_files_a_script_leaves_open_are_flushed_when_its_worker_ends(tmp_path, opener):
    # a state whose script gave nothing a finalizer skips its lua_close at the run's end (a
    # forked worker exits without freeing it: LuaState.release); a file the script opened and
    # never closed counts as a finalizer (its __gc flushes it), so every line reaches the disk
    import os
    import subprocess
    import sys

    script = tmp_path / "w.lua"
    text = FILE_WRITER.replace("OUT", repr(str(tmp_path / "out.")).replace("'", '"'))
    if opener == "io.output":
        text = text.replace(
            'out = assert(io.open(OUT .. sysbench.tid, "w"))'.replace(
                "OUT", repr(str(tmp_path / "out.")).replace("'", '"')
            ),
            "io.output(" + repr(str(tmp_path / "out.")).replace("'", '"') + " .. sysbench.tid); out = io.output()",
        )
    assert opener in text
    script.write_text(text)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pysysbench",
            str(script),
            "--threads=2",
            "--workers=2",
            "--events=20000",
            f"--sqlite-db={tmp_path / 'x.db'}",
            "run",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ, PYTHONPATH=os.getcwd()),
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    events = int(re.search(r"total number of events:\s+(\d+)", proc.stdout).group(1))
    lines = sum(len((tmp_path / f"out.{t}").read_text().splitlines()) for t in (0, 1))
    assert events == 20000 and lines == events, (lines, events)


def test_states_without_finalizers_are_freed_after_the_report(tmp_path, capfd, monkeypatch):
    # their lua_close waits (a second of cache-cold frees at the end of a 1000-thread run, inside
    # its total time): parked at the thread's end, released once the run has been reported; a
    # state with a finalizer is closed (and its finalizers run) at its thread's end, as before
    parked_at_report = []
    release = lua_state.release_parked

    def at_report():
        parked_at_report.append(len(lua_state._parked))
        release()

    monkeypatch.setattr("pysysbench.lua.commands.release_parked", at_report)
    script = tmp_path / "p.lua"
    script.write_text("function event() end")
    assert (
        main([str(script), "--threads=3", "--workers=1", "--events=30", f"--sqlite-db={tmp_path / 'x.db'}", "run"]) == 0
    )
    assert parked_at_report == [3] and lua_state._parked == []
    script.write_text("function thread_init() held = newproxy(true) end\nfunction event() end")
    assert (
        main([str(script), "--threads=3", "--workers=1", "--events=30", f"--sqlite-db={tmp_path / 'x.db'}", "run"]) == 0
    )
    assert parked_at_report == [3, 0]


SIDE_TRACES = """
local side, recording = 0, {}
jit.attach(function(what, tr, func, pc, parent)
  if what == "start" then recording[tr] = parent ~= nil
  elseif what == "stop" and recording[tr] then side = side + 1 end   -- a side trace compiled
end, "trace")
OWN
local function work()
  local s = 0
  for i = 1, 300 do       -- a root trace for one branch; the other exits it 150 times
    if i % 2 == 0 then s = s + 1 else s = s - 1 end
  end
end
function thread_init() work() end    -- every state, whichever events it gets
function event() work() end
function thread_done() print(side .. " side traces") end
"""


@pytest.mark.parametrize(
    "threads, own, expect",
    [
        (1, "", "1+"),
        (40, "", "some 0"),
        (40, 'jit.opt.start("hotexit=10")', "all 1+"),
        (1, 'jit.opt.start("hotexit=1000")', "0"),
    ],
)
def test_states_compile_side_traces_unless_the_process_holds_many(tmp_path, capfd, monkeypatch, threads, own, expect):
    # lua/state.py: LuaJIT's defaults for the first HUGE_PAGE_STATES states of a process, no side
    # traces (JIT_OPTIONS_MANY) for the rest; a script's own jit.opt wins either way
    monkeypatch.setattr(lua_state, "HUGE_PAGE_STATES", 8)
    script = tmp_path / "t.lua"
    script.write_text(SIDE_TRACES.replace("OWN", own))
    assert (
        main(
            [
                str(script),
                f"--threads={threads}",
                "--workers=1",
                f"--sqlite-db={tmp_path / 'x.db'}",
                f"--events={threads * 3}",
                "run",
            ]
        )
        == 0
    )
    # each state's thread_done prints its count (two states' lines may meet without a newline)
    lines = re.findall(r"(\d+) side traces", capfd.readouterr().out)
    counts = [int(n) for n in lines]
    assert len(counts) == threads, lines
    if expect == "1+":
        assert counts[0] >= 1, lines
    elif expect == "0":
        assert counts == [0], lines
    elif expect == "some 0":  # the states after the 8th: none
        assert counts.count(0) >= threads - 8 and max(counts) >= 1, lines
    else:
        assert min(counts) >= 1, lines


NPARAMS = """function event()
  local drv = sysbench.sql.driver()
  local con = drv:connect()
  con:query("CREATE TABLE p (a INTEGER, b INTEGER, c INTEGER, d INTEGER, e INTEGER, f INTEGER)")
  for n = 1, 6 do
    local cols, marks = {}, {}
    for i = 1, n do cols[i] = string.char(96 + i); marks[i] = "?" end
    local st = con:prepare("INSERT INTO p (" .. table.concat(cols, ",") .. ") VALUES (" .. table.concat(marks, ",") .. ")")
    local ps = {}
    for i = 1, n do ps[i] = st:bind_create(sysbench.sql.type.INT) end
    st:bind_param(unpack(ps))
    for i = 1, n do ps[i]:set(n * 10 + i) end
    st:execute()
  end
  for n = 1, 6 do
    local r = {con:query_row("SELECT a, b, c, d, e, f FROM p WHERE a = " .. (n * 10 + 1))}
    local out = {}
    for i = 1, 6 do out[i] = tostring(r[i]) end
    print(table.concat(out, " "))
  end
end
"""


def test_prepared_statements_send_every_parameter(tmp_path, capfd):
    # Stmt:execute hands 1 to 4 parameters to the host without a table, more through one
    lines = _run(tmp_path, capfd, NPARAMS, "--events=1")
    assert lines == [
        "11 nil nil nil nil nil",
        "21 22 nil nil nil nil",
        "31 32 33 nil nil nil",
        "41 42 43 44 nil nil",
        "51 52 53 54 55 nil",
        "61 62 63 64 65 66",
    ]


JIT_STATUS = """
OWN
function event() if SLOW then ffi.C.usleep(SLOW) end end
function thread_done() print(string.format("state %d jit %s", sysbench.tid, tostring((jit.status())))) end
"""


OWN_RUN = """
function thread_run()
   while ffi.C.sb_more_events(sysbench.tid) do
      ffi.C.sb_event_start(sysbench.tid); event(); ffi.C.sb_event_stop(sysbench.tid)
   end
end
"""


TRACES_AFTER_ON = """
local traces = 0
jit.attach(function(what) if what == "stop" then traces = traces + 1 end end, "trace")
local n, at_on = 0, nil
function event()
   n = n + 1
   if at_on == nil and jit.status() then at_on = n end
   ffi.C.usleep(1000)      -- a wait: the four threads take turns, about 40 events each
end
function thread_done()
   print(string.format("state %d on at %s traces %d", sysbench.tid, tostring(at_on), traces))
end
"""


def test_a_state_the_probe_turns_on_compiles_its_event_loop_within_a_few_events(tmp_path, capfd, monkeypatch):
    # JIT_ON_OPTIONS: a held state compiles after 4 more passes once its probe turns the JIT on
    # (LuaJIT's 56 left a slow state interpreted for most of its run): probed after 8 events, a
    # held state has compiled its runner loop 30 events later
    monkeypatch.setattr(lua_state, "HUGE_PAGE_STATES", 3)
    monkeypatch.setattr(lua_state, "JIT_PROBE_EVENTS", 8)
    script = tmp_path / "t.lua"
    script.write_text(TRACES_AFTER_ON)
    assert (
        main([str(script), "--threads=4", "--workers=1", f"--sqlite-db={tmp_path / 'x.db'}", "--events=160", "run"])
        == 0
    )
    got = {
        int(t): (on, int(n)) for t, on, n in re.findall(r"state (\d+) on at (\S+) traces (\d+)", capfd.readouterr().out)
    }
    assert len(got) == 4, got
    held = [t for t, (on, _) in got.items() if on != "1"]  # the states past the third
    assert held and all(got[t][0] == "9" and got[t][1] >= 1 for t in held), got


@pytest.mark.parametrize(
    "slow, own, expect",
    [
        (1_000, "", "on on on on"),  # 1-ms events: every state has 100s to run
        (100_000, "", "on on off off"),  # 10 a second, 1.5 s left (15): the held states stay off
        (100_000, "jit.off()", "off off off off"),  # the script's own choice stands
        (100_000, 'jit.opt.start("hotloop=60")', "on on on on"),
    ],
)
def test_states_of_a_crowded_process_compile_only_what_their_run_repays(
    tmp_path, capfd, monkeypatch, slow, own, expect
):
    # lua/state.py JIT_HOLD_ENV: the states past HUGE_PAGE_STATES start with the JIT off and turn it
    # on when, at their first half second's rate, JIT_MIN_EVENTS (30) more events are left in the run
    # (the process's states: the main one, which loaded the script, and the 4 threads')
    monkeypatch.setattr(lua_state, "HUGE_PAGE_STATES", 3)
    script = tmp_path / "j.lua"
    script.write_text(JIT_STATUS.replace("OWN", own).replace("SLOW", str(slow)))
    assert main([str(script), "--threads=4", "--workers=1", f"--sqlite-db={tmp_path / 'x.db'}", "--time=2", "run"]) == 0
    got = dict(re.findall(r"state (\d+) jit (true|false)", capfd.readouterr().out))
    assert " ".join({"true": "on", "false": "off"}[got[str(t)]] for t in range(4)) == expect, got

    # a script with its own thread_run: no probe, no hold
    script.write_text(JIT_STATUS.replace("OWN", own).replace("SLOW", str(slow)) + OWN_RUN)
    assert main([str(script), "--threads=4", "--workers=1", f"--sqlite-db={tmp_path / 'x.db'}", "--time=1", "run"]) == 0
    got = dict(re.findall(r"state (\d+) jit (true|false)", capfd.readouterr().out))
    assert len(got) == 4 and set(got.values()) == ({"false"} if own == "jit.off()" else {"true"}), got

    # the hold off: every state compiles from the start
    script.write_text(JIT_STATUS.replace("OWN", own).replace("SLOW", str(slow)))
    monkeypatch.setenv(lua_state.JIT_HOLD_ENV, "off")
    if not own:
        assert (
            main([str(script), "--threads=4", "--workers=1", f"--sqlite-db={tmp_path / 'x.db'}", "--time=1", "run"])
            == 0
        )
        got = dict(re.findall(r"state (\d+) jit (true|false)", capfd.readouterr().out))
        assert len(got) == 4 and set(got.values()) == {"true"}, got
