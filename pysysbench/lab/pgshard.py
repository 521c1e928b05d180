"""``pgshard``: HAProxy -> 2 PostgreSQL coordinators -> N PostgreSQL shards
(a KunlunBase look-alike: PostgreSQL-speaking compute nodes over sharded storage nodes).

Every ``sbtestK`` table is a plain table on each shard and, on both coordinators, a table
``PARTITION BY HASH (id)`` whose partitions are ``postgres_fdw`` foreign tables, one per
shard, so a row lives on the shard its id hashes to.  postgres_fdw commits the remote
transactions one after the other when the local one commits: no two-phase commit.  A
coordinator's partitions are its own catalogue, so the lab defines the tables on both; then
pysysbench's own ``prepare --load-nodes`` through coordinator1 creates each shard's table and
COPYs its rows (those PostgreSQL's hash puts in its partition) into it directly, all shards
at once, and the lab gathers statistics on both coordinators.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

from . import postgres, sharded
from .manifest import Manifest, Node
from .procs import LabError, alive, start_detached, wait_for

NEEDS = ("postgres", "psql", "haproxy")
COORDINATORS = 2
START_TIMEOUT_S = 30.0
COLUMNS = (
    "  id INTEGER NOT NULL,\n"
    "  k INTEGER DEFAULT '0' NOT NULL,\n"
    "  c CHAR(120) DEFAULT '' NOT NULL,\n"
    "  pad CHAR(60) DEFAULT '' NOT NULL"
)
SBTEST = "CREATE ROLE sbtest LOGIN;\nCREATE DATABASE sbtest OWNER sbtest;\n"
# A deadlock across shards (session A waits on shard1 for B, B on shard2 for A) is no shard's
# deadlock: nothing detects it, both would wait for ever.  The shards end any lock wait after
# 1 s (55P03), which the printed options ignore as sysbench ignores a deadlock (40P01).
SHARD = (*postgres.SMALL, "lock_timeout=1s")
IGNORE = "--pgsql-ignore-errors=40P01,23505,40001,55P03"


def plan(base: Path, shards: int) -> list[Node]:
    return sharded.plan(base, [("coord", "coordinator", COORDINATORS), ("shard", "shard", shards)], "postgres.log")


def start_all(m: Manifest, save: Callable[[], None], say: Callable[[str], None]) -> None:
    """One initdb (a template copied to every node), every server started at once, then each waited for."""
    base = Path(m.dir)
    template = base / "template" / "data"
    _own_dir(template.parent)
    postgres.initdb(template)
    servers = m.nodes[:]
    for n in servers:
        _own_dir(Path(n.data_dir).parent)
        shutil.copytree(template, n.data_dir, symlinks=True)
        _own_tree(Path(n.data_dir))
        n.mark = n.data_dir
        launch(n)
        save()
    shutil.rmtree(template.parent)
    say(f"{len(servers)} servers starting: {', '.join(f'{n.name} on {n.port}' for n in servers)} ...")
    for n in servers:
        wait_started(n)


def launch(n: Node) -> None:
    args = postgres.server_args(Path(n.data_dir), n.port, SHARD if n.role == "shard" else None)
    n.pid = start_detached(args, Path(n.log), user=postgres.other_user())


def restart(m: Manifest, n: Node, save: Callable[[], None], say: Callable[[str], None]) -> None:
    """Start a stopped server again on its data (after a crash: PostgreSQL's recovery).  A
    postmaster just killed still exists for a moment (a zombie until reaped) and its
    backends a moment longer, and the new one refuses to start while they do ('lock file
    postmaster.pid already exists'): wait for it to be gone, and start again once if the
    first start exits."""
    del m
    old = _old_postmaster(n)
    if old and not wait_for(lambda: not os.path.exists(f"/proc/{old}"), 10):
        say(f"{n.name}: the killed postmaster (pid {old}) is still there after 10 s")
    for attempt in (1, 2):
        launch(n)
        save()
        if wait_for(lambda: postgres.answers(n.port), START_TIMEOUT_S, gone=lambda: not alive(n.pid, n.mark)):
            return
        if attempt == 1 and not alive(n.pid, n.mark):
            say(f"{n.name} exited while starting again (see {n.log}); starting it once more ...")
            time.sleep(1)
    wait_started(n)


def _old_postmaster(n: Node) -> int:
    """The pid the data dir's postmaster.pid names (0: none)."""
    try:
        first = (Path(n.data_dir) / "postmaster.pid").read_text().split("\n", 1)[0]
    except OSError:
        return 0
    return int(first) if first.strip().isdigit() else 0


def wait_started(n: Node) -> None:
    if not wait_for(lambda: postgres.answers(n.port), START_TIMEOUT_S, gone=lambda: not alive(n.pid, n.mark)):
        when = "exited" if not alive(n.pid, n.mark) else f"did not answer within {START_TIMEOUT_S:.0f} s"
        raise LabError(f"pgshard {n.name} (port {n.port}) did not start ({when}): see {n.log}")


def _own_dir(folder: Path) -> None:
    """``folder``, created, the servers' user's (initdb and the server write in it)."""
    folder.mkdir(parents=True, exist_ok=True)
    if postgres.other_user():
        shutil.chown(folder, postgres.other_user(), postgres.other_user())


def _own_tree(top: Path) -> None:
    """A copied data dir handed to the servers' user (a no-op unless root runs them as ``postgres``)."""
    user = postgres.other_user()
    if user:
        for p in (top, *top.rglob("*")):
            shutil.chown(p, user, user)


def coordinator_tables(tables: int, shards: list[Node]) -> str:
    """The foreign servers (one per shard, reached as ``sbtest`` without a password) and the
    partitioned tables, owned by ``sbtest``, one foreign partition per shard."""
    lines = ["CREATE EXTENSION postgres_fdw;"]
    for i, s in enumerate(shards, 1):
        lines += [
            f"CREATE SERVER shard{i} FOREIGN DATA WRAPPER postgres_fdw"
            f" OPTIONS (host '127.0.0.1', port '{s.port}', dbname 'sbtest', batch_size '500');",
            f"CREATE USER MAPPING FOR PUBLIC SERVER shard{i} OPTIONS (user 'sbtest', password_required 'false');",
            f"GRANT USAGE ON FOREIGN SERVER shard{i} TO sbtest;",
        ]
    lines.append("SET ROLE sbtest;")
    for t in range(1, tables + 1):
        lines.append(f"CREATE TABLE sbtest{t} (\n{COLUMNS}\n) PARTITION BY HASH (id);")
        lines += [
            f"CREATE FOREIGN TABLE sbtest{t}_shard{i} PARTITION OF sbtest{t}"
            f" FOR VALUES WITH (MODULUS {len(shards)}, REMAINDER {i - 1})"
            f" SERVER shard{i} OPTIONS (table_name 'sbtest{t}');"
            for i in range(1, len(shards) + 1)
        ]
    return "\n".join(lines) + "\n"


def create_tables(m: Manifest, tables: int) -> None:
    """The sbtest role and database everywhere, the partitioned tables on the coordinators (the
    shards' tables come with their rows: :func:`load`)."""
    shards = m.by_role("shard")
    for n in shards:
        postgres.sql(n.port, SBTEST)
    for n in m.by_role("coordinator"):
        postgres.sql(n.port, SBTEST)
        postgres.sql(n.port, coordinator_tables(tables, shards), db="sbtest")


def load(m: Manifest, tables: int, table_size: int) -> None:
    """pysysbench's prepare through coordinator1, each shard's rows straight into it, then
    statistics on both coordinators."""
    port = m.by_role("coordinator")[0].port
    connection = ["--db-driver=pgsql", "--pgsql-host=127.0.0.1", f"--pgsql-port={port}", "--pgsql-user=sbtest"]
    sharded.load_per_node(m, [*connection, "--pgsql-db=sbtest"], len(m.by_role("shard")), tables, table_size)
    analyze = "".join(f"ANALYZE sbtest{t};\n" for t in range(1, tables + 1))
    for n in m.by_role("coordinator"):
        postgres.sql(n.port, analyze, db="sbtest", timeout_s=120)


STEPS = sharded.Steps(
    plan,
    start_all,
    create_tables,
    load,
    front="coordinator",
    tables_line="sbtest1..{tables}: on both coordinators, PARTITION BY HASH (id) over {count} shards (postgres_fdw) ...",
    load_line="loading {tables} x {table_size} rows (pysysbench prepare --load-nodes: each shard directly) ...",
)
up = sharded.runner(STEPS)  # lab up: sharded.up with this look-alike's steps
