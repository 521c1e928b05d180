"""The failure texts sysbench 1.0.20's C drivers print, which the Lua API repeats
(api_sql_mysql.t / api_sql_pgsql.t of its suite): libpq's PQerrorMessage
(pysysbench/drivers/pgsql/libpq.py) and a failed connection from drv:connect().

The expected texts are the real /usr/bin/sysbench 1.0.20's output on the same
statements against PostgreSQL 15; where the machine has it, the connection tests
run it too and compare.  No server is needed: the hosts do not resolve
(``.invalid``) and port 1 refuses."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from pysysbench.drivers.pgsql.libpq import connect_message, error_message, fields_of

REPO = Path(__file__).resolve().parents[2]
REAL = shutil.which("sysbench", path="/usr/bin")


@pytest.mark.parametrize(
    "fields, query, text",
    [
        (
            {"severity": "ERROR", "message": 'relation "nonexisting" does not exist', "position": "15"},
            "SELECT * FROM nonexisting",
            'ERROR:  relation "nonexisting" does not exist\nLINE 1: SELECT * FROM nonexisting\n'
            "                      ^\n",
        ),
        # a second line, a tab turned into a space
        (
            {"severity": "ERROR", "message": 'column "b" does not exist', "position": "12"},
            "SELECT 1,\n\tb FROM t",
            'ERROR:  column "b" does not exist\nLINE 2:  b FROM t\n         ^\n',
        ),
        # too long: cut on both sides around the position (60 columns)
        (
            {"severity": "ERROR", "message": 'column "nosuch" does not exist', "position": "92"},
            "SELECT 'äöüéèàçñ日本語日本語日本語', 1111111111111111111111111111, 222222222222222222222222222222 + nosuch"
            " + 33333333333333333333333333333333333333333333333",
            'ERROR:  column "nosuch" does not exist\n'
            "LINE 1: ...111111111111111, 222222222222222222222222222222 + nosuch + 3...\n"
            "                                                             ^\n",
        ),
        # cut on the right only
        (
            {"severity": "ERROR", "message": 'column "nosuch" does not exist', "position": "8"},
            "SELECT nosuch, 1111111111111111111111111111, 222222222222222222222222222222, "
            "33333333333333333333333333333333333333333333333",
            'ERROR:  column "nosuch" does not exist\n'
            "LINE 1: SELECT nosuch, 1111111111111111111111111111, 222222222222222...\n"
            "               ^\n",
        ),
        (
            {"severity": "ERROR", "message": "syntax error at end of input", "position": "11"},
            "SELECT 1 +",
            "ERROR:  syntax error at end of input\nLINE 1: SELECT 1 +\n                  ^\n",
        ),
        # CR LF ends the line
        (
            {"severity": "ERROR", "message": 'type "nosuchtype" does not exist', "position": "11"},
            "SELECT 1::nosuchtype\r\n, 2",
            'ERROR:  type "nosuchtype" does not exist\nLINE 1: SELECT 1::nosuchtype\n                  ^\n',
        ),
        (
            {
                "severity": "ERROR",
                "message": "function lower(integer) does not exist",
                "position": "8",
                "hint": "No function matches the given name and argument types. You might need to add explicit type casts.",
            },
            "SELECT lower(1)",
            "ERROR:  function lower(integer) does not exist\nLINE 1: SELECT lower(1)\n               ^\n"
            "HINT:  No function matches the given name and argument types. You might need to add explicit type casts.\n",
        ),
        (
            {"severity": "ERROR", "message": "boom", "detail": "d", "context": "c"},
            "SELECT 1",
            "ERROR:  boom\nDETAIL:  d\nCONTEXT:  c\n",
        ),
    ],
)
def test_libpq_error_message(fields, query, text):
    assert error_message(fields, query) == text


def test_error_fields_from_the_wire():
    body = b'SERROR\x00VERROR\x00C42P01\x00Mrelation "x" does not exist\x00P15\x00Fparse.c\x00\x00'
    assert fields_of(body) == {
        "severity": "ERROR",
        "severity_en": "ERROR",
        "sqlstate": "42P01",
        "message": 'relation "x" does not exist',
        "position": "15",
    }


def test_libpq_connect_messages():
    assert (
        connect_message("nowhere.invalid", 5432, socket.gaierror(-2, "Name or service not known"))
        == 'could not translate host name "nowhere.invalid" to address: Name or service not known\n'
    )
    assert (
        connect_message("127.0.0.1", 1, ConnectionRefusedError(111, "Connect call failed ('127.0.0.1', 1)"))
        == 'connection to server at "127.0.0.1", port 1 failed: Connection refused\n'
        "\tIs the server running on that host and accepting TCP/IP connections?\n"
    )


SCRIPT = """function event()
  local drv = sysbench.sql.driver()
  local e, m = pcall(drv.connect, drv)
  print(m)
end
"""


def _sysbench(exe: list[str], tmp_path: Path, *args: str) -> str:
    script = tmp_path / "fc.lua"
    script.write_text(SCRIPT)
    env = dict(os.environ, PYTHONPATH=str(REPO), PYSYSBENCH_FACE="sysbench")
    proc = subprocess.run(
        [*exe, "--verbosity=1", "--events=1", *args, str(script), "run"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    return proc.stdout


PY = [sys.executable, "-m", "pysysbench"]


@pytest.mark.parametrize(
    "args",
    [
        ("--db-driver=pgsql", "--pgsql-host=nowhere.invalid"),
        ("--db-driver=pgsql", "--pgsql-host=127.0.0.1", "--pgsql-port=1"),
    ],
)
def test_pgsql_connect_failure_as_sysbench(tmp_path, args):
    out = _sysbench(PY, tmp_path, *args)
    assert out.startswith("FATAL: Connection to database failed: ") and out.endswith("\n\nconnection creation failed\n")
    if REAL:
        assert out == _sysbench([REAL], tmp_path, *args)


def test_mysql_connect_failure_as_sysbench(tmp_path):
    # libmysqlclient's words, as sysbench's suite expects them (the MariaDB client library
    # the Debian build links says "Unknown server host '...' (-2)")
    out = _sysbench(PY, tmp_path, "--db-driver=mysql", "--mysql-host=nowhere.invalid", "--mysql-socket=")
    assert out == (
        "FATAL: unable to connect to MySQL server on host 'nowhere.invalid', port 3306, aborting...\n"
        "FATAL: error 2005: Unknown MySQL server host 'nowhere.invalid' (0)\n"
        "connection creation failed\n"
    )
    out = _sysbench(PY, tmp_path, "--db-driver=mysql", "--mysql-host=127.0.0.1", "--mysql-port=1")
    assert out == (
        "FATAL: unable to connect to MySQL server on host '127.0.0.1', port 1, aborting...\n"
        "FATAL: error 2003: Can't connect to MySQL server on '127.0.0.1' (111)\n"
        "connection creation failed\n"
    )


def test_mysql_client_error_in_libmysqlclient_words():
    # asyncmy wraps a socket's failure in a 2003 with Python's text; both faces' messages
    # and the error counts by code use the client library's code and words instead
    from pysysbench.drivers.mysql.session import client_error

    def wrapped(cause: OSError) -> Exception:
        exc = RuntimeError(2003, f"Can't connect to MySQL server on 'x' ({cause})")
        exc.__cause__ = cause
        return exc

    assert client_error(
        {"host": "h.invalid", "port": 3306}, wrapped(socket.gaierror(-2, "Name or service not known"))
    ) == ("2005", "Unknown MySQL server host 'h.invalid' (0)")
    assert client_error({"host": "127.0.0.1", "port": 1}, wrapped(ConnectionRefusedError(111, "refused"))) == (
        "2003",
        "Can't connect to MySQL server on '127.0.0.1' (111)",
    )
    assert client_error({"unix_socket": "/tmp/s"}, wrapped(FileNotFoundError(2, "No such file or directory"))) == (
        "2002",
        "Can't connect to local MySQL server through socket '/tmp/s' (2)",
    )
    assert client_error({"host": "h", "port": 1}, RuntimeError(1045, "Access denied")) == ("1045", "Access denied")
