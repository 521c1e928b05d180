"""Points 2 of issue 41 that need a server, under the 1.1 face and beside the 1.1.0 binary
(/root/.cache/sysbench-1.1.0, built by test_conformance.py; where it is missing only
pysysbench's side runs):

- the scripts' ``--create_table_options`` (1.1's oltp_common.lua) reaches the server's
  CREATE TABLE, which ends up as the 1.1.0 binary's;
- ``--mysql-ssl-key`` / ``--mysql-ssl-cert`` / ``--mysql-ssl-ca`` present a client certificate:
  a user that REQUIRE SUBJECT's it connects, and without them is refused, as with 1.1.0."""

from __future__ import annotations

import os
import subprocess

import pytest
from private_servers import PrivateMariaDB
from test_conformance import REFERENCE_PREFIX
from test_tls import certs, cli  # noqa: F401 (certs: a fixture)

REF_11 = REFERENCE_PREFIX / "bin" / "sysbench"
# a private TLS MariaDB of this module (test_tls.py uses 3392, test_conformance.py 3393)
MY_X509_PORT = int(os.environ.get("PYSYSBENCH_FACE11_TLS_PORT", 3394))
DATA = ["--tables=1", "--table-size=50"]
SUBJECT = "/CN=127.0.0.1"  # the server certificate of test_tls's CA, presented here as a client's


def reference(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(REF_11), *args], capture_output=True, text=True, timeout=120)


def ours(*args: str) -> subprocess.CompletedProcess:
    return cli("--sysbench-compat=1.1", *args)


def table_text(db) -> str:
    if db.name == "mysql":
        return db.admin("SHOW CREATE TABLE sbtest1")[0][1]
    rows = db.admin("SELECT reloptions FROM pg_class WHERE relname = 'sbtest1'")
    return str(rows[0][0])


# the MySQL comment has a quote and a backslash: the fast prepare flags a loading table by its comment
# and must put this one back as the CREATE TABLE gave it
OPTIONS = {"mysql": "COMMENT='made by 1.1''s \\\\ options' ROW_FORMAT=DYNAMIC", "pgsql": "WITH (fillfactor=70)"}
IN_TABLE = {"mysql": ("COMMENT='made by 1.1''s \\\\ options'", "ROW_FORMAT=DYNAMIC"), "pgsql": ("fillfactor=70",)}


def test_create_table_options_reach_the_create_table(server_db):
    opt = f"--create_table_options={OPTIONS[server_db.name]}"
    proc = ours("oltp_read_write", *server_db.opts, *DATA, opt, "prepare")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    mine = table_text(server_db)
    assert all(part in mine for part in IN_TABLE[server_db.name]), mine
    if not REF_11.exists():
        return
    assert ours("oltp_read_write", *server_db.opts, *DATA, "cleanup").returncode == 0
    real = reference("oltp_read_write", *server_db.opts, *DATA, opt, "prepare")
    assert real.returncode == 0, real.stdout + real.stderr
    assert table_text(server_db) == mine
    assert reference("oltp_read_write", *server_db.opts, *DATA, "cleanup").returncode == 0


@pytest.fixture(scope="module")
def x509_mariadb(certs):  # noqa: F811 (the fixture imported above)
    server = PrivateMariaDB(
        MY_X509_PORT,
        (f"--ssl-ca={certs / 'ca.pem'}", f"--ssl-cert={certs / 'server.pem'}", f"--ssl-key={certs / 'server.key'}"),
        grants=True,
    )
    server.start()
    server.sql(f"CREATE USER x509u@'%' REQUIRE SUBJECT '{SUBJECT}'")
    server.sql("GRANT ALL ON sbtest.* TO x509u@'%'")
    yield server
    server.destroy()


@pytest.mark.mysql
def test_mysql_ssl_key_cert_ca_present_the_client_certificate(x509_mariadb, certs):  # noqa: F811
    base = [*x509_mariadb.options, "--mysql-user=x509u", *DATA]
    tls = [
        "--mysql-ssl=on",
        f"--mysql-ssl-ca={certs / 'ca.pem'}",
        f"--mysql-ssl-cert={certs / 'server.pem'}",
        f"--mysql-ssl-key={certs / 'server.key'}",
    ]
    run = ["--events=10", "--time=0", "run"]
    proc = ours("oltp_point_select", *base, *tls, "prepare")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = ours("oltp_point_select", *base, *tls, *run)
    assert proc.returncode == 0 and "total number of events:              10" in proc.stdout, proc.stdout
    without = ours("oltp_point_select", *base, "--mysql-ssl=on", f"--mysql-ssl-ca={certs / 'ca.pem'}", *run)
    assert without.returncode != 0 and "Access denied for user 'x509u'" in without.stdout, without.stdout
    assert "Traceback" not in without.stdout + without.stderr
    if REF_11.exists():
        real = reference("oltp_point_select", *base, *tls, *run)
        assert real.returncode == 0 and "total number of events:              10" in real.stdout, real.stdout
        real = reference("oltp_point_select", *base, "--mysql-ssl=on", f"--mysql-ssl-ca={certs / 'ca.pem'}", *run)
        assert real.returncode != 0 and "Access denied for user 'x509u'" in real.stdout, real.stdout
