"""The library call: ``pysysbench.run(test, options, hooks=None)`` runs one benchmark
on SQLite (a real database, no mock) and returns its outcome."""

from __future__ import annotations

import pytest

import pysysbench
from pysysbench.cli.main import main
from pysysbench.core.errors import InvalidOption, MissingTableError


@pytest.fixture
def db(tmp_path, capsys):
    path = str(tmp_path / "lib.db")
    assert main(["oltp_point_select", f"--sqlite-db={path}", "--table-size=500", "prepare"]) == 0
    capsys.readouterr()
    return path


def test_run_returns_the_outcome_with_its_counts(db, capsys):
    lines, intervals = [], []
    hooks = pysysbench.Hooks(say=lines.append, interval=intervals.append)
    outcome = pysysbench.run(
        "oltp_point_select", {"sqlite-db": db, "table-size": 500, "threads": 2, "events": 300, "time": 0}, hooks
    )
    assert isinstance(outcome, pysysbench.RunOutcome)
    assert outcome.exit_code == 0 and outcome.error is None
    s = outcome.summary
    assert s.events == 300 and s.reads == 300 and s.writes == 0 and s.others == 0
    assert sum(s.thread_events) == 300 and len(s.thread_events) == 2
    assert "Threads started!\n" in lines
    assert capsys.readouterr().out == ""  # a library prints nothing of its own


def test_options_as_items_and_the_result_document(db):
    from pysysbench.stats import results

    outcome = pysysbench.run("oltp_point_select", [f"--sqlite-db={db}", "--table-size=500", "--events=50", "--time=0"])
    assert outcome.summary.events == 50
    doc = results.from_outcome(
        outcome,
        values=_values(db),
        argv=["oltp_point_select", "run"],
        test="oltp_point_select",
        driver="sqlite",
        exit_code=0,
        error=None,
        interrupted=None,
        version=pysysbench.__version__,
    )
    assert doc["summary"]["events"] == 50 and doc["client"]["workers"] == 1


def _values(db):
    from pysysbench.command.cmdline import parse

    return parse(["oltp_point_select", f"--sqlite-db={db}", "run"]).values


def test_errors_are_raised_not_printed(tmp_path, capsys):
    with pytest.raises(InvalidOption, match="bogus"):
        pysysbench.run("oltp_point_select", {"bogus": 1})
    with pytest.raises(MissingTableError, match="run prepare first"):
        pysysbench.run("oltp_point_select", {"sqlite-db": str(tmp_path / "empty.db"), "events": 1})
    assert capsys.readouterr().out == ""
