"""Ports, packages and detached processes of a look-alike."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from ..core.errors import PySysbenchError
from ..engine.servercontext import process_alive


class LabError(PySysbenchError):
    """A look-alike could not be started, read or stopped (one line for the user)."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def free_ports(count: int) -> list[int]:
    """``count`` distinct free ports (held open together so none is handed out twice)."""
    socks = []
    try:
        for _ in range(count):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [int(s.getsockname()[1]) for s in socks]
    finally:
        for s in socks:
            s.close()


def port_taken(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


# what each look-alike needs: (file or program that must exist, Debian package)
NEEDS = {
    "mariadbd": ("/usr/sbin/mariadbd", "mariadb-server"),
    "mariadb": ("mariadb", "mariadb-client"),
    "haproxy": ("/usr/sbin/haproxy", "haproxy"),
    "galera": ("/usr/lib/galera/libgalera_smm.so", "galera-4"),
    "rsync": ("rsync", "rsync"),
    "spider": ("/usr/lib/mysql/plugin/ha_spider.so", "mariadb-plugin-spider"),
    "postgres": ("/usr/lib/postgresql/15/lib/postgres_fdw.so", "postgresql-15"),  # postgres_fdw with it
    "psql": ("psql", "postgresql-client-15"),
}


def _present(thing: str) -> bool:
    return os.path.exists(thing) if thing.startswith("/") else shutil.which(thing) is not None


def missing_packages(needs: tuple[str, ...]) -> list[str]:
    return [NEEDS[n][1] for n in needs if not _present(NEEDS[n][0])]


def ensure_packages(name: str, needs: tuple[str, ...], install: bool, say: Callable[[str], None]) -> None:
    """Install what ``needs`` lacks when asked to (as root), else one line naming the command."""
    missing = missing_packages(needs)
    if not missing:
        return
    command = "apt-get install -y " + " ".join(missing)
    if not install:
        raise LabError(f"lab {name} needs packages that are not installed: run '{command}' (or add --install as root)")
    if os.geteuid() != 0:
        raise LabError(f"lab {name}: --install needs root; run 'sudo {command}'")
    say(f"installing {' '.join(missing)} ...")
    done = subprocess.run(["env", "DEBIAN_FRONTEND=noninteractive", *command.split()], capture_output=True, text=True)
    if done.returncode != 0 or missing_packages(needs):
        last = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise LabError(f"lab {name}: '{command}' failed: {last[0]}")


def start_detached(argv: list[str], log: Path, user: str = "") -> int:
    """Start ``argv`` in a session of its own (it outlives this process), as ``user`` if given
    (root only); its output to ``log``."""
    other = user or None
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            user=other,
            group=other,
        )
    return proc.pid


def _reap(pid: int) -> None:
    """Collect ``pid`` if it is our child (a lab started in this process), else nothing."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def alive(pid: int, mark: str = "") -> bool:
    """``pid`` runs (not a zombie: a child of ours is reaped first) and, given ``mark``, its
    command line holds it (a recycled pid of another program is not ours)."""
    _reap(pid)
    return process_alive(pid, mark)


def stop(pids: list[tuple[int, str]], timeout_s: float = 30.0, sig: int = signal.SIGTERM) -> None:
    """``sig`` to each (pid, mark) still ours, wait for all, SIGKILL what is left."""
    ours = [(p, m) for p, m in pids if p and alive(p, m)]
    for pid, _ in ours:
        os.kill(pid, sig)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and any(alive(p, m) for p, m in ours):
        time.sleep(0.1)
    for pid, mark in ours:
        if alive(pid, mark):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(alive(p, m) for p, m in ours):
        time.sleep(0.05)


def wait_for(check: Callable[[], bool], timeout_s: float, gone: Callable[[], bool] = lambda: False) -> bool:
    """Poll ``check`` until true (True) or the time is out or ``gone`` says the process died (False)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return True
        if gone():
            return False
        time.sleep(0.2)
    return False
