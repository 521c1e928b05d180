"""--shard-nodes (engine/spans.py) through the dry-run sessions: the counts of write
transactions and of those whose rows are on more than one node equal what the statements
sent say, recomputed here from every statement's id with the placement (MySQL ``id mod N``,
PostgreSQL's hash); failed attempts (--max-retries) and autocommit writes count as the
option says; the option is refused where it cannot count, and changes nothing without it."""

from __future__ import annotations

import numpy as np
import pytest
import test_retries

import pysysbench
from pysysbench.cli.main import main
from pysysbench.drivers.dryrun.session import FAULTS_ENV
from pysysbench.load.placement import node_of
from pysysbench.output.text import summary_block
from pysysbench.report.tables import spans_text
from pysysbench.stats.results import summary_dict

sent = test_retries.sent  # the fixture: every statement the dry-run sessions send, as it is sent
NODES3 = "--shard-nodes=127.0.0.1:1,127.0.0.1:2,127.0.0.1:3"
MY = ["--mysql-dry-run=on", "--tables=2", "--table-size=1000", "--threads=1", "--time=0", "--rand-seed=11"]
PG = ["--db-driver=pgsql", "--pgsql-dry-run=on", *MY[1:]]
WRITES = ("UPDATE", "DELETE", "INSERT")


def _written_id(sql: str, args: tuple) -> int:
    return args[1] if sql.startswith("UPDATE") and "SET c=" in sql else args[0]


def _expected(log: list[tuple[str, tuple]], placement: str) -> tuple[int, int]:
    """(write transactions, those on more than one of 3 nodes) of the committed transactions."""
    writes = spanning = 0
    ids: list[int] = []
    for sql, args in log:
        if sql == "BEGIN":
            ids = []
        elif sql.startswith(WRITES):
            ids.append(_written_id(sql, args))
        elif sql == "COMMIT" and ids:
            writes += 1
            spanning += len(set(node_of(np.asarray(ids), 3, placement).tolist())) > 1
    return writes, spanning


@pytest.mark.parametrize(("base", "placement"), [(MY, "mod"), (PG, "pg-hash")])
def test_counts_equal_the_statements_sent(sent, base, placement):
    outcome = pysysbench.run("oltp_read_write", [*base, "--events=300", NODES3])
    assert outcome.exit_code == 0, outcome.error
    s = outcome.summary
    writes, spanning = _expected(sent, placement)
    assert (s.write_trx, s.spanning_trx) == (writes, spanning) == (300, spanning)
    # three random ids over three nodes: all on one node 1 time in 9
    assert 0.8 < spanning / writes < 0.97
    d = summary_dict(s)
    assert (d["write_trx"], d["multi_node_write_trx"]) == (writes, spanning)
    assert d["multi_node_write_share"] == pytest.approx(spanning / writes)
    text = summary_block(s)
    assert f"    multi-node write transactions:       {spanning:<6d}" in text
    assert f"multi-node share of writes:          {100 * spanning / writes:.2f}%" in text
    assert spans_text(d) == f"{spanning / writes:.1%} of {writes:,}"


def test_the_placement_decides(sent):
    """Two delete/insert pairs per event: on one node exactly when both ids are, by id mod 2."""
    opts = ["--point_selects=0", "--range_selects=off", "--index_updates=0", "--non_index_updates=0"]
    outcome = pysysbench.run(
        "oltp_read_write", [*MY, *opts, "--delete_inserts=2", "--events=200", "--shard-nodes=a:1,b:2"]
    )
    assert outcome.exit_code == 0, outcome.error
    pairs = [args[0] for sql, args in sent if sql.startswith("DELETE")]
    want = sum(a % 2 != b % 2 for a, b in zip(pairs[::2], pairs[1::2], strict=True))
    assert (outcome.summary.write_trx, outcome.summary.spanning_trx) == (200, want)


def test_failed_attempts_are_not_counted(sent, monkeypatch):
    """A transaction retried after a deadlock is counted once, by the ids of its committed try."""
    monkeypatch.setenv(FAULTS_ENV, "1213,1213")
    outcome = pysysbench.run("oltp_read_write", [*MY, "--events=20", "--max-retries=3", NODES3])
    assert outcome.exit_code == 0, outcome.error
    s = outcome.summary
    assert s.retried >= 1
    assert (s.write_trx, s.spanning_trx) == _expected(sent, "mod")


def test_autocommit_writes_are_one_node_each(sent):
    outcome = pysysbench.run("oltp_read_write", [*MY, "--events=50", "--skip_trx=on", NODES3])
    assert outcome.exit_code == 0, outcome.error
    writes = sum(sql.startswith(WRITES) for sql, _ in sent)
    assert (outcome.summary.write_trx, outcome.summary.spanning_trx) == (writes, 0) == (200, 0)
    outcome = pysysbench.run("oltp_insert", [*MY, "--events=30", NODES3])
    assert (outcome.summary.write_trx, outcome.summary.spanning_trx) == (30, 0)


def test_a_failed_autocommit_write_is_not_counted(sent, monkeypatch):
    """An ignored error restarts the event: the UPDATE that failed wrote nothing."""
    monkeypatch.setenv(FAULTS_ENV, "1213,1213,1213")
    args = [*MY, "--events=20", "--mysql-ignore-errors=1213", NODES3]
    outcome = pysysbench.run("oltp_update_non_index", args)
    assert outcome.exit_code == 0, outcome.error
    assert outcome.summary.errors == 3
    writes = sum(sql.startswith(WRITES) for sql, _ in sent) - outcome.summary.errors  # sent less failed
    assert (outcome.summary.write_trx, outcome.summary.spanning_trx) == (writes, 0) == (20, 0)


def test_without_the_option_nothing_changes():
    outcome = pysysbench.run("oltp_read_write", [*MY, "--events=5"])
    s = outcome.summary
    assert (s.write_trx, s.spanning_trx) == (None, None)
    assert "write_trx" not in summary_dict(s)
    assert "multi-node" not in summary_block(s)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--db-driver=sqlite", "oltp_read_write", NODES3, "run"], "--shard-nodes needs a MySQL/MariaDB or PostgreSQL"),
        ([*MY, "oltp_common", NODES3, "prewarm"], None),
        (["--mysql-dry-run=on", "cpu", NODES3, "run"], "'cpu' does not say which ids it writes"),
        ([*MY, "oltp_read_write", "--shard-nodes=lab:/nonexistent", "run"], "--shard-nodes"),
    ],
)
def test_refused_in_one_line(args, says, capsys):
    code = main(args)
    out = capsys.readouterr()
    if says is None:  # a command that runs no events does not look at it
        return
    assert code != 0
    fatal = [line for line in (out.out + out.err).splitlines() if line.startswith("FATAL")]
    assert len(fatal) == 1 and says in fatal[0] and "Traceback" not in out.out + out.err
