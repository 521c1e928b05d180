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

sysbench 1.1.0's suite runs twice: against pysysbench under PYSYSBENCH_COMPAT=1.1, and
against the reference 1.1.0 binary (built once into ~/.cache/sysbench-1.1.0 by
``../shared/tools/build-sysbench-1.1.sh``; skipped, saying why, without its build tools), so
CI shows both scores; each has its list (conformance_expected_1.1*.txt).
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
EXPECTED_11 = HERE / "conformance_expected_1.1.txt"  # sysbench 1.1.0's suite under PYSYSBENCH_COMPAT=1.1
EXPECTED_11_REF = HERE / "conformance_expected_1.1_reference.txt"  # the same suite against the 1.1.0 binary
SUITE = Path(os.environ.get("PYSYSBENCH_CONFORMANCE_DIR", REPO.parent / "shared" / "conformance"))
# private ports of this test (test_faults.py uses 3391/3392/5491); "MY,PG" in the environment overrides
MY_PORT, PG_PORT = (int(p) for p in os.environ.get("PYSYSBENCH_CONFORMANCE_PORTS", "3393,5493").split(","))
CONSOLE = Path(sys.executable).with_name("pysysbench")
RESULT = re.compile(r"^(PASS|FAIL|SKIP) (\S+\.t)", re.M)
# the reference sysbench 1.1.0, built once into this cache folder by the shared build script
REFERENCE_PREFIX = Path(
    os.environ.get(
        "PYSYSBENCH_SYSBENCH11_PREFIX",
        Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "sysbench-1.1.0",
    )
)
BUILD_11 = SUITE.parent / "tools" / "build-sysbench-1.1.sh"
# what the build needs (mysql_config comes with libmariadb-dev-compat); .ci/run installs them
BUILD_PACKAGES = (
    "autoconf",
    "automake",
    "libtool",
    "pkg-config",
    "make",
    "libmariadb-dev",
    "libpq-dev",
    "libmariadb-dev-compat",
)
# tests that cannot pass here -> the text every changed line of their cram diff holds
KNOWN = {"api_sql_pgsql.t": 'null value in column "a"'}  # PostgreSQL 15's wording (see the list)


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


def expected(path: Path = EXPECTED) -> list[str]:
    return [line.split("#", 1)[0].strip() for line in path.read_text().splitlines() if line.split("#", 1)[0].strip()]


@pytest.fixture(scope="module")
def servers():
    with running(PrivateMariaDB(MY_PORT, grants=True), PrivatePostgres(PG_PORT)) as pair:
        yield pair


def run_suite(
    my,
    tmp_path,
    tests_dir: Path,
    names: list[str],
    env_extra: dict[str, str],
    args: tuple[str, ...] = (),
    binary: Path = CONSOLE,
) -> tuple[dict[str, str], Path]:
    """Run ``names`` of the suite in ``tests_dir`` against ``binary`` (the pysysbench console
    script unless told) linked as ``sysbench``: each name's verdict (PASS, FAIL, SKIP) and the
    folder of the diffs."""
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "sysbench").symlink_to(binary)
    listed = tmp_path / "tests.txt"
    listed.write_text("\n".join(names) + "\n")
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=str(REPO), **env_extra)
    env.pop("PYSYSBENCH_FACE", None)
    cmd = [
        str(SUITE / "run.sh"),
        "--sysbench-dir",
        str(shim),
        "--tests-dir",
        str(tests_dir),
        "--list",
        str(listed),
        "--out",
        str(out),
        *args,
        "--mysql-args",
        f"--mysql-socket={my.dir / 'sock'} --mysql-user=sbtest --mysql-db=sbtest",
        "--mysql-client",
        f"--socket={my.dir / 'sock'}",
        "--pgsql-args",
        f"--pgsql-host=127.0.0.1 --pgsql-port={PG_PORT} --pgsql-user=sbtest --pgsql-db=sbtest",
    ]
    if shutil.which("cram") is None and os.environ.get("PYSYSBENCH_CRAM"):
        cmd += ["--cram", os.environ["PYSYSBENCH_CRAM"]]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1700)
    results = dict((name, verdict) for verdict, name in RESULT.findall(proc.stdout))
    assert results, f"run.sh printed no results:\n{proc.stdout}\n{proc.stderr}"
    return results, out


def diffs(out: Path, names: list[str]) -> str:
    return "\n".join((out / f"{n}.diff").read_text()[:3000] for n in names if (out / f"{n}.diff").exists())


@pytest.mark.timeout(1800)
def test_sysbench_suite_under_the_sysbench_face(servers, tmp_path):
    my, _ = servers
    names = expected()
    results, out = run_suite(my, tmp_path, SUITE / "sysbench-1.0.20-tests", names + list(KNOWN), {})
    failed = [n for n in names if results.get(n) != "PASS"]
    assert not failed, f"expected to pass, now {[(n, results.get(n)) for n in failed]}:\n{diffs(out, failed)}"
    for name, only in KNOWN.items():  # failing, and by the known reason alone
        diff = out / f"{name}.diff"
        assert results.get(name) == "FAIL" and diff.exists(), f"{name}: {results.get(name)}: move it to the list"
        changed = [
            line for line in diff.read_text().splitlines() if line[:1] in "+-" and not line.startswith(("+++", "---"))
        ]
        assert changed and all(only in line for line in changed), f"{name} fails otherwise:\n{diff.read_text()}"


@pytest.mark.timeout(1800)
def test_sysbench_11_suite_under_the_11_face(servers, tmp_path):
    """sysbench 1.1.0's own suite (46 tests) against ``sysbench`` with PYSYSBENCH_COMPAT=1.1:
    the tests in conformance_expected_1.1.txt must pass, and every other one must still fail
    (a test that starts to pass goes into the list, so the list is the score)."""
    my, _ = servers
    tests_dir = SUITE / "sysbench-1.1" / "tests"
    everything = sorted(p.name for p in (tests_dir / "t").glob("*.t"))
    names = expected(EXPECTED_11)
    results, out = run_suite(
        my, tmp_path, tests_dir, everything, {"PYSYSBENCH_COMPAT": "1.1"}, ("--version-string", "sysbench 1.1.0")
    )
    failed = [n for n in names if results.get(n) != "PASS"]
    assert not failed, f"expected to pass, now {[(n, results.get(n)) for n in failed]}:\n{diffs(out, failed)}"
    newly = [n for n in everything if n not in names and results.get(n) == "PASS"]
    assert not newly, f"these now pass: add them to {EXPECTED_11.name}: {newly}"


def _is_110(binary: Path) -> bool:
    if not binary.exists():
        return False
    proc = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=30)
    return proc.stdout.startswith("sysbench 1.1.0")


@pytest.fixture(scope="module")
def reference_11() -> Path:
    """The reference sysbench 1.1.0 binary: the cached build, else built once with the shared
    script (about 3 minutes), else a skip that says what is missing."""
    binary = REFERENCE_PREFIX / "bin" / "sysbench"
    if _is_110(binary):
        return binary
    if not BUILD_11.exists():
        pytest.skip(f"the reference 1.1.0 cannot be built: {BUILD_11} is not there")
    missing = [p for p in BUILD_PACKAGES if subprocess.run(["dpkg", "-s", p], capture_output=True).returncode != 0]
    if missing or shutil.which("dpkg") is None:
        pytest.skip(f"the reference 1.1.0 cannot be built: missing Debian packages {missing or ['dpkg']}")
    proc = subprocess.run(["bash", str(BUILD_11), str(REFERENCE_PREFIX)], capture_output=True, text=True, timeout=1500)
    assert proc.returncode == 0 and _is_110(binary), f"building sysbench 1.1.0 failed:\n{proc.stderr[-3000:]}"
    return binary


@pytest.mark.timeout(3600)
def test_sysbench_11_suite_against_the_110_reference_binary(servers, reference_11, tmp_path):
    """The same 46 tests against the REFERENCE 1.1.0 binary, so CI shows its score beside
    pysysbench's: conformance_expected_1.1_reference.txt lists the tests it passes here, and
    every other one must fail (a change of the machine's servers or client library moves them)."""
    my, _ = servers
    tests_dir = SUITE / "sysbench-1.1" / "tests"
    everything = sorted(p.name for p in (tests_dir / "t").glob("*.t"))
    names = expected(EXPECTED_11_REF)
    results, out = run_suite(
        my, tmp_path, tests_dir, everything, {}, ("--version-string", "sysbench 1.1.0"), binary=reference_11
    )
    passed = sorted(n for n in everything if results.get(n) == "PASS")
    print(f"sysbench 1.1.0 reference binary: {len(passed)}/{len(everything)} of 1.1's suite")
    failed = [n for n in names if results.get(n) != "PASS"]
    assert not failed, f"the reference now fails {[(n, results.get(n)) for n in failed]}:\n{diffs(out, failed)}"
    newly = [n for n in everything if n not in names and n in passed]
    assert not newly, f"the reference now passes these: add them to {EXPECTED_11_REF.name}: {newly}"
