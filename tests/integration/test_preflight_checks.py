"""Pre-run checks (issue 42, 2.3): what would fail once the threads start is one line
before any thread starts (engine/preflight.py).

Two PRIVATE MariaDB servers (private_servers.py, free ports): A with max_connections=20
and max_prepared_stmt_count=50 holding sbtest1 and sbtest2, B with the defaults holding
sbtest1 alone, both 100 rows a table.  Nothing here sets anything on the shared servers.

* a host list with a node nothing listens on: the connect error naming it, before
  "Initializing worker threads..." (before: after it, when thread 1 connected);
* max_connections per node, against the threads that land on it (before: all of
  --threads against the first node);
* max_prepared_stmt_count against threads x statements each, less what other clients
  hold (before: error 1461 from a thread's prepare); none with --db-ps-mode=disable;
* RLIMIT_NOFILE: a soft limit below what the threads' connections need is raised to the
  hard one silently (before: connect errors 24, too many open files); a hard one too low
  is one line naming ulimit -n;
* the tables on every node (before: the first node only) and a --table-size above the
  rows prepared (a warning in pysysbench's face, nothing in sysbench's).
"""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
from contextlib import contextmanager

import pytest
from conftest import REPO
from private_servers import PrivateMariaDB, free_port

SIZE = ["--table-size=100", "--time=1"]
HOLD_PREPARED = """
import asyncio, sys
async def main(port, n):
    import asyncmy
    conn = await asyncmy.connect(host="127.0.0.1", port=port, user="sbtest", db="sbtest")
    async with conn.cursor() as cur:
        for i in range(n):
            await cur.execute(f"PREPARE held{i} FROM 'SELECT 1'")
    print("holding", n, flush=True)
    await asyncio.sleep(3600)
asyncio.run(main(int(sys.argv[1]), int(sys.argv[2])))
"""


@pytest.fixture(scope="module")
def nodes():
    a = PrivateMariaDB(port=free_port(), extra_args=("--max-connections=20", "--max-prepared-stmt-count=50"))
    b = PrivateMariaDB(port=free_port(), extra_args=("--max-connections=200",))
    try:
        a.start()
        b.start()
        ok(*a.options, "--tables=2", "--table-size=100", "oltp_read_only", "prepare")
        ok(*b.options, "--tables=1", "--table-size=100", "oltp_read_only", "prepare")
        yield a, b
    finally:
        a.destroy()
        b.destroy()


def cli(*args: str, nofile: tuple[int, int] | None = None, face: str = "pysysbench") -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO), PYSYSBENCH_FACE=face)
    return subprocess.run(
        [sys.executable, "-m", "pysysbench", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=REPO,
        preexec_fn=(lambda: resource.setrlimit(resource.RLIMIT_NOFILE, nofile)) if nofile else None,
    )


def ok(*args: str, **kw) -> subprocess.CompletedProcess:
    proc = cli(*args, **kw)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Threads started!" in proc.stdout or "prepare" in args, proc.stdout
    return proc


def fatal(*args: str, **kw) -> str:
    """The run's one error line: exit 1, no thread started, no traceback."""
    proc = cli(*args, **kw)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("FATAL:")]
    assert proc.returncode == 1 and len(lines) == 1, proc.stdout + proc.stderr
    assert "Initializing worker threads" not in proc.stdout, proc.stdout
    assert "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


def two(a: PrivateMariaDB, b_port: int) -> list[str]:
    """A's options with the host list 127.0.0.1:A, 127.0.0.1:b_port (thread t: node t mod 2)."""
    return [o for o in a.options if not o.startswith("--mysql-port")] + [f"--mysql-port={a.port},{b_port}"]


def test_unreachable_node_of_a_host_list_is_named_before_threads_start(nodes):
    a, _ = nodes
    dead = free_port()
    line = fatal(*two(a, dead), *SIZE, "--threads=2", "oltp_point_select", "run")
    assert f"on host '127.0.0.1', port {dead}: error 2003" in line, line
    assert f"port {a.port}" not in line, line


def test_max_connections_counts_the_threads_each_node_gets(nodes):
    a, b = nodes
    # 30 threads over two nodes: 15 on A (limit 20) fit
    proc = ok(*two(a, b.port), *SIZE, "--threads=30", "oltp_point_select", "run")
    assert "FATAL" not in proc.stdout
    # 44: 22 on A do not
    line = fatal(*two(a, b.port), *SIZE, "--threads=44", "oltp_point_select", "run")
    assert line == (
        f"FATAL: the 22 threads on MySQL server on host '127.0.0.1', port {a.port} need 23 connections "
        "but its max_connections is 20: use at most 19 threads on it or raise max_connections "
        "(SET GLOBAL max_connections=23; set it in my.cnf too to keep it)"
    ), line


@contextmanager
def others_prepare(port: int, n: int):
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD_PREPARED, str(port), str(n)],
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


def test_max_prepared_stmt_count_against_threads_times_statements(nodes):
    a, _ = nodes
    # oltp_read_only on one table prepares 7 statements a thread (BEGIN, COMMIT, 5 SELECTs)
    line = fatal(*a.options, *SIZE, "--threads=8", "oltp_read_only", "run")
    assert line == (
        "FATAL: --threads=8 needs 56 prepared statements (7 each) but the server's max_prepared_stmt_count "
        "is 50: use at most --threads=7, raise it (SET GLOBAL max_prepared_stmt_count=56; set it in my.cnf "
        "too to keep it) or pass --db-ps-mode=disable"
    ), line
    ok(*a.options, *SIZE, "--threads=8", "--db-ps-mode=disable", "oltp_read_only", "run")
    with others_prepare(a.port, 10):
        line = fatal(*a.options, *SIZE, "--threads=6", "oltp_read_only", "run")
    assert re.search(
        r"needs 42 prepared statements \(7 each\) .* is 50 and other clients hold 10: use at most --threads=5,", line
    )
    assert "SET GLOBAL max_prepared_stmt_count=52;" in line, line


def test_open_files_soft_limit_is_raised_to_the_hard_one(nodes):
    _, b = nodes
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard != resource.RLIM_INFINITY and hard < 200:
        pytest.skip(f"the hard RLIMIT_NOFILE here is {hard}")
    args = [*b.options, *SIZE, "--threads=100", "--workers=1", "--db-ps-mode=disable", "oltp_point_select", "run"]
    proc = ok(*args, nofile=(40, hard))
    assert "FATAL" not in proc.stdout and "WARNING" not in proc.stdout, proc.stdout


def test_open_files_hard_limit_too_low_is_one_line(nodes):
    _, b = nodes
    args = [*b.options, *SIZE, "--threads=100", "--workers=1", "--db-ps-mode=disable", "oltp_point_select", "run"]
    line = fatal(*args, nofile=(100, 100))
    assert line == (
        "FATAL: 100 connections in one process need about 132 open files, but this process may open 100 "
        "(RLIMIT_NOFILE): raise the limit (ulimit -n 132, or LimitNOFILE= for a service) or use fewer "
        "--threads per process (more --workers)"
    ), line


def test_tables_are_checked_on_every_node(nodes):
    a, b = nodes
    line = fatal(*two(a, b.port), *SIZE, "--tables=2", "--threads=2", "oltp_point_select", "run")
    assert line.startswith(
        f"FATAL: table 'sbtest2' does not exist in MySQL server on host '127.0.0.1', port {b.port}: run prepare first"
    ), line


def test_fewer_rows_than_table_size_is_a_warning(nodes):
    a, _ = nodes
    args = [*a.options, "--tables=2", "--table-size=1000", "--time=1", "--threads=1", "oltp_point_select", "run"]
    proc = ok(*args)
    warnings = [line for line in proc.stdout.splitlines() if line.startswith("WARNING:")]
    assert warnings == [
        f"WARNING: sbtest1 in MySQL server on host '127.0.0.1', port {a.port} holds ids up to 100, fewer rows than "
        "--table-size=1000 (and 1 more of the 2 tables): prepare the tables with that size, or run with the "
        "size they were prepared with"
    ], proc.stdout
    assert "WARNING" not in ok(*args, face="sysbench").stdout  # sysbench prints none


@pytest.mark.parametrize(
    "test,extra",
    [
        ("oltp_read_write", ()),
        ("oltp_read_write", ("--skip-trx=on", "--range-selects=off")),
        ("oltp_read_only", ()),
        ("oltp_write_only", ()),
        ("oltp_point_select", ()),
        ("oltp_update_index", ()),
        ("oltp_update_non_index", ()),
        ("oltp_delete", ()),
        ("oltp_insert", ()),
        ("select_random_points", ()),
        ("select_random_ranges", ()),
    ],
)
def test_prepared_per_thread_is_what_a_thread_prepares(nodes, test, extra):
    """The count the check uses is what thread_init prepares on the server (B: no other
    client prepares there), for each bundled workload that knows its count."""
    import asyncio

    from pysysbench.command.library import configure, parse_request
    from pysysbench.core.rand import Rand
    from pysysbench.workloads.base import ThreadContext

    _, b = nodes
    workload, driver = configure(parse_request(test, "run", [*b.options, "--table-size=100", *extra]))

    def held() -> int:
        return int(b.sql("SHOW GLOBAL STATUS LIKE 'Prepared_stmt_count'").split()[1])

    async def prepared() -> int:
        for _ in range(50):  # the session of the case before has ended (its statements are gone)
            if not held():
                break
            await asyncio.sleep(0.1)
        conn = await driver.connect()
        try:
            ctx = ThreadContext(
                tid=0,
                threads=1,
                conn=conn,
                rand=Rand.from_options(workload.values, 1),
                counters=conn.counters,
                values=workload.values,
                driver=driver,
            )
            await workload.thread_init(ctx)
            return held()
        finally:
            await conn.close()

    assert asyncio.run(prepared()) == workload.prepared_per_thread()
