"""A server without free connection slots is reported as such (issue 16, point 4).

PRIVATE servers with max_connections=20 (private_servers.py; ports of this module's own),
other clients' sessions held by a helper process:

* run's pre-flight counts the slots PostgreSQL reserves for superusers and the sessions
  other clients hold, and refuses with the figures and what to do, before opening any
  thread's connection (before: it compared --threads with max_connections alone, then the
  threads' connections failed);
* a MariaDB that refuses a session (error 1040, sent right before it closes the socket)
  is reported as 1040 with max_connections named, never as asyncmy's "Transport does not
  expose socket instance" (what uvloop gave when the close was seen before the packet).
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from contextlib import contextmanager

import pytest
from conftest import REPO
from private_servers import PrivateMariaDB, PrivatePostgres

# moved with the fault tests' ports (PYSYSBENCH_TEST_MY_PORT / ..._PG_PORT) when they are set
MY_PORT = int(os.environ.get("PYSYSBENCH_TEST_MY_PORT", 3393))
PG_PORT = int(os.environ.get("PYSYSBENCH_TEST_PG_PORT", 5493))
LIMIT = 20
DATA = ["--table-size=100"]
HOLD = """
import asyncio, sys
async def main(kind, port, n, user):
    if kind == "mysql":
        import asyncmy
        held = [await asyncmy.connect(host="127.0.0.1", port=port, user="sbtest", db="sbtest") for _ in range(n)]
    else:
        import asyncpg
        held = [await asyncpg.connect(host="127.0.0.1", port=port, user=user, database="sbtest")
                for _ in range(n)]
    print("holding", len(held), flush=True)
    await asyncio.sleep(3600)
asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]))
"""


@pytest.fixture(scope="module")
def servers():
    my = PrivateMariaDB(port=MY_PORT, extra_args=(f"--max-connections={LIMIT}",))
    pg = PrivatePostgres(port=PG_PORT, extra_settings=f"-c max_connections={LIMIT}")
    try:
        my.start()
        pg.start()
        for server in (my, pg):
            ok(*server.options, *DATA, "oltp_point_select", "prepare")
        yield {"mysql": my, "pgsql": pg}
    finally:
        my.destroy()
        pg.destroy()


def cli(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run(
        [sys.executable, "-m", "pysysbench", *args], capture_output=True, text=True, timeout=120, env=env, cwd=REPO
    )


def ok(*args: str) -> subprocess.CompletedProcess:
    proc = cli(*args)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


@contextmanager
def others_hold(kind: str, port: int, n: int, user: str = "sbtest"):
    """``n`` sessions of another client (as ``user``: PostgreSQL only), open while the block runs."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, kind, str(port), str(n), user],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout.readline().strip() == f"holding {n}", proc.stderr.read()
        yield
    finally:
        proc.kill()
        proc.wait(10)


@pytest.mark.parametrize(
    "kind,port,expected",
    [
        (
            "mysql",
            MY_PORT,
            r"max_connections is 20 and other clients hold 8: use at most --threads=11 "
            r"or raise max_connections \(SET GLOBAL max_connections=24;",
        ),
        (
            "pgsql",
            PG_PORT,
            r"max_connections is 20 \(3 reserved for superusers\) and other clients hold 8: "
            r"use at most --threads=8 or raise max_connections \(ALTER SYSTEM SET max_connections = 27,",
        ),
    ],
)
def test_run_counts_reserved_slots_and_other_clients(servers, kind, port, expected):
    with others_hold(kind, port, 8):
        proc = cli(*servers[kind].options, *DATA, "--threads=15", "--time=1", "oltp_point_select", "run")
    fatal = [line for line in proc.stdout.splitlines() if line.startswith("FATAL:")]
    assert proc.returncode == 1 and len(fatal) == 1, proc.stdout + proc.stderr
    assert fatal[0].startswith("FATAL: --threads=15 needs 16 connections but the server's "), fatal
    assert re.search(expected, fatal[0]), fatal[0]
    assert "Threads started" not in proc.stdout and "Traceback" not in proc.stderr


@pytest.mark.pgsql
def test_pgsql_counts_sessions_of_other_users_it_cannot_see(servers):
    """A role without pg_read_all_stats sees other users' rows in pg_stat_activity with
    backend_type NULL: those sessions hold slots all the same (they were counted as 0)."""
    with others_hold("pgsql", PG_PORT, 8, user="postgres"):
        proc = cli(*servers["pgsql"].options, *DATA, "--threads=15", "--time=1", "oltp_point_select", "run")
    fatal = [line for line in proc.stdout.splitlines() if line.startswith("FATAL:")]
    assert proc.returncode == 1 and len(fatal) == 1, proc.stdout + proc.stderr
    assert re.search(
        r"max_connections is 20 \(3 reserved for superusers\) and other clients hold 8: "
        r"use at most --threads=8 ",
        fatal[0],
    ), fatal[0]


def test_refused_mariadb_sessions_are_reported_as_too_many_connections(servers):
    """More connections at once than the server takes, on uvloop as the CLI runs them."""
    import uvloop

    from pysysbench.command.cmdline import parse
    from pysysbench.drivers import REGISTRY

    driver = REGISTRY["mysql"](parse([*servers["mysql"].options, "oltp_point_select", "run"]).values)

    async def attempt():
        results = await asyncio.gather(
            *(asyncio.wait_for(driver.connect(), 30) for _ in range(3 * LIMIT)), return_exceptions=True
        )
        for r in results:
            if not isinstance(r, BaseException):
                await r.close()
        return [str(r) for r in results if isinstance(r, BaseException)]

    errors = [e for _ in range(3) for e in uvloop.run(attempt())]
    assert errors
    wrong = [e for e in errors if not re.search(r"error 1040: Too many connections; .*max_connections", e)]
    assert not wrong, f"{len(wrong)} of {len(errors)} refusals misreported, e.g. {wrong[0]}"
