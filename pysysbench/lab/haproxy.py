"""The TCP proxy in front of a look-alike (HAProxy, foreground, config in the lab's folder)."""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path

from .manifest import Node
from .procs import LabError, alive, start_detached, wait_for

GLOBAL = """global
    maxconn 2000
defaults
    mode tcp
    timeout connect 5s
    timeout client 1h
    timeout server 1h
    option tcpka
"""


def listen(name: str, port: int, servers: list[Node], balance: str, backups: tuple[str, ...] = ()) -> str:
    """One ``listen`` section: ``servers`` behind 127.0.0.1:``port``; those named in ``backups``
    only take connections while no other answers its health check."""
    lines = [f"listen {name}", f"    bind 127.0.0.1:{port}", f"    balance {balance}"]
    for n in servers:
        backup = " backup" if n.name in backups else ""
        lines.append(f"    server {n.name} 127.0.0.1:{n.port} check inter 1s fall 2 rise 1{backup}")
    return "\n".join(lines) + "\n"


def start(base: Path, sections: list[str], ports: list[int], record: Callable[[Node], None]) -> None:
    """Write the config, start haproxy (handed to ``record`` at once, so that a failure
    still stops it), wait until every frontend port listens."""
    base.mkdir(parents=True, exist_ok=True)
    cfg = base / "haproxy.cfg"
    cfg.write_text(GLOBAL + "".join(sections))
    log = base / "haproxy.log"
    proxy = Node("proxy", "proxy", ports[0], 0, "", str(log), {}, str(cfg))
    launch(proxy, ports, record)


def restart(proxy: Node, ports: list[int]) -> None:
    """Start a stopped proxy again on its config."""
    launch(proxy, ports, lambda node: None)


def launch(proxy: Node, ports: list[int], record: Callable[[Node], None]) -> None:
    log, cfg = proxy.log, proxy.mark
    pid = proxy.pid = start_detached(["haproxy", "-db", "-f", cfg], Path(log))
    record(proxy)

    def listening() -> bool:
        for p in ports:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", p)) != 0:
                    return False
        return True

    if not wait_for(listening, 10, gone=lambda: not alive(pid, str(cfg))):
        raise LabError(f"haproxy did not start on 127.0.0.1:{ports}: see {log}")
