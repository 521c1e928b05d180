"""Private MariaDB and PostgreSQL servers for fault-injection tests.

Killing or restarting the machine's shared servers would break every other
test running at the time, so the fault tests start their own: a mariadbd on
``MY_PORT`` and a PostgreSQL cluster on ``PG_PORT``, each in a temporary data
directory, which they may kill and restart at will.  Both accept the ``sbtest``
user without a password and have a ``sbtest`` database.  For tests of
authentication, ``PrivateMariaDB(grants=True)`` keeps its grant tables (root
without a password on 127.0.0.1, ``sbtest`` with every privilege on ``sbtest``,
``ALTER USER`` works) and ``PrivatePostgres.passwords()`` makes ``sbtest`` log in
with a password (scram-sha-256) until the block ends.
"""

from __future__ import annotations

import getpass
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from pysysbench.lab import mariadb as lab_mariadb
from pysysbench.lab import postgres as lab_postgres

# the ports can be moved (PYSYSBENCH_TEST_MY_PORT, ..._MY_GRANTS_PORT, ..._PG_PORT) so that two
# checkouts' fault tests can run at the same time on one machine
MY_PORT = int(os.environ.get("PYSYSBENCH_TEST_MY_PORT", 3391))
MY_GRANTS_PORT = int(os.environ.get("PYSYSBENCH_TEST_MY_GRANTS_PORT", 3392))  # with grant tables
PG_PORT = int(os.environ.get("PYSYSBENCH_TEST_PG_PORT", 5491))
PG_BIN = Path("/usr/lib/postgresql") / sorted(os.listdir("/usr/lib/postgresql"))[-1] / "bin"
START_TIMEOUT_S = 60
OS_USER = getpass.getuser()  # mariadbd runs as the tests' own user (root: --user=root)
MEMORY = ("--innodb-buffer-pool-size=64M", "--performance-schema=off")


def free_port() -> int:
    """A TCP port nothing listens on right now (for servers of one test session: two
    sessions on one machine, e.g. two checkouts, then never meet on a fixed port)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(check, what: str, timeout_s: float = START_TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    raise RuntimeError(f"{what} did not come up within {timeout_s:.0f} s")


class PrivateMariaDB:
    """A throw-away mariadbd (no grant tables: every user may do anything, unless ``grants``)."""

    def __init__(
        self, port: int = MY_PORT, extra_args: tuple[str, ...] = (), grants: bool = False, parent: str | None = None
    ):
        self.port = port
        self.extra_args = list(extra_args)
        self.grants = grants
        # parent: the folder the data dir goes under (default the temp dir; a test whose result
        # depends on fsync's cost names a real disk, as /tmp may be tmpfs)
        self.dir = Path(tempfile.mkdtemp(prefix="pysysbench-mariadb-", dir=parent))
        self.proc: subprocess.Popen | None = None
        lab_mariadb.install_db(self.dir / "data", user=OS_USER)

    @property
    def options(self) -> list[str]:
        return [
            "--db-driver=mysql",
            "--mysql-host=127.0.0.1",
            f"--mysql-port={self.port}",
            "--mysql-user=sbtest",
            "--mysql-db=sbtest",
        ]

    def start(self) -> None:
        d = self.dir
        self.proc = subprocess.Popen(
            lab_mariadb.server_args(
                d, self.port, self.grants, MEMORY, tuple(self.extra_args), user=OS_USER
            ),  # the lab's server line (pysysbench/lab/mariadb.py), as the current user
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        _wait(self._ready, "private MariaDB")
        self.sql("CREATE DATABASE IF NOT EXISTS sbtest")
        if self.grants:
            self.sql("CREATE USER IF NOT EXISTS sbtest@'%'")
            self.sql("GRANT ALL ON sbtest.* TO sbtest@'%'")

    def _ready(self) -> bool:
        return (
            subprocess.run(
                ["mariadb", "-h127.0.0.1", f"-P{self.port}", "-uroot", "-e", "SELECT 1"], capture_output=True
            ).returncode
            == 0
        )

    def sql(self, statement: str) -> str:
        out = subprocess.run(
            ["mariadb", "-h127.0.0.1", f"-P{self.port}", "-uroot", "-N", "-B", "-e", statement],
            capture_output=True,
            text=True,
            check=True,
        )
        return out.stdout

    def kill(self) -> None:
        """kill -9, as a crash."""
        if self.proc is not None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)
            self.proc = None

    def freeze(self) -> None:
        """SIGSTOP: the server keeps its connections but answers nothing (a hung server)."""
        self.proc.send_signal(signal.SIGSTOP)

    def thaw(self) -> None:
        self.proc.send_signal(signal.SIGCONT)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.kill()
            self.proc = None

    def destroy(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


class PrivatePostgres:
    """A throw-away PostgreSQL cluster run as the ``postgres`` OS user (trust auth)."""

    def __init__(self, port: int = PG_PORT, extra_settings: str = ""):
        self.port = port
        self.extra_settings = extra_settings
        self.dir = Path(tempfile.mkdtemp(prefix="pysysbench-pg-"))
        shutil.chown(self.dir, "postgres", "postgres")
        lab_postgres.initdb(self.dir / "data")  # the lab's initdb (pysysbench/lab/postgres.py), as postgres

    @property
    def options(self) -> list[str]:
        return [
            "--db-driver=pgsql",
            "--pgsql-host=127.0.0.1",
            f"--pgsql-port={self.port}",
            "--pgsql-user=sbtest",
            "--pgsql-db=sbtest",
        ]

    def _as_postgres(self, cmd: list[str]) -> subprocess.CompletedProcess:
        return subprocess.run(
            ["runuser", "-u", "postgres", "--", *cmd], check=True, capture_output=True, text=True, cwd=self.dir
        )

    def _ctl(self, action: str) -> None:
        try:
            self._as_postgres(
                [
                    str(PG_BIN / "pg_ctl"),
                    "-D",
                    str(self.dir / "data"),
                    "-l",
                    str(self.dir / "log"),
                    "-w",
                    "-t",
                    str(START_TIMEOUT_S),
                    "-o",
                    f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c shared_buffers=32MB "
                    f"-c max_connections=100 -c fsync=off {self.extra_settings}",
                    action,
                ]
            )
        except subprocess.CalledProcessError as exc:  # say why: pg_ctl's own words and the server log's end
            log = self.dir / "log"
            tail = log.read_text(errors="replace")[-3000:] if log.exists() else "(no server log)"
            raise RuntimeError(
                f"pg_ctl {action} on port {self.port} failed ({exc.returncode}): "
                f"{exc.stdout}{exc.stderr}\n--- server log ---\n{tail}"
            ) from None

    def start(self) -> None:
        self._ctl("start")
        if "sbtest" not in self.sql("SELECT rolname FROM pg_roles"):
            self.sql("CREATE ROLE sbtest LOGIN")
            self.sql("CREATE DATABASE sbtest OWNER sbtest")

    def restart(self) -> None:
        self._ctl("restart")

    @contextmanager
    def passwords(self, password: str):
        """``sbtest`` logs in over TCP with ``password`` (scram-sha-256) inside the block."""
        hba = self.dir / "data" / "pg_hba.conf"
        trusting = hba.read_text()
        self.sql(f"ALTER ROLE sbtest PASSWORD '{password}'")
        hba.write_text(
            "local all all trust\nhost all postgres 127.0.0.1/32 trust\nhost all sbtest 127.0.0.1/32 scram-sha-256\n"
        )
        self.sql("SELECT pg_reload_conf()")
        try:
            yield
        finally:
            hba.write_text(trusting)
            self.sql("SELECT pg_reload_conf()")
            self.sql("ALTER ROLE sbtest PASSWORD NULL")

    def sql(self, statement: str, db: str = "postgres") -> str:
        out = subprocess.run(
            ["psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-d", db, "-tAc", statement],
            capture_output=True,
            text=True,
            check=True,
        )
        return out.stdout

    def destroy(self) -> None:
        try:
            self._as_postgres([str(PG_BIN / "pg_ctl"), "-D", str(self.dir / "data"), "-m", "immediate", "stop"])
        except subprocess.CalledProcessError:
            pass
        shutil.rmtree(self.dir, ignore_errors=True)


@contextmanager
def running(*servers):
    """Start each private server in turn, yield them, and destroy every one at the end
    (also those started before one that failed to start)."""
    try:
        for server in servers:
            server.start()
        yield servers
    finally:
        for server in servers:
            server.destroy()
