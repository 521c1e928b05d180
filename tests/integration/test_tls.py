"""TLS against private MariaDB and PostgreSQL servers with a self-signed CA:
verification succeeds with the CA, fails with one clear line without it, and
encryption without verification works too."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO
from private_servers import PrivateMariaDB, PrivatePostgres

MY_TLS_PORT = 3392
PG_TLS_PORT = 5492
DATA = ["--tables=1", "--table-size=100"]


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def certs(tmp_path_factory) -> Path:
    """A CA and a server certificate for 127.0.0.1 signed by it."""
    d = tmp_path_factory.mktemp("tls")
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=pysysbench test CA",
             "-keyout", "ca.key", "-out", "ca.pem", cwd=d)
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", "server.key",
             "-out", "server.csr", cwd=d)
    (d / "ext.cnf").write_text("subjectAltName=IP:127.0.0.1\n")
    _openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
             "-days", "2", "-extfile", "ext.cnf", "-out", "server.pem", cwd=d)
    return d


@pytest.fixture(scope="module")
def tls_mariadb(certs):
    server = PrivateMariaDB(MY_TLS_PORT, (f"--ssl-ca={certs / 'ca.pem'}", f"--ssl-cert={certs / 'server.pem'}",
                                          f"--ssl-key={certs / 'server.key'}"))
    server.start()
    yield server
    server.destroy()


@pytest.fixture(scope="module")
def tls_postgres(certs):
    server = PrivatePostgres(PG_TLS_PORT)
    for name in ("server.pem", "server.key"):
        shutil.copy(certs / name, server.dir / name)
        shutil.chown(server.dir / name, "postgres", "postgres")
        os.chmod(server.dir / name, 0o600)
    server.extra_settings = (f"-c ssl=on -c ssl_cert_file={server.dir / 'server.pem'} "
                             f"-c ssl_key_file={server.dir / 'server.key'}")
    server.start()
    yield server
    server.destroy()


def cli(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "pysysbench", *args], capture_output=True, text=True,
                          timeout=120, env=env, cwd=REPO)


def one_fatal_line(proc: subprocess.CompletedProcess) -> str:
    lines = [line for line in proc.stdout.splitlines() if line.startswith("FATAL:")]
    assert proc.returncode == 1 and len(lines) == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    return lines[0]


@pytest.mark.mysql
def test_mysql_tls_verified_with_ca_and_refused_without(tls_mariadb, certs):
    opts = tls_mariadb.options
    assert cli("oltp_point_select", *opts, *DATA, "prepare").returncode == 0
    ok = cli("oltp_point_select", *opts, *DATA, "--mysql-ssl=verify_identity", f"--mysql-ssl-ca={certs / 'ca.pem'}",
             "--events=20", "--time=0", "run")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    line = one_fatal_line(cli("oltp_point_select", *opts, *DATA, "--mysql-ssl=verify_ca", "--events=20",
                              "--time=0", "run"))
    assert "--mysql-ssl-ca" in line
    enc = cli("oltp_point_select", *opts, *DATA, "--mysql-ssl=required", "--events=20", "--time=0", "run")
    assert enc.returncode == 0, enc.stdout + enc.stderr
    # the server really saw TLS sessions
    assert int(tls_mariadb.sql("SHOW GLOBAL STATUS LIKE 'Ssl_accepts'").split()[1]) >= 2


@pytest.mark.pgsql
def test_pgsql_tls_verified_with_ca_and_refused_without(tls_postgres, certs):
    opts = tls_postgres.options
    assert cli("oltp_point_select", *opts, *DATA, "prepare").returncode == 0
    ok = cli("oltp_point_select", *opts, *DATA, "--pgsql-sslmode=verify-full", f"--pgsql-ssl-ca={certs / 'ca.pem'}",
             "--events=20", "--time=0", "run")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    line = one_fatal_line(cli("oltp_point_select", *opts, *DATA, "--pgsql-sslmode=verify-ca", "--events=20",
                              "--time=0", "run"))
    assert "--pgsql-ssl-ca" in line
    enc = cli("oltp_point_select", *opts, *DATA, "--pgsql-sslmode=require", "--events=20", "--time=0", "run")
    assert enc.returncode == 0, enc.stdout + enc.stderr
