"""The 1.1 face sends the 1.1.0 binary's statements (issue 41).

With the same ``--rand-seed``, pysysbench ``--sysbench-compat=1.1`` running 1.1's bundled
scripts must send the statements the sysbench 1.1.0 binary sends, values included, in
``prepare`` and in ``run``: bench/statement_stream.py ``--face11`` runs both against a
private MariaDB with its general log on and compares the logs (C hot path on and off,
``--rand-type=uniform`` and ``zipfian``).  About 40 s.  pysysbench's own workloads of the same
names (no Lua) draw the binary's values in ``run`` too, ``--rand-type=gaussian`` included.

The reference binary is ../shared/tools/build-sysbench-1.1.sh's (~/.cache/sysbench-1.1.0):
when it is missing, the test builds it there with that script once (about 3 minutes on 2
cores), and skips, saying why, when the script or its build tools are missing.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

REF11 = Path.home() / ".cache" / "sysbench-1.1.0" / "bin" / "sysbench"
BUILD = REPO.parent / "shared" / "tools" / "build-sysbench-1.1.sh"
SCRIPTS = ("oltp_read_write", "oltp_point_select")
EVENTS = 50


def reference() -> Path:
    """The 1.1.0 binary, built once into the cache when it is not there yet."""
    if REF11.is_file():
        return REF11
    if not BUILD.is_file():
        pytest.skip(f"no sysbench 1.1.0 binary at {REF11} and no build script at {BUILD}")
    out = subprocess.run(["bash", str(BUILD), str(REF11.parents[1])], capture_output=True, text=True, timeout=1800)
    if out.returncode == 2:  # the script's "missing Debian packages" (not root: cannot install them)
        pytest.skip(f"sysbench 1.1.0 cannot be built here: {out.stderr.strip()}")
    assert out.returncode == 0, f"building sysbench 1.1.0 failed: {out.stderr.strip()[-600:]}"
    return REF11


def streams(tmp_path: Path, *args: str) -> dict[str, int]:
    """bench/statement_stream.py --face11 on a private MariaDB with ``args``: each stream's
    statement count, once every stream is asserted identical to the 1.1.0 binary's."""
    ref = reference()
    cmd = [
        sys.executable,
        str(REPO / "bench" / "statement_stream.py"),
        "--face11",
        f"--sysbench11={ref}",
        "--servers=mysql",
        f"--events={EVENTS}",
        f"--dump={tmp_path}",
        *args,
    ]
    env = dict(os.environ, PYTHONPATH=str(REPO))
    out = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    lines = out.stdout.splitlines()
    streams = [line for line in lines if line.startswith("mysql/")]
    differing = [line for line in streams if not line.endswith(" identical")]
    first = "".join(p.read_text() for p in sorted(tmp_path.glob("*.txt")))
    assert not differing, "streams differ from sysbench 1.1.0's:\n" + "\n".join(differing) + "\n" + first
    assert out.returncode == 0 and lines[-1] == "0 differing", out.stdout + out.stderr
    return {line.split()[0]: int(line.split()[1]) for line in streams}


def test_mysql_streams_are_the_1_1_0_binarys(tmp_path):
    counts = streams(tmp_path, "--rands=uniform,zipfian", "--paths=lua", "--only", *SCRIPTS)
    # 2 scripts x 2 --rand-type x prepare/run x C/Python
    assert len(counts) == len(SCRIPTS) * 2 * 2 * 2, counts
    # the run's statements are there and are the script's: a point select per event at least
    assert counts["mysql/oltp_point_select/uniform/run/c"] >= EVENTS


def test_the_native_workloads_draw_1_1_0s_gaussian(tmp_path):
    """pysysbench's own oltp_* (no Lua) under 1.1 with --rand-compat=sysbench: the run's values
    are the binary's, --rand-type=gaussian included (1.1.0's: the range's first value, no draw)."""
    counts = streams(tmp_path, "--rands=gaussian", "--paths=native", "--only", *SCRIPTS)
    assert len(counts) == len(SCRIPTS) * 2, counts  # x C/Python
    assert counts["mysql/oltp_point_select/gaussian/run/python/native"] == EVENTS
