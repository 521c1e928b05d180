"""prepare with ``--load-nodes`` (issue 42, 2.2): each row straight into its node, id mod N.

Three PRIVATE MariaDB servers (private_servers.py, free ports): a front and two nodes.  The
front stands for a Spider compute node (here a plain server: its tables stay empty, which
shows that no row went through it); the nodes hold the rows.  The lab's ``spider`` loads
itself this way (tests/integration/test_lab.py runs and checks through Spider).

* node i holds exactly the ids with id % 2 == i, with the secondary index and no loading
  flag; the front has the tables, created after their rows were in;
* the nodes hold the same records as a prepare without --load-nodes with the same seed;
* a second prepare stops on the first node that has the table, one line; --force replaces;
* a table the front has already (a Spider table defined over the nodes) is kept;
* cleanup with --load-nodes drops the front's tables and the nodes';
* --load-method=insert, SQLite and a Lua script of one's own are refused, one line each;
* PostgreSQL: pysysbench's placement of ids is the server's own routing into
  ``PARTITION BY HASH (id)`` (the lab's pgshard loads its shards this way: test_lab.py checks
  every row with ``satisfies_hash_partition`` on a coordinator).
"""

from __future__ import annotations

import os
import subprocess

import numpy as np
import pytest
from conftest import PG_HOST
from private_servers import PrivateMariaDB, free_port, running

from pysysbench.load.placement import node_of

pytestmark = pytest.mark.mysql

SIZE = 20_000
CHECKSUM = "SELECT COUNT(*), SUM(CRC32(CONCAT_WS(',', id, k, c, pad))) FROM {db}.sbtest{t}"


@pytest.fixture(scope="module")
def servers():
    with running(*(PrivateMariaDB(port=free_port()) for _ in range(3))) as made:
        yield list(made)


def nodes_option(nodes) -> str:
    return "--load-nodes=" + ",".join(f"127.0.0.1:{n.port}" for n in nodes)


def prepare(run_cli, front, nodes, *extra: str, command: str = "prepare"):
    return run_cli(
        *front.options, "--tables=2", f"--table-size={SIZE}", "--rand-seed=5", nodes_option(nodes), *extra,
        "oltp_read_write", command, timeout=120,
    )  # fmt: skip


def fresh(run_cli, front, nodes, *extra: str):
    """cleanup (front and nodes), then prepare: each test stands alone."""
    run_cli.ok(*front.options, "--tables=2", nodes_option(nodes), "oltp_read_write", "cleanup")
    proc = prepare(run_cli, front, nodes, *extra)
    assert proc.returncode == 0, run_cli.describe(proc)
    return proc


def fatal(proc) -> str:
    """The one error line of a failed command (sysbench's FATAL line, or a usage error)."""
    assert proc.returncode != 0 and "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    lines = [x for x in (proc.stdout + proc.stderr).splitlines() if "FATAL" in x or "rror" in x]
    assert len(lines) == 1, proc.stdout + proc.stderr
    return lines[0]


def one(server, sql: str) -> list[str]:
    return server.sql(sql).strip().split("\t")


def test_rows_go_to_node_id_mod_n_and_the_front_gets_the_tables(run_cli, servers):
    front, *nodes = servers
    proc = fresh(run_cli, front, nodes, "--threads=2")
    for t in (1, 2):
        for line in (f"Creating table 'sbtest{t}'...", f"Inserting {SIZE} records into 'sbtest{t}'"):
            assert line in proc.stdout, proc.stdout
        assert f"Creating a secondary index on 'sbtest{t}'..." in proc.stdout
        for i, node in enumerate(nodes):
            count, lo, hi = one(node, f"SELECT COUNT(*), MIN(id), MAX(id) FROM sbtest.sbtest{t}")
            assert (int(count), int(lo), int(hi)) == (SIZE // 2, 2 - i, SIZE - i), (t, i)
            assert one(node, f"SELECT COUNT(*) FROM sbtest.sbtest{t} WHERE id % 2 <> {i}") == ["0"]
            assert "KEY `k_" in node.sql(f"SHOW CREATE TABLE sbtest.sbtest{t}")
            comment = f"SELECT table_comment FROM information_schema.tables WHERE table_name = 'sbtest{t}'"
            assert one(node, comment) == [""]  # the loading flag is gone
        assert one(front, f"SELECT COUNT(*) FROM sbtest.sbtest{t}") == ["0"]  # no row went through the front
        assert "KEY `k_" in front.sql(f"SHOW CREATE TABLE sbtest.sbtest{t}")


def test_the_nodes_hold_the_records_of_a_whole_prepare(run_cli, servers):
    front, *nodes = servers
    fresh(run_cli, front, nodes)
    front.sql("DROP DATABASE IF EXISTS whole; CREATE DATABASE whole")
    whole = [o if not o.startswith("--mysql-db=") else "--mysql-db=whole" for o in front.options]
    run_cli.ok(*whole, "--tables=2", f"--table-size={SIZE}", "--rand-seed=5", "oltp_read_write", "prepare")
    for t in (1, 2):
        count, crc = one(front, CHECKSUM.format(db="whole", t=t))
        parts = [one(n, CHECKSUM.format(db="sbtest", t=t)) for n in nodes]
        assert (sum(int(c) for c, _ in parts), sum(int(x) for _, x in parts)) == (int(count), int(crc)), t


def test_a_second_prepare_names_the_node_and_force_replaces(run_cli, servers):
    front, *nodes = servers
    fresh(run_cli, front, nodes)
    again = prepare(run_cli, front, nodes)
    assert again.returncode == 1, run_cli.describe(again)
    assert f"table 'sbtest1' already exists in node 127.0.0.1:{nodes[0].port}" in fatal(again)
    nodes[1].sql("DELETE FROM sbtest.sbtest2 WHERE id < 100")
    forced = prepare(run_cli, front, nodes, "--force")
    assert forced.returncode == 0, run_cli.describe(forced)
    assert one(nodes[1], "SELECT COUNT(*) FROM sbtest.sbtest2") == [str(SIZE // 2)]


def test_cleanup_drops_everywhere_and_a_front_table_is_kept(run_cli, servers):
    front, *nodes = servers
    fresh(run_cli, front, nodes)
    proc = prepare(run_cli, front, nodes, command="cleanup")
    assert proc.returncode == 0, run_cli.describe(proc)
    for s in servers:
        assert one(s, "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'sbtest'") == ["0"]
    front.sql(
        "CREATE TABLE sbtest.sbtest1 (id INTEGER PRIMARY KEY, k INTEGER, c CHAR(120), pad CHAR(60)) COMMENT='mine'"
    )
    proc = prepare(run_cli, front, nodes)
    assert proc.returncode == 0, run_cli.describe(proc)
    assert "1 of the sbtest tables exist on the front" in proc.stdout and "kept" in proc.stdout, proc.stdout
    kept = one(front, "SELECT table_comment FROM information_schema.tables WHERE table_name = 'sbtest1'")
    assert kept == ["mine"]
    assert one(nodes[0], "SELECT COUNT(*) FROM sbtest.sbtest1") == [str(SIZE // 2)]
    prepare(run_cli, front, nodes, command="cleanup")


def test_what_cannot_load_per_node_is_refused(run_cli, servers, tmp_path):
    front, *nodes = servers
    run_cli.ok(*front.options, "--tables=2", nodes_option(nodes), "oltp_read_write", "cleanup")
    insert = prepare(run_cli, front, nodes, "--load-method=insert")
    assert "--load-nodes loads with the bulk prepare" in fatal(insert)
    lite = run_cli(
        "--db-driver=sqlite", f"--sqlite-db={tmp_path / 'x.db'}", nodes_option(nodes), "oltp_read_write", "prepare"
    )
    assert "--load-nodes needs a MySQL/MariaDB or PostgreSQL driver" in fatal(lite)
    script = tmp_path / "own.lua"  # a script of one's own prepares itself: it cannot honour the option
    script.write_text("function prepare() print('prepared') end\nfunction event() end\n")
    own = run_cli(*front.options, nodes_option(nodes), str(script), "prepare")
    assert "only the bundled oltp_* workloads load per node" in fatal(own) and "prepared" not in own.stdout
    lab = run_cli(*front.options, "--load-nodes=lab:/nonexistent", "oltp_read_write", "prepare")
    assert "--load-nodes: no lab in '/nonexistent'" in fatal(lab)


@pytest.mark.pgsql
@pytest.mark.parametrize("modulus", [2, 3, 5])
def test_postgresql_s_placement_is_the_server_s(modulus):
    """20,051 ids (negatives too) inserted into a hash-partitioned table of the machine's
    PostgreSQL, in a schema of this test's own: each in the partition placement.py names."""
    schema = f"pysysbench_place_{os.getpid()}"
    parts = "".join(
        f"CREATE TABLE {schema}.p_{r} PARTITION OF {schema}.p FOR VALUES WITH (MODULUS {modulus}, REMAINDER {r});"
        for r in range(modulus)
    )
    psql(f"CREATE SCHEMA {schema}; CREATE TABLE {schema}.p (id int) PARTITION BY HASH (id); {parts}"
         f"INSERT INTO {schema}.p SELECT generate_series(-50, 20000);")  # fmt: skip
    try:
        out = psql(
            f"SELECT id, substr(tableoid::regclass::text, length('{schema}.p_') + 1) FROM {schema}.p ORDER BY id"
        )
    finally:
        psql(f"DROP SCHEMA {schema} CASCADE")
    rows = [tuple(map(int, line.split("|"))) for line in out.split()]
    ids = np.array([i for i, _ in rows])
    assert len(ids) == 20051
    assert node_of(ids, modulus, "pg-hash").tolist() == [r for _, r in rows]


def psql(sql: str) -> str:
    argv = ["psql", "-X", "-q", "-At", "-h", PG_HOST, "-U", "postgres", "-d", "postgres", "-v", "ON_ERROR_STOP=1"]
    return subprocess.run([*argv, "-c", sql], capture_output=True, text=True, check=True).stdout
