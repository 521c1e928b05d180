"""The history store's pure parts: where the store is (paths, URLs, the masked password),
a run's row (labels, metrics, the document split and joined), the list query and the CLI's
text.  The store against real databases: tests/integration/test_history_store.py."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import pytest

from pysysbench.cli.history import summary_line, table
from pysysbench.core.errors import UsageError
from pysysbench.history import imports
from pysysbench.history.store import (
    Filter,
    Location,
    NewRun,
    join_document,
    labels_of,
    list_query,
    locate,
    mask_url,
    metrics_of,
    pg_url,
    row_of,
    split_document,
)

DOC = {
    "format": "pysysbench-result",
    "format_version": 1,
    "test": "oltp_point_select",
    "command": "run",
    "driver": "sqlite",
    "started_at": "2026-01-02T03:04:05+00:00",
    "client": {"hostname": "box1"},
    "tool": {"version": "0.1.0"},
    "options": {"threads": 4},
    "summary": {
        "threads": 4,
        "tps": 100.5,
        "qps": 201.0,
        "errors_per_s": 0.0,
        "latency_ms": {"avg": 1.5, "p95": 2.5, "p99": 3.5},
        "histogram": {"10": 3, "20": 7},
    },
    "intervals": [{"time_s": 1, "tps": 99.0}, {"time_s": 2, "tps": 102.0}],
    "labels": {"version": "8.0.1", "commit": "abc"},
    "campaign": None,
    "exit_code": 0,
}


# --- where the store is -------------------------------------------------------------------------


def test_default_store_is_under_xdg_data_home():
    loc = locate(None, {"XDG_DATA_HOME": "/data/me"})
    assert loc == Location(kind="sqlite", path="/data/me/pysysbench/history.sqlite")


def test_default_store_without_xdg_is_under_local_share():
    loc = locate(None, {})
    assert loc.path == os.path.join(os.path.expanduser("~"), ".local", "share", "pysysbench", "history.sqlite")


def test_environment_chooses_the_store_and_the_option_overrides_it(tmp_path):
    env = {"PYSYSBENCH_HISTORY_DB": str(tmp_path / "env.sqlite")}
    assert locate(None, env).path == str(tmp_path / "env.sqlite")
    assert locate(str(tmp_path / "opt.sqlite"), env).path == str(tmp_path / "opt.sqlite")


def test_relative_path_and_sqlite_url_become_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert locate("h.sqlite", {}).path == str(tmp_path / "h.sqlite")
    assert locate("sqlite:///x/y.sqlite", {}).path == "/x/y.sqlite"


def test_postgresql_url_maps_to_the_pgsql_driver_options():
    loc = locate("postgresql://bob:p%40ss@db.example:6543/hist?schema=team&sslmode=require", {})
    assert loc.kind == "pgsql" and loc.schema == "team"
    assert dict(loc.options) == {
        "pgsql_host": ["db.example"],
        "pgsql_port": ["6543"],
        "pgsql_user": "bob",
        "pgsql_password": "p@ss",
        "pgsql_db": "hist",
        "pgsql_sslmode": "require",
    }
    assert loc.shown() == "postgresql://bob:***@db.example:6543/hist?schema=team&sslmode=require"


@pytest.mark.parametrize(
    "url, words",
    [
        ("mysql://u:topsecret@h/db", "unknown scheme 'mysql'"),
        ("postgresql://u:topsecret@h/db?schema=a;drop", "is not a plain SQL name"),
        ("postgresql://u:topsecret@h/db?sslmode=maybe", "sslmode 'maybe'"),
        ("postgresql://u:topsecret@h/db?colour=red", "unknown parameter 'colour'"),
        ("postgresql://u:topsecret@h:port/db", "the port is not a number"),
    ],
)
def test_bad_store_urls_are_one_line_without_the_password(url, words):
    with pytest.raises(UsageError) as err:
        locate(url, {})
    assert words in str(err.value)
    assert "topsecret" not in str(err.value)


def test_mask_url_hides_only_the_password():
    assert mask_url("postgresql://u:pw@h:5/d") == "postgresql://u:***@h:5/d"
    assert mask_url("postgresql://u@h/d") == "postgresql://u@h/d"
    assert mask_url("/a/b.sqlite") == "/a/b.sqlite"


def test_pg_url_round_trips_through_locate():
    url = pg_url(user="s b", host="127.0.0.1", port=5432, database="sbtest", password="a:b@c", schema="h1")
    loc = locate(url, {})
    opts = dict(loc.options)
    assert (opts["pgsql_user"], opts["pgsql_password"], opts["pgsql_db"], loc.schema) == (
        "s b",
        "a:b@c",
        "sbtest",
        "h1",
    )
    assert "a:b@c" not in loc.shown()


# --- a run's row --------------------------------------------------------------------------------


def test_labels_come_from_the_file_then_the_import_and_machine_from_the_host():
    assert labels_of(DOC) == {"version": "8.0.1", "commit": "abc", "machine": "box1"}
    assert labels_of(DOC, {"version": "9", "machine": "m2"}) == {"version": "9", "commit": "abc", "machine": "m2"}


def test_metrics_of_a_run_and_of_a_run_that_never_started():
    assert metrics_of(DOC) == {
        "tps": 100.5,
        "qps": 201.0,
        "latency_avg_ms": 1.5,
        "latency_p95_ms": 2.5,
        "latency_p99_ms": 3.5,
        "errors_per_s": 0.0,
    }
    assert set(metrics_of({"summary": None}).values()) == {None}


def test_split_and_join_give_the_document_back():
    rest, intervals, histogram = split_document(copy.deepcopy(DOC))
    assert "intervals" not in rest and "histogram" not in rest["summary"]
    assert intervals == DOC["intervals"] and histogram == {"10": 3, "20": 7}
    assert join_document(rest, intervals, histogram) == DOC


def test_row_holds_the_filter_columns():
    row, labels = row_of(NewRun(doc=DOC, source="/r/a.json", content_hash="h"), "2026-02-02T00:00:00+00:00")
    assert (row["workload"], row["threads"], row["driver"], row["started_at"]) == (
        "oltp_point_select",
        4,
        "sqlite",
        "2026-01-02T03:04:05+00:00",
    )
    assert (row["label_version"], row["label_commit"], row["label_machine"], row["label_date"]) == (
        "8.0.1",
        "abc",
        "box1",
        None,
    )
    assert row["source"] == "/r/a.json" and labels["machine"] == "box1"


def test_campaign_workload_name_wins_over_the_test():
    doc = {**DOC, "campaign": {"workload": "rw-big", "threads": 4}}
    assert row_of(NewRun(doc=doc, source="s", content_hash="h"), "t")[0]["workload"] == "rw-big"


# --- queries ------------------------------------------------------------------------------------


def test_list_query_passes_values_as_parameters():
    sql, params = list_query(Filter(workload="w'; DROP TABLE x; --", threads=8, labels=(("version", "1'2"),), limit=5))
    assert "DROP" not in sql and "1'2" not in sql
    assert params == ["w'; DROP TABLE x; --", 8, "version", "1'2"]
    assert sql.endswith("ORDER BY r.started_at, r.id LIMIT 5")


def test_parse_labels():
    assert imports.parse_labels(["a=1", "b=x=y", "c="]) == {"a": "1", "b": "x=y", "c": ""}
    for bad in ("novalue", "=1"):
        with pytest.raises(UsageError, match="expected KEY=VALUE"):
            imports.parse_labels([bad])


# --- the CLI's text -----------------------------------------------------------------------------


def test_table_lines_up_and_counts():
    runs = [
        {
            "id": 1,
            "started_at": "2026-01-01T00:00:00+00:00",
            "workload": "oltp_point_select",
            "threads": 8,
            "driver": "pgsql",
            "tps": 1234.5678,
            "latency_p95_ms": 0.0034,
            "labels": {"version": "1"},
            "source": "/r/a.json",
        },
        {
            "id": 12,
            "started_at": None,
            "workload": "w",
            "threads": None,
            "driver": None,
            "tps": None,
            "latency_p95_ms": None,
            "labels": {},
            "source": "/r/b.json",
        },
    ]
    lines = table(runs)
    assert lines[0].split() == ["ID", "STARTED", "WORKLOAD", "THREADS", "DRIVER", "TPS", "P95_MS", "LABELS", "SOURCE"]
    assert lines[1].split() == [
        "1",
        "2026-01-01T00:00:00+00:00",
        "oltp_point_select",
        "8",
        "pgsql",
        "1234.57",
        "0.0034",
        "version=1",
        "/r/a.json",
    ]
    assert lines[0].index("SOURCE") == lines[1].index("/r/a.json") == lines[2].index("/r/b.json")
    assert lines[-1] == "2 runs"


def test_summary_line_names_every_count_and_masks_the_url():
    report = imports.ImportReport(files=5, imported=2, already=1, skipped={"not a pysysbench result file": 1})
    report.failed.append("'x': cannot read it")
    line = summary_line(report, locate("postgresql://u:pw@h/d", {}))
    assert line == (
        "history import: 5 files: 2 runs imported, 1 already there, 1 skipped (1 not a pysysbench result file), "
        "1 failed; store: postgresql://u:***@h/d"
    )


# --- reading files for an import ----------------------------------------------------------------


def test_read_runs_sorts_files_into_runs_skips_and_failures(tmp_path):
    good = tmp_path / "good.json"
    good.write_text(json.dumps(DOC))
    other = tmp_path / "manifest.json"
    other.write_text('{"runs": {}}')
    (run,) = imports.read_runs(imports.Candidate(str(good), True), {"version": "9"})
    assert run.source == str(good) and run.source_kind == "result-file" and len(run.content_hash) == 64
    assert dict(run.extra_labels) == {"version": "9"}
    with pytest.raises(imports.AlreadyThere):
        imports.read_runs(imports.Candidate(str(good), True), {}, {run.content_hash})
    with pytest.raises(imports.Skipped, match="not a pysysbench result file"):
        imports.read_runs(imports.Candidate(str(other), False), {})
    with pytest.raises(imports.Failed, match="manifest.json' is not a pysysbench result file"):
        imports.read_runs(imports.Candidate(str(other), True), {})
    with pytest.raises(imports.Failed, match="no such file or folder"):
        imports.read_runs(imports.Candidate(str(tmp_path / "gone.json"), True), {})


def test_a_text_log_becomes_its_runs(tmp_path):
    log = tmp_path / "run.log"
    log.write_text("sysbench 1.0.20\n")
    with pytest.raises(imports.Failed) as err:
        imports.read_runs(imports.Candidate(str(log), True), {})
    assert str(err.value) == f"'{log}' is neither a pysysbench result file nor a sysbench log with a run in it"
    multi = Path(__file__).parents[1] / "data" / "textlog" / "multi-run.txt"
    runs = imports.read_runs(imports.Candidate(str(multi), True), {})
    assert [r.source_kind for r in runs] == ["text-log"] * 4
    assert [r.content_hash[-2:] for r in runs] == [":0", ":1", ":2", ":3"]
    assert [r.doc["implementation"]["sysbench_version"] for r in runs] == ["1.0.20", "1.0.20", "1.1.0", "1.1.0"]


def test_candidates_walk_folders_for_json_in_name_order(tmp_path):
    for name in ("b/2.json", "a/1.json", "a/notes.txt", "0.json"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("{}")
    found = imports.candidates([str(tmp_path), "named.log"])
    assert [(os.path.relpath(c.path, tmp_path), c.explicit) for c in found] == [
        ("0.json", False),
        ("a/1.json", False),
        ("b/2.json", False),
        (os.path.relpath("named.log", tmp_path), True),
    ]


def test_a_password_left_in_a_file_is_masked_in_the_row():
    doc = {
        **DOC,
        "options": {"threads": 4, "mysql-password": "pw1", "pgsql-password": "", "mysql-user": "u"},
        "command_line": ["oltp_read_only", "--pgsql-password=pw2", "--threads=4", "run"],
    }
    row, _ = row_of(NewRun(doc=doc, source="s", content_hash="h"), "t")
    assert "pw1" not in row["document"] and "pw2" not in row["document"]
    stored = json.loads(row["document"])
    assert stored["options"] == {"threads": 4, "mysql-password": "***", "pgsql-password": "", "mysql-user": "u"}
    assert stored["command_line"] == ["oltp_read_only", "--pgsql-password=***", "--threads=4", "run"]
    assert doc["options"]["mysql-password"] == "pw1", "the caller's document is left alone"


def test_history_is_a_subcommand_named_in_the_help():
    from pysysbench.cli import subcommands
    from pysysbench.cli.history import history_command
    from pysysbench.command.cmdline import TOOL_COMMANDS

    assert subcommands.find("history") is history_command
    assert "history" in dict(TOOL_COMMANDS)
