"""engine/forked.ForkedProcess: the child's end as multiprocessing gives a forked target
(exit 0, an exception's traceback and 1, SystemExit's code), is_alive/join/kill, reaping."""

from __future__ import annotations

import os
import sys
import time

import pytest

from pysysbench.engine.forked import ForkedProcess

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")


def _ok(path):
    with open(path, "w") as fh:
        fh.write(f"child {os.getpid()} stdin closed={sys.stdin.read() == ''}")


def _raise():
    raise ValueError("boom in the child")


def _exit(code):
    sys.exit(code)


def _sleep():
    time.sleep(60)


def _run(target, *args):
    p = ForkedProcess(target, "t", args)
    p.start()
    p.join(30)
    return p


def test_a_target_that_returns_exits_0_with_stdin_on_devnull(tmp_path):
    out = tmp_path / "out"
    p = _run(_ok, str(out))
    assert p.exitcode == 0 and not p.is_alive()
    assert out.read_text() == f"child {p.pid} stdin closed=True"


def test_an_exception_prints_its_traceback_and_exits_1(capfd):
    p = _run(_raise)
    assert p.exitcode == 1
    assert "ValueError: boom in the child" in capfd.readouterr().err


@pytest.mark.parametrize("code, expected", [(3, 3), (None, 0), ("a message", 1)])
def test_system_exit_gives_its_code(code, expected, capfd):
    p = _run(_exit, code)
    assert p.exitcode == expected
    if isinstance(code, str):
        assert "a message" in capfd.readouterr().err


def test_kill_ends_a_running_child_and_join_reaps_it():
    p = ForkedProcess(_sleep, "sleeper")
    p.start()
    assert p.is_alive()
    t0 = time.monotonic()
    p.join(0.05)  # a timeout returns with the child still running
    assert p.is_alive() and time.monotonic() - t0 < 5
    p.kill()
    p.join(10)
    assert p.exitcode == -9 and not p.is_alive()
    with pytest.raises(ChildProcessError):
        os.waitpid(p.pid, os.WNOHANG)  # reaped: no zombie left
