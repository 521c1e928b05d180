"""scripts/setup-databases.sh starts the main MariaDB even while other mariadbd
processes run (private test servers, Galera nodes), and on running servers it
creates the user and databases without changing a global setting or restarting
anything.

``start-stop-daemon --start --oknodo --exec /usr/sbin/mariadbd`` (what the script
used before) sees any running ``/usr/sbin/mariadbd`` and starts nothing, so the main
server stayed down whenever a test server was up.  The script now looks only at the
main server's own pid file.  The shared server is never stopped here: the script is
pointed at a private instance (``SETUP_MY_PORT``, ``SETUP_MARIADBD_ARGS``) while a
second private mariadbd runs, which is the situation that broke.

The full script is run against a private MariaDB and a private PostgreSQL
(``SETUP_MY_PORT``, ``SETUP_PG_PORT``), both running: before, it raised
max_connections / max_prepared_stmt_count with SET GLOBAL and, on PostgreSQL,
ALTER SYSTEM'd shared_preload_libraries, max_connections and
max_prepared_transactions and restarted the machine's cluster.  A failing
``pg_ctlcluster`` is put first on PATH, so a script that tries to stop or start
a cluster cannot touch the machine's.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from private_servers import PrivateMariaDB, PrivatePostgres, free_port

REPO = Path(__file__).resolve().parents[2]
# moved with the fault tests' ports (PYSYSBENCH_TEST_MY_PORT / ..._MY_GRANTS_PORT) when they are set,
# free ones otherwise (another checkout's tests may hold any fixed port)
OTHER_PORT = int(os.environ.get("PYSYSBENCH_TEST_MY_PORT") or free_port())
MAIN_PORT = int(os.environ.get("PYSYSBENCH_TEST_MY_GRANTS_PORT") or free_port())
while MAIN_PORT == OTHER_PORT:
    MAIN_PORT = free_port()

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("mariadb-install-db"), reason="needs root and the MariaDB server package"
)


def _ping(port: int) -> bool:
    return (
        subprocess.run(
            ["mysqladmin", "--protocol=TCP", "-h127.0.0.1", f"-P{port}", "-uroot", "--connect-timeout=2", "ping"],
            capture_output=True,
        ).returncode
        == 0
    )


def _stop_by_pid_file(pid_file: Path) -> None:
    try:
        pid = int(pid_file.read_text().strip())
    except (OSError, ValueError):
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and Path(f"/proc/{pid}").exists():
        time.sleep(0.2)


def test_starts_the_main_server_while_another_mariadbd_runs():
    other = PrivateMariaDB(port=OTHER_PORT)
    base = Path(tempfile.mkdtemp(prefix="pysysbench-setup-"))
    base.chmod(0o755)  # mariadbd runs as the mysql user (--user=mysql, as the script starts it)
    data = base / "data"
    try:
        other.start()
        subprocess.run(
            [
                "mariadb-install-db",
                "--no-defaults",
                f"--datadir={data}",
                "--user=mysql",
                "--auth-root-authentication-method=normal",
                "--skip-test-db",
            ],
            check=True,
            capture_output=True,
        )
        shutil.chown(base, "mysql", "mysql")
        args = (
            f"--no-defaults --datadir={data} --port={MAIN_PORT} --bind-address=127.0.0.1 "
            f"--socket={base}/sock --pid-file={base}/pid --skip-grant-tables --innodb-buffer-pool-size=64M "
            f"--performance-schema=off --log-error={base}/error.log"
        )
        assert not _ping(MAIN_PORT)
        env = dict(os.environ, SETUP_MY_PORT=str(MAIN_PORT), SETUP_MARIADBD_ARGS=args)
        proc = subprocess.run(
            ["bash", str(REPO / "scripts/setup-databases.sh"), "--mariadb-start-only"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "starting mariadbd" in proc.stdout
        assert _ping(MAIN_PORT), proc.stdout + proc.stderr
        assert _ping(OTHER_PORT)  # the other server is left alone
    finally:
        _stop_by_pid_file(base / "pid")
        other.destroy()
        shutil.rmtree(base, ignore_errors=True)


def _snapshot(path: Path, my_port: int, pg_port: int) -> Path:
    proc = subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts/server_settings.py"),
            "snapshot",
            str(path),
            f"--my-port={my_port}",
            f"--pg-port={pg_port}",
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    return path


def test_sets_up_running_servers_without_changing_a_setting_or_restarting(tmp_path):
    my = PrivateMariaDB(port=free_port(), grants=True)
    pg = PrivatePostgres(port=free_port())
    shims = tmp_path / "bin"
    shims.mkdir()
    (shims / "pg_ctlcluster").write_text('#!/bin/sh\necho "pg_ctlcluster $*: not allowed in this test" >&2\nexit 1\n')
    (shims / "pg_ctlcluster").chmod(0o755)
    try:
        my.start()
        pg.start()
        env = dict(
            os.environ, SETUP_MY_PORT=str(my.port), SETUP_PG_PORT=str(pg.port), PATH=f"{shims}:{os.environ['PATH']}"
        )
        before = _snapshot(tmp_path / "before", my.port, pg.port)
        runs = [
            subprocess.run(
                ["bash", str(REPO / "scripts/setup-databases.sh")], env=env, capture_output=True, text=True, timeout=120
            )
            for _ in range(2)
        ]
        after = _snapshot(tmp_path / "after", my.port, pg.port)
        for proc in runs:
            assert proc.returncode == 0, proc.stdout + proc.stderr
        check = subprocess.run(
            [sys.executable, str(REPO / "scripts/server_settings.py"), "compare", str(before), str(after)],
            capture_output=True,
            text=True,
        )
        assert check.returncode == 0, runs[0].stdout + runs[0].stderr + check.stderr
        assert "MariaDB: creating user 'sbtest'@'localhost'" in runs[0].stdout
        # idempotent: the second run only reports the servers
        assert [line.split(" ok: ")[0].split()[1] for line in runs[1].stdout.splitlines()] == ["MariaDB", "PostgreSQL"]
        assert "max_connections=200, max_prepared_stmt_count=16382" in runs[1].stdout  # as the server runs
        assert "max_connections=100, max_prepared_transactions=0" in runs[1].stdout
        for db in ("sbtest", "legacy", "campaign", "cluster", "load"):
            assert my.sql(f"SHOW DATABASES LIKE '{db}'").strip() == db
            assert pg.sql(f"SELECT datname FROM pg_database WHERE datname = '{db}'").strip() == db
            assert pg.sql(f"SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = '{db}'").strip() == "sbtest"
    finally:
        my.destroy()
        pg.destroy()
