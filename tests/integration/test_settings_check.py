"""scripts/server_settings.py against real servers (private ones, changed at will here):
the snapshot CI takes before and after a run sees a changed global variable, a
per-role setting left behind and a restart, and nothing when everything was put back."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO
from private_servers import PrivateMariaDB, PrivatePostgres, free_port, running

SCRIPT = REPO / "scripts" / "server_settings.py"


@pytest.fixture(scope="module")
def servers():
    with running(PrivateMariaDB(port=free_port(), grants=True), PrivatePostgres(port=free_port())) as pair:
        yield pair


def snapshot(path: Path, my: PrivateMariaDB, pg: PrivatePostgres) -> Path:
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "snapshot", str(path), f"--my-port={my.port}", f"--pg-port={pg.port}"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    return path


def compare(before: Path, after: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "compare", str(before), str(after)], capture_output=True, text=True
    )


def test_settings_put_back_compare_equal(servers, tmp_path):
    my, pg = servers
    before = snapshot(tmp_path / "before", my, pg)
    my.sql("SET GLOBAL log_output='TABLE'")
    my.sql("SET GLOBAL general_log=1")
    my.sql("SET GLOBAL general_log=0")
    my.sql("SET GLOBAL log_output='FILE'")
    pg.sql("ALTER ROLE sbtest IN DATABASE sbtest SET log_statement = 'all'")
    pg.sql("ALTER ROLE sbtest IN DATABASE sbtest RESET log_statement")
    proc = compare(before, snapshot(tmp_path / "after", my, pg))
    assert proc.returncode == 0, proc.stderr
    assert "the servers are as they were found" in proc.stdout


def test_a_changed_global_a_leftover_role_setting_and_a_restart_are_reported(servers, tmp_path):
    my, pg = servers
    before = snapshot(tmp_path / "before", my, pg)
    old = my.sql("SELECT @@GLOBAL.max_connections").strip()
    my.sql("SET GLOBAL max_connections = 1234")
    pg.sql("ALTER ROLE sbtest IN DATABASE sbtest SET log_statement = 'all'")
    pg.restart()
    try:
        proc = compare(before, snapshot(tmp_path / "after", my, pg))
    finally:
        my.sql(f"SET GLOBAL max_connections = {old}")
        pg.sql("ALTER ROLE sbtest IN DATABASE sbtest RESET log_statement")
    assert proc.returncode == 1
    assert f"  mariadb max_connections: '{old}' -> '1234'\n" in proc.stderr
    assert "  postgresql [role sbtest, database sbtest]: (absent) -> 'log_statement=all'\n" in proc.stderr
    assert "  postgresql was restarted: started '" in proc.stderr
    assert "mariadb was restarted" not in proc.stderr
