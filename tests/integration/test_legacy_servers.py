"""sysbench 0.5 interface, vendor variants, XA and --rand-compat against the
real local MariaDB and PostgreSQL (no mocks).

Everything runs in the database ``legacy`` on both servers (created by
scripts/setup-databases.sh), never in ``sbtest`` where other tests drop tables.
What the servers executed is observed on the server:

* MariaDB: the general log (``log_output=TABLE``), rows of the threads that
  connected to ``legacy`` only (robust to other sessions);
* PostgreSQL: ``pg_stat_statements`` of the ``legacy`` database only (reset for
  that database alone); ``pg_prepared_xacts`` for XA.  pg_stat_statements must be
  preloaded and XA needs max_prepared_transactions > 0, which the machine's server
  does not have: those tests run on the session's private PostgreSQL
  (``private_pgsql``, conftest.py), in its own ``legacy`` database.

The general log switch is server-global, so its windows take the same lock file as
the other integration tests, and put log_output / general_log back as they were.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import fcntl
import io
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import general_log_on

from pysysbench.cli.main import main as cli_main

REPO = Path(__file__).resolve().parents[2]
DB = "legacy"
HOST = "127.0.0.1"
MY = ["--mysql-host=127.0.0.1", "--mysql-port=3306", "--mysql-user=sbtest", f"--mysql-db={DB}"]
PG_PORT = 5432  # the machine's server; tests that need settings it lacks use pg_opts(private_pg)


def pg_opts(port: int) -> list[str]:
    return [
        "--db-driver=pgsql",
        "--pgsql-host=127.0.0.1",
        f"--pgsql-port={port}",
        "--pgsql-user=sbtest",
        f"--pgsql-db={DB}",
    ]


PG = pg_opts(PG_PORT)
LOCK_FILE = "/tmp/pysysbench-integration-tests.lock"  # shared with tests/integration/conftest.py
LOCK_TIMEOUT_S = 600
SETUP_HINT = "run scripts/setup-databases.sh (as root): it creates the 'legacy' database on both servers"
SYSBENCH = "/usr/bin/sysbench"


# --- running things ----------------------------------------------------------------------


def run(*args: str) -> subprocess.CompletedProcess:
    """``pysysbench ARGS`` in this process (the CLI entry point, its stdout and
    stderr captured): the same code path as the console script, without paying
    an interpreter start-up per run."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = cli_main(list(args))
    return subprocess.CompletedProcess(["pysysbench", *args], rc, out.getvalue(), err.getvalue())


def ok(*args: str) -> str:
    proc = run(*args)
    assert proc.returncode == 0, f"pysysbench {' '.join(args)}\nexit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def report(stdout: str) -> dict[str, int]:
    out = {}
    for key in ("read", "write", "other", "transactions"):
        m = re.search(rf"^\s+{key}:\s+(\d+)", stdout, re.M)
        assert m, stdout
        out[key] = int(m.group(1))
    out["events"] = int(re.search(r"total number of events:\s+(\d+)", stdout).group(1))
    out["errors"] = int(re.search(r"ignored errors:\s+(\d+)", stdout).group(1))
    return out


async def _my(sql: str | list[str]) -> list[tuple]:
    import asyncmy

    conn = await asyncmy.connect(
        host=HOST, port=3306, user="root", password="", database=DB, autocommit=True, connect_timeout=5
    )
    try:
        rows: list[tuple] = []
        async with conn.cursor() as cur:
            for stmt in [sql] if isinstance(sql, str) else sql:
                await cur.execute(stmt)
                rows = list(await cur.fetchall() or [])
        return rows
    finally:
        await conn.ensure_closed()


async def _pg(sql: str | list[str], db: str = DB, port: int = PG_PORT) -> list[tuple]:
    import asyncpg

    conn = await asyncpg.connect(host=HOST, port=port, user="postgres", database=db, timeout=5)
    try:
        rows: list[tuple] = []
        for stmt in [sql] if isinstance(sql, str) else sql:
            rows = [tuple(r) for r in await conn.fetch(stmt)]
        return rows
    finally:
        await conn.close()


def my(sql: str | list[str]) -> list[tuple]:
    return asyncio.run(_my(sql))


def pg(sql: str | list[str], port: int = PG_PORT) -> list[tuple]:
    return asyncio.run(_pg(sql, port=port))


def _text(v) -> str:
    return v.decode() if isinstance(v, (bytes, bytearray)) else str(v)


_held = [0]


@contextlib.contextmanager
def exclusive() -> Iterator[None]:
    """The lock file the other integration tests take around server-global
    switches; re-entrant within this process."""
    if _held[0]:
        _held[0] += 1
        try:
            yield
        finally:
            _held[0] -= 1
        return
    fd = os.open(LOCK_FILE, os.O_CREAT | os.O_RDWR, 0o666)
    try:
        deadline = time.monotonic() + LOCK_TIMEOUT_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    pytest.fail(f"could not lock {LOCK_FILE} within {LOCK_TIMEOUT_S}s")
                time.sleep(0.2)
        _held[0] = 1
        yield
    finally:
        _held[0] = 0
        os.close(fd)


class Log:
    """Statements of the sessions that connected to the ``legacy`` database.
    ``mark()`` between runs splits the sessions by run (ids only grow)."""

    def __init__(self) -> None:
        self.threads: dict[int, list[str]] = {}
        self.marks: list[int] = []

    def mark(self) -> None:
        self.marks.append(int(my("SELECT COALESCE(MAX(thread_id), 0) FROM mysql.general_log")[0][0]))

    def run(self, i: int) -> Log:
        """The sessions that started between mark i-1 and mark i."""
        lo = self.marks[i - 1] if i > 0 else -1
        hi = self.marks[i] if i < len(self.marks) else 1 << 62
        part = Log()
        part.threads = {t: s for t, s in self.threads.items() if lo < t <= hi}
        return part

    def worker_statements(self) -> list[str]:
        """The busiest session (the benchmark thread), from its first BEGIN."""
        busiest = max(self.threads.values(), key=len)
        return busiest[busiest.index("BEGIN") :] if "BEGIN" in busiest else busiest

    def all_statements(self) -> list[str]:
        return [s for stmts in self.threads.values() for s in stmts]


@contextlib.contextmanager
def general_log() -> Iterator[Log]:
    log = Log()
    with exclusive(), general_log_on(my):
        try:
            yield log
        finally:
            rows = my(
                "SELECT thread_id, argument FROM mysql.general_log WHERE command_type IN ('Query', 'Execute') "
                "AND thread_id IN (SELECT thread_id FROM mysql.general_log WHERE command_type='Connect' "
                f"AND argument LIKE '% on {DB} %' AND user_host LIKE '%sbtest%')"
            )
    threads: dict[int, list[str]] = collections.defaultdict(list)
    for tid, arg in rows:
        threads[int(tid)].append(" ".join(_text(arg).split()))
    log.threads = dict(threads)


@contextlib.contextmanager
def pg_statements(port: int) -> Iterator[collections.Counter]:
    """pg_stat_statements calls of the legacy database of the (private) server on ``port``,
    by statement text (this module's own reset and bookkeeping statements left out)."""
    calls: collections.Counter = collections.Counter()
    dbid = pg(f"SELECT oid FROM pg_database WHERE datname = '{DB}'", port)[0][0]
    pg(f"SELECT pg_stat_statements_reset(0, {dbid}, 0)", port)
    yield calls
    time.sleep(0.05)
    rows = pg(f"SELECT query, calls FROM pg_stat_statements WHERE dbid = {dbid}", port)
    for query, n in rows:
        text = " ".join(query.split())
        if not text.startswith(("SELECT pg_stat_statements_reset", "SELECT to_regclass")):
            calls[text] += n


def drop_tables(pg_port: int = PG_PORT) -> None:
    if pg_port == PG_PORT:
        names = [
            _text(r[0]) for r in my("SELECT table_name FROM information_schema.tables WHERE table_schema='legacy'")
        ]
        if names:
            my([f"DROP TABLE IF EXISTS `{n}`" for n in names])
    names = [r[0] for r in pg("SELECT tablename FROM pg_tables WHERE schemaname='public'", pg_port)]
    if names:
        pg([f'DROP TABLE IF EXISTS "{n}" CASCADE' for n in names], pg_port)


@pytest.fixture(scope="module", autouse=True)
def legacy_db():
    try:
        my("SELECT 1")
        pg("SELECT 1")
        asyncio.run(_sbtest_can_connect())
    except Exception as exc:  # a missing server or database is a failure, not a skip
        pytest.fail(f"the 'legacy' database is not usable: {type(exc).__name__}: {exc}; {SETUP_HINT}", pytrace=False)
    drop_tables()
    yield
    drop_tables()


async def _sbtest_can_connect() -> None:
    import asyncmy
    import asyncpg

    c = await asyncmy.connect(host=HOST, port=3306, user="sbtest", password="", database=DB, connect_timeout=5)
    await c.ensure_closed()
    c2 = await asyncpg.connect(host=HOST, port=5432, user="sbtest", database=DB, timeout=5)
    await c2.close()


@pytest.fixture
def clean():
    drop_tables()
    yield
    drop_tables()


@pytest.fixture(scope="module")
def private_pg(private_pgsql) -> int:
    """The port of the session's private PostgreSQL (pg_stat_statements preloaded,
    max_prepared_transactions=100), with this module's ``legacy`` database."""
    if not private_pgsql.sql(f"SELECT 1 FROM pg_database WHERE datname = '{DB}'").strip():
        private_pgsql.sql(f"CREATE DATABASE {DB} OWNER sbtest")
    private_pgsql.sql("CREATE EXTENSION IF NOT EXISTS pg_stat_statements", db=DB)
    return private_pgsql.port


@pytest.fixture
def clean_private_pg(private_pg) -> Iterator[int]:
    drop_tables(private_pg)
    yield private_pg
    drop_tables(private_pg)


# --- the statement mix of 0.5's oltp.lua (spec 7.2) ----------------------------------------------

T = r"(sbtest\d+)"
N = r"(\d+)"
PATTERNS = {
    "begin": r"BEGIN",
    "commit": r"COMMIT",
    "lock": r"LOCK TABLES sbtest1 WRITE ,sbtest2 WRITE",
    "unlock": r"UNLOCK TABLES",
    "point": rf"SELECT c FROM {T} WHERE id={N}",
    "simple": rf"SELECT c FROM {T} WHERE id BETWEEN {N} AND \2\+(\d+)",
    "sum": rf"SELECT SUM\(K\) FROM {T} WHERE id BETWEEN {N} AND \2\+(\d+)",
    "order": rf"SELECT c FROM {T} WHERE id BETWEEN {N} AND \2\+(\d+) ORDER BY c",
    "distinct": rf"SELECT DISTINCT c FROM {T} WHERE id BETWEEN {N} AND \2\+(\d+) ORDER BY c",
    "index": rf"UPDATE {T} SET k=k\+1 WHERE id={N}",
    "non_index": rf"UPDATE {T} SET c='[0-9-]{{119}}' WHERE id={N}",
    "delete": rf"DELETE FROM {T} WHERE id={N}",
    "insert": rf"INSERT INTO {T} \(id, k, c, pad\) VALUES \({N}, \d+, '[0-9-]{{119}}', '[0-9-]{{59}}'\)",
}
COMPILED = [(k, re.compile(p)) for k, p in PATTERNS.items()]


def kind(sql: str) -> tuple[str, str | None, tuple]:
    for name, rx in COMPILED:
        m = rx.fullmatch(sql)
        if m:
            return name, (m.group(1) if m.groups() else None), m.groups()
    return "unknown: " + sql[:100], None, ()


def expected_mix(
    point=10,
    simple=1,
    sum_=1,
    order=1,
    distinct=1,
    index=1,
    non_index=1,
    delete_inserts=1,
    begin="begin",
    commit="commit",
    reads=True,
    writes=True,
) -> list[str]:
    body = []
    if reads:
        body += ["point"] * point + ["simple"] * simple + ["sum"] * sum_ + ["order"] * order + ["distinct"] * distinct
    if writes:
        body += ["index"] * index + ["non_index"] * non_index + ["delete", "insert"] * delete_inserts
    return ([begin] if begin else []) + body + ([commit] if commit else [])


def transactions(statements: list[str], per_tx: int) -> list[list[tuple]]:
    kinds = [kind(s) for s in statements]
    assert len(kinds) % per_tx == 0, f"{len(kinds)} statements are not a whole number of {per_tx}-statement events"
    return [kinds[i : i + per_tx] for i in range(0, len(kinds), per_tx)]


def check_transactions(statements: list[str], mix: list[str], events: int, width: int = 99) -> None:
    txs = transactions(statements, len(mix))
    assert len(txs) == events
    for tx in txs:
        assert [k for k, _, _ in tx] == mix
        tables = {t for _, t, _ in tx if t is not None}
        assert len(tables) <= 1, f"0.5 uses one table per transaction, got {tables}"
        for k, _, groups in tx:
            if k in ("simple", "sum", "order", "distinct"):
                assert int(groups[2]) == width  # 'BETWEEN s AND s+99': the server adds
        deletes = [g[1] for k, _, g in tx if k == "delete"]
        inserts = [g[1] for k, _, g in tx if k == "insert"]
        assert deletes == inserts  # each pair re-inserts the id it deleted


MIX_CASES = [
    pytest.param([], dict(), id="default"),
    pytest.param(
        [
            "--oltp-point-selects=2",
            "--oltp-simple-ranges=0",
            "--oltp-sum-ranges=2",
            "--oltp-order-ranges=1",
            "--oltp-distinct-ranges=0",
            "--oltp-index-updates=2",
            "--oltp-non-index-updates=3",
            "--oltp-delete-inserts=2",
            "--oltp-range-size=10",
        ],
        dict(point=2, simple=0, sum_=2, order=1, distinct=0, index=2, non_index=3, delete_inserts=2),
        id="counts",
    ),
    pytest.param(["--oltp-read-only=on"], dict(writes=False), id="read-only"),
    pytest.param(["--oltp-write-only=on"], dict(reads=False), id="write-only"),
    pytest.param(["--oltp-range-selects=off"], dict(simple=0, sum_=0, order=0, distinct=0), id="no-ranges"),
    pytest.param(["--oltp-skip-trx=on"], dict(begin=None, commit=None), id="skip-trx"),
    pytest.param(
        [
            "--oltp-point-selects=4",
            "--oltp-simple-ranges=0",
            "--oltp-sum-ranges=0",
            "--oltp-order-ranges=0",
            "--oltp-distinct-ranges=0",
            "--oltp-index-updates=1",
            "--oltp-non-index-updates=0",
            "--oltp-delete-inserts=0",
            "--rand-type=special",
            "--percentile=99",
        ],
        dict(point=4, simple=0, sum_=0, order=0, distinct=0, index=1, non_index=0, delete_inserts=0),
        id="tencentdb-variant",
    ),
]
EVENTS = 12


def _width(opts: list[str]) -> int:
    m = [o for o in opts if o.startswith("--oltp-range-size=")]
    return int(m[0].split("=")[1]) - 1 if m else 99


def _expected_counters(mix: list[str]) -> tuple[int, int, int]:
    reads = sum(k in ("point", "simple", "sum", "order", "distinct") for k in mix)
    writes = sum(k in ("index", "non_index", "delete", "insert") for k in mix)
    return reads * EVENTS, writes * EVENTS, (len(mix) - reads - writes) * EVENTS


MIX_RUN = [
    "--test=tests/db/oltp.lua",
    *MY,
    "--oltp-tables-count=2",
    "--oltp-table-size=300",
    "--num-threads=1",
    f"--max-requests={EVENTS}",
]


@pytest.fixture(scope="module")
def mysql_mix_runs():
    """Every MIX_CASES run inside one general-log capture: case id -> (stdout, log)."""
    drop_tables()
    ok("--test=tests/db/oltp.lua", *MY, "--oltp-tables-count=2", "--oltp-table-size=300", "prepare")
    outs = []
    with general_log() as log:
        for case in MIX_CASES:
            outs.append(ok(*MIX_RUN, *case.values[0], "run"))
            log.mark()
    yield {case.id: (out, log.run(i)) for i, (case, out) in enumerate(zip(MIX_CASES, outs))}
    drop_tables()


@pytest.mark.mysql
@pytest.mark.parametrize("opts, mix_kw", MIX_CASES)
def test_oltp_lua_statement_mix_mysql(mysql_mix_runs, request, opts, mix_kw):
    mix = expected_mix(**mix_kw)
    out, log = mysql_mix_runs[request.node.callspec.id]
    stmts = log.worker_statements()
    if mix[0] != "begin":  # skip-trx: no BEGIN to start from
        stmts = max(log.threads.values(), key=len)[-len(mix) * EVENTS :]
    check_transactions(stmts, mix, EVENTS, _width(opts))
    r = report(out)
    assert (r["read"], r["write"], r["other"]) == _expected_counters(mix)  # by keyword, as 0.5
    assert r["events"] == EVENTS
    assert r["transactions"] == EVENTS  # 1.0 format: events (sysbench 1.0.20 running 0.5 scripts)
    if "--oltp-skip-trx=on" in opts:
        out05 = ok(*MIX_RUN, *opts, "--output-format=0.5", "run")
        assert re.search(r"^    transactions:\s+0\s+\(0\.00 per sec\.\)$", out05, re.M)  # 0.5: by COMMIT


@pytest.mark.mysql
def test_oltp_lua_myisam_lock_tables(clean):
    ok(
        "--test=tests/db/oltp.lua",
        *MY,
        "--oltp-tables-count=2",
        "--oltp-table-size=200",
        "--mysql-table-engine=myisam",
        "prepare",
    )
    engine = my("SELECT engine FROM information_schema.tables WHERE table_schema='legacy' AND table_name='sbtest1'")
    assert _text(engine[0][0]).lower() == "myisam"
    with general_log() as log:
        ok(
            "--test=tests/db/oltp.lua",
            *MY,
            "--oltp-tables-count=2",
            "--oltp-table-size=200",
            "--num-threads=2",
            "--max-requests=10",
            "--mysql-table-engine=myisam",
            "run",
        )
    stmts = log.all_statements()
    c = collections.Counter(kind(s)[0] for s in stmts)
    assert c["lock"] == 10 and c["unlock"] == 10 and c["begin"] == 0 and c["commit"] == 0
    assert c["point"] == 100 and c["insert"] == 10


PG_CASES = [MIX_CASES[0], MIX_CASES[1]]


@pytest.fixture(scope="module")
def pgsql_mix_runs(private_pg):
    """The PG_CASES runs, each in its own pg_stat_statements window (private server)."""
    conn = pg_opts(private_pg)
    drop_tables(private_pg)
    ok("--test=tests/db/oltp.lua", *conn, "--oltp-tables-count=2", "--oltp-table-size=300", "prepare")
    runs = {}
    for case in PG_CASES:
        with pg_statements(private_pg) as calls:
            out = ok(
                "--test=tests/db/oltp.lua",
                *conn,
                "--oltp-tables-count=2",
                "--oltp-table-size=300",
                "--num-threads=1",
                f"--max-requests={EVENTS}",
                *case.values[0],
                "run",
            )
        runs[case.id] = (out, calls)
    yield runs
    drop_tables(private_pg)


@pytest.mark.pgsql
@pytest.mark.parametrize("opts, mix_kw", PG_CASES)
def test_oltp_lua_statement_mix_pgsql(pgsql_mix_runs, request, opts, mix_kw):
    mix = expected_mix(**mix_kw)
    out, calls = pgsql_mix_runs[request.node.callspec.id]
    # pg_stat_statements replaces constants by $n: 'BETWEEN $1 AND $2+$3' shows the 0.5 text
    pg_patterns = {
        "begin": r"BEGIN",
        "commit": r"COMMIT",
        "point": r"SELECT c FROM sbtest\d WHERE id=\$\d+",
        "simple": r"SELECT c FROM sbtest\d WHERE id BETWEEN \$\d+ AND \$\d+\+\$\d+",
        "sum": r"SELECT SUM\(K\) FROM sbtest\d WHERE id BETWEEN \$\d+ AND \$\d+\+\$\d+",
        "order": r"SELECT c FROM sbtest\d WHERE id BETWEEN \$\d+ AND \$\d+\+\$\d+ ORDER BY c",
        "distinct": r"SELECT DISTINCT c FROM sbtest\d WHERE id BETWEEN \$\d+ AND \$\d+\+\$\d+ ORDER BY c",
        "index": r"UPDATE sbtest\d SET k=k\+\$\d+ WHERE id=\$\d+",
        "non_index": r"UPDATE sbtest\d SET c=\$\d+ WHERE id=\$\d+",
        "delete": r"DELETE FROM sbtest\d WHERE id=\$\d+",
        "insert": r"INSERT INTO sbtest\d \(id, k, c, pad\) VALUES \(\$\d+, \$\d+, \$\d+, \$\d+\)",
    }
    seen: collections.Counter = collections.Counter()
    for query, n in calls.items():
        name = next((k for k, p in pg_patterns.items() if re.fullmatch(p, query)), None)
        if name is None:  # pysysbench's own checks (SHOW max_connections, ...) may appear; events may not
            assert "sbtest" not in query and query not in ("ROLLBACK", "BEGIN", "COMMIT"), (
                f"unexpected statement {query!r}"
            )
            continue
        seen[name] += n
    want = collections.Counter(k for k in mix)
    assert seen == collections.Counter({k: n * EVENTS for k, n in want.items()})
    r = report(out)
    assert (r["read"], r["write"], r["other"]) == _expected_counters(mix)


# --- the seed reports' command lines ---------------------------------------------------------


@pytest.mark.mysql
def test_tencentdb_seed_command_lines(clean):
    """TencentDB for MariaDB report 3.3/3.4, connection options changed, small tables, 2 s."""
    conn = [
        "--mysql-host=127.0.0.1",
        "--mysql-port=3306",
        "--mysql-user=sbtest",
        "--mysql-password=",
        f"--mysql-db={DB}",
    ]
    out = ok(
        *conn,
        "--mysql-table-engine=innodb",
        "--test=tests/db/oltp.lua",
        "--oltp_tables_count=2",
        "--oltp-table-size=1000",
        "--rand-init=on",
        "prepare",
    )
    assert "Creating secondary indexes on 'sbtest2'..." in out
    ddl = _text(my("SHOW CREATE TABLE sbtest1")[0][1])
    assert "`id` int(10) unsigned NOT NULL AUTO_INCREMENT" in ddl and "`k` int(10) unsigned" in ddl
    assert "KEY `k_1` (`k`)" in ddl and "MAX_ROWS=1000000" in ddl
    line = [
        *conn,
        "--test=/root/sysbench_for_z3/sysbench/tests/db/oltp.lua",
        "--oltp_tables_count=2",
        "--oltp-table-size=1000",
        "--num-threads=4",
        "--oltp-read-only=off",
        "--rand-type=special",
        "--max-time=600",
        "--max-requests=0",
        "--percentile=99",
        "--oltp-point-selects=4",
        "run",
        "--max-time=2",
    ]
    proc = subprocess.run(
        [sys.executable, "-m", "pysysbench", *line],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
    )  # as a shell runs it
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    r = report(out)
    assert r["events"] > 20 and r["transactions"] == r["events"]
    assert "99th percentile:" in out
    # 4 point selects + 4 ranges per event; each ignored deadlock restarts an event,
    # re-sending at most its 8 reads (the count depends on contention, not a constant)
    assert 8 * r["events"] <= r["read"] <= 8 * (r["events"] + r["errors"])


@pytest.mark.pgsql
def test_kunlunbase_seed_command_lines(clean):
    """KunlunBase 0.9.1 report: the read&write and write-only lines exactly as pasted
    (glued options included), shell variables set to the local server; the report
    has no prepare line, so the read&write line with 'prepare' prepares."""
    host, port, dbname, tblcnt, tblsize, thrcnt, user, pw = HOST, "5432", DB, "3", "1000", "4", "sbtest", ""
    rw = (
        f"--max-time=300 --test=tests/db/oltp.lua  --pgsql-host={host}  --pgsql-port={port} "
        f"--pgsql-db={dbname}--oltp_tables_count={tblcnt} --oltp-table-size={tblsize}  --oltp-write-only=off "
        f"--oltp-read-only=off--init-rng=on --num-threads={thrcnt} --max-requests=0 --oltp-dist-type=uniform "
        f"--pgsql-user={user}--pgsql-password={pw} --oltp_auto_inc=off --db-driver=pgsql --oltp_use_xa_pct=0 "
        f"--oltp_use_xa_2pc_pct=80--report-interval=10 run"
    ).split()
    wo = (
        f"--max-time=300--test=tests/db/oltp.lua --pgsql-host={host} --pgsql-port={port} --pgsql-db={dbname} "
        f"--oltp_tables_count={tblcnt}--oltp-table-size={tblsize} --oltp-write-only=on --oltp-read-only=off "
        f"--init-rng=on--num-threads={thrcnt}  --max-requests=0--oltp-dist-type=uniform --pgsql-user={user} "
        f"--pgsql-password={pw}--oltp_auto_inc=off --db-driver=pgsql --oltp_use_xa_pct=0--oltp_use_xa_2pc_pct=80 "
        f"--report-interval=10 run"
    ).split()
    out = ok(*rw[:-1], "prepare")
    assert out.count("WARNING: split the glued argument") == 4
    assert pg("SELECT count(*), min(id), max(id) FROM sbtest3")[0] == (1000, 1, 1000)  # --oltp_auto_inc=off: ids 1..N
    out = ok(*rw, "--max-time=2")
    r = report(out)
    assert r["events"] > 20 and r["read"] >= 14 * r["events"] and r["write"] >= 4 * r["events"]
    assert "NOTE: --oltp-dist-type=uniform" in out and "oltp.lua ignores them" in out
    out = ok(*wo, "--max-time=2")
    r = report(out)
    assert r["read"] == 0 and r["write"] >= 4 * r["events"] > 0
    assert out.count("WARNING: split the glued argument") == 5
    assert "value of --pgsql-password looks like it has another option glued" in out


# --- XA (the sysbench-xa fork, spec 7.4) ---------------------------------------------------------


def _com_xa() -> dict[str, int]:
    return {_text(k).lower(): int(v) for k, v in my("SHOW GLOBAL STATUS LIKE 'Com_xa%'")}


XA_RUN = [
    "--oltp-tables-count=2",
    "--oltp-table-size=500",
    "--oltp_use_xa_pct=100",
    "--oltp_use_xa_2pc_pct=50",
    "--rand-type=uniform",
]
# 4 threads writing 10 rows: ignorable errors inside XA transactions, which must be rolled back
# before the retry. MariaDB: deadlocks of the updates (detected at once). PostgreSQL: duplicate
# keys of the DELETE/INSERT pair only (a deadlock costs its 1 s deadlock_timeout there).
XA_CONTENTION = [
    "--oltp-tables-count=1",
    "--oltp-table-size=10",
    "--num-threads=4",
    "--max-requests=60",
    "--oltp_use_xa_pct=100",
    "--oltp_use_xa_2pc_pct=50",
    "--rand-type=uniform",
    "--oltp-point-selects=0",
    "--oltp-simple-ranges=0",
    "--oltp-sum-ranges=0",
    "--oltp-order-ranges=0",
    "--oltp-distinct-ranges=0",
]
PG_NO_UPDATES = ["--oltp-index-updates=0", "--oltp-non-index-updates=0"]
CONTENTION_TRIES = 3


def _contended_xa_runs(conn: list[str], extra: list[str], leftovers) -> int:
    """Run the contention case until it hit ignorable errors (at most CONTENTION_TRIES
    times); after each run no XA transaction may be left over.  Returns the errors."""
    ok("--test=tests/db/oltp-xa.lua", *conn, "--oltp-tables-count=1", "--oltp-table-size=10", "prepare")
    errors = 0
    for _ in range(CONTENTION_TRIES):
        out = ok("--test=tests/db/oltp-xa.lua", *conn, *XA_CONTENTION, *extra, "run")
        assert report(out)["transactions"] == 60
        assert leftovers() == 0
        errors += int(re.search(r"ignored errors:\s+(\d+)", out).group(1))
        if errors:
            break
    return errors


@pytest.mark.mysql
def test_xa_on_mariadb(clean):
    ok("--test=tests/db/oltp-xa.lua", *MY, "--oltp-tables-count=2", "--oltp-table-size=500", "prepare")
    before = _com_xa()
    out = ok("--test=tests/db/oltp-xa.lua", *MY, *XA_RUN, "--num-threads=1", "--max-requests=100", "run")
    d = {k: v - before[k] for k, v in _com_xa().items()}
    assert (d["com_xa_start"], d["com_xa_end"], d["com_xa_commit"], d["com_xa_rollback"]) == (100, 100, 100, 0)
    assert 20 < d["com_xa_prepare"] < 80  # uniform draw <= 50: two-phase
    r = report(out)
    assert r["transactions"] == 100
    # counted by keyword: every XA statement is "other"
    assert r["other"] == d["com_xa_start"] + d["com_xa_end"] + d["com_xa_prepare"] + d["com_xa_commit"]
    assert my("XA RECOVER") == []
    # update_non_index_xa.lua, one-phase only
    before = _com_xa()
    ok(
        "--test=tests/db/update_non_index_xa.lua",
        *MY,
        "--oltp-tables-count=2",
        "--oltp-table-size=500",
        "--num-threads=1",
        "--max-requests=30",
        "--oltp_use_xa_pct=100",
        "--oltp_use_xa_2pc_pct=0",
        "run",
    )
    d = {k: v - before[k] for k, v in _com_xa().items()}
    assert (d["com_xa_start"], d["com_xa_commit"], d["com_xa_prepare"]) == (30, 30, 0)
    # --oltp_use_xa_pct=0: never XA
    before = _com_xa()
    out = ok(
        "--test=tests/db/oltp-xa.lua",
        *MY,
        "--oltp-tables-count=2",
        "--oltp-table-size=500",
        "--max-requests=10",
        "--oltp_use_xa_pct=0",
        "run",
    )
    assert _com_xa()["com_xa_start"] == before["com_xa_start"]
    assert report(out)["other"] == 20
    # contention: every deadlocked XA transaction is rolled back before its retry, none is left over
    drop_tables()
    before = _com_xa()
    errors = _contended_xa_runs(MY, [], lambda: len(my("XA RECOVER")))
    d = {k: v - before[k] for k, v in _com_xa().items()}
    assert errors > 0, "no deadlock in the contention runs: the roll-back path was not exercised"
    assert d["com_xa_start"] == d["com_xa_commit"] + d["com_xa_rollback"] and d["com_xa_rollback"] >= errors


@pytest.mark.pgsql
def test_xa_on_postgresql(clean_private_pg):
    port = clean_private_pg
    conn = pg_opts(port)
    assert pg("SHOW max_prepared_transactions", port)[0][0] != "0"
    ok("--test=tests/db/oltp-xa.lua", *conn, "--oltp-tables-count=2", "--oltp-table-size=500", "prepare")
    with pg_statements(port) as calls:
        out = ok(
            "--test=tests/db/oltp-xa.lua",
            *conn,
            "--oltp-tables-count=2",
            "--oltp-table-size=500",
            "--num-threads=2",
            "--max-requests=100",
            "--oltp_use_xa_pct=100",
            "--oltp_use_xa_2pc_pct=50",
            "--rand-type=uniform",
            "run",
        )
    assert pg(f"SELECT count(*) FROM pg_prepared_xacts WHERE database = '{DB}'", port)[0][0] == 0
    prepared = sum(n for q, n in calls.items() if q.startswith("PREPARE TRANSACTION 'xa_"))
    committed = sum(n for q, n in calls.items() if q.startswith("COMMIT PREPARED 'xa_"))
    commits = calls["COMMIT"]
    assert prepared == committed and 20 < committed < 80
    assert commits + committed == 100 and calls["BEGIN"] >= 100
    assert report(out)["transactions"] == 100
    # contention: aborted XA transactions (prepared ones included) never stay behind
    drop_tables(port)
    errors = _contended_xa_runs(
        conn, PG_NO_UPDATES, lambda: pg(f"SELECT count(*) FROM pg_prepared_xacts WHERE database = '{DB}'", port)[0][0]
    )
    assert errors > 0, "no duplicate key in the contention runs: the roll-back path was not exercised"


# --- OLAP workloads (KunlunBase select-only set) --------------------------------------------------


@pytest.mark.mysql
def test_olap_workloads_one_statement_kind_per_event(clean):
    ok("oltp_common", *MY, "--tables=2", "--table-size=300", "prepare")
    kinds = {
        "olap_point_select": "point",
        "olap_simple_range": "simple1",
        "olap_sum_range": "sum1",
        "olap_order_range": "order1",
        "olap_distinct_range": "distinct1",
    }
    one = {
        "point": r"SELECT c FROM sbtest\d WHERE id=\d+",
        "simple1": r"SELECT c FROM sbtest\d WHERE id BETWEEN (\d+) AND (\d+)",
        "sum1": r"SELECT SUM\(k\) FROM sbtest\d WHERE id BETWEEN (\d+) AND (\d+)",
        "order1": r"SELECT c FROM sbtest\d WHERE id BETWEEN (\d+) AND (\d+) ORDER BY c",
        "distinct1": r"SELECT DISTINCT c FROM sbtest\d WHERE id BETWEEN (\d+) AND (\d+) ORDER BY c",
    }
    with general_log() as log:
        outs = {
            name: ok(name, *MY, "--tables=2", "--table-size=300", "--threads=1", "--events=15", "--time=0", "run")
            for name in kinds
        }
    by_thread = list(log.threads.values())
    for name, k in kinds.items():
        r = report(outs[name])
        assert (r["read"], r["write"], r["other"], r["events"]) == (15, 0, 0, 15), name
        runs = [stmts for stmts in by_thread if stmts and re.fullmatch(one[k], stmts[-1])]
        assert runs, f"no session ran {name}"
        event_stmts = [s for s in runs[0] if not s.startswith("SELECT count(*) FROM information_schema")]
        assert len(event_stmts) == 15 and all(re.fullmatch(one[k], s) for s in event_stmts), name
        for s in event_stmts:
            m = re.fullmatch(one[k], s)
            if m.groups():
                assert int(m.group(2)) - int(m.group(1)) == 99


# --- the 0.5 report, end to end -------------------------------------------------------------------


@pytest.mark.mysql
def test_output_format_05_run(mysql_tables_fresh):
    out = ok(
        "--test=tests/db/oltp.lua",
        *MY,
        "--oltp-tables-count=2",
        "--oltp-table-size=300",
        "--num-threads=2",
        "--max-time=2",
        "--max-requests=0",
        "--report-interval=1",
        "--percentile=99",
        "--output-format=0.5",
        "run",
    )
    assert re.search(
        r"^\[   1s\] threads: 2, tps: \d+\.\d\d, reads: \d+\.\d\d, writes: \d+\.\d\d, "
        r"response time: \d+\.\d\dms \(99%\), errors: \d+\.\d\d, reconnects:  \d+\.\d\d$",
        out,
        re.M,
    ), out
    for line in (
        "OLTP test statistics:",
        "    read/write requests:",
        "    other operations:",
        "    total time taken by event execution:",
        "    response time:",
        "         approx.  99 percentile:",
        "Random number generator seed is 0 and will be ignored",
    ):
        assert line in out, line
    tx = int(re.search(r"^    transactions:\s+(\d+)", out, re.M).group(1))
    events = int(re.search(r"total number of events:\s+(\d+)", out).group(1))
    assert tx == events > 0


@pytest.fixture
def mysql_tables_fresh(clean):
    ok("--test=tests/db/oltp.lua", *MY, "--oltp-tables-count=2", "--oltp-table-size=300", "prepare")


# --- acceptance: the sysbench 1.0.20 random stream, statement for statement ----------------------


ACCEPT = ["oltp_read_write", "--db-driver=mysql", *MY, "--tables=2", "--table-size=1000"]
COMPARED = 2000
ACCEPT_CASES = [
    # the acceptance: --rand-seed=42, defaults (special, percentile 95: one histogram draw per event)
    pytest.param([], ["--rand-seed=42"], id="seed42"),
    # no histogram draw (--percentile=0), gaussian ids, another range width and table count
    pytest.param(
        ["--tables=3"],
        ["--rand-seed=7", "--percentile=0", "--rand-type=gaussian", "--range_size=20"],
        id="seed7-gaussian-pct0",
    ),
]


def _sysbench(*args: str) -> str:
    proc = subprocess.run([SYSBENCH, *args], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


@pytest.mark.mysql
@pytest.mark.skipif(not os.path.exists(SYSBENCH), reason="the real sysbench is not installed (CI installs it)")
@pytest.mark.parametrize("data, opts", ACCEPT_CASES)
def test_rand_compat_equals_sysbench_statement_for_statement(clean, data, opts):
    """--rand-compat=sysbench --threads=1 --rand-seed=N --db-ps-mode=disable: the first
    2000 statements the server logs are the real sysbench 1.0.20's, in order."""
    run_opts = ["--threads=1", "--db-ps-mode=disable", "--events=101", "--time=0", *opts]
    _sysbench(*ACCEPT, *data, "prepare")
    with general_log() as log:
        _sysbench(*ACCEPT, *data, *run_opts, "run")
        log.mark()
        drop_tables()
        _sysbench(*ACCEPT, *data, "prepare")  # the same fresh tables again
        log.mark()
        ok(*ACCEPT, *data, *run_opts, "--rand-compat=sysbench", "run")
    reference = log.run(0).worker_statements()
    ours = log.run(2).worker_statements()
    assert len(reference) >= COMPARED and len(ours) >= COMPARED
    for i, (a, b) in enumerate(zip(reference[:COMPARED], ours[:COMPARED])):
        assert a == b, f"statement {i + 1} differs:\n sysbench:   {a}\n pysysbench: {b}"


# --- the other 0.5 scripts --------------------------------------------------------------------------


@pytest.mark.mysql
def test_other_05_scripts(clean):
    """parallel_prepare.lua loads the tables (thread t: tables t+1, t+1+threads, ...), then every
    single-statement 0.5 script runs from its tests/db/ path, counted by statement keyword."""
    out = ok(
        "--test=tests/db/parallel_prepare.lua",
        *MY,
        "--oltp-tables-count=3",
        "--oltp-table-size=200",
        "--num-threads=2",
        "--max-requests=2",
        "run",
    )
    assert report(out)["write"] == 3
    assert my("SELECT count(*) FROM sbtest3")[0][0] == 200
    expected = {
        "select": (20, 0),
        "oltp_simple": (20, 0),
        "insert": (0, 20),
        "delete": (0, 20),
        "update_index": (0, 20),
        "update_non_index": (0, 20),
        "select_random_points": (20, 0),
        "select_random_ranges": (20, 0),
    }
    for script, (reads, writes) in expected.items():
        r = report(
            ok(
                f"--test=tests/db/{script}.lua",
                *MY,
                "--oltp-tables-count=3",
                "--oltp-table-size=200",
                "--num-threads=2",
                "--max-requests=20",
                "run",
            )
        )
        assert (r["read"], r["write"], r["other"], r["events"]) == (reads, writes, 0, 20), script
