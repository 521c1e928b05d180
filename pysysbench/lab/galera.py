"""``galera``: HAProxy -> 3-node MariaDB Galera (TencentDB for MariaDB / MySQL look-alike).

The proxy has two frontends: the *write* port sends every connection to node1 (node2 and
node3 are backups that take over when node1 fails its health check), the *read* port
balances connections over the three nodes.  The first node bootstraps the group; the others
join it one after the other (a full state transfer by rsync each, a donor serves one at a time).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from . import haproxy, mariadb
from .manifest import Manifest, Node
from .procs import LabError, alive, free_ports, start_detached, wait_for

NEEDS = ("mariadbd", "mariadb", "galera", "rsync", "haproxy")
PROVIDER = "/usr/lib/galera/libgalera_smm.so"
CLUSTER = "pysysbench-lab"
SYNC_TIMEOUT_S = 45.0


def plan(base: Path, count: int) -> list[Node]:
    """The nodes with their ports: SQL, group communication, IST and SST."""
    ports = free_ports(4 * count)
    nodes = []
    for i in range(count):
        sql, group, ist, sst = ports[4 * i : 4 * i + 4]
        d = base / f"node{i + 1}"
        nodes.append(
            Node(
                f"node{i + 1}",
                "galera",
                sql,
                data_dir=str(d / "data"),
                log=str(d / "error.log"),
                extra_ports={"group": group, "ist": ist, "sst": sst},
                mark=str(d / "data"),
            )
        )
    return nodes


def node_args(node: Node, peers: list[Node], bootstrap: bool) -> list[str]:
    p = node.extra_ports
    address = ",".join(f"127.0.0.1:{n.extra_ports['group']}" for n in peers)
    provider_options = (
        f"base_port={p['group']};gmcast.listen_addr=tcp://127.0.0.1:{p['group']};"
        f"ist.recv_addr=127.0.0.1:{p['ist']};gcache.size=32M"
    )
    wsrep = (
        "--wsrep-on=ON",
        f"--wsrep-provider={PROVIDER}",
        f"--wsrep-cluster-name={CLUSTER}",
        f"--wsrep-cluster-address=gcomm://{address}",
        f"--wsrep-node-name={node.name}",
        "--wsrep-node-address=127.0.0.1",
        f"--wsrep-provider-options={provider_options}",
        f"--wsrep-sst-receive-address=127.0.0.1:{p['sst']}",
        "--wsrep-sst-method=rsync",
        "--binlog-format=ROW",
        "--innodb-autoinc-lock-mode=2",
        "--default-storage-engine=InnoDB",
        *(["--wsrep-new-cluster"] if bootstrap else []),
    )
    return mariadb.server_args(Path(node.data_dir).parent, node.port, extra=wsrep)


def synced(node: Node) -> bool:
    return mariadb.status(node.port, "wsrep_local_state_comment") == "Synced"


def start_node(m: Manifest, node: Node, bootstrap: bool, save: Callable[[], None]) -> None:
    base = Path(node.data_dir).parent
    base.mkdir(parents=True, exist_ok=True)
    if bootstrap:
        mariadb.install_db(Path(node.data_dir))
    else:
        Path(node.data_dir).mkdir(exist_ok=True)  # filled by the state transfer
    mariadb.own(base)
    node.pid = start_detached(node_args(node, m.by_role("galera"), bootstrap), base / "stdout.log")
    save()
    if not wait_for(lambda: synced(node), SYNC_TIMEOUT_S, gone=lambda: not alive(node.pid, node.mark)):
        what = "start the group" if bootstrap else "join the group"
        when = "exited" if not alive(node.pid, node.mark) else f"not synced within {SYNC_TIMEOUT_S:.0f} s"
        raise LabError(f"galera {node.name} (port {node.port}) did not {what} ({when}): see {node.log}")


def restart(m: Manifest, node: Node, save: Callable[[], None], say: Callable[[str], None]) -> None:
    """Start a stopped member again: it joins the group (IST from gcache, else a full SST)."""
    del say
    start_node(m, node, False, save)


def up(
    m: Manifest, count: int, save: Callable[[], None], say: Callable[[str], None], tables: int, table_size: int
) -> None:
    del tables, table_size  # galera's tables are made by pysysbench prepare through the proxy
    base = Path(m.dir)
    m.nodes.extend(plan(base, count))
    save()
    for i, node in enumerate(m.by_role("galera")):
        say(f"{node.name}: {'bootstrapping the group' if i == 0 else 'joining'} on port {node.port} ...")
        start_node(m, node, i == 0, save)
        if i == 0:
            mariadb.sql(node.port, "CREATE DATABASE IF NOT EXISTS sbtest")
    size = mariadb.status(m.nodes[0].port, "wsrep_cluster_size")
    if size != str(count):
        raise LabError(f"galera: the group has {size or 'no'} members, not {count}: see {m.nodes[0].log}")
    write, read = free_ports(2)
    galera = m.by_role("galera")
    backups = tuple(n.name for n in galera[1:])
    sections = [
        haproxy.listen("write", write, galera, "first", backups),
        haproxy.listen("read", read, galera, "roundrobin"),
    ]
    say(f"haproxy: writes on port {write} (node1, the others as backups), reads on port {read} (all nodes) ...")
    m.ports = {"write": write, "read": read}

    def record(proxy: Node) -> None:
        m.nodes.append(proxy)
        save()

    haproxy.start(base / "proxy", sections, [write, read], record)
