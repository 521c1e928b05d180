"""The history store end to end (issue 43, first slice): real result files written by
pysysbench itself (a small SQLite campaign and a plain run), imported by ``pysysbench
history import`` into a real SQLite file and into a private schema of the machine's
PostgreSQL, listed, shown, imported again without duplicates; bad files one line each;
the schema migrated forward; 1,000 result files in under 10 s.  No mocks."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import DB_NAME, DB_USER, PG_HOST, PG_PORT, REPO, _exclusive, _pg_query, _unreachable

from pysysbench.history.store import MIGRATIONS, Store, locate, pg_url
from pysysbench.stats import results

SECRET = "hunter2-history-secret"
CAMPAIGN = f"""
name = "hist-it"
[labels]
version = "v1"
commit = "abc123"
[connection]
db-driver = "sqlite"
sqlite-db = "{{results_dir}}/sbtest.db"
mysql-password = "{SECRET}"
[data]
tables = 1
table-size = 200
[prepare]
threads = 1
[run]
time = 1
[[workload]]
test = "oltp_point_select"
threads = [1, 2]
"""
IMPORT_BUDGET_S = 10.0


def cli(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    full = dict(os.environ)
    full.pop("PYSYSBENCH_HISTORY_DB", None)
    full.update(env or {})
    full["PYTHONPATH"] = str(REPO)
    return subprocess.run(
        [sys.executable, "-m", "pysysbench", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
        env=full,
    )


def ok(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    proc = cli(*args, env=env)
    assert proc.returncode == 0, f"{args}\n{proc.stdout}\n{proc.stderr}"
    return proc


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> dict[str, Path]:
    """A campaign folder (two runs, labels version/commit) and a plain run's result file."""
    root = tmp_path_factory.mktemp("hist")
    (root / "c.toml").write_text(CAMPAIGN)
    camp = root / "campaign"
    ok("campaign", "run", str(root / "c.toml"), f"--results-dir={camp}", "--progress=plain", "--no-report")
    db = root / "plain.db"
    common = ("oltp_read_only", f"--sqlite-db={db}", "--table-size=200", "--tables=1")
    ok(*common, "prepare")
    plain = root / "plain.json"
    ok(*common, "--time=1", "--report-interval=1", "--threads=2", f"--result-file={plain}", "run")
    return {"campaign": camp, "plain": plain, "root": root}


def campaign_results(camp: Path) -> list[Path]:
    out = []
    for path in sorted(camp.rglob("*.json")):
        try:
            results.load(str(path))
        except Exception:
            continue
        out.append(path)
    return out


def store_runs(db: str, *args: str, env: dict[str, str] | None = None) -> list[dict]:
    return json.loads(ok("history", f"--history-db={db}", "list", "--output-format=json", *args, env=env).stdout)


# --- SQLite -------------------------------------------------------------------------------------


def test_import_files_and_campaign_folders_once(made, tmp_path):
    db = str(tmp_path / "h.sqlite")
    files = campaign_results(made["campaign"])
    assert len(files) == 2
    others = len(list(made["campaign"].rglob("*.json"))) - len(files)
    first = ok("history", f"--history-db={db}", "import", str(made["campaign"]), str(made["plain"]))
    last = first.stdout.strip().splitlines()[-1]
    skipped = f"{others} skipped (1 not a pysysbench result file)" if others == 1 else f"{others} skipped"
    assert last.startswith(f"history import: {len(files) + others + 1} files: 3 runs imported, 0 already there, ")
    assert skipped in last and "0 failed" in last and db in last
    again = ok("history", f"--history-db={db}", "import", str(made["plain"]), str(made["campaign"]))
    assert "0 runs imported, 3 already there" in again.stdout
    runs = store_runs(db)
    assert sorted(r["source"] for r in runs) == sorted(str(p) for p in [*files, made["plain"]])
    assert sqlite3.connect(db).execute("SELECT count(*) FROM pysysbench_runs").fetchone()[0] == 3


def test_list_filters_by_workload_threads_and_labels(made, tmp_path):
    db = str(tmp_path / "h.sqlite")
    ok("history", f"--history-db={db}", "import", str(made["campaign"]))
    ok("history", f"--history-db={db}", "import", str(made["plain"]), "--label", "version=v2", "--label", "date=d1")
    assert {r["workload"] for r in store_runs(db, "--workload", "oltp_point_select")} == {"oltp_point_select"}
    assert len(store_runs(db, "--workload", "oltp_point_select")) == 2
    assert sorted((r["workload"], r["threads"]) for r in store_runs(db, "--threads", "2")) == [
        ("oltp_point_select", 2),
        ("oltp_read_only", 2),
    ]
    v1 = store_runs(db, "--label", "version=v1")
    assert len(v1) == 2 and all(r["labels"]["commit"] == "abc123" for r in v1)
    v2 = store_runs(db, "--label", "version=v2", "--label", "date=d1")
    assert [r["source"] for r in v2] == [str(made["plain"])]
    assert store_runs(db, "--label", "version=v3") == []
    text = ok("history", f"--history-db={db}", "list", "--label", "version=v1").stdout.splitlines()
    assert text[0].split()[:3] == ["ID", "STARTED", "WORKLOAD"] and text[-1] == "2 runs"


def test_show_gives_the_result_file_back(made, tmp_path):
    db = str(tmp_path / "h.sqlite")
    ok("history", f"--history-db={db}", "import", str(made["plain"]))
    shown = json.loads(ok("history", f"--history-db={db}", "show", "1", "--output-format=json").stdout)
    assert shown["document"] == results.load(str(made["plain"]))
    assert shown["source"] == str(made["plain"]) and shown["threads"] == 2
    text = ok("history", f"--history-db={db}", "show", "1").stdout
    assert text.startswith("run 1: oltp_read_only, 2 threads, sqlite (exit code 0)")
    assert f"source:    {made['plain']}" in text
    missing = cli("history", f"--history-db={db}", "show", "99")
    assert missing.returncode == 1 and missing.stderr.strip().endswith(f"no run 99 in the store {db}")


def test_bad_files_fail_one_line_each_and_the_rest_imports(made, tmp_path):
    db = str(tmp_path / "h.sqlite")
    damaged = tmp_path / "damaged.json"
    doc = results.load(str(made["plain"]))
    doc["summary"]["threads"] = "two"
    damaged.write_text(json.dumps(doc))
    log = tmp_path / "sysbench.log"
    log.write_text("sysbench 1.0.20 (using bundled LuaJIT 2.1.0-beta2)\n")
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps({**doc, "format_version": 99}))
    proc = cli("history", f"--history-db={db}", "import", str(damaged), str(log), str(tmp_path / "gone"), str(newer))
    proc2 = cli("history", f"--history-db={db}", "import", str(made["plain"]), str(damaged))
    assert proc.returncode == 1 and proc2.returncode == 1
    failed = [line for line in proc.stdout.splitlines() if line.startswith("history import: failed: ")]
    assert len(failed) == 4, proc.stdout
    assert f"'{damaged}' is a damaged pysysbench result file: summary.threads should be an integer" in failed[0]
    assert failed[1] == (
        f"history import: failed: '{log}' is neither a pysysbench result file nor a sysbench log with a run in it"
    )
    assert "result format version 99" in proc.stdout and "no such file or folder" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr
    assert "1 runs imported" in proc2.stdout and "1 failed" in proc2.stdout


@pytest.mark.skipif(shutil.which("sysbench") is None, reason="the real sysbench is not installed")
def test_text_logs_of_the_real_sysbench_and_of_both_faces_import(tmp_path):
    """A log of two real sysbench 1.0.20 runs (their command lines echoed, as a shell loop
    writes them) and pysysbench's 1.1-face output become three runs with their figures."""
    log = tmp_path / "nightly.log"
    with log.open("w") as out:
        for threads in (1, 2):
            cmd = ["sysbench", "cpu", f"--threads={threads}", "--time=1", "--cpu-max-prime=2000", "run"]
            out.write("+ " + " ".join(cmd) + "\n")
            out.write(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
    face11 = ok("cpu", "--sysbench-compat=1.1", "--time=1", "--cpu-max-prime=2000", "run").stdout
    (tmp_path / "face11.txt").write_text(face11)
    db = str(tmp_path / "h.sqlite")
    proc = ok("history", f"--history-db={db}", "import", str(log), str(tmp_path / "face11.txt"))
    assert "3 runs imported" in proc.stdout and "0 failed" in proc.stdout, proc.stdout
    runs = sorted(store_runs(db, "--workload", "cpu"), key=lambda r: (r["source"], r["threads"]))
    assert [(Path(r["source"]).name, r["threads"]) for r in runs] == [
        ("face11.txt", 1),
        ("nightly.log", 1),
        ("nightly.log", 2),
    ]
    eps = re.search(r"events per second:\s+([\d.]+)", face11)
    assert eps and runs[0]["tps"] == pytest.approx(float(eps.group(1)), abs=0.01)
    assert all(r["tps"] > 0 for r in runs)
    again = ok("history", f"--history-db={db}", "import", str(log))
    assert "0 runs imported, 2 already there" in again.stdout, again.stdout


def test_a_campaign_records_its_runs_when_a_store_is_configured(made, tmp_path):
    """campaign run with PYSYSBENCH_HISTORY_DB set imports its results once; resumed, its
    runs are already there; --history-db names the store too; without either, no store."""
    db = tmp_path / "h.sqlite"
    camp = tmp_path / "camp"
    args = ("campaign", "run", str(made["root"] / "c.toml"), f"--results-dir={camp}", "--progress=plain", "--no-report")
    first = ok(*args, env={"PYSYSBENCH_HISTORY_DB": str(db)})
    assert "history: " in first.stdout and "2 runs imported, 0 already there" in first.stdout, first.stdout
    assert [(r["workload"], r["threads"]) for r in store_runs(str(db))] == [
        ("oltp_point_select", 1),
        ("oltp_point_select", 2),
    ]
    again = ok(*args, f"--history-db={db}")
    assert "0 runs imported, 2 already there" in again.stdout, again.stdout
    other = tmp_path / "xdg"
    plain = ok(*args, env={"XDG_DATA_HOME": str(other)})
    assert "history:" not in plain.stdout and not other.exists()


def test_where_names_the_store(tmp_path):
    xdg = tmp_path / "xdg"
    assert ok("history", "where", env={"XDG_DATA_HOME": str(xdg)}).stdout == f"{xdg}/pysysbench/history.sqlite\n"
    env = {"PYSYSBENCH_HISTORY_DB": str(tmp_path / "env.sqlite")}
    assert ok("history", "where", env=env).stdout.strip() == str(tmp_path / "env.sqlite")
    url = "postgresql://bob:s3cr3t-pw@db.example:5432/hist"
    shown = ok("history", "where", f"--history-db={url}", env=env).stdout.strip()
    assert shown == "postgresql://bob:***@db.example:5432/hist"
    assert not xdg.exists(), "where creates nothing"


def test_the_default_store_is_made_where_where_says(made, tmp_path):
    env = {"XDG_DATA_HOME": str(tmp_path / "xdg")}
    where = ok("history", "where", env=env).stdout.strip()
    ok("history", "import", str(made["plain"]), env=env)
    assert sqlite3.connect(where).execute("SELECT source FROM pysysbench_runs").fetchall() == [(str(made["plain"]),)]


def test_no_password_reaches_the_store(made, tmp_path):
    db = tmp_path / "h.sqlite"
    ok("history", f"--history-db={db}", "import", str(made["campaign"]))
    data = b"".join(p.read_bytes() for p in tmp_path.glob("h.sqlite*"))
    assert b"oltp_point_select" in data  # the check would see the text if it were there
    assert SECRET.encode() not in data


def test_schema_migrates_forward_and_a_newer_store_is_refused(made, tmp_path):
    loc = locate(str(tmp_path / "h.sqlite"))

    async def steps():
        old = await Store.open(loc, migrations={})  # a store from before migration 1: the version table only
        assert await old.version() == 0
        await old.close()
        store = await Store.open(loc)
        assert await store.version() == max(MIGRATIONS)
        await store.close()
        ok("history", f"--history-db={loc.path}", "import", str(made["plain"]))
        later = {**MIGRATIONS, 2: lambda kind: ["ALTER TABLE pysysbench_runs ADD COLUMN note TEXT"]}
        store = await Store.open(loc, migrations=later)
        assert await store.version() == 2 and await store.count() == 1
        await store.close()

    asyncio.run(steps())
    refused = cli("history", f"--history-db={loc.path}", "list")
    assert refused.returncode == 1
    assert refused.stdout.strip() == (
        f"FATAL: history store {loc.path} has schema version 2; this pysysbench knows up to 1: upgrade pysysbench"
    )
    versions = sqlite3.connect(loc.path).execute("SELECT version FROM pysysbench_schema_version").fetchall()
    assert versions == [(1,), (2,)]


def test_a_thousand_result_files_import_in_under_ten_seconds(made, tmp_path):
    folder = copies(made, tmp_path / "many", 1000)
    db = str(tmp_path / "h.sqlite")
    start = time.perf_counter()
    proc = ok("history", f"--history-db={db}", "import", str(folder))
    took = time.perf_counter() - start
    assert "1000 files: 1000 runs imported" in proc.stdout
    assert len([line for line in proc.stdout.splitlines() if line.endswith("/1000 files")]) == 9
    assert took < IMPORT_BUDGET_S, f"1,000 result files took {took:.1f} s"


def copies(made, folder: Path, n: int) -> Path:
    """``n`` result files: the plain run's, each with another start time and commit."""
    doc = results.load(str(made["plain"]))
    for i in range(n):
        sub = folder / f"d{i % 10}"
        sub.mkdir(parents=True, exist_ok=True)
        doc["started_at"] = f"2026-01-01T{i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}+00:00"
        doc["labels"] = {"commit": f"c{i:04d}"}
        (sub / f"r{i:04d}.json").write_text(json.dumps(doc, indent=1) + "\n")
    return folder


def imports_at_once(store: str, folder: Path, n: int = 3) -> list[int]:
    """``n`` imports of ``folder`` into a new ``store`` started together: the runs each imported."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("PYSYSBENCH_HISTORY_DB", None)
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "pysysbench", "history", f"--history-db={store}", "import", str(folder)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(n)
    ]
    imported = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, out + err
        imported.append(int(out.strip().splitlines()[-1].split(" files: ")[1].split(" runs imported")[0]))
    return imported


def test_imports_at_once_take_turns_on_a_new_sqlite_store(made, tmp_path):
    folder = copies(made, tmp_path / "many", 300)
    db = tmp_path / "h.sqlite"
    assert sum(imports_at_once(str(db), folder)) == 300
    assert sqlite3.connect(db).execute("SELECT count(*) FROM pysysbench_runs").fetchone()[0] == 300


# --- PostgreSQL ---------------------------------------------------------------------------------


@pytest.fixture
def pg_store():
    """A private schema of the machine's PostgreSQL (database sbtest), dropped afterwards."""
    reason = _unreachable("pgsql", PG_PORT)
    if reason:
        pytest.fail(reason)
    schema = f"pysysbench_hist_{os.getpid()}"
    url = pg_url(user=DB_USER, host=PG_HOST, port=PG_PORT, database=DB_NAME, schema=schema)
    with _exclusive():
        try:
            yield url, schema
        finally:
            asyncio.run(_pg_query(f"DROP SCHEMA IF EXISTS {schema} CASCADE", user=DB_USER))


@pytest.mark.pgsql
def test_postgresql_store_keeps_runs_as_sqlite_does(made, pg_store):
    url, schema = pg_store
    first = ok("history", f"--history-db={url}", "import", str(made["campaign"]), str(made["plain"]))
    assert "3 runs imported, 0 already there" in first.stdout
    again = ok("history", f"--history-db={url}", "import", str(made["campaign"]), str(made["plain"]))
    assert "0 runs imported, 3 already there" in again.stdout
    assert len(store_runs(url, "--label", "version=v1")) == 2
    plain = store_runs(url, "--workload", "oltp_read_only")
    assert [r["source"] for r in plain] == [str(made["plain"])]
    shown = json.loads(ok("history", f"--history-db={url}", "show", str(plain[0]["id"]), "--output-format=json").stdout)
    assert shown["document"] == results.load(str(made["plain"]))
    rows = asyncio.run(
        _pg_query(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1",
            user=DB_USER,
            args=(schema,),
        )
    )
    assert rows == [("pysysbench_run_labels",), ("pysysbench_runs",), ("pysysbench_schema_version",)]
    version = asyncio.run(_pg_query(f"SELECT version FROM {schema}.pysysbench_schema_version", user=DB_USER))
    assert version == [(1,)]


@pytest.mark.pgsql
def test_postgresql_url_password_is_never_shown(made, pg_store):
    url, schema = pg_store
    with_pw = url.replace(f"{DB_USER}@", f"{DB_USER}:pw-{SECRET}@")
    proc = cli("history", f"--history-db={with_pw}", "import", str(made["plain"]))
    assert SECRET not in proc.stdout + proc.stderr
    assert f"{DB_USER}:***@" in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    assert ok("history", f"--history-db={with_pw}", "where").stdout.strip() == url.replace(
        f"{DB_USER}@", f"{DB_USER}:***@"
    )


def test_a_store_that_cannot_be_opened_is_one_line(tmp_path):
    not_a_db = tmp_path / "notes.txt"
    not_a_db.write_text("not a database\n" * 100)
    cases = {
        str(tmp_path): f"FATAL: cannot open the history store {tmp_path}: cannot open SQLite database",
        str(not_a_db): f"FATAL: cannot open the history store {not_a_db}: cannot open SQLite database",
        f"postgresql://sbtest:{SECRET}@127.0.0.1:1/sbtest": "FATAL: cannot open the history store "
        "postgresql://sbtest:***@127.0.0.1:1/sbtest: unable to connect to PostgreSQL server on host '127.0.0.1', "
        "port 1: ",
    }
    for store, start in cases.items():
        proc = cli("history", f"--history-db={store}", "list")
        assert proc.returncode == 1 and proc.stderr == "", proc.stdout + proc.stderr
        assert proc.stdout.startswith(start) and proc.stdout.count("\n") == 1, proc.stdout
        assert SECRET not in proc.stdout
    assert proc.stdout.rstrip().endswith("check the URL's host and port")
    assert not_a_db.read_text() == "not a database\n" * 100


@pytest.mark.pgsql
def test_imports_at_once_on_a_new_postgresql_store(made, pg_store, tmp_path):
    url, schema = pg_store
    folder = copies(made, tmp_path / "many", 300)
    assert sum(imports_at_once(url, folder)) == 300
    count = asyncio.run(_pg_query(f"SELECT count(*) FROM {schema}.pysysbench_runs", user=DB_USER))
    assert count == [(300,)]
