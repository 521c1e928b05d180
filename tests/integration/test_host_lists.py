"""Host lists on PostgreSQL (beyond sysbench): connections spread over the
listed servers by global thread number, whatever the number of worker processes,
and counted per server in the result file.  Runs in the `cluster` database
(created by scripts/setup-databases.sh) so that other tests' cleanups of
``sbtest`` cannot interfere."""

from __future__ import annotations

import json

import pytest

PG = ["--db-driver=pgsql", "--pgsql-user=sbtest", "--pgsql-db=cluster", "--tables=1", "--table-size=200"]


@pytest.mark.pgsql
def test_pgsql_host_list_spreads_connections_across_processes(run_cli, tmp_path):
    hosts = "--pgsql-host=127.0.0.1,localhost"  # the same server under two names: two "nodes"
    run_cli("oltp_point_select", *PG, hosts, "cleanup")
    run_cli.ok("oltp_point_select", *PG, hosts, "prepare")
    try:
        out = tmp_path / "pg.json"
        run_cli.ok(
            "oltp_point_select",
            *PG,
            hosts,
            "--threads=4",
            "--workers=2",
            "--events=400",
            "--time=0",
            f"--result-file={out}",
            "run",
        )
        doc = json.loads(out.read_text())
        # 2 processes x 2 threads; thread i uses host i mod 2, so each name gets 2
        assert doc["connections"] == {"127.0.0.1:5432": 2, "localhost:5432": 2}
        assert doc["summary"]["events"] == 400
    finally:
        run_cli("oltp_point_select", *PG, hosts, "cleanup")
