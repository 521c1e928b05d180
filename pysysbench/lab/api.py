"""``lab up`` / ``status`` / ``down``: the look-alikes behind one folder and its manifest."""

from __future__ import annotations

import getpass
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from . import galera, haproxy, manifest, mariadb, pgshard, postgres, spider
from .manifest import Manifest
from .procs import LabError, alive, ensure_packages, port_taken, stop

LABS = {"galera": galera, "spider": spider, "pgshard": pgshard}
DEFAULT_NODES = {"galera": 3, "spider": 3, "pgshard": 3}  # galera: group members; spider: data nodes; pgshard: shards
POSTGRES_ROLES = ("coordinator", "shard")  # pgshard's servers: PostgreSQL, not MariaDB
FAILED = "failed.txt"  # in a folder whose 'up' failed: why (the logs are beside it)
Say = Callable[[str], None]


def default_dir() -> str:
    """Where a lab lives when no --dir is given: one folder under the temporary directory."""
    return os.path.join(tempfile.gettempdir(), "pysysbench-lab")


def _claim(directory: str, user: str = "") -> Path:
    """The lab's folder, created; refused when a lab (or anything else) is already in it, or
    when ``user`` (the servers' OS user, default mariadbd's) cannot enter it."""
    user = user or mariadb.server_user()
    base = Path(directory).resolve()
    if (base / FAILED).exists():  # the logs of a failed 'up' in it: replaced by this one
        shutil.rmtree(base, ignore_errors=True)
    if manifest.path(str(base)).exists():
        raise LabError(f"a lab is already in '{base}': 'pysysbench lab down --dir {base}' first, or another --dir")
    if base.exists() and any(base.iterdir()):
        raise LabError(f"'{base}' is not empty: give an empty or new folder with --dir")
    blocked = mariadb.unreachable(base, user)
    if blocked is not None:
        raise LabError(
            f"the servers run as user {user}, who cannot enter '{blocked}': give a --dir it can reach (e.g. under /tmp)"
        )
    try:
        base.mkdir(parents=True, exist_ok=True)
        if user != getpass.getuser():
            base.chmod(0o755)  # the servers' user passes through it whatever the umask
    except OSError as exc:
        raise LabError(f"cannot create the lab folder '{base}': {exc.strerror}") from None
    return base


def up(
    name: str, directory: str, nodes: int | None, install: bool, say: Say, tables: int = 1, table_size: int = 10000
) -> Manifest:
    """Start look-alike ``name`` in ``directory``; on any failure stop what was started,
    remove its data and raise one LabError.  ``tables`` x ``table_size``: the sbtest tables
    a look-alike whose tables pysysbench's prepare cannot make (spider) creates and loads."""
    if name not in LABS:
        raise LabError(f"unknown lab '{name}': choose one of {', '.join(LABS)}")
    lab = LABS[name]
    count = DEFAULT_NODES[name] if nodes is None else nodes
    if tables < 1 or table_size < 0:
        raise LabError("lab: --tables must be at least 1 and --table-size at least 0")
    if count < 1 or (name == "galera" and count < 3):
        raise LabError(f"lab {name}: --nodes must be at least {3 if name == 'galera' else 1}")
    ensure_packages(name, lab.NEEDS, install, say)
    base = _claim(directory, postgres.server_user() if name == "pgshard" else mariadb.server_user())
    m = Manifest(name, str(base), [], started_s=time.time())
    manifest.write(m)
    t0 = time.monotonic()
    try:
        lab.up(m, count, lambda: manifest.write(m), say, tables, table_size)
    except BaseException as exc:
        _teardown(m, keep=True)
        _keep_logs_only(m, exc)
        raise
    m.up_s = round(time.monotonic() - t0, 1)
    m.state = "up"
    m.options = options(m)
    manifest.write(m)
    return m


def _keep_logs_only(m: Manifest, exc: BaseException) -> None:
    """After a failed start: the data and the manifest go, the logs stay for the user to read."""
    for n in m.nodes:
        if n.data_dir:
            shutil.rmtree(n.data_dir, ignore_errors=True)
    manifest.path(m.dir).unlink(missing_ok=True)
    (Path(m.dir) / FAILED).write_text(f"{exc}\n")


def options(m: Manifest) -> list[str]:
    port = m.ports.get("write") or m.ports["sql"]
    if m.lab == "pgshard":
        return [
            "--db-driver=pgsql",
            "--pgsql-host=127.0.0.1",
            f"--pgsql-port={port}",
            "--pgsql-user=sbtest",
            "--pgsql-db=sbtest",
            pgshard.IGNORE,
        ]
    return [
        "--db-driver=mysql",
        "--mysql-host=127.0.0.1",
        f"--mysql-port={port}",
        "--mysql-user=sbtest",
        "--mysql-db=sbtest",
    ]


def status(directory: str) -> tuple[Manifest, list[tuple[str, str]]]:
    """The manifest and, per node, what it looks like now ('up', 'synced', 'not running')."""
    m = manifest.read(directory)
    rows = []
    for n in m.nodes:
        if not n.pid or not alive(n.pid, n.mark):
            rows.append((n.name, "not running"))
        elif n.role == "proxy":
            rows.append((n.name, "up" if all(port_taken(p) for p in m.ports.values()) else "not listening"))
        elif n.role == "galera":
            size = mariadb.status(n.port, "wsrep_cluster_size")
            state = mariadb.status(n.port, "wsrep_local_state_comment")
            rows.append((n.name, f"{state or 'not answering'}, group of {size or '?'}"))
        elif n.role in POSTGRES_ROLES:
            rows.append((n.name, "up" if postgres.answers(n.port) else "not answering"))
        else:
            rows.append((n.name, "up" if mariadb.answers(n.port) else "not answering"))
    return m, rows


def node_of(m: Manifest, name: str) -> manifest.Node:
    if m.state != "up":
        raise LabError(f"the lab in '{m.dir}' is not up ({m.state})")
    try:
        return m.node(name)
    except StopIteration:
        raise LabError(f"lab {m.lab} has no node '{name}': {', '.join(n.name for n in m.nodes)}") from None


def kill(directory: str, name: str) -> Manifest:
    """Kill node ``name`` as a crash would (SIGKILL), and wait until it is gone."""
    m = manifest.read(directory)
    n = node_of(m, name)
    if not n.pid or not alive(n.pid, n.mark):
        raise LabError(f"{name} is not running: 'pysysbench lab start {name} --dir {m.dir}' starts it")
    stop([(n.pid, n.mark)], timeout_s=0, sig=signal.SIGKILL)
    n.pid = 0
    manifest.write(m)
    return m


def start(directory: str, name: str, say: Say) -> Manifest:
    """Start node ``name`` again, after a kill, with its lab's own start code; return when
    it answers (a galera member: when it has joined the group and is synced)."""
    m = manifest.read(directory)
    n = node_of(m, name)
    if n.pid and alive(n.pid, n.mark):
        raise LabError(f"{name} is running already (pid {n.pid})")
    if n.role == "proxy":
        haproxy.restart(n, list(m.ports.values()))
        manifest.write(m)
    else:
        LABS[m.lab].restart(m, n, lambda: manifest.write(m), say)
    return m


def down(directory: str, keep: bool) -> tuple[Manifest, int]:
    """Stop the lab in ``directory``: its manifest and how many of its processes were running."""
    m = manifest.read(directory)
    running = sum(1 for n in m.nodes if n.pid and alive(n.pid, n.mark))
    _teardown(m, keep)
    return m, running


def _teardown(m: Manifest, keep: bool) -> None:
    """Stop every process of the manifest (the proxy first), then remove the data unless ``keep``."""
    proxies = [(n.pid, n.mark) for n in m.nodes if n.role == "proxy"]
    stop(proxies)
    stop([(n.pid, n.mark) for n in m.nodes if n.role not in ("proxy", *POSTGRES_ROLES)])
    stop([(n.pid, n.mark) for n in m.nodes if n.role in POSTGRES_ROLES], sig=signal.SIGINT)  # a fast shutdown
    left = [n.name for n in m.nodes if n.pid and alive(n.pid, n.mark)]
    if left:
        raise LabError(f"could not stop {', '.join(left)}: see the manifest in {m.dir}")
    if keep:
        for n in m.nodes:
            n.pid = 0
        m.state = "down"
        manifest.write(m)
        return
    shutil.rmtree(m.dir, ignore_errors=True)
