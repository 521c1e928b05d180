"""Acceptance check: per-event server-side statement counts of pysysbench equal
those of the real sysbench 1.0.20 binary run with the same options.

For every bundled workload on MariaDB and PostgreSQL the tables are prepared
once (with pysysbench), then ``sysbench <workload> ... run`` and ``pysysbench
<workload> ... run`` are run with identical options (``--threads=1
--events=N --time=0``) and the statements the server executed are captured
for each (conftest: MariaDB general log, PostgreSQL statement log and
pg_stat_statements) and compared per statement kind and per protocol command
(prepared ``Execute`` vs plain ``Query``).

With one thread the counts per kind are deterministic as long as every DML
hits a row, which the bundled workloads guarantee (DELETE/INSERT pairs keep
the id set) -- except oltp_delete, whose rows disappear: there the number of
DELETE statements is compared, not the rows they removed.  bulk_insert inserts
ids 1..N, so its table is re-created between the two runs.
"""

from __future__ import annotations

import shutil
import subprocess
from collections import Counter

import pytest

# PostgreSQL's capture reads pg_stat_statements, which the machine's server does not preload:
# the PostgreSQL targets here are the session's private server (conftest.py)
pytestmark = pytest.mark.private_server("pgsql")

EVENTS = 20
TABLES, TABLE_SIZE = 2, 200
SYSBENCH = "/usr/bin/sysbench"

WORKLOADS = [
    "oltp_read_write",
    "oltp_read_only",
    "oltp_write_only",
    "oltp_point_select",
    "oltp_update_index",
    "oltp_update_non_index",
    "oltp_insert",
    "oltp_delete",
    "select_random_points",
    "select_random_ranges",
    "bulk_insert",
]


def data_args(workload: str) -> list[str]:
    if workload == "bulk_insert":
        return []
    if workload.startswith("select_random"):
        return ["--tables=1", f"--table-size={TABLE_SIZE}"]
    return [f"--tables={TABLES}", f"--table-size={TABLE_SIZE}"]


def sysbench_binary() -> str:
    path = shutil.which("sysbench") or (SYSBENCH if shutil.which(SYSBENCH) else None)
    if not path:
        pytest.fail("the sysbench 1.0.20 binary is not installed (apt-get install sysbench)", pytrace=False)
    return path


def run_sysbench(*args: str) -> subprocess.CompletedProcess:
    cmd = [sysbench_binary(), *args]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"{' '.join(cmd)} timed out\n{exc.stdout}\n{exc.stderr}")
    assert proc.returncode == 0, (
        f"$ {' '.join(cmd)}\nexit code {proc.returncode}\n--- stdout ---\n{proc.stdout}\n--- stderr ---\n{proc.stderr}"
    )
    return proc


def per_event(counts, events: int) -> dict:
    return {k: n / events for k, n in sorted(counts.items(), key=lambda kv: str(kv[0]))}


def test_sysbench_version():
    out = subprocess.run([sysbench_binary(), "--version"], capture_output=True, text=True).stdout
    assert out.strip().startswith("sysbench 1.0.20"), out


@pytest.mark.parametrize("workload", WORKLOADS)
def test_same_statements_as_sysbench(server_db, workload, run_cli, parse_summary):
    compare(server_db, workload, [], run_cli, parse_summary)


# the per-event mix options of spec 3.1, and the text protocol
VARIANTS = [
    ("oltp_read_write", ["--db-ps-mode=disable"]),
    ("oltp_read_write", ["--skip_trx=on"]),
    ("oltp_read_write", ["--range_selects=off", "--point_selects=3"]),
    ("oltp_read_only", ["--simple_ranges=0", "--sum_ranges=2", "--order_ranges=0", "--distinct_ranges=3"]),
    ("oltp_write_only", ["--index_updates=2", "--non_index_updates=0", "--delete_inserts=2"]),
    ("oltp_point_select", ["--point_selects=5"]),  # forced to 1 by the script
    ("oltp_update_index", ["--index_updates=3"]),
    ("oltp_insert", ["--auto_inc=off"]),  # empty tables, client-generated ids
    ("select_random_points", ["--random_points=3"]),
    ("select_random_ranges", ["--number_of_ranges=4", "--delta=20"]),
]


@pytest.mark.parametrize("workload,extra", VARIANTS, ids=[f"{w}{''.join(e)}" for w, e in VARIANTS])
def test_same_statements_with_options(server_db, workload, extra, run_cli, parse_summary):
    compare(server_db, workload, extra, run_cli, parse_summary)


def compare(db, workload: str, extra: list[str], run_cli, parse_summary) -> None:
    data = data_args(workload) + extra
    common = [*db.opts, *data, "--threads=1", f"--events={EVENTS}", "--time=0"]
    run_cli.ok(workload, *db.opts, *data, "prepare")

    with db.capture() as ref:
        sb = run_sysbench(workload, *common, "run")
    if workload == "bulk_insert":  # sysbench inserted ids 1..N: start again from an empty table
        run_cli.ok(workload, *db.opts, *data, "cleanup")
        run_cli.ok(workload, *db.opts, *data, "prepare")
    with db.capture() as got:
        py = run_cli.ok(workload, *common, "run")

    ref_kinds, got_kinds = ref.event_kinds(), got.event_kinds()
    assert ref_kinds, f"nothing captured for sysbench:\n{sb.stdout}"
    assert not [k for k in ref_kinds if k.startswith("unknown")], f"unclassified sysbench statements: {ref_kinds}"
    assert got_kinds == ref_kinds, (
        f"{db.name} {workload}: statements per event differ\n"
        f"  sysbench  : {per_event(ref_kinds, EVENTS)}\n  pysysbench: {per_event(got_kinds, EVENTS)}"
    )

    # the same protocol per kind: prepared (Execute) or plain text (Query)
    ref_cmds = {kc: n for kc, n in ref.commands().items() if kc[0] in ref_kinds}
    got_cmds = {kc: n for kc, n in got.commands().items() if kc[0] in got_kinds}
    assert got_cmds == ref_cmds, f"{db.name} {workload}: sysbench {ref_cmds}\npysysbench {got_cmds}"

    if db.name == "pgsql":
        # pg_stat_statements sees the same (including its first-execution-only count of
        # prepared BEGIN/COMMIT, which shows that both prepare them once per connection)
        ref_pgss = {k: n for k, n in ref.pgss.items() if k in ref_kinds}
        got_pgss = {k: n for k, n in got.pgss.items() if k in got_kinds}
        assert got_pgss == ref_pgss, f"pg_stat_statements: sysbench {ref_pgss}, pysysbench {got_pgss}"

    # and the same report counters (oltp_delete: rows already gone turn writes into others)
    ref_rep, got_rep = parse_summary(sb.stdout), parse_summary(py.stdout)
    keys = ("read", "total", "transactions", "queries", "events", "ignored_errors", "reconnects")
    if workload != "oltp_delete":
        keys += ("write", "other")
    assert {k: got_rep[k] for k in keys} == {k: ref_rep[k] for k in keys}, (ref_rep, got_rep)


# ------------------------------------------------------------------ prepare ---

BULK_MAX = 524_288  # sysbench's bulk insert buffer (spec 2.4)
PREPARE_SIZE = 2800  # ~2 700 rows fit one INSERT: two statements per table


def load_rows(sql: str) -> list[str]:
    """The row literals of a multi-row INSERT ``...VALUES(r1),(r2)`` (c/pad hold no parentheses)."""
    body = sql[sql.index(" VALUES(") + len(" VALUES") :]
    parts = body[1:-1].split("),(")
    return [f"({p})" for p in parts]


def check_batching(stmts: list[str], who: str) -> None:
    """Spec 2.4: a statement is sent when the next row (+ comma + terminator) would not fit."""
    for i, sql in enumerate(stmts):
        assert len(sql) + 1 <= BULK_MAX, f"{who}: INSERT #{i} is {len(sql)} bytes"
        nxt = stmts[i + 1] if i + 1 < len(stmts) else None
        if nxt is not None and nxt.split("(", 1)[0] == sql.split("(", 1)[0]:  # same table
            first = load_rows(nxt)[0]
            assert len(sql) + 1 + len(first) + 1 > BULK_MAX, (
                f"{who}: INSERT #{i} ({len(sql)} bytes) was sent although the next row "
                f"({len(first)} bytes) still fitted"
            )


@pytest.mark.parametrize(
    "extra",
    [[], ["--auto_inc=off"], ["--create_secondary=off"]],
    ids=["default", "auto_inc=off", "create_secondary=off"],
)
def test_prepare_same_statements(server_db, extra, run_cli):
    """``--load-method=insert`` (sysbench's own prepare) sends sysbench's statements:
    same DDL text, same order, no COMMITs, multi-row INSERTs flushed at the same
    512 KiB boundary.  (pysysbench's default load method, ``auto``, deliberately
    uses the server's bulk path instead: LOAD DATA LOCAL INFILE / COPY.)"""
    db = server_db
    args = ["oltp_read_write", *db.opts, "--tables=2", f"--table-size={PREPARE_SIZE}", *extra]
    with db.capture() as ref:
        run_sysbench(*args, "prepare")
    run_sysbench(*args, "cleanup")
    with db.capture() as got:
        run_cli.ok(*args, "--load-method=insert", "prepare")

    def shape(cap):
        # pysysbench checks that the table does not exist first (an extra, non-event query)
        return [
            (kind, cmd, sql if kind == "ddl" else None)
            for kind, cmd, sql in cap.items()
            if kind not in ("table_check", "preflight")
        ]

    assert shape(got) == shape(ref)

    for cap, who in ((ref, "sysbench"), (got, "pysysbench")):
        loads = [sql for kind, _, sql in cap.items() if kind == "load_insert"]
        check_batching(loads, who)
        for t in (1, 2):
            rows = [r for sql in loads if sql.startswith(f"INSERT INTO sbtest{t}(") for r in load_rows(sql)]
            assert len(rows) == PREPARE_SIZE, (who, t, len(rows))
            if "--auto_inc=off" in extra:
                assert [int(r[1:].split(",", 1)[0]) for r in rows] == list(range(1, PREPARE_SIZE + 1))

    # both sent the same number of INSERTs per table (the row length is fixed but for k's digits)
    def count(cap):
        return Counter(sql.split("(", 1)[0] for kind, _, sql in cap.items() if kind == "load_insert")

    assert count(got) == count(ref)


def test_bulk_insert_batches_like_sysbench(server_db, run_cli, parse_summary):
    """bulk_insert's rows are deterministic ((1,1),(2,2),...): with enough events to
    fill the 512 KiB buffer, both tools send byte-identical INSERT statements."""
    db = server_db
    events = 45_000  # ~40 000 rows fit one statement: one flush at 512 KiB, one at thread end
    common = [*db.opts, "--threads=1", f"--events={events}", "--time=0"]
    run_cli.ok("bulk_insert", *db.opts, "prepare")
    with db.capture() as ref:
        sb = run_sysbench("bulk_insert", *common, "run")
    run_cli.ok("bulk_insert", *db.opts, "cleanup")
    run_cli.ok("bulk_insert", *db.opts, "prepare")
    with db.capture() as got:
        py = run_cli.ok("bulk_insert", *common, "run")

    ref_sql = [sql for kind, _, sql in ref.items() if kind == "bulk_insert"]
    got_sql = [sql for kind, _, sql in got.items() if kind == "bulk_insert"]
    assert len(ref_sql) == 2, [len(s) for s in ref_sql]
    assert [len(s) for s in got_sql] == [len(s) for s in ref_sql]
    assert got_sql == ref_sql
    assert int(db.scalar("SELECT COUNT(*) FROM sbtest1")) == events
    keys = ("read", "write", "other", "transactions", "queries")
    assert {k: parse_summary(py.stdout)[k] for k in keys} == {k: parse_summary(sb.stdout)[k] for k in keys}
