"""--max-retries against the real servers: eight threads updating the rows of a 100-row
table deadlock each other (MariaDB 1213; PostgreSQL 40P01 after its deadlock_timeout).
With an ignore list that leaves the deadlock out (a cluster's own list, as
examples/tidb.toml's) the run ends on the first one; with --max-retries=10 the same run
retries the deadlocked transactions and none fails (30 retries: at 150 retries a second on 100
rows, CI once saw one transaction deadlock 11 times in a row with 10).  The tables are dropped after the
test (the fixture's clean database).  PostgreSQL's serialization failures (40001) on a
private server at REPEATABLE READ, the same way."""

from __future__ import annotations

import json
from pathlib import Path

from private_servers import PrivatePostgres, free_port

WORKLOAD = ["oltp_read_write", "--tables=1", "--table-size=100"]
RUN = ["--threads=8", "--time=4", "--report-interval=1"]
# an ignore list without the deadlock: only the unique violation of a delete/insert pair
IGNORE = {"mysql": "--mysql-ignore-errors=1062", "pgsql": "--pgsql-ignore-errors=23505"}
DEADLOCK = {"mysql": "1213", "pgsql": "40P01"}


def test_deadlocks_are_retried_and_none_fails(server_db, run_cli, tmp_path: Path):
    opts = [*WORKLOAD, *server_db.opts]
    run_cli.ok(*opts, "prepare")
    ignore = IGNORE[server_db.name]
    plain = run_cli(*opts, *RUN, ignore, "run")
    assert plain.returncode != 0, plain.stdout
    assert f"error {DEADLOCK[server_db.name]}" in plain.stdout + plain.stderr
    result = tmp_path / "r.json"
    proc = run_cli.ok(*opts, *RUN, ignore, "--max-retries=30", f"--result-file={result}", "run")
    summary = json.loads(result.read_text())["summary"]
    assert summary["retried"] > 0, proc.stdout
    assert summary["failed"] == 0, proc.stdout
    assert summary["errors_by_code"][DEADLOCK[server_db.name]] >= summary["retried"]
    assert "retried transactions:" in proc.stdout and " retried/s: " in proc.stdout
    intervals = json.loads(result.read_text())["intervals"]
    assert sum(i["retried"] for i in intervals) > 0


def test_serialization_failures_are_retried(run_cli, tmp_path: Path):
    """PostgreSQL at REPEATABLE READ (a private server: the machine's keeps its settings) answers
    a concurrent update of a row with 40001; retried with the same draws, none fails."""
    server = PrivatePostgres(port=free_port(), extra_settings="-c default_transaction_isolation='repeatable read'")
    try:
        server.start()
        opts = ["oltp_read_write", "--tables=1", "--table-size=1000", "--rand-type=uniform", *server.options]
        run_cli.ok(*opts, "prepare")
        plain = run_cli(*opts, *RUN, "--pgsql-ignore-errors=23505", "run")
        assert plain.returncode != 0 and "PostgreSQL error 40001" in plain.stdout + plain.stderr, plain.stdout
        result = tmp_path / "r.json"
        proc = run_cli.ok(
            *opts, *RUN, "--pgsql-ignore-errors=23505", "--max-retries=10", f"--result-file={result}", "run"
        )
        summary = json.loads(result.read_text())["summary"]
        assert summary["retried"] > 0 and summary["failed"] == 0, proc.stdout
        assert summary["errors_by_code"]["40001"] >= summary["retried"]
    finally:
        server.destroy()
