"""One PostgreSQL server of a look-alike: its data dir, its command line, SQL through psql.

Shared with the private servers of the integration tests (tests/integration/private_servers.py):
a throw-away cluster on 127.0.0.1, trust authentication, the superuser ``postgres``.  PostgreSQL
refuses to run as root, so as root its programs run as the OS user ``postgres``.
"""

from __future__ import annotations

import getpass
import os
import subprocess
from pathlib import Path

from .procs import LabError

BIN = Path("/usr/lib/postgresql/15/bin")
SMALL = ("shared_buffers=16MB", "max_connections=100", "max_wal_size=64MB")


def server_user() -> str:
    """The OS user the servers run as: ``postgres`` for root, else the current one."""
    return "postgres" if os.geteuid() == 0 else getpass.getuser()


def other_user() -> str:
    """:func:`server_user` when it is not the current user, else '' (nobody to switch to)."""
    user = server_user()
    return user if user != getpass.getuser() else ""


def as_server_user(argv: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` as :func:`server_user` (output captured; no exception on failure)."""
    other = other_user() or None
    return subprocess.run(argv, capture_output=True, text=True, cwd=cwd, user=other, group=other)


def initdb(data_dir: Path) -> None:
    """A fresh cluster in ``data_dir`` (superuser ``postgres``, trust, UTF8), owned by the server's user."""
    done = as_server_user(
        [str(BIN / "initdb"), "-D", str(data_dir), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"],
        cwd=data_dir.parent,
    )
    if done.returncode != 0:
        last = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise LabError(f"initdb for '{data_dir}' failed: {last[0]}")


def server_args(data_dir: Path, port: int, settings: tuple[str, ...] | None = None) -> list[str]:
    """The postmaster's command line: TCP on 127.0.0.1 only, no Unix socket, the log to stderr,
    ``settings`` (default :data:`SMALL`)."""
    args = [str(BIN / "postgres"), "-D", str(data_dir), "-p", str(port)]
    for s in ("listen_addresses=127.0.0.1", "unix_socket_directories=", *(SMALL if settings is None else settings)):
        args += ["-c", s]
    return args


def client(port: int, db: str = "postgres") -> list[str]:
    return ["psql", "-X", "-q", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "-d", db, "-tA"]


def sql(port: int, statements: str, db: str = "postgres", timeout_s: float = 30.0) -> str:
    """Run ``statements`` (one or more, each in its own transaction) as ``postgres``; the output."""
    argv = [*client(port, db), "-v", "ON_ERROR_STOP=1", "-f", "-"]
    try:
        done = subprocess.run(argv, input=statements, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise LabError(f"no answer from 127.0.0.1:{port} within {timeout_s:.0f} s") from None
    if done.returncode != 0:
        errors = [line for line in done.stderr.splitlines() if "ERROR:" in line or "FATAL:" in line]
        last = errors[-1:] or done.stderr.strip().splitlines()[-1:] or ["psql failed"]
        raise LabError(f"127.0.0.1:{port}: {last[0].split('ERROR:  ')[-1]}")
    return done.stdout


def answers(port: int) -> bool:
    done = subprocess.run([*client(port), "-c", "SELECT 1"], capture_output=True)
    return done.returncode == 0
