"""Statements per event, as the SERVER saw them, for every bundled workload on
SQLite, MariaDB and PostgreSQL (spec 3.5, 3.11, 5.11, 5.12).

Each test prepares a small data set, runs ``--threads=1 --events=N --time=0``
(one thread: no deadlocks, and every UPDATE/DELETE hits a row because the
DELETE/INSERT pairs keep the id set intact) and checks

* the statements the server executed, per kind, equal N x the spec's per-event
  mix (MariaDB general log, PostgreSQL statement log + pg_stat_statements);
* prepared statements are used where sysbench uses them (``Execute``) and plain
  queries where it sends text (oltp_insert, bulk_insert);
* the read/write/other counters of the report match what the server executed
  (a read is a SELECT, a write a DML that changed rows, other = BEGIN/COMMIT and
  DML that hit nothing).

SQLite has no server to observe: the report counters are checked against the
spec and against the data.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest

# PostgreSQL's capture reads pg_stat_statements, which the machine's server does not preload:
# the PostgreSQL targets here are the session's private server (conftest.py)
pytestmark = pytest.mark.private_server("pgsql")

EVENTS = 30
TABLES, TABLE_SIZE = 2, 200

RW_MIX = {"point_select": 10, "simple_range": 1, "sum_range": 1, "order_range": 1, "distinct_range": 1}
WRITE_MIX = {"index_update": 1, "non_index_update": 1, "delete": 1, "insert": 1}
TRX = {"begin": 1, "commit": 1}

# per event: statement kinds and the report's (read, write, other), spec 3.5 / 3.11
PER_EVENT: dict[str, tuple[dict[str, int], tuple[int, int, int]]] = {
    "oltp_read_write": ({**TRX, **RW_MIX, **WRITE_MIX}, (14, 4, 2)),
    "oltp_read_only": ({**TRX, **RW_MIX}, (14, 0, 2)),
    "oltp_write_only": ({**TRX, **WRITE_MIX}, (0, 4, 2)),
    "oltp_point_select": ({"point_select": 1}, (1, 0, 0)),
    "oltp_update_index": ({"index_update": 1}, (0, 1, 0)),
    "oltp_update_non_index": ({"non_index_update": 1}, (0, 1, 0)),
    "oltp_insert": ({"insert": 1}, (0, 1, 0)),
    "oltp_delete": ({"delete": 1}, (0, 1, 0)),  # write -> other when the row is already gone
    "select_random_points": ({"random_points": 1}, (1, 0, 0)),
    "select_random_ranges": ({"random_ranges": 1}, (1, 0, 0)),
}
WORKLOADS = [*PER_EVENT, "bulk_insert"]
# sent with con:query(), never prepared (spec 5.12)
PLAIN_QUERY = {"oltp_insert", "bulk_insert"}

READS = ("point_select", "simple_range", "sum_range", "order_range", "distinct_range", "random_points", "random_ranges")
WRITES = ("index_update", "non_index_update", "delete", "insert", "bulk_insert")
OTHERS = ("begin", "commit")


def data_args(workload: str) -> list[str]:
    if workload == "bulk_insert":
        return []  # creates sbtest1..sbtest<threads>, no options
    if workload.startswith("select_random"):
        return ["--tables=1", f"--table-size={TABLE_SIZE}"]  # their cleanup needs --tables=1
    return [f"--tables={TABLES}", f"--table-size={TABLE_SIZE}"]


def run_args(events: int = EVENTS) -> list[str]:
    return ["--threads=1", f"--events={events}", "--time=0"]


def table_names(workload: str) -> list[str]:
    if workload == "bulk_insert":
        return ["sbtest1"]
    n = 1 if workload.startswith("select_random") else TABLES
    return [f"sbtest{i}" for i in range(1, n + 1)]


def row_count(db, workload: str) -> int:
    return sum(int(db.scalar(f"SELECT COUNT(*) FROM {t}")) for t in table_names(workload))


def expected_kinds(workload: str, events: int) -> Counter:
    if workload == "bulk_insert":
        return Counter({"bulk_insert": 1})  # N rows, flushed once at thread end (spec 3.9)
    mix, _ = PER_EVENT[workload]
    return Counter({k: n * events for k, n in mix.items()})


def check_report(workload: str, rep: dict[str, int], events: int, deleted: int | None) -> None:
    assert rep["transactions"] == events and rep["events"] == events, rep
    assert rep["ignored_errors"] == 0 and rep["reconnects"] == 0, rep
    assert rep["total"] == rep["read"] + rep["write"] + rep["other"] == rep["queries"], rep
    if workload == "bulk_insert":
        assert (rep["read"], rep["write"], rep["other"]) == (0, 1, 0), rep
    elif workload == "oltp_delete":
        # each event is one DELETE: a write when it removed the row, "other" when the id was already gone
        assert rep["read"] == 0 and rep["write"] + rep["other"] == events, rep
        assert rep["write"] == deleted, f"writes {rep['write']} != rows actually deleted {deleted}"
    else:
        r, w, o = PER_EVENT[workload][1]
        assert (rep["read"], rep["write"], rep["other"]) == (r * events, w * events, o * events), rep


def check_report_vs_server(workload: str, rep: dict[str, int], kinds: Counter) -> None:
    """The report's r/w/o are the server's SELECTs / row-changing DML / BEGIN+COMMIT."""
    reads = sum(kinds[k] for k in READS)
    dml = sum(kinds[k] for k in WRITES)
    trx = sum(kinds[k] for k in OTHERS)
    assert rep["read"] == reads, f"report read={rep['read']}, server executed {reads} SELECTs: {dict(kinds)}"
    assert rep["write"] + rep["other"] == dml + trx, (rep, dict(kinds))
    if workload == "oltp_delete":
        assert rep["other"] == trx + (kinds["delete"] - rep["write"]), (rep, dict(kinds))
    else:  # every DML changed a row: all DML are writes, the rest is BEGIN/COMMIT
        assert rep["write"] == dml, f"report write={rep['write']}, server executed {dml} DML: {dict(kinds)}"
        assert rep["other"] == trx, f"report other={rep['other']}, server executed {trx} BEGIN/COMMIT"
    assert rep["total"] == reads + dml + trx


@pytest.mark.parametrize("workload", WORKLOADS)
def test_statements_per_event(db, workload, run_cli, parse_summary):
    data = data_args(workload)
    run_cli.ok(workload, *db.opts, *data, "prepare")
    before = row_count(db, workload)

    with db.capture() as cap:
        proc = run_cli.ok(workload, *db.opts, *data, *run_args(), "run")
    rep = parse_summary(proc.stdout)
    after = row_count(db, workload)

    # the data moved as the workload says
    if workload == "oltp_insert":
        assert after == before + EVENTS
    elif workload == "bulk_insert":
        assert before == 0 and after == EVENTS
        assert db.rows("SELECT MIN(id), MAX(id), COUNT(DISTINCT id), SUM(k) FROM sbtest1")[0] == (
            1,
            EVENTS,
            EVENTS,
            EVENTS * (EVENTS + 1) // 2,
        )
    elif workload != "oltp_delete":
        assert after == before == len(table_names(workload)) * TABLE_SIZE  # DELETE/INSERT pairs keep the ids
    deleted = before - after if workload == "oltp_delete" else None

    check_report(workload, rep, EVENTS, deleted)
    if cap.available:  # SQLite: no server to observe
        check_server_side(db, workload, cap, rep, deleted)

    run_cli.ok(workload, *db.opts, *data, "cleanup")
    assert db.tables() == []


def check_server_side(db, workload: str, cap, rep: dict[str, int], deleted: int | None) -> None:
    kinds = cap.event_kinds()
    assert kinds == expected_kinds(workload, EVENTS), (
        f"{db.name} {workload}: server executed {dict(kinds)}, expected {dict(expected_kinds(workload, EVENTS))}"
    )
    check_report_vs_server(workload, rep, kinds)

    # prepared statements (Execute) unless the script sends plain text (spec 5.12)
    plain = workload in PLAIN_QUERY
    want = {"mysql": "Query" if plain else "Execute", "pgsql": "statement" if plain else "execute"}[db.name]
    wrong = {kc: n for kc, n in cap.commands().items() if kc[0] in kinds and kc[1] != want}
    assert not wrong, f"{db.name} {workload}: expected every statement as {want!r}, got {wrong}"

    if db.name == "pgsql":
        # pg_stat_statements agrees with the log (except BEGIN/COMMIT: PG < 16 counts a prepared
        # utility statement only on its first execution, see conftest)
        pgss = Counter({k: n for k, n in cap.pgss.items() if k in kinds and k not in OTHERS})
        assert pgss == Counter({k: n for k, n in kinds.items() if k not in OTHERS}), (dict(cap.pgss), dict(kinds))
        # rows the DML statements changed, by the server's count
        if workload == "oltp_delete":
            assert cap.pgss_rows["delete"] == rep["write"] == deleted
        elif workload == "bulk_insert":
            assert cap.pgss_rows["bulk_insert"] == EVENTS
        else:
            for kind in WRITES:
                assert cap.pgss_rows[kind] == kinds[kind], (
                    f"{kind}: {cap.pgss_rows[kind]} rows for {kinds[kind]} statements"
                )


# sysbench's text substitution: integers in decimal, strings single-quoted (spec 3.2)
LITERAL_SQL = {
    "point_select": r"SELECT c FROM sbtest[12] WHERE id=\d+",
    "simple_range": r"SELECT c FROM sbtest[12] WHERE id BETWEEN \d+ AND \d+",
    "sum_range": r"SELECT SUM\(k\) FROM sbtest[12] WHERE id BETWEEN \d+ AND \d+",
    "order_range": r"SELECT c FROM sbtest[12] WHERE id BETWEEN \d+ AND \d+ ORDER BY c",
    "distinct_range": r"SELECT DISTINCT c FROM sbtest[12] WHERE id BETWEEN \d+ AND \d+ ORDER BY c",
    "index_update": r"UPDATE sbtest[12] SET k=k\+1 WHERE id=\d+",
    "non_index_update": r"UPDATE sbtest[12] SET c='(\d{11}-){9}\d{11}' WHERE id=\d+",
    "delete": r"DELETE FROM sbtest[12] WHERE id=\d+",
    "insert": (
        r"INSERT INTO sbtest[12] \(id, k, c, pad\) VALUES "
        r"\(\d+, \d+, '(\d{11}-){9}\d{11}', '(\d{11}-){4}\d{11}'\)"
    ),
    "begin": r"BEGIN",
    "commit": r"COMMIT",
}


@pytest.mark.mysql
def test_ps_mode_disable_mysql(mysql_db, run_cli, parse_summary):
    """--db-ps-mode=disable: the general log shows Query with literal values, no
    Prepare/Execute, and the counts are those of the prepared run."""
    _check_ps_mode_disable(mysql_db, run_cli, parse_summary, "Query")


@pytest.mark.pgsql
def test_ps_mode_disable_pgsql(pgsql_db, run_cli, parse_summary):
    _check_ps_mode_disable(pgsql_db, run_cli, parse_summary, "statement")


def _check_ps_mode_disable(db, run_cli, parse_summary, command):
    workload = "oltp_read_write"
    data = data_args(workload)
    run_cli.ok(workload, *db.opts, *data, "prepare")
    with db.capture() as cap:
        proc = run_cli.ok(workload, *db.opts, *data, *run_args(), "--db-ps-mode=disable", "run")
    rep = parse_summary(proc.stdout)
    check_report(workload, rep, EVENTS, None)

    kinds = cap.event_kinds()
    assert kinds == expected_kinds(workload, EVENTS), dict(kinds)
    check_report_vs_server(workload, rep, kinds)
    assert not cap.prepared, f"statements were prepared with --db-ps-mode=disable: {cap.prepared[:5]}"
    checked = 0
    for kind, cmd, sql in cap.items():
        if kind not in kinds:
            continue  # pysysbench's pre-run table check
        assert cmd == command, f"{cmd} {sql!r}: expected {command!r}"
        assert re.fullmatch(LITERAL_SQL[kind], sql), f"not sysbench's literal text: {sql!r}"
        checked += 1
    assert checked == sum(kinds.values())


# time-limited runs of the bundled OLTP events: the worker runs them in C where the extension is
# built (engine/worker.py _c_loop, engine/event_loop.c); one thread, so no deadlock restarts
C_LOOP = [
    "oltp_point_select",
    "oltp_update_index",
    "oltp_update_non_index",
    "oltp_read_only",
    "oltp_read_write",
    "oltp_write_only",
]


@pytest.mark.parametrize("workload", C_LOOP)
def test_time_limited_events_as_the_server_saw_them(db, workload, run_cli, parse_summary):
    data = data_args(workload)
    run_cli.ok(workload, *db.opts, *data, "prepare")
    with db.capture() as cap:
        proc = run_cli.ok(workload, *db.opts, *data, "--threads=1", "--time=2", "run")
    rep = parse_summary(proc.stdout)
    events = rep["transactions"]
    assert events > 20 and rep["events"] == events and rep["ignored_errors"] == 0, rep
    r, w, o = PER_EVENT[workload][1]
    assert (rep["read"], rep["write"], rep["other"]) == (r * events, w * events, o * events), rep
    if cap.available:  # every event the report counts ran on the server, and nothing else
        assert cap.event_kinds() == expected_kinds(workload, events), dict(cap.event_kinds())
        check_report_vs_server(workload, rep, cap.event_kinds())
    run_cli.ok(workload, *db.opts, *data, "cleanup")


@pytest.mark.mysql
@pytest.mark.parametrize("workload,first", [("oltp_point_select", 200), ("oltp_read_write", 400)])
def test_c_loop_sends_what_the_python_loop_sends(mysql_db, run_cli, workload, first):
    """Same seed, one thread: the first statements of a time-limited run (the C loop) are
    those of an --events run (the Python loop), value for value (MariaDB's general log
    shows each Execute with its parameters)."""
    data = data_args(workload)
    run_cli.ok(workload, *mysql_db.opts, *data, "prepare")
    per_event = sum(PER_EVENT[workload][0].values())
    sent = []
    for limit in ([f"--events={first // per_event}", "--time=0"], ["--time=1"]):
        with mysql_db.capture() as cap:
            run_cli.ok(workload, *mysql_db.opts, *data, "--threads=1", "--rand-seed=7", *limit, "run")
        sent.append([sql for kind, _, sql in cap.items() if kind in EVENT_KINDS_SENT])
    python_loop, c_loop = sent
    assert len(python_loop) == first // per_event * per_event and len(c_loop) > len(python_loop)
    assert c_loop[: len(python_loop)] == python_loop
    run_cli.ok(workload, *mysql_db.opts, *data, "cleanup")


EVENT_KINDS_SENT = set(READS + WRITES + OTHERS)
