"""TLS against private MariaDB and PostgreSQL servers with a self-signed CA:
verification succeeds with the CA, fails with one clear line without it, and
encryption without verification works too.  A CA that did not sign the server's
certificate -- given, or found where sysbench / libpq look for one -- is refused
by every command (sysbench 1.0.20's wording for MySQL: error 2026 and OpenSSL's
reason), every connection the tool opens is a TLS one, and a certificate file
that cannot be read is one line naming the option and the file."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO
from private_servers import PrivateMariaDB, PrivatePostgres

# moved with the fault tests' ports (PYSYSBENCH_TEST_MY_PORT / ..._PG_PORT) when they are set
MY_TLS_PORT = int(os.environ.get("PYSYSBENCH_TEST_MY_PORT", 3392))
PG_TLS_PORT = int(os.environ.get("PYSYSBENCH_TEST_PG_PORT", 5492))
DATA = ["--tables=1", "--table-size=100"]


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def certs(tmp_path_factory) -> Path:
    """A CA and a server certificate for 127.0.0.1 signed by it."""
    d = tmp_path_factory.mktemp("tls")
    _openssl(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=pysysbench test CA",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        cwd=d,
    )
    _openssl(
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        "/CN=127.0.0.1",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
        cwd=d,
    )
    (d / "ext.cnf").write_text("subjectAltName=IP:127.0.0.1\n")
    _openssl(
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        "ext.cnf",
        "-out",
        "server.pem",
        cwd=d,
    )
    # sysbench's --mysql-ssl=on needs a client certificate and key next to cacert.pem
    _openssl(
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        "/CN=sbtest",
        "-keyout",
        "client-key.pem",
        "-out",
        "client.csr",
        cwd=d,
    )
    _openssl(
        "x509",
        "-req",
        "-in",
        "client.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-out",
        "client-cert.pem",
        cwd=d,
    )
    # a passphrase-protected client key, and a file that holds no certificate
    _openssl(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-passout",
        "pass:secret",
        "-days",
        "2",
        "-subj",
        "/CN=enc",
        "-keyout",
        "encrypted.key",
        "-out",
        "encrypted.pem",
        cwd=d,
    )
    (d / "garbage.pem").write_text("not a certificate\n")
    # a CA that signed nothing the servers present
    _openssl(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=some other CA",
        "-keyout",
        "wrong-ca.key",
        "-out",
        "wrong-ca.pem",
        cwd=d,
    )
    return d


@pytest.fixture(scope="module")
def tls_mariadb(certs):
    server = PrivateMariaDB(
        MY_TLS_PORT,
        (f"--ssl-ca={certs / 'ca.pem'}", f"--ssl-cert={certs / 'server.pem'}", f"--ssl-key={certs / 'server.key'}"),
    )
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
    server.extra_settings = (
        f"-c ssl=on -c ssl_cert_file={server.dir / 'server.pem'} -c ssl_key_file={server.dir / 'server.key'}"
    )
    hba = server.dir / "data" / "pg_hba.conf"  # sbtest may connect over TLS only
    with open(hba, "r+") as f:
        rules = f.read()
        f.seek(0)
        f.write("hostnossl all sbtest all reject\n" + rules)
    server.start()
    yield server
    server.destroy()


def cli(*args: str, cwd: Path = REPO, home: Path | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    if home is not None:
        env["HOME"] = str(home)
    return subprocess.run(
        [sys.executable, "-m", "pysysbench", *args], capture_output=True, text=True, timeout=120, env=env, cwd=cwd
    )


def one_fatal_line(proc: subprocess.CompletedProcess) -> str:
    lines = [line for line in proc.stdout.splitlines() if line.startswith("FATAL:")]
    assert proc.returncode == 1 and len(lines) == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    return lines[0]


@pytest.mark.mysql
def test_mysql_tls_verified_with_ca_and_refused_without(tls_mariadb, certs):
    opts = tls_mariadb.options
    assert cli("oltp_point_select", *opts, *DATA, "prepare").returncode == 0
    ok = cli(
        "oltp_point_select",
        *opts,
        *DATA,
        "--mysql-ssl=verify_identity",
        f"--mysql-ssl-ca={certs / 'ca.pem'}",
        "--events=20",
        "--time=0",
        "run",
    )
    assert ok.returncode == 0, ok.stdout + ok.stderr
    line = one_fatal_line(
        cli("oltp_point_select", *opts, *DATA, "--mysql-ssl=verify_ca", "--events=20", "--time=0", "run")
    )
    assert "--mysql-ssl-ca" in line
    enc = cli("oltp_point_select", *opts, *DATA, "--mysql-ssl=required", "--events=20", "--time=0", "run")
    assert enc.returncode == 0, enc.stdout + enc.stderr
    # the server really saw TLS sessions
    assert int(tls_mariadb.sql("SHOW GLOBAL STATUS LIKE 'Ssl_accepts'").split()[1]) >= 2


@pytest.mark.pgsql
def test_pgsql_tls_verified_with_ca_and_refused_without(tls_postgres, certs):
    opts = tls_postgres.options
    assert cli("oltp_point_select", *opts, *DATA, "prepare").returncode == 0
    ok = cli(
        "oltp_point_select",
        *opts,
        *DATA,
        "--pgsql-sslmode=verify-full",
        f"--pgsql-ssl-ca={certs / 'ca.pem'}",
        "--events=20",
        "--time=0",
        "run",
    )
    assert ok.returncode == 0, ok.stdout + ok.stderr
    line = one_fatal_line(
        cli("oltp_point_select", *opts, *DATA, "--pgsql-sslmode=verify-ca", "--events=20", "--time=0", "run")
    )
    assert "--pgsql-ssl-ca" in line
    enc = cli("oltp_point_select", *opts, *DATA, "--pgsql-sslmode=require", "--events=20", "--time=0", "run")
    assert enc.returncode == 0, enc.stdout + enc.stderr


EVENTS = ["--events=20", "--time=0"]
SELF_SIGNED_IN_CHAIN = "error 2026: TLS/SSL error: self-signed certificate in certificate chain"


def refused(proc: subprocess.CompletedProcess, *words: str) -> str:
    line = one_fatal_line(proc)
    for word in words:
        assert word in line, line
    return line


def ssl_status(server: PrivateMariaDB) -> tuple[int, int]:
    """(Connections, Ssl_accepts) of the server, read in one statement."""
    rows = dict(
        line.split("\t")
        for line in server.sql("SHOW GLOBAL STATUS WHERE Variable_name IN ('Connections', 'Ssl_accepts')").splitlines()
    )
    return int(rows["Connections"]), int(rows["Ssl_accepts"])


@pytest.mark.mysql
def test_mysql_wrong_ca_refused_by_every_command(tls_mariadb, certs):
    """sysbench (libmariadb) verifies the server whenever a CA is given, whatever the mode;
    prepare's loading connections and run's lean-wire ones use the same context."""
    opts = [*tls_mariadb.options, *DATA, f"--mysql-ssl-ca={certs / 'wrong-ca.pem'}"]
    for mode, command in (
        ("on", "run"),
        ("required", "run"),
        ("preferred", "run"),
        ("required", "prepare"),
        ("required", "cleanup"),
    ):
        args = ["--threads=2", command] if command == "prepare" else [*EVENTS, command]
        refused(
            cli("oltp_point_select", *opts, f"--mysql-ssl={mode}", *args),
            SELF_SIGNED_IN_CHAIN,
            f"--mysql-ssl-ca ('{certs / 'wrong-ca.pem'}')",
        )


@pytest.mark.mysql
def test_mysql_cacert_pem_in_working_directory_is_verified_as_sysbench_does(tls_mariadb, certs, tmp_path):
    """--mysql-ssl=on uses ./cacert.pem (sysbench 1.0.20): a wrong one is refused with the
    reference binary's words, the right one connects."""
    opts = [*tls_mariadb.options, *DATA, "--mysql-ssl=on"]
    assert cli("oltp_point_select", *opts, "--force", "prepare").returncode == 0
    for name in ("client-cert.pem", "client-key.pem"):  # sysbench needs all three files
        shutil.copy(certs / name, tmp_path / name)
    shutil.copy(certs / "wrong-ca.pem", tmp_path / "cacert.pem")
    if shutil.which("sysbench"):  # CI installs it
        ref = subprocess.run(
            ["sysbench", "oltp_point_select", *opts, *EVENTS, "run"],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=tmp_path,
        )
        assert ref.returncode != 0 and SELF_SIGNED_IN_CHAIN in ref.stdout + ref.stderr, ref.stdout + ref.stderr
    refused(
        cli("oltp_point_select", *opts, *EVENTS, "run", cwd=tmp_path),
        SELF_SIGNED_IN_CHAIN,
        f"cacert.pem in the working directory (--mysql-ssl=on) ('{tmp_path / 'cacert.pem'}')",
    )
    shutil.copy(certs / "ca.pem", tmp_path / "cacert.pem")
    ok = cli("oltp_point_select", *opts, *EVENTS, "run", cwd=tmp_path)
    assert ok.returncode == 0, ok.stdout + ok.stderr


@pytest.mark.mysql
def test_mysql_every_connection_is_tls(tls_mariadb, certs):
    """prepare (two loading connections), run in two worker processes on the lean wire,
    check and cleanup: the server accepted as many TLS sessions as connections."""
    opts = [*tls_mariadb.options, *DATA, "--mysql-ssl=required", f"--mysql-ssl-ca={certs / 'ca.pem'}", "--threads=2"]
    before, after = ssl_status(tls_mariadb), ssl_status(tls_mariadb)
    own = (after[0] - before[0], after[1] - before[1])  # the status query's own session (TLS or not)
    for args in (["--force", "prepare"], ["--workers=2", "--db-fast-path=on", *EVENTS, "run"], ["check"], ["cleanup"]):
        proc = cli("oltp_read_write", *opts, *args)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    end = ssl_status(tls_mariadb)
    connections, tls_sessions = end[0] - after[0] - own[0], end[1] - after[1] - own[1]
    assert connections >= 4 and tls_sessions == connections, (connections, tls_sessions)


@pytest.mark.pgsql
def test_pgsql_require_verifies_with_a_ca_as_libpq_does(tls_postgres, certs, tmp_path):
    """libpq: sslmode=require with a root CA file behaves as verify-ca; verify-full checks
    the host name (the certificate names 127.0.0.1, not localhost)."""
    opts = [*tls_postgres.options, *DATA]
    assert cli("oltp_point_select", *opts, "--pgsql-sslmode=require", "--force", "prepare").returncode == 0
    refused(
        cli(
            "oltp_point_select",
            *opts,
            "--pgsql-sslmode=require",
            f"--pgsql-ssl-ca={certs / 'wrong-ca.pem'}",
            *EVENTS,
            "run",
        ),
        "TLS/SSL error: unable to get local issuer certificate",
        f"--pgsql-ssl-ca ('{certs / 'wrong-ca.pem'}')",
    )
    refused(
        cli(
            "oltp_point_select",
            *opts,
            "--pgsql-sslmode=require",
            f"--pgsql-ssl-ca={certs / 'wrong-ca.pem'}",
            "--threads=2",
            "--force",
            "prepare",
        ),
        "TLS/SSL error",
    )
    ok = cli(
        "oltp_point_select", *opts, "--pgsql-sslmode=require", f"--pgsql-ssl-ca={certs / 'ca.pem'}", *EVENTS, "run"
    )
    assert ok.returncode == 0, ok.stdout + ok.stderr
    refused(
        cli(
            "oltp_point_select",
            *opts,
            "--pgsql-host=localhost",
            "--pgsql-sslmode=verify-full",
            f"--pgsql-ssl-ca={certs / 'ca.pem'}",
            *EVENTS,
            "run",
        ),
        "Hostname mismatch",
        "not name the host",
        "--pgsql-sslmode=verify-ca",
    )
    # the root CA libpq finds without being told: ~/.postgresql/root.crt
    (tmp_path / ".postgresql").mkdir()
    shutil.copy(certs / "wrong-ca.pem", tmp_path / ".postgresql" / "root.crt")
    refused(
        cli("oltp_point_select", *opts, "--pgsql-sslmode=require", *EVENTS, "run", home=tmp_path),
        "TLS/SSL error",
        "~/.postgresql/root.crt",
    )


@pytest.mark.pgsql
def test_pgsql_every_connection_is_tls(tls_postgres, certs):
    """The server refuses sbtest without TLS (pg_hba), so every command below proves that
    all its connections -- prepare's loaders, run's lean wire, check -- are TLS ones."""
    opts = [*tls_postgres.options, *DATA, "--threads=2"]
    refused(cli("oltp_read_write", *opts, "--pgsql-sslmode=disable", *EVENTS, "run"), "unable to connect")
    tls = ["--pgsql-sslmode=verify-full", f"--pgsql-ssl-ca={certs / 'ca.pem'}"]
    for args in (["--force", "prepare"], ["--db-fast-path=on", *EVENTS, "run"], ["check"], ["cleanup"]):
        proc = cli("oltp_read_write", *opts, *tls, *args)
        assert proc.returncode == 0, proc.stdout + proc.stderr


MYSQL_NOWHERE = ["--db-driver=mysql", "--mysql-host=127.0.0.1", "--mysql-port=1"]
PGSQL_NOWHERE = ["--db-driver=pgsql", "--pgsql-host=127.0.0.1", "--pgsql-port=1"]


@pytest.mark.parametrize(
    "args, named",
    [
        ([*MYSQL_NOWHERE, "--mysql-ssl=required", "--mysql-ssl-ca={missing}"], "--mysql-ssl-ca"),
        ([*MYSQL_NOWHERE, "--mysql-ssl=on", "--mysql-ssl-cert={missing}"], "--mysql-ssl-cert"),
        (
            [
                *MYSQL_NOWHERE,
                "--mysql-ssl=verify_ca",
                "--mysql-ssl-cert={certs}/client-cert.pem",
                "--mysql-ssl-key={missing}",
            ],
            "--mysql-ssl-key",
        ),
        ([*PGSQL_NOWHERE, "--pgsql-sslmode=require", "--pgsql-ssl-ca={missing}"], "--pgsql-ssl-ca"),
        ([*PGSQL_NOWHERE, "--pgsql-sslmode=verify-ca", "--pgsql-ssl-cert={missing}"], "--pgsql-ssl-cert"),
        (
            [
                *PGSQL_NOWHERE,
                "--pgsql-sslmode=require",
                "--pgsql-ssl-cert={certs}/client-cert.pem",
                "--pgsql-ssl-key={missing}",
            ],
            "--pgsql-ssl-key",
        ),
    ],
)
def test_missing_certificate_file_is_one_line_naming_option_and_file(args, named, certs, tmp_path):
    missing = tmp_path / "no-such.pem"
    args = [a.format(missing=missing, certs=certs) for a in args]
    line = refused(cli("oltp_point_select", *args, *EVENTS, "run"))
    assert line == f"FATAL: {named}: cannot read '{missing}': No such file or directory", line


@pytest.mark.parametrize(
    "args, named",
    [
        ([*MYSQL_NOWHERE, "--mysql-ssl-ca={certs}/ca.pem"], "--mysql-ssl-ca needs --mysql-ssl=on"),
        ([*PGSQL_NOWHERE, "--pgsql-ssl-ca={certs}/ca.pem"], "--pgsql-ssl-ca needs --pgsql-sslmode=require"),
    ],
)
def test_certificate_file_the_mode_would_not_use_is_refused(args, named, certs):
    """A CA given with TLS off (MySQL) or with sslmode=prefer (PostgreSQL, which verifies
    nothing then) would give an unverified connection: say so instead."""
    args = [a.format(certs=certs) for a in args]
    refused(cli("oltp_point_select", *args, *EVENTS, "run"), named)


@pytest.mark.parametrize(
    "args, expected",
    [
        (
            [*MYSQL_NOWHERE, "--mysql-ssl=required", "--mysql-ssl-ca={certs}/garbage.pem"],
            "--mysql-ssl-ca ('{certs}/garbage.pem') holds no CA certificate",
        ),
        (
            [
                *MYSQL_NOWHERE,
                "--mysql-ssl=required",
                "--mysql-ssl-cert={certs}/client-cert.pem",
                "--mysql-ssl-key={certs}/server.key",
            ],
            "--mysql-ssl-cert ('{certs}/client-cert.pem') and --mysql-ssl-key ('{certs}/server.key') are not a "
            "certificate and its private key",
        ),
        (
            [
                *PGSQL_NOWHERE,
                "--pgsql-sslmode=require",
                "--pgsql-ssl-cert={certs}/encrypted.pem",
                "--pgsql-ssl-key={certs}/encrypted.key",
            ],
            "--pgsql-ssl-key ('{certs}/encrypted.key') is an encrypted private key and pysysbench takes no passphrase",
        ),
    ],
)
def test_unusable_certificate_file_is_one_line_naming_option_and_file(args, expected, certs):
    """No OpenSSL prompt for a passphrase, no anonymous '[Errno 22]'."""
    args = [a.format(certs=certs) for a in args]
    proc = cli("oltp_point_select", *args, *EVENTS, "run")
    refused(proc, expected.format(certs=certs))
    assert "pass phrase" not in proc.stdout + proc.stderr


def test_certificate_found_without_its_key_names_the_missing_key(certs, tmp_path):
    """--mysql-ssl=on with ./client-cert.pem but no ./client-key.pem (sysbench 1.0.20:
    "error 2026: File 'client-key.pem' not found"), libpq's ~/.postgresql/postgresql.crt
    without postgresql.key ("certificate present, but not private key file"): one line
    naming the missing key, not OpenSSL's 'PEM lib' about the certificate."""
    shutil.copy(certs / "client-cert.pem", tmp_path / "client-cert.pem")
    line = refused(cli("oltp_point_select", *MYSQL_NOWHERE, "--mysql-ssl=on", *EVENTS, "run", cwd=tmp_path))
    assert line == (
        f"FATAL: client-key.pem not found, but client-cert.pem in the working directory "
        f"(--mysql-ssl=on) ('{tmp_path / 'client-cert.pem'}') is there: add the key beside it, "
        "or give --mysql-ssl-cert and --mysql-ssl-key"
    ), line
    (tmp_path / ".postgresql").mkdir()
    shutil.copy(certs / "client-cert.pem", tmp_path / ".postgresql" / "postgresql.crt")
    line = refused(cli("oltp_point_select", *PGSQL_NOWHERE, "--pgsql-sslmode=require", *EVENTS, "run", home=tmp_path))
    assert line == (
        f"FATAL: ~/.postgresql/postgresql.key not found, but ~/.postgresql/postgresql.crt (libpq's "
        f"default) ('{tmp_path / '.postgresql' / 'postgresql.crt'}') is there: add the key beside "
        "it, or give --pgsql-ssl-cert and --pgsql-ssl-key"
    ), line
