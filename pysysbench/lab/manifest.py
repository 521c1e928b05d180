"""The manifest: what a running look-alike is made of, as JSON in its folder.

``lab up`` writes it as each process starts (so a failure half-way still knows what to
stop), ``lab status`` and ``lab down`` read it, and so may the server context or a fault
step later: nodes (name, role, port, pid, data dir, log), the ports to connect to and the
options to paste.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from ..core.files import write_atomic
from .procs import LabError

FILE = "lab.json"
FORMAT = "pysysbench-lab/1"


@dataclasses.dataclass
class Node:
    name: str  # node1, proxy, compute1, data1, ...
    role: str  # galera, proxy, compute, data
    port: int  # the SQL (or proxy) port on 127.0.0.1
    pid: int = 0
    data_dir: str = ""  # empty for the proxy
    log: str = ""
    extra_ports: dict[str, int] = dataclasses.field(default_factory=dict)  # galera's group, IST and SST ports
    mark: str = ""  # a text of the process's command line that proves a pid is still this node


@dataclasses.dataclass
class Manifest:
    lab: str  # galera, spider
    dir: str
    nodes: list[Node]
    ports: dict[str, int] = dataclasses.field(default_factory=dict)  # write, read / sql (proxy frontends)
    tables: list[int] = dataclasses.field(default_factory=list)  # [tables, rows each] the lab loaded
    options: list[str] = dataclasses.field(default_factory=list)  # to paste after pysysbench
    started_s: float = 0.0
    up_s: float = 0.0
    state: str = "starting"  # starting, up

    def node(self, name: str) -> Node:
        return next(n for n in self.nodes if n.name == name)

    def by_role(self, role: str) -> list[Node]:
        return [n for n in self.nodes if n.role == role]


def path(directory: str) -> Path:
    return Path(directory) / FILE


def write(m: Manifest) -> None:
    data = {"format": FORMAT, **dataclasses.asdict(m)}
    write_atomic(str(path(m.dir)), json.dumps(data, indent=2) + "\n", what="lab manifest")


def read(directory: str) -> Manifest:
    p = path(directory)
    try:
        data = json.loads(p.read_text())
    except FileNotFoundError:
        raise LabError(f"no lab in '{directory}' (no {FILE}): start one with 'pysysbench lab up NAME'") from None
    except (OSError, ValueError) as exc:
        raise LabError(f"cannot read the lab manifest '{p}': {exc}") from None
    if not isinstance(data, dict) or data.pop("format", None) != FORMAT:
        raise LabError(f"'{p}' is not a pysysbench lab manifest")
    try:
        data["nodes"] = [Node(**n) for n in data["nodes"]]
        return Manifest(**data)
    except (KeyError, TypeError) as exc:
        raise LabError(f"the lab manifest '{p}' is damaged ({exc})") from None
