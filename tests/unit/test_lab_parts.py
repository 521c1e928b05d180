"""pysysbench/lab without servers: the missing-package line, the manifest's round trip and
its damage, a pid that is not (or no longer) the node's, the commands' one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pysysbench.lab import api, manifest, pgshard, postgres, procs, spider
from pysysbench.lab.manifest import Manifest, Node
from pysysbench.lab.procs import LabError


def test_a_missing_package_names_the_apt_get_command(monkeypatch):
    monkeypatch.setitem(procs.NEEDS, "haproxy", ("/nonexistent/haproxy", "haproxy"))
    monkeypatch.setitem(procs.NEEDS, "galera", ("/nonexistent/libgalera_smm.so", "galera-4"))
    with pytest.raises(LabError) as err:
        procs.ensure_packages("galera", ("galera", "haproxy", "rsync"), False, lambda line: None)
    assert str(err.value) == (
        "lab galera needs packages that are not installed: run 'apt-get install -y galera-4 haproxy' "
        "(or add --install as root)"
    )


def test_the_manifest_round_trips(tmp_path):
    m = Manifest("galera", str(tmp_path), [Node("node1", "galera", 1234, 99, "/d", "/l", {"group": 5}, "/d")])
    m.ports = {"write": 1, "read": 2}
    manifest.write(m)
    assert manifest.read(str(tmp_path)) == m
    assert json.loads((tmp_path / "lab.json").read_text())["format"] == manifest.FORMAT


@pytest.mark.parametrize(
    "text, words",
    [("{", "cannot read the lab manifest"), ('{"format": "x"}', "is not a pysysbench lab manifest")],
)
def test_a_damaged_manifest_is_one_line(tmp_path, text, words):
    (tmp_path / "lab.json").write_text(text)
    with pytest.raises(LabError, match=words):
        manifest.read(str(tmp_path))


def test_a_pid_is_ours_only_while_its_command_line_names_the_lab(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", str(tmp_path)])
    try:
        deadline = time.monotonic() + 10  # until the child has exec'd, its command line is ours
        while not procs.alive(proc.pid, str(tmp_path)) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert procs.alive(proc.pid, str(tmp_path))
        assert not procs.alive(proc.pid, "/some/other/lab")
        procs.stop([(proc.pid, "/some/other/lab")], timeout_s=1)  # not ours: left alone
        assert proc.poll() is None
        procs.stop([(proc.pid, str(tmp_path))], timeout_s=5)
        assert not procs.alive(proc.pid, str(tmp_path))
    finally:
        proc.kill()
        proc.wait()


def test_status_of_a_lab_whose_processes_are_gone(tmp_path):
    m = Manifest("spider", str(tmp_path), [Node("data1", "data", 1, 2**22 + 7, str(tmp_path / "d"), "", {}, "x")])
    manifest.write(m)
    _, rows = api.status(str(tmp_path))
    assert rows == [("data1", "not running")]


def test_up_refuses_a_folder_in_use(tmp_path):
    (tmp_path / "something").write_text("")
    with pytest.raises(LabError, match="is not empty"):
        api._claim(str(tmp_path))
    manifest.write(Manifest("galera", str(tmp_path), []))
    with pytest.raises(LabError, match="a lab is already in"):
        api._claim(str(tmp_path))


def test_pgshard_partitions_each_table_over_the_shards():
    """One postgres_fdw server per shard and, per table, one hash partition per shard (REMAINDER
    0..N-1 of MODULUS N) that is a foreign table on that shard's sbtestK."""
    shards = [Node(f"shard{i}", "shard", 40000 + i) for i in (1, 2, 3)]
    ddl = pgshard.coordinator_tables(2, shards)
    for i in (1, 2, 3):
        assert (
            f"CREATE SERVER shard{i} FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '127.0.0.1', port '4000{i}'" in ddl
        )
        for t in (1, 2):
            assert (
                f"CREATE FOREIGN TABLE sbtest{t}_shard{i} PARTITION OF sbtest{t} FOR VALUES WITH "
                f"(MODULUS 3, REMAINDER {i - 1}) SERVER shard{i} OPTIONS (table_name 'sbtest{t}');"
            ) in ddl
    assert ddl.count("PARTITION BY HASH (id)") == 2
    assert ddl.index("SET ROLE sbtest") < ddl.index("CREATE TABLE")  # the tables are sbtest's


def test_pgshard_servers_are_small_and_the_shards_end_lock_waits():
    args = postgres.server_args(Path("/d"), 5555, pgshard.SHARD)
    assert "listen_addresses=127.0.0.1" in args and "shared_buffers=16MB" in args and "lock_timeout=1s" in args
    assert "lock_timeout=1s" not in postgres.server_args(Path("/d"), 5555)  # the coordinators wait


def test_pgshard_prints_postgresql_options(tmp_path):
    m = Manifest("pgshard", str(tmp_path), [], ports={"sql": 4321})
    assert api.options(m) == [
        "--db-driver=pgsql",
        "--pgsql-host=127.0.0.1",
        "--pgsql-port=4321",
        "--pgsql-user=sbtest",
        "--pgsql-db=sbtest",
        "--pgsql-ignore-errors=40P01,23505,40001,55P03",
    ]


def test_spider_names_each_shard_by_its_own_spelling_of_loopback():
    data = [Node(f"data{i}", "data", 4000 + i) for i in range(3)]
    ddl = spider.spider_table(2, data)
    assert [spider.loopback(i) for i in range(3)] == ["127.0.0.1", "127.0.0.01", "127.0.0.001"]
    assert 'PARTITION p3 COMMENT=\'host "127.0.0.001", port "4002"\'' in ddl
    assert 'table "sbtest2"' in ddl and "PARTITION BY HASH(id)" in ddl


@pytest.mark.parametrize(
    "argv, words",
    [
        (["lab"], "pysysbench lab: the following arguments are required: action"),
        (["lab", "up", "nosuch", "--dir=D"], "invalid choice: 'nosuch'"),
        (["lab", "up", "galera", "--nodes=2", "--dir=D"], "--nodes must be at least 3"),
    ],
)
def test_the_command_line_errors_are_one_line(tmp_path, argv, words):
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    done = subprocess.run(
        [sys.executable, "-m", "pysysbench", *(a.replace("=D", f"={tmp_path / 'lab'}") for a in argv)],
        capture_output=True,
        text=True,
        env=env,
    )
    text = (done.stdout + done.stderr).strip()
    assert done.returncode == 1 and words in text and "\n" not in text, text
    assert not (tmp_path / "lab").exists()
