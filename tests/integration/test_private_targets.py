"""The marker ``private_server`` (conftest.py): a marked test's MariaDB/PostgreSQL
targets are this session's private servers, with the settings the machine's servers
do not have; unmarked tests use the machine's servers as they run."""

from __future__ import annotations

import pytest
from conftest import MY_PORT, PG_PORT


def _settings(db) -> dict[str, str]:
    if db.name == "mysql":
        rows = db.admin("SELECT @@port, @@max_connections, @@max_prepared_stmt_count")[0]
        return dict(zip(("port", "max_connections", "max_prepared_stmt_count"), map(str, rows)))
    rows = db.admin(
        "SELECT current_setting('port'), current_setting('shared_preload_libraries'), "
        "current_setting('max_prepared_transactions')"
    )[0]
    return dict(zip(("port", "shared_preload_libraries", "max_prepared_transactions"), rows))


@pytest.mark.private_server
def test_marked_targets_are_the_sessions_private_servers(server_db, run_cli):
    db = server_db
    assert db.port not in (MY_PORT, PG_PORT)
    assert f"--{db.name}-port={db.port}" in db.opts
    got = _settings(db)
    assert got["port"] == str(db.port)
    if db.name == "mysql":
        assert (got["max_connections"], got["max_prepared_stmt_count"]) == ("2000", "1000000")
    else:
        assert (got["shared_preload_libraries"], got["max_prepared_transactions"]) == ("pg_stat_statements", "100")
    # the server-side capture works there: the run's 5 point selects, as the server executed them
    data = ["--tables=1", "--table-size=100"]
    run_cli.ok("oltp_point_select", *db.opts, *data, "prepare")
    with db.capture() as cap:
        run_cli.ok("oltp_point_select", *db.opts, *data, "--threads=1", "--events=5", "--time=0", "run")
    assert dict(cap.event_kinds()) == {"point_select": 5}
    if db.name == "pgsql":
        assert cap.pgss["point_select"] == 5


@pytest.mark.private_server("pgsql")
def test_a_named_driver_moves_that_driver_only(server_db):
    if server_db.name == "mysql":
        assert server_db.port == MY_PORT and not any(o.startswith("--mysql-port=") for o in server_db.opts)
    else:
        assert server_db.port != PG_PORT and f"--pgsql-port={server_db.port}" in server_db.opts
    assert _settings(server_db)["port"] == str(server_db.port)


def test_unmarked_targets_are_the_machines_servers(server_db):
    assert server_db.port == (MY_PORT if server_db.name == "mysql" else PG_PORT)
    assert not any(o.startswith(f"--{server_db.name}-port=") for o in server_db.opts)
    assert _settings(server_db)["port"] == str(server_db.port)
