"""A hint that prints SQL with a name the user gave prints it as the server's quoted
identifier, so the statement can be pasted as it is (and a hostile name stays a name):
MySQL backquotes with embedded ones doubled, PostgreSQL double quotes likewise.
The names below do not exist: the servers only refuse the connection."""

from __future__ import annotations

import pytest
from conftest import MYSQL_OPTS, PGSQL_OPTS

NAME = 'no`such "db"; DROP DATABASE sbtest'
RUN = ["oltp_point_select", "--events=1", "--time=0", "run"]


def fatal_line(proc) -> str:
    lines = [line for line in proc.stdout.splitlines() if line.startswith("FATAL:")]
    assert proc.returncode == 1 and len(lines) == 1, proc.stdout + proc.stderr
    return lines[0]


@pytest.mark.mysql
def test_mysql_create_database_hint_quotes_the_name(run_cli):
    opts = [o for o in MYSQL_OPTS if not o.startswith("--mysql-db=")]
    line = fatal_line(run_cli(*opts, f"--mysql-db={NAME}", *RUN))
    assert 'CREATE DATABASE `no``such "db"; DROP DATABASE sbtest`)' in line, line


@pytest.mark.pgsql
def test_pgsql_create_database_hint_quotes_the_name(run_cli):
    opts = [o for o in PGSQL_OPTS if not o.startswith("--pgsql-db=")]
    line = fatal_line(run_cli(*opts, f"--pgsql-db={NAME}", *RUN))
    assert 'CREATE DATABASE "no`such ""db""; DROP DATABASE sbtest")' in line, line
