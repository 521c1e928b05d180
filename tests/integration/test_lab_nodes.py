"""``--server-nodes``: the per-node view against a real lab (``lab up galera``: 3 MariaDB
Galera nodes behind HAProxy).

A 4-s oltp_read_only run through the proxy's read port (round robin over the three nodes)
with ``--server-nodes=lab:DIR --report-interval=1``: the result file holds every node's
series (an entry per interval, every node up, queries on each node the proxy gave a
connection: all three with 3 threads), each node's share of the galera role adding up to
1, the nodes' queries adding up to the client's own within a few percent, every node's CPU
(its pid from the manifest), and one line per node after the report.  Then a 2-s run over
a host list of two nodes with ``--server-nodes`` naming them and a port nobody listens on:
that node is down in every interval, the run still ends with exit code 0, and the client's
own sessions per node (the host list) are on the two nodes.

Private servers only (the lab's own ports).  About 40 s (up 16-24 s, prepare, two runs, down).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import tempfile

import pytest

from pysysbench.lab import galera
from pysysbench.lab.procs import missing_packages

DATA = ["--tables=1", "--table-size=1000"]


@pytest.fixture(scope="module")
def lab(run_cli):
    """One lab for the module, its table prepared through the proxy's write port."""
    missing = missing_packages(galera.NEEDS)
    if missing and os.geteuid() != 0:
        pytest.skip(f"packages {', '.join(missing)} missing and not root to install them")
    parent = tempfile.mkdtemp(prefix="pysysbench-test-nodes-")
    os.chmod(parent, 0o755)  # the servers' user (mysql, as root) must reach it
    directory = os.path.join(parent, "lab")
    up = run_cli("lab", "up", "galera", f"--dir={directory}", *(["--install"] if missing else []), timeout=180)
    try:
        assert up.returncode == 0, run_cli.describe(up)
        with open(os.path.join(directory, "lab.json")) as f:
            m = json.load(f)
        run_cli.ok("oltp_read_only", *m["options"], *DATA, "prepare", timeout=120)
        yield directory, m
    finally:
        run_cli("lab", "down", f"--dir={directory}", timeout=120)
        shutil.rmtree(parent, ignore_errors=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_every_node_of_a_lab_sampled_each_interval(run_cli, lab, tmp_path):
    directory, m = lab
    write = [o for o in m["options"] if not o.startswith("--mysql-port=")]
    result = tmp_path / "nodes.json"
    read_port = f"--mysql-port={m['ports']['read']}"
    proc = run_cli.ok(
        "oltp_read_only",
        *write,
        read_port,
        *DATA,
        "--threads=3",
        "--time=4",
        "--report-interval=1",
        f"--server-nodes=lab:{directory}",
        f"--result-file={result}",
        "run",
        timeout=120,
    )
    doc = json.loads(result.read_text())
    view = doc["server_nodes"]
    galera_nodes = [n for n in m["nodes"] if n["role"] == "galera"]
    assert [(n["name"], n["role"], n["pid"]) for n in view["nodes"]] == [
        (n["name"], "galera", n["pid"]) for n in galera_nodes
    ]
    assert view["share_of"] == "queries" and view["every_s"] == 1
    for n in view["nodes"]:
        series = n["series"]
        assert 4 <= len(series) <= 5, series  # one per second of the 4-s run (the end folded in)
        assert all(iv["up"] for iv in series) and n["intervals_down"] == 0
        assert n["work"] > 0 and all(iv["qps"] > 0 for iv in series), n["name"]
        assert n["cpu_s"] is not None and n["cpu_pct"] > 0
        assert n["even_share"] == pytest.approx(1 / 3)
    assert sum(n["share"] for n in view["nodes"]) == pytest.approx(1)
    client = doc["summary"]["queries"]["total"]
    nodes_total = sum(n["work"] for n in view["nodes"])
    assert abs(nodes_total - client) <= 0.05 * client, (nodes_total, client)
    lines = proc.stdout[proc.stdout.index("Server nodes (") :].splitlines()
    assert [line.split()[0] for line in lines[1:4]] == ["node1", "node2", "node3"]


def test_a_node_that_does_not_answer_is_down_and_the_run_goes_on(run_cli, lab, tmp_path):
    directory, m = lab
    p1, p2 = (n["port"] for n in m["nodes"][:2])
    dead = _free_port()
    result = tmp_path / "down.json"
    opts = [o for o in m["options"] if not o.startswith("--mysql-port=")]
    run_cli.ok(
        "oltp_point_select",
        *opts,
        f"--mysql-port={p1},{p2}",
        *DATA,
        "--threads=2",
        "--time=2",
        f"--server-nodes=127.0.0.1:{p1},127.0.0.1:{p2},127.0.0.1:{dead}",
        f"--result-file={result}",
        "run",
        timeout=120,
    )
    view = json.loads(result.read_text())["server_nodes"]
    by = {n["name"]: n for n in view["nodes"]}
    gone = by[f"127.0.0.1:{dead}"]
    assert gone["intervals"] >= 2 and gone["intervals_down"] == gone["intervals"] and gone["work"] == 0
    for port in (p1, p2):
        n = by[f"127.0.0.1:{port}"]
        assert n["intervals_down"] == 0 and n["work"] > 0 and n["client_sessions"] == 1
        assert n["cpu_s"] is None  # a HOST:PORT list names no pid
