"""``spider``: HAProxy -> 2 MariaDB Spider compute nodes -> N MariaDB data nodes
(a PolarDB-X / TiDB look-alike: stateless SQL nodes over sharded storage).

Every ``sbtestK`` table is an InnoDB table on each data node and, on both compute nodes, a
Spider table ``PARTITION BY HASH(id)`` with one partition per data node, so a row lives on
data node ``id mod N`` and a transaction that touches rows of several nodes commits through
Spider's internal XA (two-phase commit, ``spider_internal_xa=ON``).  A Spider table's
definition lives on the compute node it was created on, so the lab creates the tables on both and loads them itself: the
rows pysysbench's own ``prepare`` makes (in a staging database on compute1), copied through
Spider.  The proxy balances connections over the two compute nodes.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from . import mariadb, sharded, spider_xa
from .manifest import Manifest, Node
from .procs import LabError, alive, start_detached, stop, wait_for

NEEDS = ("mariadbd", "mariadb", "spider", "haproxy")
COMPUTE_NODES = 2
START_TIMEOUT_S = 30.0
START_ATTEMPTS = 3
COMPUTE_ARGS = ("--plugin-load-add=ha_spider.so", "--spider-internal-xa=ON")
# Two transactions waiting on each other across data nodes are a deadlock no node sees: a
# short lock wait ends it with 1205, which sysbench's default --mysql-ignore-errors restarts
# (InnoDB's 50 s outlasted a run's forced shutdown and hung it).
DATA_ARGS = ("--innodb-lock-wait-timeout=2",)
COLUMNS = (
    "  id INTEGER NOT NULL,\n"
    "  k INTEGER DEFAULT '0' NOT NULL,\n"
    "  c CHAR(120) DEFAULT '' NOT NULL,\n"
    "  pad CHAR(60) DEFAULT '' NOT NULL,\n"
    "  PRIMARY KEY (id),\n"
    "  KEY k_{n} (k)\n"
)


def plan(base: Path, data_nodes: int) -> list[Node]:
    return sharded.plan(base, [("compute", "compute", COMPUTE_NODES), ("data", "data", data_nodes)], "error.log")


def start_all(m: Manifest, save: Callable[[], None], say: Callable[[str], None]) -> None:
    """One mariadb-install-db (a template copied to every node: 3 s, not 3 s per node),
    every server started at once, then each waited for."""
    base = Path(m.dir)
    template = base / "template"
    mariadb.install_db(template)
    servers = [n for n in m.nodes if n.role in ("compute", "data")]
    for n in servers:
        shutil.copytree(template, n.data_dir, symlinks=True)
        mariadb.own(Path(n.data_dir).parent)
        n.mark = n.data_dir
        launch(n)
        save()
    shutil.rmtree(template)
    say(f"{len(servers)} servers starting: {', '.join(f'{n.name} on {n.port}' for n in servers)} ...")
    for n in servers:
        wait_started(n, save, say)


def launch(n: Node) -> None:
    extra = COMPUTE_ARGS if n.role == "compute" else DATA_ARGS
    args = mariadb.server_args(Path(n.data_dir).parent, n.port, extra=(*extra, f"--server-id={server_id(n)}"))
    n.pid = start_detached(args, Path(n.data_dir).parent / "stdout.log")


def server_id(n: Node) -> int:
    """A server id of its own per node: Spider names the branch of its internal XA
    transactions on a data node by the compute node's server id (and the gtrid by the
    session's thread id), so two compute nodes with the same id collided on a data node as
    1440 XAER_DUPID as soon as two sessions of the same thread id met there."""
    digits = "".join(ch for ch in n.name if ch.isdigit()) or "0"
    return (100 if n.role == "compute" else 200) + int(digits)


def restart(m: Manifest, n: Node, save: Callable[[], None], say: Callable[[str], None]) -> None:
    """Start a stopped server again on its data (a compute node that starts without Spider:
    again), then the XA branches its crash left in doubt settled (``spider_xa.py``)."""
    launch(n)
    save()
    wait_started(n, save, say)
    if n.role == "data":
        spider_xa.after_data_node(m, n, say)
    else:
        spider_xa.after_compute_node(m, n, say)


def wait_started(n: Node, save: Callable[[], None], say: Callable[[str], None]) -> None:
    """Wait for ``n`` to answer, and a compute node to have its Spider engine.  A compute
    node that dies while starting, or starts without Spider, is started again (up to
    START_ATTEMPTS): MariaDB 10.11's Spider now and then crashes (signal 11) in
    ``spider_init_system_tables`` at start-up, and when its initialisation fails the server
    goes on without the engine (CI once saw ``Unknown storage engine 'SPIDER'``); a second
    start goes through."""
    for attempt in range(1, START_ATTEMPTS + 1):
        if wait_for(lambda: mariadb.answers(n.port), START_TIMEOUT_S, gone=lambda: not alive(n.pid, n.mark)):
            if n.role != "compute" or has_spider(n.port):
                return
            if attempt == START_ATTEMPTS:
                raise LabError(f"spider {n.name} (port {n.port}) started without the Spider engine: {_why(n)}")
            say(f"{n.name} started without the Spider engine ({_why(n)}); starting it again ...")
            stop([(n.pid, n.mark)])
        elif alive(n.pid, n.mark):
            raise LabError(
                f"spider {n.name} (port {n.port}) did not answer within {START_TIMEOUT_S:.0f} s: see {n.log}"
            )
        elif n.role != "compute" or attempt == START_ATTEMPTS:
            break
        else:
            say(f"{n.name} exited while starting (see {n.log}); starting it again ...")
        launch(n)
        save()
    raise LabError(f"spider {n.name} (port {n.port}) did not start (exited): see {n.log}")


def has_spider(port: int) -> bool:
    """The server at ``port`` has a working Spider engine."""
    try:
        out = mariadb.sql(port, "SELECT SUPPORT FROM information_schema.ENGINES WHERE ENGINE = 'SPIDER'", 10)
    except LabError:
        return False
    return out.strip() in ("YES", "DEFAULT")


def _why(n: Node) -> str:
    """The last line of ``n``'s error log that names Spider, else where the log is."""
    try:
        with open(n.log, errors="replace") as f:
            lines = [line.strip() for line in f if "spider" in line.lower() and "[ERROR]" in line]
    except OSError:
        lines = []
    return lines[-1] if lines else f"see {n.log}"


def loopback(i: int) -> str:
    """127.0.0.1 spelt differently for data node ``i`` (127.0.0.1, 127.0.0.01, 127.0.0.001, ...:
    a leading zero is octal, the same address).  Spider's XA bookkeeping tells the members of
    a distributed transaction apart by host name, not port (mysql.spider_xa_member's key), so
    shards on one host under one name fail with 'This xid member already exists' (12606)."""
    return "127.0.0." + "0" * i + "1"


def spider_table(table: int, data: list[Node]) -> str:
    """The Spider table on a compute node: one hash partition per data node."""
    parts = ",\n".join(
        f'  PARTITION p{i + 1} COMMENT=\'host "{loopback(i)}", port "{n.port}"\'' for i, n in enumerate(data)
    )
    return (
        f"CREATE TABLE sbtest.sbtest{table} (\n{COLUMNS.format(n=table)}) ENGINE=SPIDER\n"
        f'COMMENT=\'wrapper "mysql", user "root", database "sbtest", '
        f'table "sbtest{table}"\'\nPARTITION BY HASH(id) (\n{parts}\n)'
    )


def create_tables(m: Manifest, tables: int) -> None:
    """The database on every node and the Spider tables on the compute nodes (the data
    nodes' tables come with their rows: :func:`load`)."""
    for n in m.by_role("data"):
        mariadb.sql(n.port, "CREATE DATABASE sbtest")
    for n in m.by_role("compute"):
        ddl = [spider_table(t, m.by_role("data")) for t in range(1, tables + 1)]
        mariadb.sql(n.port, ";\n".join(["CREATE DATABASE sbtest", *ddl]))


def load(m: Manifest, tables: int, table_size: int) -> None:
    """pysysbench's prepare through compute1, each data node's rows straight into it."""
    port = m.by_role("compute")[0].port
    connection = ["--db-driver=mysql", "--mysql-host=127.0.0.1", f"--mysql-port={port}", "--mysql-user=root"]
    sharded.load_per_node(m, [*connection, "--mysql-db=sbtest"], len(m.by_role("data")), tables, table_size)


STEPS = sharded.Steps(
    plan,
    start_all,
    create_tables,
    load,
    front="compute",
    tables_line="sbtest1..{tables}: Spider tables on both compute nodes, hash-partitioned over {count} data nodes ...",
    load_line="loading {tables} x {table_size} rows (pysysbench prepare --load-nodes: each data node directly) ...",
)
up = sharded.runner(STEPS)  # lab up: sharded.up with this look-alike's steps
