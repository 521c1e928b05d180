"""What ``spider`` and ``pgshard`` share: SQL nodes that hold no data, behind one proxy
port, over sharded storage, with the sbtest tables made and loaded by the lab itself.

Each look-alike hands :func:`up` its own steps (a :class:`Steps`): plan the nodes, start
them, create the tables, load the rows; the order, the progress lines and the proxy are here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

from . import haproxy
from .manifest import Manifest, Node
from .procs import free_ports

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
