"""Dead or no-op options and code (issue 45).

``--pgsql_variant``: sysbench 1.0.20's oltp scripts declare it but test a Lua global it never
sets, so it has no effect there; pysysbench accepts and ignores it the same way, and its own
face says so with one WARNING line (it used to stay silent: a user asking for Redshift's DDL
got PostgreSQL's without a word).  The sysbench face prints nothing, as sysbench does.

``SQLiteConnection.executescript``: nothing called it (and it ran one statement, not a
script): removed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pysysbench.drivers.sqlite.session import SQLiteConnection

ROOT = Path(__file__).resolve().parents[2]
WARNING = "WARNING: --pgsql_variant=redshift has no effect: sysbench 1.0.20's oltp scripts accept it and ignore it"


def cli(face: str, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYSYSBENCH_FACE=face)
    return subprocess.run([sys.executable, "-m", "pysysbench", *args], capture_output=True, text=True,
                          timeout=60, env=env)


RUN = ["oltp_read_write", "--pgsql-dry-run", "--events=2", "--threads=1"]


def test_pgsql_variant_is_accepted_and_ignored_with_one_warning_in_pysysbenchs_face():
    given = cli("pysysbench", *RUN, "--pgsql_variant=redshift", "run")
    plain = cli("pysysbench", *RUN, "run")
    assert given.returncode == plain.returncode == 0, given.stdout + given.stderr
    assert [line for line in given.stdout.splitlines() if line.startswith("WARNING")] == [
        line for line in given.stdout.splitlines() if line.startswith(WARNING)], given.stdout
    assert given.stdout.count(WARNING) == 1
    # nothing else changes: the same statements per event (delete_inserts is not set to 0)
    for kind in ("read:", "write:", "other:"):
        pick = [line for line in given.stdout.splitlines() if line.strip().startswith(kind)]
        assert pick == [line for line in plain.stdout.splitlines() if line.strip().startswith(kind)], kind


def test_pgsql_variant_is_silent_in_the_sysbench_face_as_in_sysbench():
    # sysbench's command line (it has no --pgsql-dry-run; MySQL is its default driver)
    proc = cli("sysbench", "oltp_read_write", "--mysql-dry-run", "--events=2", "--pgsql_variant=redshift", "run")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "pgsql_variant" not in proc.stdout + proc.stderr


def test_no_warning_when_pgsql_variant_is_not_given():
    assert "pgsql_variant" not in cli("pysysbench", *RUN, "run").stdout


def test_sqlite_connection_has_no_dead_executescript():
    assert not hasattr(SQLiteConnection, "executescript")
