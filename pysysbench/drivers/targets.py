"""Where a cluster's database nodes are: ``lab:DIR`` or ``HOST:PORT,HOST:PORT,...``.

Two options name the nodes behind a front (a proxy, a compute node): ``--server-nodes`` (the
per-node view samples them, ``engine/nodes.py``) and ``--load-nodes`` (prepare loads each
node's rows into it directly, ``load/prepare.py``).  ``lab:DIR`` reads the manifest that
``pysysbench lab up`` wrote (``DIR/lab.json``, a file format of ``lab/manifest.py``, read
here as data since the drivers sit below the lab layer); a list names the nodes itself.
:func:`aimed` is the run's driver with every connection sent to one node.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..core.errors import ConfigError
from ..core.record import record

if TYPE_CHECKING:
    from .base import Driver

LAB_PREFIX = "lab:"
LAB_FORMAT = "pysysbench-lab/"  # lab/manifest.py's FORMAT, any version
DATA_ROLES = ("data", "shard")  # a lab's nodes that hold the rows (spider's data nodes, pgshard's shards)
# where a driver family's PARTITION BY HASH (id) puts a row (load/placement.py): the placement
# --load-nodes loads by and --shard-nodes counts by
PLACEMENT = {"mysql": "mod", "postgresql": "pg-hash"}


@record(frozen=True)
class NodeTarget:
    """One node: its name and role (the manifest's, or ``host:port`` / ``node``)."""

    name: str
    role: str
    host: str
    port: int
    pid: int = 0
    mark: str = ""  # a text of the node's command line that proves the pid is still it
    lab: str = ""  # the lab's folder: a node started again (a fault) is found there under its new pid

    @property
    def where(self) -> str:
        return f"{self.host}:{self.port}"


def targets(text: str, option: str = "--server-nodes", roles: Sequence[str] = ()) -> tuple[NodeTarget, ...]:
    """``option``'s value as nodes (ConfigError, one line, when bad); of a lab, its SQL nodes
    (all but the proxy), or only those of ``roles`` when given."""
    text = (text or "").strip()
    if not text:
        return ()
    if text.startswith(LAB_PREFIX):
        return lab_targets(text[len(LAB_PREFIX) :], option, roles)
    out = []
    for item in (i.strip() for i in text.split(",")):
        host, _, port = item.rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ConfigError(f"Invalid value in {option}: '{item}' (expected lab:DIR or a list of HOST:PORT)")
        out.append(NodeTarget(item, "node", host.strip("[]"), int(port)))
    return tuple(out)


def lab_targets(directory: str, option: str = "--server-nodes", roles: Sequence[str] = ()) -> tuple[NodeTarget, ...]:
    """The SQL nodes of the lab in ``directory`` (all its nodes but the proxy, or those of ``roles``)."""
    path = os.path.join(directory, "lab.json")
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
        if not str(data.get("format", "")).startswith(LAB_FORMAT):
            raise ValueError("not a pysysbench lab manifest")
        nodes = [
            NodeTarget(
                str(n["name"]),
                str(n["role"]),
                "127.0.0.1",
                int(n["port"]),
                int(n.get("pid") or 0),
                str(n.get("mark") or ""),
                directory,
            )
            for n in data["nodes"]
            if n.get("role") != "proxy" and (not roles or n.get("role") in roles)
        ]
    except FileNotFoundError:
        raise ConfigError(
            f"{option}: no lab in '{directory}' (no lab.json): start one with 'pysysbench lab up NAME'"
        ) from None
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ConfigError(f"{option}: cannot read the lab manifest '{path}' ({exc})") from None
    if not nodes:
        which = f"no {' or '.join(roles)} node" if roles else "no SQL node"
        raise ConfigError(f"{option}: the lab manifest '{path}' ({data.get('lab', '?')}) names {which}")
    return tuple(nodes)


def aimed(driver: Driver, t: NodeTarget) -> Driver:
    """A copy of the run's driver whose every connection goes to node ``t``."""
    mine = copy.copy(driver)
    mine.endpoints = [{"host": t.host, "port": t.port}]  # type: ignore[attr-defined]
    return mine
