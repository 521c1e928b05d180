"""A Lua callback that computes without yielding is stopped at the run's bounds (issue 40.2).

``while true do end`` in ``event()`` or ``thread_init()`` held the event loop's thread: the
forced shutdown was announced and never done, SIGINT and SIGTERM did nothing, and
``--thread-init-timeout`` never fired (only kill -9 ended the run, with no report); with
worker processes the silent worker was killed after 15 s (exit 1, no report).  sysbench
1.0.20 on the same scripts: the forced shutdown's report and exit code 2 at ``--time`` +
``--forced-shutdown``; dies on SIGINT (130) and SIGTERM (143); gives up thread
initialisation with ``FATAL: Worker threads failed to initialize within 30 seconds!`` and
exit code 2.  pysysbench ends them as it ends a run on a hung server: the report of what
was measured and sysbench's exit code (engine/loopwatch.py, lua/bridge.c).

The time bounds are generous (a loaded machine): each run must end within about three
times the expected time.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO

from pysysbench.runtime import native

pytestmark = pytest.mark.skipif(native.lua_watch is None, reason="the C extension is not built (no watchdog)")

# each state runs EVENTS events, then loops forever (compiled by LuaJIT after a few passes,
# or interpreted where the script turns the JIT off)
LOOP_AFTER = """{jit}
local n = 0
function event()
  n = n + 1
  if n > {events} then while true do end end
end
"""
LOOP_IN_INIT = """{jit}
function thread_init()
  while true do end
end
function event() end
"""
EVENTS = 300
JIT = {"compiled": "", "interpreted": "jit.off()"}
STOP_GRACE_S = 5.0


def _start(tmp_path: Path, script: str, *args: str) -> subprocess.Popen:
    path = tmp_path / "loop.lua"
    path.write_text(script)
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pysysbench",
            str(path),
            f"--sqlite-db={tmp_path / 'x.db'}",
            f"--result-file={tmp_path / 'r.json'}",
            *args,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=tmp_path,
        env=env,
        start_new_session=True,
    )


def _finish(proc: subprocess.Popen, timeout_s: float) -> tuple[int, str]:
    try:
        out, _ = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        pytest.fail(f"the run did not end within {timeout_s} s:\n{out}")
    return proc.returncode, out


def _wait_started(proc: subprocess.Popen, timeout_s: float = 60) -> str:
    seen = ""
    end = time.monotonic() + timeout_s
    while "Threads started!" not in seen:
        line = proc.stdout.readline()
        if not line or time.monotonic() > end:
            pytest.fail(f"no 'Threads started!':\n{seen}")
        seen += line
    return seen


def _events(out: str) -> int:
    for line in out.splitlines():
        if "total number of events:" in line:
            return int(line.split(":")[1])
    raise AssertionError(f"no report:\n{out}")


@pytest.mark.parametrize("jit", sorted(JIT))
@pytest.mark.parametrize("workers", [1, 2])
def test_forced_shutdown_stops_an_event_in_a_lua_loop(tmp_path, jit, workers):
    threads = workers
    proc = _start(
        tmp_path,
        LOOP_AFTER.format(jit=JIT[jit], events=EVENTS),
        "--time=2",
        "--forced-shutdown=1",
        f"--threads={threads}",
        f"--workers={workers}",
        "run",
    )
    started = time.monotonic()
    code, out = _finish(proc, 60)
    took = time.monotonic() - started
    assert code == 2, out
    assert "FATAL: The --max-time limit has expired, forcing shutdown..." in out, out
    assert f"Number of unfinished transactions on forced shutdown: {threads}" in out, out
    assert _events(out) == EVENTS * threads, out  # what was measured before the loops
    assert "Threads fairness:" in out
    assert took < 3 * 3 + 5, (took, out)  # the bound: --time + --forced-shutdown = 3 s
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["exit_code"] == 2 and doc["summary"]["events"] == EVENTS * threads


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_stop_signal_stops_an_event_in_a_lua_loop(tmp_path, sig, code):
    """As on a hung server: the events in flight get STOP_GRACE_S, then are cut short, and
    the run reports what it measured (sysbench dies without a report, same exit code)."""
    proc = _start(tmp_path, LOOP_AFTER.format(jit="", events=EVENTS), "--time=120", "run")
    head = _wait_started(proc)
    time.sleep(1)
    sent = time.monotonic()
    os.killpg(proc.pid, sig)
    rc, out = _finish(proc, 60)
    took = time.monotonic() - sent
    out = head + out
    assert rc == code, out
    assert "Interrupted: events still running after 5 s are cut short" in out, out
    assert _events(out) == EVENTS, out
    assert took < 3 * STOP_GRACE_S, (took, out)
    assert json.loads((tmp_path / "r.json").read_text())["exit_code"] == code


def test_a_second_sigint_stops_a_lua_loop_at_once(tmp_path):
    proc = _start(tmp_path, LOOP_AFTER.format(jit="", events=EVENTS), "--time=120", "run")
    _wait_started(proc)
    time.sleep(1)
    os.killpg(proc.pid, signal.SIGINT)
    time.sleep(1.5)
    sent = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)
    rc, out = _finish(proc, 60)
    assert rc == 130, out
    assert time.monotonic() - sent < STOP_GRACE_S - 1, out  # not the first request's grace
    assert _events(out) == EVENTS, out


@pytest.mark.parametrize("jit", sorted(JIT))
def test_thread_init_timeout_stops_thread_init_in_a_lua_loop(tmp_path, jit):
    proc = _start(tmp_path, LOOP_IN_INIT.format(jit=JIT[jit]), "--time=5", "--thread-init-timeout=2", "run")
    started = time.monotonic()
    rc, out = _finish(proc, 60)
    took = time.monotonic() - started
    assert rc == 2, out
    assert "FATAL: Worker threads failed to initialize within 2 seconds!" in out, out
    assert out.count("failed to initialize") == 1, out
    assert took < 3 * 2 + 8, (took, out)  # a compiled loop in thread_init: the watchdog's 3 s more


def test_a_lua_loop_the_signal_cannot_leave_still_ends_at_the_bound(tmp_path):
    """With --events the events run through lupa (no C stack to come back to): a compiled
    loop there cannot be left, so 3 s after the bound the watchdog ends the process with
    the bound's exit code, as sysbench does at its bounds (here without a report)."""
    proc = _start(
        tmp_path, LOOP_AFTER.format(jit="", events=EVENTS), "--events=100000", "--time=2", "--forced-shutdown=1", "run"
    )
    started = time.monotonic()
    rc, out = _finish(proc, 60)
    assert rc == 2, out
    assert "FATAL: The --max-time limit has expired, forcing shutdown..." in out, out
    assert time.monotonic() - started < 3 * (3 + 1 + 3) + 5, out
