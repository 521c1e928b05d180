"""``campaign run|check FILE --lab D``: the lab's manifest decides the connection and, for a
look-alike that loaded its own tables, replaces the prepare step (campaign/onlab.py).  The
manifests here are written by hand; tests/integration/test_lab.py runs campaigns on real labs."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from pysysbench.campaign import onlab, spec
from pysysbench.cli.main import main
from pysysbench.core.errors import UsageError
from pysysbench.lab import manifest
from pysysbench.lab.manifest import Manifest, Node

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SPIDER = [
    "--db-driver=mysql",
    "--mysql-host=127.0.0.1",
    "--mysql-port=40001",
    "--mysql-user=sbtest",
    "--mysql-db=sbtest",
]
PGSHARD = [
    "--db-driver=pgsql",
    "--pgsql-host=127.0.0.1",
    "--pgsql-port=40002",
    "--pgsql-user=sbtest",
    "--pgsql-db=sbtest",
    "--pgsql-ignore-errors=40P01,23505,40001,55P03",
]


def _lab(tmp_path: Path, name: str, options: list[str], tables: list[int], state: str = "up") -> str:
    nodes = [Node("compute1", "compute", 40011), Node("data1", "data", 40012), Node("proxy", "proxy", 40001)]
    m = Manifest(name, str(tmp_path), nodes, tables=tables, options=options, state=state)
    manifest.write(m)
    return str(tmp_path)


def test_the_lab_decides_the_connection_and_replaces_prepare(tmp_path):
    c = spec.load(str(EXAMPLES / "tidb.toml"))
    c = dataclasses.replace(c, connection={**c.connection, "mysql-ssl": "off", "mysql_password": "x"})
    on = onlab.attach(c, _lab(tmp_path, "spider", SPIDER, [8, 10000]))
    assert on.connection == {
        "mysql-ssl": "off",  # the campaign's own option stays
        "db-driver": "mysql",
        "mysql-host": "127.0.0.1",
        "mysql-port": "40001",
        "mysql-user": "sbtest",
        "mysql-db": "sbtest",
    }
    assert on.prepare is None and c.prepare is not None
    assert (
        on.labels["lab"] == "spider" and on.labels["lab-nodes"] == "2" and on.labels["version"] == c.labels["version"]
    )
    assert onlab.results_name(c, str(tmp_path)) == "tidb-lab-spider"


def test_a_lab_whose_tables_prepare_makes_keeps_the_prepare_step(tmp_path):
    c = spec.load(str(EXAMPLES / "tencentdb-mariadb.toml"))
    on = onlab.attach(c, _lab(tmp_path, "galera", SPIDER, []))
    assert on.prepare == c.prepare and on.connection["mysql-port"] == "40001"


@pytest.mark.parametrize(
    "name,options,tables,state,message",
    [
        ("spider", SPIDER, [2, 10000], "up", "needs 8 tables x 10000 rows; the lab spider in"),
        ("spider", SPIDER, [8, 500], "up", "--tables 8 --table-size 10000'"),
        ("pgshard", PGSHARD, [8, 10000], "up", "runs --db-driver=mysql, the lab pgshard in"),
        ("spider", SPIDER, [8, 10000], "starting", "is not up (state: starting)"),
    ],
)
def test_a_lab_that_cannot_serve_the_campaign_is_one_line(tmp_path, name, options, tables, state, message):
    c = spec.load(str(EXAMPLES / "tidb.toml"))
    with pytest.raises(UsageError) as err:
        onlab.attach(c, _lab(tmp_path, name, options, tables, state))
    assert message in str(err.value) and str(err.value).startswith("--lab: ")


def test_check_prints_the_lab_commands_and_no_lab_is_one_line(tmp_path, capsys):
    (tmp_path / "lab").mkdir()
    lab = _lab(tmp_path / "lab", "pgshard", PGSHARD, [18, 2000])
    assert main(["campaign", "check", str(EXAMPLES / "kunlunbase.toml"), "--lab", lab]) == 0
    out = capsys.readouterr().out
    assert "results: results/kunlunbase-lab-pgshard" in out and "prepare:" not in out
    assert "--pgsql-port=40002" in out and "--pgsql-ignore-errors=40P01,23505,40001,55P03" in out
    assert main(["campaign", "check", str(EXAMPLES / "kunlunbase.toml"), "--lab", str(tmp_path / "none")]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no lab in" in err[0] and "Traceback" not in err[0]


def test_a_sharded_lab_counts_the_writes_that_span_nodes(tmp_path):
    """On a lab with data nodes every bundled OLTP workload gets --shard-nodes=lab:D (one that
    sets its own keeps it); on one without (galera) none does."""
    c = spec.load(str(EXAMPLES / "tidb.toml"))
    w0 = dataclasses.replace(c.workloads[0], options={**c.workloads[0].options, "shard_nodes": "a:1,b:2"})
    c = dataclasses.replace(c, workloads=(w0, *c.workloads[1:]))
    on = onlab.attach(c, _lab(tmp_path, "spider", SPIDER, [8, 10000]))
    assert on.workloads[0].options["shard_nodes"] == "a:1,b:2" and "shard-nodes" not in on.workloads[0].options
    assert {w.test for w in on.workloads[1:]} >= {"oltp_read_write", "oltp_insert"}
    assert all(w.options["shard-nodes"] == f"lab:{tmp_path}" for w in on.workloads[1:])
    galera = tmp_path / "galera"
    galera.mkdir()
    nodes = [Node("node1", "galera", 40021), Node("proxy", "proxy", 40020)]
    m = Manifest("galera", str(galera), nodes, options=SPIDER, state="up")
    manifest.write(m)
    assert onlab.attach(c, str(galera)).workloads == c.workloads
