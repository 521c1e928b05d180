"""--db-debug=on (issue 45): sysbench 1.0.20 prints, at verbosity 5, its query and fetch
timers after the SQL statistics -- lines it never updates, so every figure is 0.0000s
(spec 5.13).  pysysbench accepted the option and printed nothing.  The expected lines are
sysbench 1.0.20's own (``sysbench --db-debug=on --mysql-dry-run --events=2 --verbosity=5
oltp_point_select run``).  The option touches nothing else: no hot-path timing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SYSBENCH_LINES = """\
    reconnects:                          0      (0.00 per sec.)
DEBUG: 
DEBUG: Query execution statistics:
DEBUG:     min:                                0.0000s
DEBUG:     avg:                                0.0000s
DEBUG:     max:                                0.0000s
DEBUG:   total:                                0.0000s
DEBUG: Results fetching statistics:
DEBUG:     min:                                0.0000s
DEBUG:     avg:                                0.0000s
DEBUG:     max:                                0.0000s
DEBUG:   total:                                0.0000s

General statistics:
"""


def cli(*args: str) -> str:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("PYSYSBENCH_FACE", None)
    proc = subprocess.run(
        [sys.executable, "-m", "pysysbench", *args], capture_output=True, text=True, timeout=60, env=env
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


@pytest.mark.parametrize("loud", [["--verbosity=5"], ["--debug=on"]])
@pytest.mark.parametrize("script", ["oltp_point_select", "/usr/share/sysbench/oltp_point_select.lua"])
def test_db_debug_prints_sysbenchs_timer_block_at_verbosity_5(loud, script):
    if script.startswith("/") and not os.path.exists(script):
        pytest.skip("sysbench's Lua scripts are not installed")
    out = cli(script, "--db-debug=on", "--mysql-dry-run", "--events=2", *loud, "run")
    assert SYSBENCH_LINES in out, out
    assert out.count("Query execution statistics:") == 1


@pytest.mark.parametrize("args", [["--db-debug=on"], ["--db-debug=on", "--verbosity=4"], ["--verbosity=5"]])
def test_no_timer_block_below_verbosity_5_or_without_the_option(args):
    out = cli("oltp_point_select", "--mysql-dry-run", "--events=2", *args, "run")
    assert "Query execution statistics" not in out and "Results fetching" not in out, out
    assert "    reconnects:                          0      (0.00 per sec.)\n\nGeneral statistics:\n" in out
