"""What ``spider`` and ``pgshard`` share: SQL nodes that hold no data, behind one proxy
port, over sharded storage, with the sbtest tables made and loaded by the lab itself.

Each look-alike hands :func:`up` its own steps (a :class:`Steps`): plan the nodes, start
them, create the tables, load the rows; the order, the progress lines and the proxy are here.
"""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Callable
from pathlib import Path

from ..command.execute import execute
from ..command.library import parse_request
from ..output.printer import Printer
from . import haproxy
from .manifest import Manifest, Node
from .procs import LabError, free_ports

Say = Callable[[str], None]


@dataclasses.dataclass(frozen=True)
class Steps:
    plan: Callable[[Path, int], list[Node]]
    start_all: Callable[[Manifest, Callable[[], None], Say], None]
    create_tables: Callable[[Manifest, int], None]
    load: Callable[[Manifest, int, int], None]
    front: str  # the role of the nodes the proxy balances over (compute, coordinator)
    tables_line: str  # progress while creating: {tables}, {count}
    load_line: str  # progress while loading: {tables}, {table_size}


def plan(base: Path, groups: list[tuple[str, str, int]], log: str) -> list[Node]:
    """The nodes of ``groups`` ((name prefix, role, count), front first), on free ports, each
    in ``base/NAME`` with its data dir and its server's log file ``log``."""
    names = [(f"{prefix}{i + 1}", role) for prefix, role, count in groups for i in range(count)]
    ports = free_ports(len(names))
    return [
        Node(name, role, port, data_dir=str(base / name / "data"), log=str(base / name / log))
        for (name, role), port in zip(names, ports)
    ]


def up(m: Manifest, count: int, save: Callable[[], None], say: Say, tables: int, table_size: int, steps: Steps) -> None:
    base = Path(m.dir)
    m.nodes.extend(steps.plan(base, count))
    save()
    steps.start_all(m, save, say)
    say(steps.tables_line.format(tables=tables, count=count))
    steps.create_tables(m, tables)
    if table_size:
        say(steps.load_line.format(tables=tables, table_size=table_size))
        steps.load(m, tables, table_size)
    (port,) = free_ports(1)
    m.ports = {"sql": port}
    m.tables = [tables, table_size]
    front = m.by_role(steps.front)
    say(f"haproxy: port {port}, connections balanced over {', '.join(n.name for n in front)} ...")

    def record(proxy: Node) -> None:
        m.nodes.append(proxy)
        save()

    haproxy.start(base / "proxy", [haproxy.listen("sql", port, front, "roundrobin")], [port], record)


def runner(steps: Steps) -> Callable[[Manifest, int, Callable[[], None], Say, int, int], None]:
    """A look-alike's ``up`` (as ``api.up`` calls it): :func:`up` with ``steps``."""
    return lambda m, count, save, say, tables, table_size: up(m, count, save, say, tables, table_size, steps)


def load_per_node(m: Manifest, connection: list[str], nodes: int, tables: int, table_size: int) -> None:
    """pysysbench's own prepare through the front node ``connection`` names, each data node's
    (shard's) rows straight into it, all at once (``--load-nodes=lab:DIR``, load/prepare.py):
    the front's tables, defined by the lab over the nodes beforehand, are kept."""
    options = [
        *connection,
        f"--tables={tables}",
        f"--table-size={table_size}",
        f"--threads={nodes}",
        "--auto-inc=off",
        f"--load-nodes=lab:{m.dir}",
    ]
    text = io.StringIO()
    if execute(parse_request("oltp_read_write", "prepare", options), Printer(text), options) != 0:
        last = text.getvalue().strip().splitlines()[-1:] or ["no output"]
        raise LabError(f"{m.lab}: loading the sbtest tables failed: {last[0]}")
