"""Every example campaign survives the errors its target raises.

Each workload's first planned run (every variant's) runs as the campaign plans it, on
the dry-run session (``--mysql-dry-run`` / ``--pgsql-dry-run``) with the target's errors
injected (``PYSYSBENCH_DRY_RUN_ERRORS``): it must end with exit code 0 and count every
injected code, classified by the campaign's own ignore list.  An ignore list replaces
the driver's default one (sysbench's ``--mysql-ignore-errors``), so a list written for
one server's codes alone (the TiDB report's 1062,2013,8028,9007) makes a deadlock fatal.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from pysysbench.campaign import spec
from pysysbench.campaign.plan import Planner
from pysysbench.cli.main import main
from pysysbench.command.cmdline import choose_driver
from pysysbench.command.library import parse_request
from pysysbench.core.errors import IgnorableError
from pysysbench.drivers.dryrun.session import FAULTS_ENV

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
# what every MySQL-protocol server raises under contention: sysbench's default ignore list
# (1213 deadlock, 1020 record changed, 1205 lock wait timeout)
MYSQL = ("1213", "1020", "1205")
# PostgreSQL: deadlock, serialization failure, unique violation (sysbench's ignored SQLSTATEs)
PGSQL = ("40P01", "40001", "23505")
TARGET_ERRORS = {
    # TiDB: its write conflicts (9007, 8002 for SELECT ... FOR UPDATE), schema change (8028),
    # and the rest of its report's list (1062 duplicate key, 2013 lost connection)
    "tidb.toml": MYSQL + ("8002", "9007", "8028", "1062", "2013"),
}
RUN_BOUNDS = [
    "--threads=2",
    "--events=300",
    "--time=120",  # the events end it; the time only bounds a hang
    "--warmup-time=0",
    "--report-interval=0",
]


def _runs(path: Path, tmp_path: Path) -> list[tuple[str, list[str]]]:
    """(workload, words) of the first planned run of every workload and variant."""
    c = spec.load(str(path))
    planner = Planner(c, str(tmp_path / "R"), 100)
    out = []
    for w in c.workloads:
        for v in c.variants or (None,):
            run = planner.run(w, w.threads[0] if w.threads else w.auto.start, 1, "check", v)
            out.append((f"{w.name}{'-' + v.name if v else ''}", run.request.words()))
    return out


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("*.toml")))
def test_example_survives_its_targets_errors(name, tmp_path, monkeypatch, capsys):
    runs = _runs(EXAMPLES / name, tmp_path)
    test, *options, command = runs[0][1]
    driver = choose_driver(parse_request(test, command, options).values)
    if driver == "sqlite":
        # no dry run and no ignore list: a locked or busy database always restarts the event
        from pysysbench.drivers.base import Counters
        from pysysbench.drivers.sqlite.session import _error

        for msg in ("database is locked", "database table is locked"):
            assert isinstance(_error(sqlite3.OperationalError(msg), "UPDATE", Counters()), IgnorableError)
        return
    codes = TARGET_ERRORS.get(name) or {"mysql": MYSQL, "pgsql": PGSQL}[driver]
    monkeypatch.setenv(FAULTS_ENV, ",".join(codes))
    for workload, words in runs:
        result = tmp_path / f"{workload}.json"
        argv = words[:-1] + [f"--{driver}-dry-run=on", *RUN_BOUNDS, f"--result-file={result}", words[-1]]
        code = main(argv)
        out, err = capsys.readouterr()
        assert code == 0, f"{name} {workload}: exit {code}: {(out + err).strip().splitlines()[-1:]}"
        summary = json.loads(result.read_text())["summary"]
        assert set(codes) <= set(summary["errors_by_code"]), f"{name} {workload}: {summary['errors_by_code']}"
        assert summary["events"] == 300


def test_the_reports_own_list_alone_ends_the_run_on_a_deadlock(tmp_path, monkeypatch, capsys):
    # what examples/tidb.toml did: its list replaced the default one, so 1213 was fatal
    monkeypatch.setenv(FAULTS_ENV, "1213")
    argv = ["oltp_update_index", "--mysql-dry-run=on", "--mysql-ignore-errors=1062,2013,8028,9007", *RUN_BOUNDS, "run"]
    assert main(argv) == 1
    assert (
        "FATAL: MySQL error 1213 (error injected by the dry run (PYSYSBENCH_DRY_RUN_ERRORS)) for query "
        "'UPDATE sbtest1 SET k=k+1 WHERE id=?'" in capsys.readouterr().out
    )
    assert main([*argv[:-1], "--mysql-ignore-errors=1213,1020,1205,1062,2013,8028,9007", "run"]) == 0


def test_a_campaign_warns_when_its_ignore_list_drops_the_default_codes(tmp_path, capsys):
    text = (
        (EXAMPLES / "tidb.toml")
        .read_text()
        .replace('"1213,1020,1205,1062,2013,8002,8028,9007"', '"1062,2013,8028,9007"')
    )
    path = tmp_path / "tidb.toml"
    path.write_text(text)
    assert main(["campaign", "check", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert (
        out.count(
            "WARNING: --mysql-ignore-errors=1062,2013,8028,9007 replaces the default list 1213,1020,1205 "
            "(as in sysbench), so errors 1213, 1020, 1205 end the run; list them too to keep ignoring "
            "them"
        )
        == 1
    )
    assert main(["campaign", "check", str(EXAMPLES / "tidb.toml")]) == 0
    assert "WARNING" not in capsys.readouterr().out
    pg = tmp_path / "pg.toml"
    pg.write_text(
        '[connection]\ndb-driver = "pgsql"\n[run]\noptions = { pgsql-ignore-errors = "40P01" }\n'
        '[[workload]]\ntest = "oltp_read_write"\nthreads = [1]\n'
    )
    assert main(["campaign", "check", str(pg)]) == 0
    assert (
        "WARNING: --pgsql-ignore-errors=40P01 replaces the default list 40P01,23505,40001 (as in sysbench), "
        "so errors 23505, 40001 end the run" in capsys.readouterr().out
    )
