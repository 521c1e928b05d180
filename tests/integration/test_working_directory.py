"""pysysbench's own processes import the installed pysysbench, whatever the working
directory holds (issue 16, point 8).

The CLI runs as a console script does (``python SCRIPT``: the script's folder, not the
working directory, heads the parent's import path) from a working directory holding a
broken ``pysysbench/`` package (and, for the run, a broken ``multiprocessing/`` shadowing
the standard library). Before the fix the row generators of a 100,000-row prepare (forked
by a fork server that starts with the working directory first on its path and ignores the
parent's) died: ``row generator process pysysbench-rows-0 is not running`` or an internal
error; the ``--workers=2`` processes (spawned: ``python -c``) imported the working
directory's ``multiprocessing`` before the parent's path was set and died at start-up.
SQLite only.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import REPO, parse_summary_text

CONSOLE_SCRIPT = "import sys\nfrom pysysbench.cli.main import main\nif __name__ == '__main__':\n    sys.exit(main())\n"


def hostile_cwd(tmp_path: Path, *packages: str) -> Path:
    """A working directory holding broken ``packages``, and the console script beside it."""
    cwd = tmp_path / "work"
    for name in packages:
        (cwd / name).mkdir(parents=True)
        (cwd / name / "__init__.py").write_text(f"raise SystemExit('the {name} of the working directory')\n")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "pysysbench").write_text(CONSOLE_SCRIPT)
    return cwd


def cli(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSYSBENCH_")}
    env["PYTHONPATH"] = str(REPO)
    proc = subprocess.run(
        [sys.executable, str(cwd.parent / "bin" / "pysysbench"), *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        env=env,
    )
    assert proc.returncode == 0, f"$ pysysbench {' '.join(args)}\n{proc.stdout}\n{proc.stderr}"
    assert "working directory" not in proc.stdout + proc.stderr
    return proc


def test_prepare_with_generator_processes_ignores_the_working_directory(tmp_path):
    cwd = hostile_cwd(tmp_path, "pysysbench")
    db = f"--sqlite-db={cwd.parent / 'big.db'}"
    cli(cwd, "oltp_read_only", db, "--table-size=100000", "prepare")  # PROCESS_MIN_ROWS: generators
    proc = cli(cwd, "oltp_read_only", db, "--table-size=100000", "check")
    assert "sbtest1" in proc.stdout


def test_worker_processes_ignore_the_working_directory(tmp_path):
    cwd = hostile_cwd(tmp_path, "pysysbench", "multiprocessing")
    db = f"--sqlite-db={cwd.parent / 'small.db'}"
    cli(cwd, "oltp_read_only", db, "--table-size=500", "prepare")
    proc = cli(
        cwd, "oltp_read_only", db, "--table-size=500", "--threads=2", "--workers=2", "--events=100", "--time=0", "run"
    )
    assert parse_summary_text(proc.stdout)["events"] == 100
