"""The result file survives what the README says it survives: a closed standard
output, SIGTERM, a second Ctrl-C, a signal during start-up; a path that cannot
take it is refused before the run, and a disk that fills up leaves the report
printed, one line naming the path, and no temporary file.

Everything runs on SQLite (no server).  The slow start-up and the slow close are
a custom workload's (``SLOW_WORKLOAD``): its ``thread_init`` sleeps, and it wraps
its connection so that closing it takes a while, as a busy server's does.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import REPO
from test_faults import Reader, start

SQLITE = ["--tables=1", "--table-size=1000"]

SLOW_WORKLOAD = '''
import asyncio

from pysysbench.core.options import Option, OptType
from pysysbench.workloads.base import Workload


class SlowClose:
    """A connection whose close takes ``delay`` seconds."""

    def __init__(self, conn, delay):
        self._conn, self._delay = conn, delay

    def __getattr__(self, name):
        return getattr(self._conn, name)

    async def close(self):
        await asyncio.sleep(self._delay)
        await self._conn.close()


class Slow(Workload):
    name = "slow"
    options = [Option("init-sleep", OptType.DOUBLE, 0.0, "thread_init sleeps this long", "slow"),
               Option("close-sleep", OptType.DOUBLE, 0.0, "closing a connection takes this long", "slow")]

    async def thread_init(self, ctx):
        await asyncio.sleep(self.values.init_sleep)
        if self.values.close_sleep:
            ctx.conn = SlowClose(ctx.conn, self.values.close_sleep)

    async def event(self, ctx):
        await ctx.conn.query("SELECT 1")
        await asyncio.sleep(0.001)
'''


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run(
        [sys.executable, "-m", "pysysbench", *args], capture_output=True, text=True, timeout=120, env=env, cwd=cwd
    )


def slow(tmp_path: Path, *args: str) -> list[str]:
    path = tmp_path / "slow.py"
    path.write_text(SLOW_WORKLOAD)
    return [str(path), f"--sqlite-db={tmp_path / 'slow.db'}", *args]


def leftovers(directory: Path) -> list[str]:
    return [p.name for p in directory.iterdir() if p.name.startswith(".pysysbench-")]


@pytest.fixture()
def sqlite_data(tmp_path):
    db = f"--sqlite-db={tmp_path / 'sb.db'}"
    proc = cli("oltp_point_select", db, *SQLITE, "prepare", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return [db, *SQLITE]


def test_closed_stdout_stops_the_run_and_writes_the_result(tmp_path, sqlite_data):
    """``run --result-file=x.json | head``: the reader goes away during the run."""
    out = tmp_path / "r.json"
    proc = start("oltp_point_select", *sqlite_data, "--time=30", "--report-interval=1", f"--result-file={out}", "run")
    for line in proc.stdout:
        if line.startswith("[ 1s ]"):
            break
    proc.stdout.close()  # what head does after its lines
    assert proc.wait(20) == 141, proc.stderr.read()
    doc = json.loads(out.read_text())
    assert doc["exit_code"] == 141 and doc["interrupted"] == "stdout closed" and doc["error"] is None
    assert doc["summary"]["events"] > 0 and doc["summary"]["total_time_s"] < 20
    assert proc.stderr.read() == ""  # no BrokenPipeError, no traceback


def test_head_minus_one_writes_the_result(tmp_path, sqlite_data):
    """The issue's own command, ``run --result-file=x.json | head -1``: head goes away
    after the first line, before the benchmark starts or as it does (no file before)."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    command = " ".join(
        [
            sys.executable,
            "-m",
            "pysysbench",
            "oltp_point_select",
            *sqlite_data,
            "--time=30",
            "--report-interval=1",
            "--result-file=x.json",
            "run",
        ]
    )
    proc = subprocess.run(
        ["bash", "-c", command + " | head -1; echo ${PIPESTATUS[0]}"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=tmp_path,
    )
    first, status = proc.stdout.splitlines()
    assert first.startswith("pysysbench ") and status == "141", proc.stdout + proc.stderr
    doc = json.loads((tmp_path / "x.json").read_text())
    assert doc["exit_code"] == 141 and doc["interrupted"] == "stdout closed"
    assert leftovers(tmp_path) == [] and "Traceback" not in proc.stderr, proc.stderr


def signalled(args: list[str], out: Path, after: str, exit_code: int) -> tuple[str, dict]:
    """Start a run, send SIGTERM once ``after`` is printed; its output and result file."""
    proc = start(*args, f"--result-file={out}", "run")
    reader = Reader(proc)
    reader.wait_for(after)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(20) == exit_code, reader.text() + proc.stderr.read()
    return reader.text(), json.loads(out.read_text())


def test_sigterm_exits_143_with_the_result(tmp_path, sqlite_data):
    text, doc = signalled(
        ["oltp_point_select", *sqlite_data, "--time=30", "--report-interval=1"], tmp_path / "r.json", "[ 1s ]", 143
    )
    assert "Threads fairness:" in text
    assert doc["exit_code"] == 143 and doc["interrupted"] == "SIGTERM" and doc["summary"]["events"] > 0


def test_sigterm_during_thread_start_up_writes_the_result(tmp_path):
    text, doc = signalled(
        slow(tmp_path, "--init-sleep=30", "--time=10"), tmp_path / "r.json", "Initializing worker threads...", 143
    )
    assert "FATAL: interrupted (SIGTERM) before the benchmark started" in text
    assert doc["exit_code"] == 143 and doc["interrupted"] == "SIGTERM" and doc["summary"] is None
    assert "before the benchmark started" in doc["error"]


def test_second_ctrl_c_while_the_run_ends_keeps_the_result(tmp_path):
    """The first Ctrl-C stops the run; the second arrives while the connections
    close (slowly, as a busy server's do)."""
    out = tmp_path / "r.json"
    proc = start(
        *slow(
            tmp_path,
            "--threads=2",
            "--close-sleep=2",
            "--time=30",
            "--report-interval=1",
            f"--result-file={out}",
            "run",
        )
    )
    reader = Reader(proc)
    reader.wait_for("[ 1s ]")
    os.killpg(proc.pid, signal.SIGINT)
    reader.wait_for("Interrupted: stopping the run")
    time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGINT)
    assert proc.wait(20) == 130, reader.text() + proc.stderr.read()
    assert "Threads fairness:" in reader.text()
    doc = json.loads(out.read_text())
    assert doc["exit_code"] == 130 and doc["interrupted"] == "SIGINT" and doc["summary"]["events"] > 0


@pytest.mark.parametrize(
    "make, problem",
    [
        (lambda d: (d / "adir").mkdir() or d / "adir", "it is a directory"),
        (lambda d: (d / "afile").write_text("x") and d / "afile" / "r.json", "a parent in the path is not a directory"),
    ],
    ids=["directory", "parent-is-a-file"],
)
def test_unwritable_result_path_is_refused_before_the_run(tmp_path, sqlite_data, make, problem):
    path = make(tmp_path)
    proc = cli("oltp_point_select", *sqlite_data, "--time=5", f"--result-file={path}", "run", cwd=tmp_path)
    assert "Threads started!" not in proc.stdout  # refused before anything ran
    assert leftovers(tmp_path) == []
    assert proc.returncode == 1
    assert proc.stderr.strip() == f"cannot write result file '{path}': {problem}" + (
        ": give a file name" if problem == "it is a directory" else ""
    )


@contextmanager
def small_filesystem(where: Path, size: str, *options: str):
    """A tmpfs of ``size`` mounted at ``where`` (root only)."""
    where.mkdir()
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", ",".join([f"size={size}", *options]), "tmpfs", str(where)], check=True
    )
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=True)


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="mounts a small tmpfs (CI runs as root)")


@needs_root
def test_read_only_file_system_is_refused_before_the_run(tmp_path, sqlite_data):
    with small_filesystem(tmp_path / "ro", "64k", "ro") as ro:
        proc = cli("oltp_point_select", *sqlite_data, "--time=5", f"--result-file={ro / 'r.json'}", "run", cwd=tmp_path)
    assert "Threads started!" not in proc.stdout  # refused before anything ran
    assert proc.returncode == 1
    assert proc.stderr.strip() == f"cannot write result file '{ro / 'r.json'}': '{ro}' is on a read-only file system"


@needs_root
def test_full_disk_prints_the_report_names_the_path_and_leaves_no_temporary_file(tmp_path, sqlite_data):
    with small_filesystem(tmp_path / "full", "64k") as full:
        (full / "filler").write_bytes(b"\0" * 60 * 1024)
        proc = cli(
            "oltp_point_select",
            *sqlite_data,
            "--time=1",
            "--report-interval=1",
            f"--result-file={full / 'r.json'}",
            "run",
            cwd=tmp_path,
        )
        left = leftovers(full)
        written = (full / "r.json").exists()
    assert left == [] and not written
    assert proc.returncode == 1
    assert "Threads fairness:" in proc.stdout  # the report printed
    assert proc.stderr.strip() == f"cannot write result file '{full / 'r.json'}': no space left on the device"


LUA_SCRIPT = """
function thread_init() con = sysbench.sql.driver():connect() end
function event() con:query("SELECT 1") end
"""


@pytest.mark.parametrize("switch", [None, "off"])
def test_the_result_file_says_which_implementation_ran(tmp_path, sqlite_data, switch):
    """Issue 45: the C extension or the Python twins (PYSYSBENCH_NATIVE=off), and for a Lua
    script the Lua runtime and who ran its events."""
    import importlib.util

    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("PYSYSBENCH_NATIVE", None)
    if switch is not None:
        env["PYSYSBENCH_NATIVE"] = switch
    built = importlib.util.find_spec("pysysbench._native") is not None
    script = tmp_path / "mini.lua"
    script.write_text(LUA_SCRIPT)
    docs = {}
    for name, test in (("builtin", "oltp_point_select"), ("lua", str(script))):
        out = tmp_path / f"{name}.json"
        proc = subprocess.run(
            [sys.executable, "-m", "pysysbench", test, *sqlite_data, "--time=1", f"--result-file={out}", "run"],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
            cwd=tmp_path,
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        docs[name] = json.loads(out.read_text())["implementation"]
    if switch == "off":
        hot = {"c_extension": False, "hot_path": "Python (PYSYSBENCH_NATIVE=off)"}
    else:
        hot = {"c_extension": built, "hot_path": "C extension" if built else "Python (the C extension is not built)"}
    assert docs["builtin"] == {**hot, "sysbench_compat": "1.0.20"}  # the face's release (issue 41)
    lua = docs["lua"]
    assert {k: lua[k] for k in hot} == hot
    assert lua["lua"].split(" ")[0] in ("luajit21", "luajit20", "lua51", "lua52", "lua53", "lua54")
    assert lua["lua_events"] == (
        "C (lua/bridge.c)" if hot["c_extension"] and lua["lua"].startswith("luajit21") else "Python (lupa)"
    )
