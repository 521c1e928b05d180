"""sysbench 1.0.20's own regression suite, run against pysysbench's sysbench face
(issue 18 point 5, issue 40).

``../shared/conformance/run.sh`` (beside the repository; PYSYSBENCH_CONFORMANCE_DIR
names another place) runs the cram transcripts of sysbench's ``tests/t/`` against
an executable named ``sysbench``: here a symbolic link to the ``pysysbench``
console script, so the face is chosen by the program name as a user installs it.
The suite drops and recreates the ``sbtest`` database and uses root on MySQL, so
it runs against PRIVATE servers started here (private_servers.py), never the
shared ones other tests use.  MySQL is reached over the private server's socket,
as sysbench's own CI does: api_sql_mysql.t resets ``--mysql-socket`` and expects
the failed connection to name the default port 3306.

All three lists run (46 tests): those expected to pass are listed in
``conformance_expected.txt`` beside this file, by list, and one of them failing
fails this test (its cram diff is in the message); a test that cannot pass here is
in KNOWN with the only lines its diff may have (the reason is in the list's
comment).  When a change makes another one pass, move it to the list.  The 46 run
in about 5 minutes on a 2-core machine, most of it the OLTP transcripts' 10-second
runs and api_reports.t.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO
from private_servers import PrivateMariaDB, PrivatePostgres, running

HERE = Path(__file__).resolve().parent
EXPECTED = HERE / "conformance_expected.txt"
SUITE = Path(os.environ.get("PYSYSBENCH_CONFORMANCE_DIR", REPO.parent / "shared" / "conformance"))
# private ports of this test (test_faults.py uses 3391/3392/5491); "MY,PG" in the environment overrides
MY_PORT, PG_PORT = (int(p) for p in os.environ.get("PYSYSBENCH_CONFORMANCE_PORTS", "3393,5493").split(","))
CONSOLE = Path(sys.executable).with_name("pysysbench")
RESULT = re.compile(r"^(PASS|FAIL|SKIP) (\S+\.t)", re.M)
# tests that cannot pass here -> the text every changed line of their cram diff holds
KNOWN = {"api_sql_pgsql.t": 'null value in column "a"'}   # PostgreSQL 15's wording (see the list)


def _missing() -> str | None:
    if not (SUITE / "run.sh").exists():
        return f"sysbench's suite is not there ({SUITE}/run.sh; set PYSYSBENCH_CONFORMANCE_DIR)"
    for tool in ("mariadbd", "mariadb-install-db", "mysql", "psql", "runuser"):
        if shutil.which(tool) is None:
            return f"'{tool}' is not installed (the suite needs private MariaDB and PostgreSQL servers)"
    if not CONSOLE.exists():
        return f"the pysysbench console script is not installed ({CONSOLE})"
    return None


pytestmark = pytest.mark.skipif(_missing() is not None, reason=_missing() or "")


def expected() -> list[str]:
    return [line.split("#", 1)[0].strip() for line in EXPECTED.read_text().splitlines()
            if line.split("#", 1)[0].strip()]


@pytest.fixture(scope="module")
def servers():
    with running(PrivateMariaDB(MY_PORT, grants=True), PrivatePostgres(PG_PORT)) as pair:
        yield pair


@pytest.mark.timeout(1800)
def test_sysbench_suite_under_the_sysbench_face(servers, tmp_path):
    my, _ = servers
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "sysbench").symlink_to(CONSOLE)
    names = expected()
    listed = tmp_path / "tests.txt"
    listed.write_text("\n".join(names + list(KNOWN)) + "\n")
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("PYSYSBENCH_FACE", None)
    cmd = [str(SUITE / "run.sh"), "--sysbench-dir", str(shim), "--tests-dir", str(SUITE / "sysbench-1.0.20-tests"),
           "--list", str(listed), "--out", str(out),
           "--mysql-args", f"--mysql-socket={my.dir / 'sock'} --mysql-user=sbtest --mysql-db=sbtest",
           "--mysql-client", f"--socket={my.dir / 'sock'}",
           "--pgsql-args", f"--pgsql-host=127.0.0.1 --pgsql-port={PG_PORT} --pgsql-user=sbtest --pgsql-db=sbtest"]
    if shutil.which("cram") is None and os.environ.get("PYSYSBENCH_CRAM"):
        cmd += ["--cram", os.environ["PYSYSBENCH_CRAM"]]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1700)
    results = dict((name, verdict) for verdict, name in RESULT.findall(proc.stdout))
    assert results, f"run.sh printed no results:\n{proc.stdout}\n{proc.stderr}"
    failed = [n for n in names if results.get(n) != "PASS"]
    diffs = "\n".join((out / f"{n}.diff").read_text()[:3000] for n in failed if (out / f"{n}.diff").exists())
    assert not failed, f"expected to pass, now {[(n, results.get(n)) for n in failed]}:\n{diffs}"
    for name, only in KNOWN.items():    # failing, and by the known reason alone
        diff = out / f"{name}.diff"
        assert results.get(name) == "FAIL" and diff.exists(), f"{name}: {results.get(name)}: move it to the list"
        changed = [line for line in diff.read_text().splitlines()
                   if line[:1] in "+-" and not line.startswith(("+++", "---"))]
        assert changed and all(only in line for line in changed), f"{name} fails otherwise:\n{diff.read_text()}"
