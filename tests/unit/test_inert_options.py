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

from pysysbench.drivers.sqlite.session import SQLiteConnection

ROOT = Path(__file__).resolve().parents[2]
WARNING = "WARNING: --pgsql_variant=redshift has no effect: sysbench 1.0.20's oltp scripts accept it and ignore it"


def cli(face: str, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYSYSBENCH_FACE=face)
    return subprocess.run(
        [sys.executable, "-m", "pysysbench", *args], capture_output=True, text=True, timeout=60, env=env
    )


RUN = ["oltp_read_write", "--pgsql-dry-run", "--events=2", "--threads=1"]


def test_pgsql_variant_is_accepted_and_ignored_with_one_warning_in_pysysbenchs_face():
    given = cli("pysysbench", *RUN, "--pgsql_variant=redshift", "run")
    plain = cli("pysysbench", *RUN, "run")
    assert given.returncode == plain.returncode == 0, given.stdout + given.stderr
    assert [line for line in given.stdout.splitlines() if line.startswith("WARNING")] == [
        line for line in given.stdout.splitlines() if line.startswith(WARNING)
    ], given.stdout
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


# --- sysbench 0.5's scripts (tests/db/*.lua): there common.lua honoured --pgsql-variant=redshift

from pysysbench.command.cmdline import parse  # noqa: E402
from pysysbench.workloads.legacy import DIALECTS, create_table_sql  # noqa: E402

PG = ["--db-driver=pgsql", "--pgsql-host=127.0.0.1"]


def test_legacy_redshift_variant_gives_identity_ids_no_k_index_no_delete_inserts():
    v = parse(["tests/db/oltp.lua", "--pgsql-variant=redshift", *PG, "run"]).values
    assert "id INTEGER IDENTITY(1,1) NOT NULL,\n" in create_table_sql(DIALECTS["postgresql"], v, 1)
    assert v.oltp_create_secondary is False and v.oltp_delete_inserts == 0
    plain = parse(["tests/db/oltp.lua", *PG, "run"]).values
    assert "id SERIAL NOT NULL,\n" in create_table_sql(DIALECTS["postgresql"], plain, 1)
    assert plain.oltp_create_secondary is True and plain.oltp_delete_inserts == 1
    # MySQL's DDL has no variant (0.5 applied it to the pgsql CREATE TABLE only)
    my = parse(["tests/db/oltp.lua", "--pgsql-variant=redshift", "--db-driver=mysql", "run"]).values
    assert "AUTO_INCREMENT" in create_table_sql(DIALECTS["mysql"], my, 1)


def test_legacy_redshift_variant_sends_no_delete_insert_pairs():
    def writes(*extra):
        proc = cli("pysysbench", "tests/db/oltp.lua", "--pgsql-dry-run", "--events=2", *extra, "run")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "not an option of" not in proc.stdout, proc.stdout
        return next(line.split()[1] for line in proc.stdout.splitlines() if line.strip().startswith("write:"))

    assert (writes(), writes("--pgsql-variant=redshift")) == ("8", "4")  # 2 events x (2 updates + 2 | 0)


def test_legacy_unknown_variant_is_ignored_with_a_warning():
    i = parse(["tests/db/oltp.lua", "--pgsql-variant=greenplum", *PG, "run"])
    assert (
        "WARNING: --pgsql-variant=greenplum is not a variant sysbench 0.5 knew (only 'redshift'): ignored" in i.warnings
    )
    assert i.values.oltp_delete_inserts == 1


def test_pgsql_variant_does_not_pick_the_postgresql_driver():
    # a workload option, not a --pgsql-* connection option: with --mysql-* options it used to be
    # refused ("both --mysql-* and --pgsql-* options were given")
    proc = cli("pysysbench", "oltp_read_write", "--mysql-dry-run", "--events=2", "--pgsql_variant=redshift", "run")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert WARNING in proc.stdout
