"""Placement of Ray worker actors (``--ray-address``), without a cluster: which
nodes are used, how many actors each runs, and how threads spread over them."""

from __future__ import annotations

import subprocess
import sys

import pytest

from pysysbench.engine.group import split
from pysysbench.engine.raygroup import eligible_nodes, plan_actors


def node(node_id: str, address: str, cpus: float = 2, alive: bool = True, **extra: float) -> dict:
    return {
        "NodeID": node_id,
        "Alive": alive,
        "NodeManagerAddress": address,
        "NodeManagerHostname": "h",
        "Resources": {"CPU": cpus, **extra},
    }


def test_one_actor_per_cpu_on_every_node_with_cpus():
    nodes = eligible_nodes(
        [
            node("b", "10.0.0.2", 4),
            node("a", "10.0.0.1", 2),
            node("head", "10.0.0.9", 0),
            node("gone", "10.0.0.3", 8, alive=False),
        ],
        0,
        "",
    )
    assert [(n.node_id, n.slots) for n in nodes] == [("a", 2), ("b", 4)]  # head without CPUs and dead node skipped


def test_workers_per_node_overrides_cpu_count():
    nodes = eligible_nodes([node("a", "10.0.0.1", 2), node("b", "10.0.0.2", 16)], 3, "")
    assert [n.slots for n in nodes] == [3, 3]


def test_resource_label_selects_nodes_and_sets_count():
    nodes = eligible_nodes(
        [node("a", "10.0.0.1", 8, sb_client=2), node("b", "10.0.0.2", 8), node("c", "10.0.0.3", 8, sb_client=1)],
        0,
        "sb_client",
    )
    assert [(n.node_id, n.slots) for n in nodes] == [("a", 2), ("c", 1)]
    assert eligible_nodes([node("b", "10.0.0.2", 8)], 0, "sb_client") == []


def test_plan_interleaves_nodes_and_never_exceeds_threads():
    a, b = eligible_nodes([node("a", "10.0.0.1", 3), node("b", "10.0.0.2", 1)], 0, "")
    assert [n.node_id for n in plan_actors([a, b], 100)] == ["a", "b", "a", "a"]
    assert [n.node_id for n in plan_actors([a, b], 2)] == ["a", "b"]  # two threads still use both nodes


def test_global_thread_ids_rotate_database_nodes_evenly():
    """6 threads on 2 actors (3 + 3) over 3 database nodes: the rotation uses the
    global thread id, so every database node gets 2 connections."""
    actors, threads, db_nodes = 2, 6, 3
    first, per_node = 0, [0] * db_nodes
    for i in range(actors):
        n = split(threads, actors, i)
        for tid in range(first, first + n):
            per_node[tid % db_nodes] += 1
        first += n
    assert per_node == [2, 2, 2]


def test_missing_ray_is_one_clear_line(tmp_path):
    """Without the extra installed, --ray-address says what to install (no traceback)."""
    code = (
        "import sys; sys.modules['ray'] = None\n"
        "from pysysbench.cli.main import main\n"
        "sys.exit(main(['oltp_point_select', '--mysql-host=127.0.0.1', '--mysql-dry-run=on', '--tables=1',"
        " '--ray-address=auto', '--time=1', 'run']))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    fatal = [line for line in proc.stdout.splitlines() if line.startswith("FATAL:")]
    assert fatal == [
        "FATAL: --ray-address needs Ray, which is not installed: install pysysbench[ray] "
        "(pip install 'pysysbench[ray]')"
    ], proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr


@pytest.mark.parametrize("bad", ["--ray-workers-per-node=-1"])
def test_invalid_ray_options_are_rejected(bad, tmp_path):
    code = (
        "import sys\nfrom pysysbench.cli.main import main\n"
        f"sys.exit(main(['oltp_point_select', '--mysql-dry-run=on', '--ray-address=auto', '{bad}', 'run']))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert proc.returncode == 1
    assert "ray_workers_per_node" in proc.stdout or "ray-workers-per-node" in proc.stdout, proc.stdout
