"""scripts/setup-databases.sh starts the main MariaDB even while other mariadbd
processes run (private test servers, Galera nodes).

``start-stop-daemon --start --oknodo --exec /usr/sbin/mariadbd`` (what the script
used before) sees any running ``/usr/sbin/mariadbd`` and starts nothing, so the main
server stayed down whenever a test server was up.  The script now looks only at the
main server's own pid file.  The shared server is never stopped here: the script is
pointed at a private instance (``SETUP_MY_PORT``, ``SETUP_MARIADBD_ARGS``) while a
second private mariadbd runs, which is the situation that broke.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from private_servers import PrivateMariaDB

REPO = Path(__file__).resolve().parents[2]
# moved with the fault tests' ports (PYSYSBENCH_TEST_MY_PORT / ..._MY_GRANTS_PORT) when they are set
OTHER_PORT = int(os.environ.get("PYSYSBENCH_TEST_MY_PORT", 3396))
MAIN_PORT = int(os.environ.get("PYSYSBENCH_TEST_MY_GRANTS_PORT", 3397))

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("mariadb-install-db"),
                                reason="needs root and the MariaDB server package")


def _ping(port: int) -> bool:
    return subprocess.run(["mysqladmin", "--protocol=TCP", "-h127.0.0.1", f"-P{port}", "-uroot",
                           "--connect-timeout=2", "ping"], capture_output=True).returncode == 0


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
    base.chmod(0o755)   # mariadbd runs as the mysql user (--user=mysql, as the script starts it)
    data = base / "data"
    try:
        other.start()
        subprocess.run(["mariadb-install-db", "--no-defaults", f"--datadir={data}", "--user=mysql",
                        "--auth-root-authentication-method=normal", "--skip-test-db"],
                       check=True, capture_output=True)
        shutil.chown(base, "mysql", "mysql")
        args = (f"--no-defaults --datadir={data} --port={MAIN_PORT} --bind-address=127.0.0.1 "
                f"--socket={base}/sock --pid-file={base}/pid --skip-grant-tables --innodb-buffer-pool-size=64M "
                f"--performance-schema=off --log-error={base}/error.log")
        assert not _ping(MAIN_PORT)
        env = dict(os.environ, SETUP_MY_PORT=str(MAIN_PORT), SETUP_MARIADBD_ARGS=args)
        proc = subprocess.run(["bash", str(REPO / "scripts/setup-databases.sh"), "--mariadb-start-only"],
                              env=env, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "starting mariadbd" in proc.stdout
        assert _ping(MAIN_PORT), proc.stdout + proc.stderr
        assert _ping(OTHER_PORT)   # the other server is left alone
    finally:
        _stop_by_pid_file(base / "pid")
        other.destroy()
        shutil.rmtree(base, ignore_errors=True)
