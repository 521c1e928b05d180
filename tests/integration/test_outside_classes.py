"""A driver registered from outside the package, on a real server and in worker processes
(engine/outside.py): a user's module subclasses the bundled MySQL / PostgreSQL driver
under a name of its own and registers it; a run with ``--workers=2`` must find it in every
spawned worker, which imports that module from the name the parent's start carries."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import REPO, parse_summary_text

MODULE = """
from pysysbench.drivers.base import register
from pysysbench.drivers.mysql import MySQLDriver
from pysysbench.drivers.pgsql import PgDriver


@register
class OutsideMySQL(MySQLDriver):
    name = "outside_mysql"
    description = "the MySQL driver under a user's name"
    option_prefix = ""


@register
class OutsidePg(PgDriver):
    name = "outside_pgsql"
    description = "the PostgreSQL driver under a user's name"
    option_prefix = ""
"""

RUN = "import sys, user_drivers; from pysysbench.cli.main import main; sys.exit(main(sys.argv[1:]))"


def _run(tmp_path, *args: str) -> subprocess.CompletedProcess:
    # spawned workers: a forked one inherits the parent's registry (nothing to bring in)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(REPO)]), PYSYSBENCH_WORKER_START="spawn")
    return subprocess.run(
        [sys.executable, "-c", RUN, *args], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=180
    )


def test_a_registered_subclass_runs_on_the_server_in_two_workers(server_db, tmp_path):
    (tmp_path / "user_drivers.py").write_text(MODULE)
    opts = [o.replace("--db-driver=", "--db-driver=outside_") for o in server_db.opts]
    data = ["--tables=2", "--table-size=500"]
    prepared = _run(tmp_path, "oltp_read_write", *opts, *data, "prepare")
    assert prepared.returncode == 0, prepared.stdout + prepared.stderr
    proc = _run(
        tmp_path, "oltp_point_select", *opts, *data, "--threads=4", "--workers=2", "--events=400", "--time=0", "run"
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    counts = parse_summary_text(proc.stdout)
    assert counts["transactions"] == 400 and counts["read"] == 400 and counts["ignored_errors"] == 0, proc.stdout
    # and a time-limited read_write (the C event loop in each worker)
    proc = _run(tmp_path, "oltp_read_write", *opts, *data, "--threads=4", "--workers=2", "--time=2", "run")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert parse_summary_text(proc.stdout)["transactions"] > 0, proc.stdout
