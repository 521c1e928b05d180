"""The per-node view's arithmetic (engine/nodes.py) on synthetic samples: per-interval rates
less the sampler's own statement, a node down for an interval, a restarted node's counters,
each node's share of its role's work and the skew flag (only among nodes of one role), the
``--server-nodes`` values (a lab manifest as ``lab up`` writes it, a HOST:PORT list, bad ones)
and the lines printed after the report."""

from __future__ import annotations

import os

import pytest

from pysysbench.core.errors import ConfigError
from pysysbench.drivers.targets import NodeTarget, targets
from pysysbench.engine import nodes
from pysysbench.engine.nodes import Sample, node_entry, node_series, text_lines, with_shares
from pysysbench.lab import manifest

S = 1_000_000_000


def mysql(t: float, questions: int, commits: int = 0, deadlocks: int = 0, cpu: float | None = None) -> Sample:
    counters = {"Questions": questions, "Com_commit": commits, "Com_rollback": 0, "Threads_connected": 3}
    counters["Innodb_deadlocks"] = deadlocks
    return Sample(int(t * S), {k: float(v) for k, v in counters.items()}, cpu)


def down(t: float) -> Sample:
    return Sample(int(t * S), None, None)


def entry(name: str, role: str, samples: list[Sample]) -> dict:
    return node_entry(NodeTarget(name, role, "127.0.0.1", 1), node_series(samples, 0, own_queries=1))


def test_rates_less_the_samplers_own_statement():
    series = node_series([mysql(0, 100, cpu=1.0), mysql(1, 1101, 50, cpu=1.25), mysql(3, 3102, 150, 2, 1.75)], 0, 1)
    assert [iv["work"] for iv in series] == [1000, 2000]
    assert [iv["qps"] for iv in series] == [1000, 1000]
    assert [iv["commits_per_s"] for iv in series] == [50, 50]
    assert [iv["errors"] for iv in series] == [0, 2]
    assert [iv["cpu_pct"] for iv in series] == pytest.approx([25, 25])
    assert [iv["time_s"] for iv in series] == [1, 3] and all(iv["up"] for iv in series)


def test_a_node_down_for_an_interval_and_a_restarted_one():
    series = node_series([mysql(0, 100), down(1), mysql(2, 50), mysql(3, 551)], 0, 1)
    assert [iv["up"] for iv in series] == [False, True, True]
    # down, then the first answer after it (nothing to compare with), then counted again
    assert [iv["work"] for iv in series] == [None, None, 500]
    e = entry("n", "galera", [mysql(0, 100), down(1), mysql(2, 50), mysql(3, 551)])
    assert e["intervals_down"] == 1 and e["intervals"] == 3 and e["work"] == 500
    # counters that went down (the node started again) count nothing for that interval
    assert node_series([mysql(0, 900), mysql(1, 10)], 0)[0]["work"] is None


def test_a_short_last_interval_is_folded_into_the_one_before():
    samples = [mysql(0, 0), mysql(1, 1001), mysql(2, 2002), mysql(2.05, 2103)]
    nodes.fold_short_end(samples, S)
    assert [iv["interval_s"] for iv in node_series(samples, 0, 1)] == pytest.approx([1, 1.05])
    kept = [mysql(0, 0), mysql(1, 1001), mysql(1.6, 1602)]
    nodes.fold_short_end(kept, S)
    assert len(kept) == 3


def test_postgresql_work_is_transactions():
    a = Sample(0, {"xact_commit": 10.0, "xact_rollback": 1.0, "deadlocks": 0.0, "conflicts": 0.0, "numbackends": 2})
    b = Sample(
        2 * S, {"xact_commit": 211.0, "xact_rollback": 5.0, "deadlocks": 1.0, "conflicts": 0.0, "numbackends": 4}
    )
    (iv,) = node_series([a, b], 0)
    assert iv["work"] == 200 + 4  # less the sampler's own SELECT, a transaction
    assert iv["qps"] == 102 and iv["errors"] == 1 and iv["sessions"] == 4


def test_shares_and_skew_within_a_role():
    even = [mysql(0, 0), mysql(1, 1001)]
    busy = [mysql(0, 0), mysql(1, 1501)]
    idle = [mysql(0, 0), mysql(1, 501)]
    view = with_shares(
        [
            entry("node1", "galera", even),
            entry("node2", "galera", busy),
            entry("node3", "galera", idle),
            entry("data1", "data", [mysql(0, 0), mysql(1, 9001)]),  # alone in its role: never skewed
        ]
    )
    by = {n["name"]: n for n in view}
    assert by["node1"]["share"] == pytest.approx(1 / 3) and by["node2"]["share"] == pytest.approx(0.5)
    assert by["node3"]["share"] == pytest.approx(1 / 6)
    assert [by[n]["skew"] for n in ("node1", "node2", "node3")] == [False, True, True]
    assert by["data1"]["share"] == 1 and by["data1"]["skew"] is False
    # within the threshold: 1/3 +- 20 % of it is not skew, +- 30 % is
    close = with_shares([entry("a", "r", [mysql(0, 0), mysql(1, 1201)]), entry("b", "r", [mysql(0, 0), mysql(1, 801)])])
    assert [n["skew"] for n in close] == [False, False]
    far = with_shares([entry("a", "r", [mysql(0, 0), mysql(1, 1301)]), entry("b", "r", [mysql(0, 0), mysql(1, 701)])])
    assert [n["skew"] for n in far] == [True, True]
    assert nodes.SKEW_FRACTION == 0.25


def test_a_role_that_did_nothing_has_no_share():
    view = with_shares([entry("a", "r", [mysql(0, 0), down(1)]), entry("b", "r", [mysql(0, 0), down(1)])])
    assert [(n["share"], n["skew"]) for n in view] == [(None, False), (None, False)]


def test_lab_manifest_as_lab_up_writes_it(tmp_path):
    m = manifest.Manifest(
        "spider",
        str(tmp_path),
        [
            manifest.Node("compute1", "compute", 4001, pid=11, mark="/x/compute1"),
            manifest.Node("data1", "data", 4002, pid=12),
            manifest.Node("proxy", "proxy", 4000, pid=13),
        ],
    )
    manifest.write(m)
    got = targets(f"lab:{tmp_path}")
    assert got == (
        NodeTarget("compute1", "compute", "127.0.0.1", 4001, 11, "/x/compute1", str(tmp_path)),
        NodeTarget("data1", "data", "127.0.0.1", 4002, 12, "", str(tmp_path)),
    )


def test_load_nodes_are_a_labs_data_nodes_in_order(tmp_path):
    """--load-nodes=lab:DIR: the data nodes only, in the manifest's order (Spider's partition
    order); a lab without data nodes (galera) is one line naming the option."""
    data = [manifest.Node(f"data{i}", "data", 4010 + i, pid=20 + i) for i in (1, 2, 3)]
    nodes_ = [manifest.Node("compute1", "compute", 4001), *data, manifest.Node("proxy", "proxy", 4000)]
    manifest.write(manifest.Manifest("spider", str(tmp_path), nodes_))
    got = targets(f"lab:{tmp_path}", "--load-nodes", roles=("data",))
    assert [(t.name, t.port) for t in got] == [("data1", 4011), ("data2", 4012), ("data3", 4013)]
    manifest.write(manifest.Manifest("galera", str(tmp_path), [manifest.Node("node1", "galera", 4001)]))
    with pytest.raises(ConfigError, match=r"^--load-nodes: the lab manifest .*\(galera\) names no data node$"):
        targets(f"lab:{tmp_path}", "--load-nodes", roles=("data",))
    with pytest.raises(ConfigError, match="Invalid value in --load-nodes: 'db2'"):
        targets("db1:1,db2", "--load-nodes")


def test_a_node_started_again_is_found_under_its_new_pid(tmp_path):
    me = os.getpid()  # a live process standing for the node's new one
    gone = 2**22 + 1  # above pid_max's default: no such process
    manifest.write(manifest.Manifest("galera", str(tmp_path), [manifest.Node("node1", "galera", 4001, pid=me)]))
    t = NodeTarget("node1", "galera", "127.0.0.1", 4001, gone, "", str(tmp_path))
    assert nodes.current_pid(t, gone) == me
    assert nodes.current_pid(NodeTarget("node1", "galera", "127.0.0.1", 4001, gone), gone) == 0  # no lab to ask
    assert nodes.current_pid(NodeTarget("n", "r", "h", 1, me, "no such text in pytest's command line"), me) == 0
    # CPU is compared only between readings of one process
    a, b = mysql(0, 0, cpu=5.0), mysql(1, 1001, cpu=0.5)
    b.pid, a.pid = me, gone
    assert node_series([a, b], 0)[0]["cpu_s"] is None


def test_server_nodes_values(tmp_path):
    assert targets("") == ()
    assert targets("127.0.0.1:3311, db2:3312") == (
        NodeTarget("127.0.0.1:3311", "node", "127.0.0.1", 3311),
        NodeTarget("db2:3312", "node", "db2", 3312),
    )
    for bad in ("db2", "db2:port", ":3306", "db:70000"):
        with pytest.raises(ConfigError, match="Invalid value in --server-nodes"):
            targets(bad)
    with pytest.raises(ConfigError, match="no lab in"):
        targets(f"lab:{tmp_path}/none")
    (tmp_path / "lab.json").write_text('{"format": "something else"}')
    with pytest.raises(ConfigError, match="cannot read the lab manifest"):
        targets(f"lab:{tmp_path}")


def test_lines_after_the_report():
    view = {
        "every_s": 1,
        "share_of": "queries",
        "nodes": with_shares(
            [
                entry("node1", "galera", [mysql(0, 0, cpu=0), mysql(2, 3001, cpu=1)]),
                entry("node2", "galera", [mysql(0, 0), down(2)]),
            ]
        ),
    }
    lines = text_lines(view)
    assert lines[0] == "Server nodes (every 1 s; share of the role's queries):"
    assert "node1" in lines[1] and "qps:   1500.00" in lines[1] and "100.0%" in lines[1] and "CPU:  50.0%" in lines[1]
    assert "SKEW (even 50.0%)" in lines[1] and "down 1/1 intervals" in lines[2] and lines[-1] == ""


# --- the report's per-node rows ------------------------------------------------------------------


def test_report_rows_one_per_node_with_skew_and_down():
    from test_campaign_compare import doc

    from pysysbench.report import document, markdown
    from pysysbench.report.model import cells, run_of
    from pysysbench.report.nodes import nodes_table

    d = doc(workload="oltp_read_only", threads=3, repeat=1, tps=300)
    d["server_nodes"] = {
        "every_s": 1,
        "share_of": "queries",
        "skew_fraction": 0.25,
        "nodes": with_shares(
            [
                entry("node1", "galera", [mysql(0, 0, cpu=0), mysql(1, 2001, cpu=0.5), mysql(2, 4002, cpu=1)]),
                entry("node2", "galera", [mysql(0, 0), mysql(1, 1001), down(2)]),
            ]
        ),
    }
    plain = doc(workload="oltp_read_only", threads=6, repeat=1, tps=400)
    cl = cells([run_of("a.json", d), run_of("b.json", plain)])["oltp_read_only"]
    t = nodes_table(cl)
    assert t is not None and t.headers[:4] == ["Threads", "Run", "Node", "Role"]
    assert t.rows == [
        ["3", "r1", "node1", "galera", "2,000.00", "80.0% (even 50.0%)", "0", "50.0%", "-", "skew"],
        ["3", "r1", "node2", "galera", "500.00", "20.0% (even 50.0%)", "0", "-", "1/2", "skew"],
    ]
    assert nodes_table([c for c in cl if c.threads == 6]) is None  # no run sampled its nodes: no table
    md = markdown.render(document.build([run_of("a.json", d)], with_charts=False))
    assert "Server nodes: share of the work" in md and "| node2 | galera |" in md
    assert "the work is not spread evenly over the nodes: node1 80.0% (even 50.0%), node2 20.0%" in md
