"""One mariadbd of a look-alike: its data dir, its command line, SQL through the client.

Shared with the private servers of the integration tests (tests/integration/private_servers.py):
a throw-away server on 127.0.0.1 with a small buffer pool and no performance schema.
"""

from __future__ import annotations

import getpass
import os
import pwd
import shutil
import stat
import subprocess
from pathlib import Path

from .procs import LabError

SMALL = ("--innodb-buffer-pool-size=32M", "--performance-schema=off", "--innodb-log-file-size=16M")


def server_user() -> str:
    """The OS user mariadbd runs as: the current one, or ``mysql`` for root (the rsync daemon
    of a Galera state transfer, started as root, would write as ``nobody`` and fail)."""
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("mysql")
            return "mysql"
        except KeyError:
            pass
    return getpass.getuser()


def own(base: Path) -> None:
    """Hand a node's folder to the server's user (a no-op unless root runs it as ``mysql``)."""
    user = server_user()
    if user != getpass.getuser():
        for p in (base, *base.rglob("*")):
            shutil.chown(p, user, user)


def unreachable(base: Path, user: str = "") -> Path | None:
    """The first folder above ``base`` ``user`` (default :func:`server_user`) cannot pass through (None: all can)."""
    user = user or server_user()
    if user == getpass.getuser():
        return None
    uid = pwd.getpwnam(user).pw_uid
    for folder in reversed(base.parents):
        st = folder.stat()
        if not (st.st_mode & stat.S_IXOTH or (st.st_uid == uid and st.st_mode & stat.S_IXUSR)):
            return folder
    return None


def install_db(data_dir: Path, user: str = "") -> None:
    """A fresh data dir (system tables, root without a password, no test db), owned by
    ``user`` (default :func:`server_user`)."""
    done = subprocess.run(
        [
            "mariadb-install-db",
            "--no-defaults",
            f"--datadir={data_dir}",
            f"--user={user or server_user()}",
            "--auth-root-authentication-method=normal",
            "--skip-test-db",
        ],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        last = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise LabError(f"mariadb-install-db for '{data_dir}' failed: {last[0]}")


def server_args(
    base: Path,
    port: int,
    grants: bool = False,
    memory: tuple[str, ...] = SMALL,
    extra: tuple[str, ...] = (),
    user: str = "",
) -> list[str]:
    """mariadbd's command line for a server whose files are all under ``base`` (data in
    ``base/data``), as ``user`` (default :func:`server_user`)."""
    return [
        "mariadbd",
        "--no-defaults",
        f"--datadir={base / 'data'}",
        f"--port={port}",
        "--bind-address=127.0.0.1",
        f"--socket={base / 'sock'}",
        f"--pid-file={base / 'pid'}",
        f"--user={user or server_user()}",
        *([] if grants else ["--skip-grant-tables"]),
        *memory,
        "--max-connections=200",
        f"--log-error={base / 'error.log'}",
        *extra,
    ]


def client(port: int, *args: str) -> list[str]:
    return ["mariadb", "--no-defaults", "-h127.0.0.1", f"-P{port}", "-uroot", "-N", "-B", *args]


def sql(port: int, statement: str, timeout_s: float = 30.0) -> str:
    """Run ``statement`` as root over TCP; its tab-separated output."""
    try:
        done = subprocess.run(client(port, "-e", statement), capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise LabError(f"no answer from 127.0.0.1:{port} within {timeout_s:.0f} s") from None
    if done.returncode != 0:
        last = done.stderr.strip().splitlines()[-1:] or ["the client failed"]  # the error, not the echoed SQL
        raise LabError(f"127.0.0.1:{port}: {last[0]}")
    return done.stdout


def answers(port: int) -> bool:
    done = subprocess.run(client(port, "-e", "SELECT 1"), capture_output=True)
    return done.returncode == 0


def status(port: int, name: str) -> str:
    """A status variable's value ('' when the server does not answer)."""
    try:
        out = sql(port, f"SHOW GLOBAL STATUS LIKE '{name}'", timeout_s=5)
    except LabError:
        return ""
    parts = out.split()
    return parts[1] if len(parts) > 1 else ""
