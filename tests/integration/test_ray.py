"""Several client machines (``--ray-address``): a run spread over the nodes of a
real Ray cluster must report exactly what its actors measured.

The cluster is started here, on this machine, with ``ray.cluster_utils.Cluster``:
a head node on 127.0.0.2 and a second node on 127.0.0.3 (one CPU each, small
object stores; every address is on loopback), shut down at the end of the module.
The benchmark runs against the local MariaDB in its own database ``cluster``
(other tests drop ``sbtest%`` tables in ``sbtest`` at any time).

Checked: totals equal the sum over nodes, the reported percentile equals the one
of the merged histogram, the text output has the shape of a local run, actors are
placed by CPU count / resource label / --ray-workers-per-node, and a killed actor
or a lost node stops the run with an error naming the node and a partial result
file.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from conftest import REPO, parse_summary_text

from pysysbench.stats.histogram import percentile_ms

HEAD_IP, NODE_IP, EXTRA_IP = "127.0.0.2", "127.0.0.3", "127.0.0.4"
OBJECT_STORE_BYTES = 100_000_000
DB = ["--db-driver=mysql", "--mysql-host=127.0.0.1", "--mysql-user=sbtest", "--mysql-db=cluster"]
DATA = ["--tables=2", "--table-size=500"]
CLI_TIMEOUT_S = 180

pytestmark = pytest.mark.mysql


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def ray_cluster():
    """A two-node Ray cluster on loopback; every process it started is stopped at the end."""
    try:
        from ray.cluster_utils import Cluster
    except ImportError:
        pytest.fail("Ray is not installed: .venv/bin/pip install -e '.[ray]' (CI installs it)")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    common = {"num_cpus": 1, "object_store_memory": OBJECT_STORE_BYTES, "include_dashboard": False}
    cluster = Cluster(
        initialize_head=True, head_node_args={**common, "node_ip_address": HEAD_IP, "gcs_server_port": _free_port()}
    )
    try:
        cluster.add_node(**common, node_ip_address=NODE_IP, resources={"sb_client": 1})
        cluster.wait_for_nodes()
        yield cluster
    finally:
        cluster.shutdown()


@pytest.fixture(scope="module")
def data(run_cli):
    """The benchmark tables, once for the module, in the `cluster` database."""
    run_cli("oltp_read_write", *DB, *DATA, "cleanup")
    run_cli.ok("oltp_read_write", *DB, *DATA, "prepare")
    yield
    run_cli("oltp_read_write", *DB, *DATA, "cleanup")


def _doc(path: Path) -> dict:
    return json.loads(path.read_text())


def _hist(doc: dict) -> list[int]:
    counts = [0] * 1024
    for index, n in doc["summary"]["histogram"].items():
        counts[int(index)] = n
    return counts


def _shape(stdout: str) -> list[str]:
    """The report without numbers, padding and the (racy) interval lines."""
    lines = [re.sub(r"\d+(\.\d+)?", "N", line) for line in stdout.splitlines() if not line.startswith("[ ")]
    return [re.sub(r"\s+", " ", line) for line in lines]


def test_totals_equal_sum_over_nodes_and_output_matches_local(ray_cluster, data, run_cli, tmp_path):
    out = tmp_path / "ray.json"
    # enough events to last over a second on a quiet machine, so that "[ 1s ]" is printed
    opts = ["--threads=4", "--events=4000", "--time=0", "--percentile=99", "--report-interval=1"]
    proc = run_cli.ok(
        "oltp_read_write",
        *DB,
        *DATA,
        *opts,
        f"--ray-address={ray_cluster.address}",
        f"--result-file={out}",
        "run",
        timeout=CLI_TIMEOUT_S,
    )
    doc, text = _doc(out), parse_summary_text(proc.stdout)
    s = doc["summary"]
    assert s["events"] == text["events"] == 4000  # --events is exact across actors

    nodes = doc["client"]["nodes"]
    assert sorted(n["node"] for n in nodes) == [HEAD_IP, NODE_IP]  # one actor per CPU on each node
    assert sum(n["events"] for n in nodes) == s["events"]
    assert sum(n["queries"] for n in nodes) == s["queries"]["total"] == text["total"]
    assert sum(n["reads"] for n in nodes) == s["queries"]["read"] == text["read"]
    assert sum(n["errors"] for n in nodes) == s["errors"] == text["ignored_errors"]
    assert sum((Counter(n["errors_by_code"]) for n in nodes), Counter()) == Counter(s["errors_by_code"])
    assert all(n["events"] > 0 and n["cpu_s"] > 0 and 0 < n["busy_fraction"] <= 1.5 for n in nodes)
    assert sum(w["events"] for w in doc["client"]["per_worker"]) == s["events"]
    assert doc["client"]["workers"] == 2
    assert doc["connections"] == {"127.0.0.1:3306": 4}
    assert len(s["thread_events"]) == 4 and sum(s["thread_events"]) == s["events"]

    counts = _hist(doc)  # percentiles come from the merged histogram
    assert sum(counts) == s["events"]
    assert s["latency_ms"]["percentile_value"] == percentile_ms(counts, 99)
    assert s["latency_ms"]["p95"] == percentile_ms(counts, 95)
    printed = re.search(r"99th percentile:\s+([\d.]+)", proc.stdout).group(1)
    assert printed == f"{percentile_ms(counts, 99):.2f}"

    local = run_cli.ok("oltp_read_write", *DB, *DATA, *opts, "--workers=1", "run", timeout=CLI_TIMEOUT_S)
    assert _shape(proc.stdout) == _shape(local.stdout)
    assert re.search(
        r"^\[ 1s \] thds: 4 tps: [\d.]+ qps: [\d.]+ \(r/w/o: [\d./]+\) lat \(ms,99%\): [\d.]+ "
        r"err/s: [\d.]+ reconn/s: [\d.]+$",
        proc.stdout,
        re.M,
    ), proc.stdout


def test_events_below_the_actor_count_are_exact(ray_cluster, data, run_cli, tmp_path):
    """--events=1 over two actors (on two machines they cannot share one counter): one
    actor's share is 0 -- no event, where it used to run unlimited, to --time."""
    out = tmp_path / "one.json"
    run_cli.ok(
        "oltp_point_select",
        *DB,
        *DATA,
        "--threads=2",
        "--events=1",
        "--time=30",
        f"--ray-address={ray_cluster.address}",
        f"--result-file={out}",
        "run",
        timeout=CLI_TIMEOUT_S,
    )
    doc = _doc(out)
    assert doc["summary"]["events"] == 1 and len(doc["client"]["nodes"]) == 2, doc["client"]["nodes"]
    assert sorted(n["events"] for n in doc["client"]["nodes"]) == [0, 1]


def test_resource_label_and_workers_per_node_place_the_actors(ray_cluster, data, run_cli, tmp_path):
    out = tmp_path / "label.json"
    run_cli.ok(
        "oltp_point_select",
        *DB,
        *DATA,
        "--threads=3",
        "--events=300",
        "--time=0",
        f"--ray-address={ray_cluster.address}",
        "--ray-resource=sb_client",
        "--ray-workers-per-node=2",
        f"--result-file={out}",
        "run",
        timeout=CLI_TIMEOUT_S,
    )
    doc = _doc(out)
    workers = doc["client"]["per_worker"]
    assert [w["node"] for w in workers] == [NODE_IP, NODE_IP]  # only the labelled node, 2 actors
    assert [w["threads"] for w in workers] == [2, 1]
    assert [(n["node"], n["actors"], n["threads"], n["events"]) for n in doc["client"]["nodes"]] == [
        (NODE_IP, 2, 3, 300)
    ]


def _raylet_pids(cluster) -> list[int]:
    from ray._private import ray_constants

    return [
        info.process.pid
        for node in cluster.list_all_nodes()
        for info in node.all_processes.get(ray_constants.PROCESS_TYPE_RAYLET, [])
    ]


def _actor_pids(cluster) -> list[int]:
    """Processes of our cluster running a pysysbench worker actor."""
    pids = []
    for raylet in _raylet_pids(cluster):
        out = subprocess.run(["pgrep", "-P", str(raylet), "-f", "^ray::RayWorker"], capture_output=True, text=True)
        pids.extend(int(p) for p in out.stdout.split())
    return pids


def _start_long_run(cluster, out: Path, *extra: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pysysbench",
            "oltp_point_select",
            *DB,
            *DATA,
            "--threads=4",
            "--time=120",
            "--report-interval=1",
            f"--ray-address={cluster.address}",
            *extra,
            f"--result-file={out}",
            "run",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=REPO,
    )


def _wait_for_line(proc: subprocess.Popen, prefix: str, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    seen = []
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        seen.append(line)
        if line.startswith(prefix):
            return
    raise AssertionError(f"no line starting with {prefix!r}:\n{''.join(seen)}")


def _finish(proc: subprocess.Popen) -> tuple[str, str]:
    try:
        return proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def _check_partial(doc: dict, stdout: str, stderr: str, node_ip: str, phrase: str) -> None:
    fatal = [line for line in stdout.splitlines() if line.startswith("FATAL:")]
    assert len(fatal) == 1 and f"Ray node {node_ip}" in fatal[0] and phrase in fatal[0], stdout
    assert "Traceback" not in stdout + stderr
    assert not [line for line in stdout.splitlines() if "(raylet)" in line]  # Ray's chatter stays off stdout
    assert doc["exit_code"] == 1 and doc["error"] == fatal[0][len("FATAL: ") :]
    assert doc["summary"]["events"] > 0  # what was measured is kept
    assert parse_summary_text(stdout)["events"] == doc["summary"]["events"]  # ... and printed on stdout
    lost = [n for n in doc["client"]["nodes"] if n["died"]]
    assert [n["node"] for n in lost] == [node_ip]
    assert sum(n["events"] for n in doc["client"]["nodes"]) == doc["summary"]["events"]


OUTSIDE_DRIVER = """
from pysysbench.drivers.base import Dialect, Driver, DriverCaps, register
from pysysbench.drivers.dryrun import DryRunConnection


@register
class OutsideDry(Driver):
    name = "outside_dry"
    description = "a user's driver (every call succeeds)"
    caps = DriverCaps(server_prepare=False)
    dialect = Dialect(id_auto_inc="INTEGER NOT NULL")

    def target(self):
        return "nowhere"

    async def connect(self, counters=None, index=0):
        return DryRunConnection(counters, self.dialect)

    async def _version(self, conn):
        return "outside 1"
"""


def test_a_driver_registered_outside_the_package_runs_on_the_actors(ray_cluster, tmp_path):
    """The actors import the user's module that registered the driver (engine/outside.py),
    from its file: it is not on the actors' import path."""
    (tmp_path / "user_dry.py").write_text(OUTSIDE_DRIVER)
    code = "import sys, user_dry; from pysysbench.cli.main import main; sys.exit(main(sys.argv[1:]))"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(REPO)]))
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            "oltp_point_select",
            "--db-driver=outside_dry",
            *DATA,
            "--threads=2",
            "--events=200",
            "--time=0",
            f"--ray-address={ray_cluster.address}",
            "run",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=CLI_TIMEOUT_S,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert parse_summary_text(proc.stdout)["transactions"] == 200, proc.stdout  # the dry run counts no statement


def test_killed_actor_stops_the_run_naming_the_node(ray_cluster, data, tmp_path):
    out = tmp_path / "killed.json"
    proc = _start_long_run(ray_cluster, out)
    try:
        _wait_for_line(proc, "[ 2s ]", timeout_s=120)
        pids = _actor_pids(ray_cluster)
        assert len(pids) == 2, pids
        victim = pids[-1]
        node_ip = next(w["node"] for w in _actor_nodes(victim, ray_cluster))
        os.kill(victim, signal.SIGKILL)
    finally:
        stdout, stderr = _finish(proc)
    assert proc.returncode == 1, stdout + stderr
    _check_partial(_doc(out), stdout, stderr, node_ip, "died unexpectedly")


def _actor_nodes(pid: int, cluster) -> list[dict]:
    """Which node an actor process belongs to: the node of its parent raylet."""
    from ray._private import ray_constants

    ppid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    for node in cluster.list_all_nodes():
        for info in node.all_processes.get(ray_constants.PROCESS_TYPE_RAYLET, []):
            if info.process.pid == ppid:
                return [{"node": node.node_ip_address}]
    raise AssertionError(f"actor pid {pid} has no raylet of ours as parent")


def test_lost_node_stops_the_run_naming_the_node(ray_cluster, data, tmp_path):
    extra = ray_cluster.add_node(
        num_cpus=1,
        object_store_memory=OBJECT_STORE_BYTES,
        include_dashboard=False,
        node_ip_address=EXTRA_IP,
        resources={"sb_doomed": 1},
    )
    ray_cluster.wait_for_nodes()
    out = tmp_path / "lost.json"
    proc = _start_long_run(ray_cluster, out)  # 3 nodes, one actor each
    try:
        _wait_for_line(proc, "[ 2s ]", timeout_s=120)
        ray_cluster.remove_node(extra, allow_graceful=False)
    finally:
        stdout, stderr = _finish(proc)
    assert proc.returncode == 1, stdout + stderr
    doc = _doc(out)
    assert len(doc["client"]["nodes"]) == 3
    _check_partial(doc, stdout, stderr, EXTRA_IP, "")


def test_unreachable_cluster_fails_fast_with_one_line(run_cli):
    """ray.init would retry for minutes; the head's address is probed first."""
    port = _free_port()
    started = time.monotonic()
    proc = run_cli("oltp_point_select", *DB, *DATA, f"--ray-address=127.0.0.1:{port}", "run", timeout=60)
    assert proc.returncode == 1
    assert time.monotonic() - started < 30
    fatal = [line for line in proc.stdout.splitlines() if line.startswith("FATAL:")]
    assert fatal == [
        f"FATAL: cannot connect to the Ray cluster at '127.0.0.1:{port}': Connection refused; is its "
        "head node running (ray start --head --port=PORT)? check --ray-address"
    ], proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr
