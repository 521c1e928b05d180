"""The fast prepare (pysysbench.load) on real SQLite, MariaDB and PostgreSQL.

* every driver's bulk path (default and the alternatives), through generator
  processes and in-process, with ids 1..N, the c/pad templates, k in range,
  the auto-increment / SERIAL state after explicit ids, no leftover flag;
* the schema equals the one the real sysbench 1.0.20 creates (same options);
* k follows sysbench's distribution for every --rand-type it has (chi-square and
  Kolmogorov-Smirnov two-sample tests against tables the real sysbench
  prepared; zipfian, which 1.0.20 lacks, against pysysbench.core.rand.Rand);
* --data-size, existing tables and --force, an interrupted (killed) prepare that
  run refuses, prewarm.

Everything runs in the database ``load`` on both servers (scripts/setup-databases.sh),
never in ``sbtest``, which other tests clean up at any time.
"""

from __future__ import annotations

import asyncio
import math
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
DB = "load"
MY_OPTS = ["--db-driver=mysql", "--mysql-host=127.0.0.1", "--mysql-user=sbtest", f"--mysql-db={DB}"]
PG_OPTS = ["--db-driver=pgsql", "--pgsql-host=127.0.0.1", "--pgsql-user=sbtest", f"--pgsql-db={DB}"]
SYSBENCH = "/usr/bin/sysbench"
BIG = 70_000  # 2 tables x BIG >= PROCESS_MIN_ROWS: generator processes
SMALL = 3_000  # in-process generation
C_RE = r"^([0-9]{11}-){9}[0-9]{11}$"
PAD_RE = r"^([0-9]{11}-){4}[0-9]{11}$"
ALPHA = 0.001


# ------------------------------------------------------------------------ targets ---


async def _my(sql: str, user: str = "sbtest") -> list[tuple]:
    import asyncmy

    conn = await asyncmy.connect(host="127.0.0.1", port=3306, user=user, password="", database=DB, autocommit=True)
    try:
        async with conn.cursor() as cur:
            await cur.execute(sql)
            return list(await cur.fetchall() or [])
    finally:
        await conn.ensure_closed()


async def _pg(sql: str, user: str = "sbtest") -> list[tuple]:
    import asyncpg

    conn = await asyncpg.connect(host="127.0.0.1", port=5432, user=user, database=DB, timeout=10)
    try:
        return [tuple(r) for r in await conn.fetch(sql)]
    finally:
        await conn.close()


def _text(v):
    return v.decode() if isinstance(v, (bytes, bytearray)) else v


class Target:
    def __init__(self, name: str, tmp_path: Path):
        self.name = name
        self.path = str(tmp_path / "load.db")
        self.opts = {"mysql": MY_OPTS, "pgsql": PG_OPTS, "sqlite": ["--db-driver=sqlite", f"--sqlite-db={self.path}"]}[
            name
        ]

    def rows(self, sql: str, admin: bool = False) -> list[tuple]:
        if self.name == "sqlite":
            import sqlite3

            con = sqlite3.connect(self.path)
            con.create_function("regexp", 2, lambda p, v: re.search(p, v) is not None)
            try:
                return con.execute(sql).fetchall()
            finally:
                con.close()
        if self.name == "mysql":
            return [tuple(_text(x) for x in r) for r in asyncio.run(_my(sql, "root" if admin else "sbtest"))]
        return asyncio.run(_pg(sql, "postgres" if admin else "sbtest"))

    def scalar(self, sql: str):
        return self.rows(sql)[0][0]

    def tables(self) -> list[str]:
        sql = {
            "sqlite": "SELECT name FROM sqlite_master WHERE type='table' AND name LIKE 'sbtest%'",
            "mysql": f"SELECT table_name FROM information_schema.tables WHERE table_schema='{DB}' "
            "AND table_name LIKE 'sbtest%'",
            "pgsql": "SELECT tablename FROM pg_tables WHERE schemaname='public' AND tablename LIKE 'sbtest%'",
        }
        if self.name == "sqlite" and not os.path.exists(self.path):
            return []
        return sorted(_text(r[0]) for r in self.rows(sql[self.name]))

    def drop_all(self) -> None:
        for t in self.tables():
            self.rows(f"DROP TABLE IF EXISTS {t}")

    def not_matching(self, table: str, col: str, pattern: str) -> int:
        cond = {
            "mysql": f"{col} NOT REGEXP '{pattern}'",
            "pgsql": f"rtrim({col}) !~ '{pattern}'",
            "sqlite": f"NOT regexp('{pattern}', {col})",
        }[self.name]
        return int(self.scalar(f"SELECT COUNT(*) FROM {table} WHERE {cond}"))


def _reachable(name: str) -> str | None:
    try:
        asyncio.run(_my("SELECT 1") if name == "mysql" else _pg("SELECT 1"))
    except Exception as exc:  # a missing server is a failure, never a skip
        return (
            f"cannot use database '{DB}' on the local {name} server ({type(exc).__name__}: {exc}): run "
            "scripts/setup-databases.sh as root"
        )
    return None


ALL = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("mysql", id="mysql", marks=pytest.mark.mysql),
    pytest.param("pgsql", id="pgsql", marks=pytest.mark.pgsql),
]
SERVERS = ALL[1:]


def _target(name: str, tmp_path: Path):
    if name != "sqlite":
        why = _reachable(name)
        if why:
            pytest.fail(why, pytrace=False)
    t = Target(name, tmp_path)
    t.drop_all()
    return t


@pytest.fixture(params=ALL)
def target(request, tmp_path):
    t = _target(request.param, tmp_path)
    yield t
    t.drop_all()


@pytest.fixture(params=SERVERS)
def server(request, tmp_path):
    t = _target(request.param, tmp_path)
    yield t
    t.drop_all()


@pytest.fixture
def pg(tmp_path):
    t = _target("pgsql", tmp_path)
    yield t
    t.drop_all()


def cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSYSBENCH_")}
    env["PYTHONPATH"] = str(REPO)
    return subprocess.run(
        [sys.executable, "-m", "pysysbench", *args], capture_output=True, text=True, timeout=timeout, cwd=REPO, env=env
    )


def ok(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    proc = cli(*args, timeout=timeout)
    assert proc.returncode == 0 and "Traceback" not in proc.stdout + proc.stderr, (
        f"$ pysysbench {' '.join(args)}\n{proc.stdout}\n{proc.stderr}"
    )
    return proc


def sysbench(*args: str) -> subprocess.CompletedProcess:
    proc = subprocess.run([SYSBENCH, *args], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def fatal(proc: subprocess.CompletedProcess) -> str:
    lines = [x for x in proc.stdout.splitlines() if x.startswith("FATAL: ")]
    assert proc.returncode == 1 and len(lines) == 1 and "Traceback" not in proc.stdout + proc.stderr, (
        proc.stdout + proc.stderr
    )
    return lines[0]


# ------------------------------------------------------------------- data checks ---


def check_table(t: Target, table: str, size: int) -> None:
    """Rows 1..N without gaps, sysbench's c/pad formats, k in [1, N], state after the load."""
    count, lo, hi, total = t.rows(f"SELECT COUNT(*), MIN(id), MAX(id), SUM(id) FROM {table}")[0]
    assert (int(count), int(lo), int(hi), int(total)) == (size, 1, size, size * (size + 1) // 2)
    assert int(t.scalar(f"SELECT COUNT(DISTINCT id) FROM {table}")) == size
    assert t.not_matching(table, "c", C_RE) == 0
    assert t.not_matching(table, "pad", PAD_RE) == 0
    kmin, kmax = t.rows(f"SELECT MIN(k), MAX(k) FROM {table}")[0]
    assert 1 <= int(kmin) and int(kmax) <= size
    if t.name == "mysql":
        ddl = t.rows(f"SHOW CREATE TABLE {table}")[0][1]
        assert f"AUTO_INCREMENT={size + 1}" in ddl and "COMMENT" not in ddl, ddl
    elif t.name == "pgsql":
        assert int(t.scalar(f"SELECT last_value FROM {table}_id_seq")) == size
        assert t.scalar(f"SELECT obj_description('{table}'::regclass, 'pg_class')") is None


def messages_in_order(stdout: str, tables: int, size: int, index: bool = True) -> None:
    for n in range(1, tables + 1):
        mine = [x for x in stdout.splitlines() if f"'sbtest{n}'" in x]
        expected = [f"Creating table 'sbtest{n}'...", f"Inserting {size} records into 'sbtest{n}'"]
        if index:
            expected.append(f"Creating a secondary index on 'sbtest{n}'...")
        assert mine == expected, stdout


# ---------------------------------------------------------------------- bulk paths ---


def test_default_bulk_path_with_generator_processes(target):
    """2 x 70,000 rows, 2 threads: generator processes feed COPY / LOAD DATA / SQLite batches."""
    proc = ok("oltp_read_write", *target.opts, "--tables=2", f"--table-size={BIG}", "--threads=2", "prepare")
    messages_in_order(proc.stdout, 2, BIG)
    for n in (1, 2):
        check_table(target, f"sbtest{n}", BIG)
    # the data is usable as it is: a short run on it
    ok("oltp_read_write", *target.opts, "--tables=2", f"--table-size={BIG}", "--events=20", "--time=0", "run")


@pytest.mark.parametrize("method", ["auto", "other"])
def test_in_process_paths(target, method):
    """Small data sets generate in the loading process; every method of every driver."""
    name = {
        "auto": "auto",
        "other": {"sqlite": "executemany", "mysql": "multi-insert", "pgsql": "multi-insert"}[target.name],
    }[method]
    proc = ok(
        "oltp_read_write",
        *target.opts,
        "--tables=3",
        f"--table-size={SMALL}",
        "--threads=2",
        f"--load-method={name}",
        "prepare",
    )
    messages_in_order(proc.stdout, 3, SMALL)
    for n in (1, 2, 3):
        check_table(target, f"sbtest{n}", SMALL)


def test_ranges_of_one_table_in_parallel(server):
    """Fewer tables than threads: PostgreSQL loads id ranges on several connections;
    MariaDB LOAD DATA keeps one (InnoDB's AUTO-INC lock serialises them); same data."""
    proc = ok("oltp_read_write", *server.opts, "--tables=1", f"--table-size={BIG}", "--threads=3", "prepare")
    messages_in_order(proc.stdout, 1, BIG)
    check_table(server, "sbtest1", BIG)


def test_unknown_method_for_driver(tmp_path):
    t = Target("sqlite", tmp_path)
    msg = fatal(cli("oltp_read_write", *t.opts, "--load-method=copy", "prepare"))
    assert "--load-method=copy is not available with the sqlite driver" in msg


def test_index_before_load_and_no_index(target):
    proc = ok(
        "oltp_read_write",
        *target.opts,
        "--tables=1",
        f"--table-size={SMALL}",
        "--create-secondary-at=before",
        "prepare",
    )
    assert [x for x in proc.stdout.splitlines() if "sbtest1" in x] == [
        "Creating table 'sbtest1'...",
        "Creating a secondary index on 'sbtest1'...",
        f"Inserting {SMALL} records into 'sbtest1'",
    ]
    check_table(target, "sbtest1", SMALL)
    target.drop_all()
    proc = ok(
        "oltp_read_write", *target.opts, "--tables=1", f"--table-size={SMALL}", "--create_secondary=off", "prepare"
    )
    assert "secondary index" not in proc.stdout
    messages_in_order(proc.stdout, 1, SMALL, index=False)


# ---------------------------------------------------- equivalence with sysbench ---


def schema(t: Target, table: str = "sbtest1") -> object:
    if t.name == "mysql":
        return t.rows(f"SHOW CREATE TABLE {table}")[0][1].replace(f"AUTO_INCREMENT={SMALL + 1} ", "")
    return (
        t.rows(
            "SELECT column_name, data_type, character_maximum_length, is_nullable, column_default "
            f"FROM information_schema.columns WHERE table_name = '{table}' ORDER BY ordinal_position"
        ),
        sorted(t.rows(f"SELECT indexname, indexdef FROM pg_indexes WHERE tablename = '{table}'")),
        t.rows(f"SELECT pg_get_serial_sequence('{table}', 'id')"),
    )


@pytest.mark.parametrize(
    "extra",
    [[], ["--auto_inc=off", "--create_secondary=off"], ["--secondary=on"]],
    ids=["default", "auto_inc=off,create_secondary=off", "secondary=on"],
)
def test_schema_identical_to_sysbench(server, extra):
    if server.name == "pgsql" and extra == ["--secondary=on"]:
        pytest.skip("--secondary=on is MySQL-only in sysbench (KEY xid is not PostgreSQL syntax)")
    args = ["oltp_read_write", *server.opts, "--tables=1", f"--table-size={SMALL}", *extra]
    sysbench(*args, "prepare")
    expected = schema(server)
    sysbench(*args, "cleanup")
    ok(*args, "prepare")
    assert schema(server) == expected


def _regularized_gamma_q(a: float, x: float) -> float:
    """Q(a, x) = Gamma(a, x) / Gamma(a): the chi-square survival function at 2x, 2a d.o.f."""
    if x <= 0:
        return 1.0
    lg = math.lgamma(a)
    if x < a + 1:  # series for P
        term = total = 1.0 / a
        n = a
        while abs(term) > abs(total) * 1e-15:
            n += 1
            term *= x / n
            total += term
        return 1.0 - total * math.exp(-x + a * math.log(x) - lg)
    b, c, d = x + 1 - a, 1e300, 1 / (x + 1 - a)  # continued fraction for Q (Lentz)
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = 1e-300 if abs(d) < 1e-300 else d
        c = b + an / c
        c = 1e-300 if abs(c) < 1e-300 else c
        d = 1 / d
        h *= d * c
        if abs(d * c - 1) < 1e-15:
            break
    return math.exp(-x + a * math.log(x) - lg) * h


def chi_square_p(x: np.ndarray, y: np.ndarray, bins: int = 40) -> float:
    """Two-sample chi-square on bins cut at the pooled sample's quantiles (ties kept together)."""
    pooled = np.sort(np.concatenate([x, y]))
    cuts = np.unique(pooled[np.linspace(0, len(pooled) - 1, bins + 1).astype(int)[1:-1]])
    ox = np.bincount(np.searchsorted(cuts, x, side="right"), minlength=len(cuts) + 1).astype(float)
    oy = np.bincount(np.searchsorted(cuts, y, side="right"), minlength=len(cuts) + 1).astype(float)
    keep = (ox + oy) > 0
    ox, oy = ox[keep], oy[keep]
    n, m = ox.sum(), oy.sum()
    ex, ey = (ox + oy) * n / (n + m), (ox + oy) * m / (n + m)
    stat = float(((ox - ex) ** 2 / ex).sum() + ((oy - ey) ** 2 / ey).sum())
    return _regularized_gamma_q((len(ox) - 1) / 2, stat / 2) if len(ox) > 1 else 1.0


def ks_p(x: np.ndarray, y: np.ndarray) -> float:
    """Two-sample Kolmogorov-Smirnov, asymptotic p (conservative with ties)."""
    values = np.unique(np.concatenate([x, y]))
    fx = np.searchsorted(np.sort(x), values, side="right") / len(x)
    fy = np.searchsorted(np.sort(y), values, side="right") / len(y)
    d = float(np.abs(fx - fy).max())
    ne = len(x) * len(y) / (len(x) + len(y))
    lam = (math.sqrt(ne) + 0.12 + 0.11 / math.sqrt(ne)) * d
    return min(1.0, max(0.0, 2 * sum((-1) ** (k - 1) * math.exp(-2 * k * k * lam * lam) for k in range(1, 101))))


K_SIZE = 20_000


def k_values(t: Target) -> np.ndarray:
    return np.array([int(r[0]) for r in t.rows("SELECT k FROM sbtest1")], dtype=np.int64)


def test_statistics_helpers_reject_a_shifted_sample():
    rng = np.random.default_rng(1)
    a, b = rng.integers(1, 1000, 20_000), rng.integers(1, 1000, 20_000)
    assert chi_square_p(a, b) > ALPHA and ks_p(a, b) > ALPHA
    assert chi_square_p(a, b + 30) < 1e-6 and ks_p(a, b + 30) < 1e-6
    assert abs(_regularized_gamma_q(5, 5) - 0.44049) < 1e-4  # chi-square(10 d.o.f.) survival at 10


@pytest.mark.pgsql
@pytest.mark.parametrize("rand_type", ["special", "uniform", "gaussian", "pareto"])
def test_k_distribution_matches_sysbench(pg, rand_type):
    """k of a table the real sysbench prepared vs k of pysysbench's, same size and --rand-type."""
    args = [
        "oltp_read_write",
        *pg.opts,
        "--tables=1",
        f"--table-size={K_SIZE}",
        f"--rand-type={rand_type}",
        "--create_secondary=off",
    ]
    sysbench(*args, "prepare")
    theirs = k_values(pg)
    sysbench(*args, "cleanup")
    ok(*args, "prepare")
    ours = k_values(pg)
    assert len(ours) == len(theirs) == K_SIZE
    p_chi, p_ks = chi_square_p(ours, theirs), ks_p(ours, theirs)
    assert p_chi > ALPHA and p_ks > ALPHA, (rand_type, p_chi, p_ks)


def test_k_distribution_zipfian_matches_rand(tmp_path):
    """sysbench 1.0.20 has no zipfian: compare with pysysbench.core.rand.Rand (sysbench master's sampler)."""
    t = _target("sqlite", tmp_path)
    ok("oltp_read_write", *t.opts, "--tables=1", f"--table-size={K_SIZE}", "--rand-type=zipfian", "prepare")
    from pysysbench.core.rand import Rand

    r = Rand(11, rand_type="zipfian")
    model = np.array([r.zipfian(1, K_SIZE) for _ in range(K_SIZE)])
    ours = k_values(t)
    assert chi_square_p(ours, model) > ALPHA and ks_p(ours, model) > ALPHA


# ---------------------------------------------------------------------- --data-size ---


def on_disk_bytes(t: Target, tables: int) -> int:
    names = [f"sbtest{n}" for n in range(1, tables + 1)]
    if t.name == "mysql":
        for n in names:
            t.rows(f"ANALYZE TABLE {n}")
        return int(
            t.scalar(
                "SELECT SUM(data_length + index_length) FROM information_schema.tables "
                f"WHERE table_schema = '{DB}' AND table_name IN ({', '.join(repr(n) for n in names)})"
            )
        )
    if t.name == "pgsql":
        return int(t.scalar(f"SELECT SUM(pg_total_relation_size(c)) FROM unnest(ARRAY{names}::regclass[]) c"))
    return sum(int(t.scalar(f"SELECT SUM(pgsize) FROM dbstat WHERE name IN ('{n}', 'k_{n[6:]}')")) for n in names)


def test_data_size(target):
    from pysysbench.drivers import REGISTRY
    from pysysbench.load.sizing import ROW_BYTES

    table, k_index = ROW_BYTES[REGISTRY[target.name].dialect.family]
    want = 2 * 30_000 * (table + k_index)  # 2 tables of 30,000 rows
    size = f"--data-size={want}"
    proc = ok("oltp_read_write", *target.opts, "--tables=2", size, "prepare")
    assert "Inserting 30000 records into 'sbtest1'" in proc.stdout, proc.stdout
    check_table(target, "sbtest2", 30_000)
    got = on_disk_bytes(target, 2)
    assert 0.75 * want <= got <= 1.3 * want, (got, want)
    # run with the same --data-size works on the same table size
    ok("oltp_read_write", *target.opts, "--tables=2", size, "--events=10", "--time=0", "run")
    msg = fatal(cli("oltp_read_write", *target.opts, "--tables=2", size, "--table-size=5", "prepare"))
    assert "--data-size and --table-size were both given" in msg


# ------------------------------------------------------------- existing tables ---


@pytest.mark.parametrize("method", ["auto", "insert"])
def test_existing_tables_and_force(target, method):
    args = ["oltp_read_write", *target.opts, "--tables=2", "--table-size=500", f"--load-method={method}"]
    ok(*args, "prepare")
    msg = fatal(cli(*args, "prepare"))
    assert re.match(r"^FATAL: table 'sbtest1' already exists .*run cleanup first", msg), msg
    proc = ok(*args, "--table-size=700", "--force", "prepare")
    lines = proc.stdout.splitlines()
    assert lines.index("Dropping table 'sbtest1'...") < lines.index("Creating table 'sbtest1'...")
    assert "Dropping table 'sbtest2'..." in lines
    for n in (1, 2):
        check_table(target, f"sbtest{n}", 700)


# --------------------------------------------------------------- interrupted load ---


def _descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                stat = open(f"/proc/{p}/stat").read()
            except OSError:
                continue
            children.setdefault(int(stat[stat.rindex(")") + 2 :].split()[1]), []).append(int(p))
    out, todo = set(), [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.add(c)
            todo.append(c)
    return out


def _alive(pid: int) -> bool:
    try:
        return open(f"/proc/{pid}/stat").read().split()[2] != "Z"
    except OSError:
        return False


def test_interrupted_prepare_is_refused_by_run(target):
    """SIGKILL in the middle of the load: run refuses the half-loaded table, with a
    clear message; no generator process outlives the prepare; --force recovers."""
    size = 3_000_000
    args = ["oltp_read_write", *target.opts, "--tables=1", f"--table-size={size}"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSYSBENCH_")}
    env["PYTHONPATH"] = str(REPO)
    proc = subprocess.Popen(
        [sys.executable, "-m", "pysysbench", *args, "prepare"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=REPO,
        env=env,
    )
    try:
        deadline = time.monotonic() + 60
        for line in proc.stdout:
            if line.startswith("Inserting"):
                break
            assert time.monotonic() < deadline
        time.sleep(1.0)
        kids = _descendants(proc.pid)
        assert proc.poll() is None, "the prepare finished before it could be interrupted"
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdout.close()
    deadline = time.monotonic() + 15
    while any(_alive(p) for p in kids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [p for p in kids if _alive(p)], "processes of the killed prepare are still running"

    msg = fatal(cli(*args, "--events=10", "--time=0", "run"))
    if target.name == "sqlite":  # one transaction per table: the half-loaded table never existed
        assert "table 'sbtest1' does not exist" in msg and "run prepare first" in msg, msg
    else:
        assert "table 'sbtest1'" in msg and "is incomplete" in msg and "interrupted" in msg and "--force" in msg, msg
    ok("oltp_read_write", *target.opts, "--tables=1", f"--table-size={SMALL}", "--force", "prepare")
    check_table(target, "sbtest1", SMALL)
    ok("oltp_read_write", *target.opts, "--tables=1", f"--table-size={SMALL}", "--events=10", "--time=0", "run")


# ----------------------------------------------------------------------- prewarm ---


def _k_index_blocks(t: Target) -> int:
    return int(
        t.scalar(
            "SELECT COALESCE(idx_blks_read, 0) + COALESCE(idx_blks_hit, 0) FROM pg_statio_user_indexes "
            "WHERE indexrelname = 'k_1'"
        )
    )


def test_prewarm(server):
    """MySQL: spec 2.7.  PostgreSQL: pg_prewarm of the table and its indexes when the
    extension is installed (the k index's blocks are read), sequential reads without it."""
    ok("oltp_read_write", *server.opts, "--tables=2", f"--table-size={SMALL}", "prepare")
    variants = (
        [None]
        if server.name == "mysql"
        else ["DROP EXTENSION IF EXISTS pg_prewarm", "CREATE EXTENSION IF NOT EXISTS pg_prewarm"]
    )
    for admin_sql in variants:
        if admin_sql:
            server.rows(admin_sql, admin=True)
            before = _k_index_blocks(server)
        proc = ok("oltp_read_write", *server.opts, "--tables=2", f"--table-size={SMALL}", "--threads=2", "prewarm")
        assert sorted(x for x in proc.stdout.splitlines() if x.startswith("Prewarming")) == [
            "Prewarming table sbtest1",
            "Prewarming table sbtest2",
        ], proc.stdout
    if server.name == "pgsql":  # with pg_prewarm: the k index was read too
        pages = int(server.scalar("SELECT pg_relation_size('k_1') / current_setting('block_size')::int"))
        deadline = time.monotonic() + 5  # statistics reach the views shortly after the backend ends
        while _k_index_blocks(server) - before < pages and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _k_index_blocks(server) - before >= pages
