"""Campaigns on the real servers, in the separate ``campaign`` databases (the
``sbtest`` databases belong to other tests that drop ``sbtest%`` tables):
prepare, SQL hooks through the configured driver, server settings captured,
the table size computed from the server's memory, runs stored with the server
version, the report rendered.  An unreachable server is a failure (CI runs
``scripts/setup-databases.sh`` first, which creates the ``campaign`` databases).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pysysbench.campaign.backend import InProcessBackend
from pysysbench.cli.main import main
from pysysbench.stats import results

MYSQL = """
[connection]
db-driver = "mysql"
mysql-host = "127.0.0.1"
mysql-user = "sbtest"
mysql-db = "campaign"
[data]
tables = 2
# 128 MiB buffer pool x 0.0004 / (2 tables x 250 bytes) ~ 107 rows: tiny, but computed by the server
table-size = { memory-query = "SELECT @@innodb_buffer_pool_size", factor = 0.0004 }
[sql]
before-campaign = ["DO 1"]
after-prepare = ["ANALYZE TABLE sbtest1, sbtest2"]
before-run = ["SET SESSION sql_mode = DEFAULT"]
capture = ["SHOW GLOBAL VARIABLES WHERE Variable_name IN ('innodb_buffer_pool_size', 'version')"]
"""

PGSQL = """
[connection]
db-driver = "pgsql"
pgsql-host = "127.0.0.1"
pgsql-user = "sbtest"
pgsql-db = "campaign"
[data]
tables = 2
table-size = 200
auto_inc = false
[sql]
after-prepare = ["ANALYZE"]
capture = ["SELECT name, setting FROM pg_settings WHERE name IN ('shared_buffers', 'server_version')"]
"""

COMMON = """
[labels]
server = "{label}"
[prepare]
threads = 2
[run]
time = 1
[[workload]]
test = "oltp_read_write"
threads = [1, 2]
"""


def run_campaign(tmp_path: Path, body: str, label: str) -> tuple[Path, dict]:
    path = tmp_path / "campaign.toml"
    path.write_text(f'name = "it-{label}"\n' + COMMON.format(label=label) + body)
    res = tmp_path / "res"
    rc = main(["campaign", "run", str(path), f"--results-dir={res}", "--progress=plain"])
    manifest = json.loads((res / "manifest.json").read_text())
    assert rc == 0, manifest
    return res, manifest


def cleanup(connection: list[str]) -> None:
    assert main(["oltp_common", *connection, "--tables=2", "cleanup"]) == 0


@pytest.mark.mysql
def test_campaign_on_mariadb(tmp_path):
    res, m = run_campaign(tmp_path, MYSQL, "mariadb")
    connection = ["--db-driver=mysql", "--mysql-host=127.0.0.1", "--mysql-user=sbtest", "--mysql-db=campaign"]
    try:
        pool = int(m["server_settings"]["innodb_buffer_pool_size"])
        assert m["table_size"] == int(pool * 0.0004 / (2 * 250)) > 0
        rows = InProcessBackend().rows(connection, "SELECT COUNT(*) FROM sbtest2")
        assert rows[0][0] == m["table_size"]
        doc = results.load(str(res / "oltp_read_write-t0002-r1.json"))
        assert "MariaDB" in doc["server_version"] and doc["driver"] == "mysql"
        assert doc["summary"]["queries"]["write"] > 0 and doc["labels"] == {"server": "mariadb"}
        assert doc["campaign"]["sql_before_run"] == ["SET SESSION sql_mode = DEFAULT"]
        assert f"--table-size={m['table_size']}" in doc["command_line"]
        report = (res / "report" / "report.md").read_text()
        assert "| 2 | " in report and "server: innodb_buffer_pool_size" in report
    finally:
        cleanup(connection)


@pytest.mark.pgsql
def test_campaign_on_postgresql(tmp_path):
    res, m = run_campaign(tmp_path, PGSQL, "postgresql")
    connection = ["--db-driver=pgsql", "--pgsql-host=127.0.0.1", "--pgsql-user=sbtest", "--pgsql-db=campaign"]
    try:
        assert m["prepare"]["status"] == "done" and "shared_buffers" in m["server_settings"]
        doc = results.load(str(res / "oltp_read_write-t0001-r1.json"))
        assert doc["driver"] == "pgsql" and doc["exit_code"] == 0 and doc["summary"]["tps"] > 0
        assert doc["campaign"]["server_settings"]["server_version"].split()[0] in doc["server_version"]
        assert InProcessBackend().rows(connection, "SELECT count(*) FROM sbtest1")[0][0] == 200
    finally:
        cleanup(connection)
