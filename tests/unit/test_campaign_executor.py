"""Campaign execution with a scripted backend: order of steps, SQL hooks, result
annotation, manifest, resume, failures, interruption, memory sizing, secrets.

The backend writes result documents the way ``pysysbench ... run --result-file``
does (same top-level format), so the executor's file handling is exercised for
real; throughput comes from a function of (workload, threads, repeat).
"""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest

from pysysbench.campaign import executor, spec
from pysysbench.campaign.executor import CommandOutcome, Events
from pysysbench.core.errors import ConnectError, InvalidOption, RunAborted, UsageError
from pysysbench.stats import results

CAMPAIGN = """
name = "unit"
[labels]
version = "1.0"
[connection]
db-driver = "mysql"
mysql-password = "pw-in-campaign-file"
[data]
tables = 2
table-size = 100
[prepare]
threads = 2
[run]
time = 1
[sql]
before-campaign = ["SET a=1"]
after-prepare = ["ANALYZE"]
before-run = ["SET b=2"]
capture = ["SHOW VARIABLES"]
[[workload]]
test = "oltp_point_select"
threads = [1, 2]
repeats = 2
[[workload]]
name = "rw"
test = "oltp_read_write"
threads = "auto"
auto = { start = 1, max = 8, refine = 0 }
"""


def arg(argv: list[str], name: str) -> str | None:
    for a in argv:
        if a.startswith(f"--{name}="):
            return a.split("=", 1)[1]
    return None


class FakeBackend:
    def __init__(self, tps=lambda test, threads: 100.0 * min(threads, 2), fail=(), interrupt=(), interrupt_code=130):
        self.tps = tps
        self.fail = set(fail)
        self.interrupt = set(interrupt)
        self.interrupt_code = interrupt_code
        self.log: list[tuple] = []

    def check(self, request):
        argv = request.words()
        if any(a.startswith("--bogus") for a in argv):
            raise InvalidOption("invalid option: --bogus")

    def command(self, request, log_path):
        argv = request.words()
        command = request.command
        self.log.append(("command", command, argv[0], arg(argv, "threads")))
        Path(log_path).write_text("log\n")
        if command != "run":
            return CommandOutcome(0)
        path = arg(argv, "result-file")
        stem = os.path.basename(path)[:-5]
        code = self.interrupt_code if stem in self.interrupt else 1 if stem in self.fail else 0
        tps = self.tps(argv[0], int(arg(argv, "threads")))
        summary = {
            "tps": tps,
            "qps": tps * 10,
            "errors_per_s": 0.0,
            "threads": int(arg(argv, "threads")),
            "latency_ms": {"p95": 1.0, "p99": 2.0},
            "histogram": {"500": 10},
        }
        results.save(
            path,
            {
                "format": results.FORMAT,
                "format_version": 1,
                "test": argv[0],
                "command": "run",
                "command_line": ["<masked by the real CLI>"],
                "options": {},
                "intervals": [],
                "summary": summary if code != 1 else None,
                "exit_code": code,
                "error": "boom" if code == 1 else None,
            },
        )
        return CommandOutcome(code)

    def sql(self, connection_argv, statements):
        self.log.append(("sql", *statements))

    def rows(self, connection_argv, query):
        self.log.append(("rows", query))
        if "buffer_pool" in query:
            return [(128 * 2**20,)]
        return [("innodb_buffer_pool_size", "134217728"), ("version", "10.11")]


def campaign(tmp_path: Path, text: str = CAMPAIGN, overrides=()) -> spec.Campaign:
    path = tmp_path / "c.toml"
    path.write_text(textwrap.dedent(text))
    return spec.load(str(path), list(overrides))


def run(tmp_path, backend, c=None, **kw):
    c = c or campaign(tmp_path)
    events: list[tuple] = []
    ev = Events(
        phase=lambda t: events.append(("phase", t)),
        run_finished=lambda r, rec: events.append(("run", r.key.stem, rec.status)),
        peak=lambda w, p: events.append(("peak", w.name, p.threads)),
    )
    manifest = executor.run_campaign(c, str(tmp_path / "res"), backend, ev, **kw)
    return manifest, events


def test_full_campaign_order_hooks_annotations_and_manifest(tmp_path):
    backend = FakeBackend()
    manifest, events = run(tmp_path, backend)
    kinds = [e[0] if e[0] != "command" else e[1] for e in backend.log]
    assert kinds[:6] == ["sql", "cleanup", "prepare", "sql", "rows", "sql"]  # before-campaign .. first before-run
    assert backend.log[0] == ("sql", "SET a=1") and backend.log[3] == ("sql", "ANALYZE")
    runs = [e[1] for e in events if e[0] == "run"]
    assert runs == [
        "oltp_point_select-t0001-r1",
        "oltp_point_select-t0002-r1",
        "oltp_point_select-t0001-r2",
        "oltp_point_select-t0002-r2",
        "rw-t0001-r1",
        "rw-t0002-r1",
        "rw-t0004-r1",
    ]
    assert sum(1 for e in backend.log if e == ("sql", "SET b=2")) == len(runs)  # before every run
    assert ("peak", "rw", 2) in events
    assert manifest["status"] == "complete" and manifest["peaks"]["rw"]["threads"] == 2
    assert manifest["server_settings"] == {"innodb_buffer_pool_size": "134217728", "version": "10.11"}
    assert manifest["prepare"]["status"] == "done"
    doc = results.load(str(tmp_path / "res" / "rw-t0002-r1.json"))
    assert doc["labels"] == {"version": "1.0"}
    camp = doc["campaign"]
    assert (camp["name"], camp["workload"], camp["threads"], camp["repeat"], camp["phase"]) == (
        "unit",
        "rw",
        2,
        1,
        "search",
    )
    assert camp["server_settings"]["version"] == "10.11" and camp["sql_before_run"] == ["SET b=2"]
    assert camp["prepare_commands"][1][-1] == "prepare"
    on_disk = json.loads((tmp_path / "res" / "manifest.json").read_text())
    assert on_disk["runs"]["rw-t0004-r1"]["tps"] == 200.0 and on_disk["status"] == "complete"


def test_passwords_never_reach_manifest_or_results(tmp_path):
    run(tmp_path, FakeBackend())
    for path in (tmp_path / "res").rglob("*"):
        if path.is_file():
            assert "pw-in-campaign-file" not in path.read_text(), path


def test_second_invocation_skips_everything(tmp_path):
    run(tmp_path, FakeBackend())
    again = FakeBackend()
    manifest, events = run(tmp_path, again)
    assert [e for e in again.log if e[0] == "command"] == []  # no prepare, no run
    assert {e[2] for e in events if e[0] == "run"} == {"stored"}
    assert manifest["peaks"]["rw"]["threads"] == 2  # replayed from stored results


def test_resume_after_interruption_runs_only_what_is_missing(tmp_path):
    first = FakeBackend(interrupt={"oltp_point_select-t0001-r2"})
    with pytest.raises(RunAborted) as ei:
        run(tmp_path, first)
    assert ei.value.exit_code == 130 and "rerun the same command to resume" in str(ei.value)
    manifest = json.loads((tmp_path / "res" / "manifest.json").read_text())
    assert manifest["status"] == "interrupted"
    assert manifest["runs"]["oltp_point_select-t0001-r2"]["status"] == "interrupted"
    second = FakeBackend()
    manifest, events = run(tmp_path, second)
    executed = [e for e in second.log if e[0] == "command"]
    assert ("command", "prepare", "oltp_common", "2") not in executed  # prepare finished the first time
    assert [e[1] for e in events if e[0] == "run" and e[2] == "stored"] == [
        "oltp_point_select-t0001-r1",
        "oltp_point_select-t0002-r1",
    ]
    assert len(executed) == 5 and manifest["status"] == "complete"


def test_sigterm_interrupts_the_campaign_like_ctrl_c(tmp_path):
    """A run stopped by SIGTERM exits 143: the campaign stops as interrupted (resumable), not failed."""
    with pytest.raises(RunAborted) as ei:
        run(tmp_path, FakeBackend(interrupt={"oltp_point_select-t0002-r1"}, interrupt_code=143))
    assert ei.value.exit_code == 143 and "rerun the same command to resume" in str(ei.value)
    manifest = json.loads((tmp_path / "res" / "manifest.json").read_text())
    assert manifest["status"] == "interrupted"
    assert manifest["runs"]["oltp_point_select-t0002-r1"]["status"] == "interrupted"


def test_changed_options_invalidate_stored_results(tmp_path):
    run(tmp_path, FakeBackend())
    again = FakeBackend()
    _, events = run(tmp_path, again, campaign(tmp_path, overrides=["run.time=2"]))
    assert {e[2] for e in events if e[0] == "run"} == {"ok"}  # every run again (prepare is unchanged)
    assert ("command", "prepare", "oltp_common", "2") not in again.log


def test_restart_reruns_everything(tmp_path):
    run(tmp_path, FakeBackend())
    again = FakeBackend()
    run(tmp_path, again, restart=True)
    assert ("command", "prepare", "oltp_common", "2") in again.log


def test_failed_run_stops_by_default(tmp_path):
    with pytest.raises(RunAborted, match="run oltp_point_select-t0002-r1 failed: boom"):
        run(tmp_path, FakeBackend(fail={"oltp_point_select-t0002-r1"}))
    manifest = json.loads((tmp_path / "res" / "manifest.json").read_text())
    assert manifest["status"] == "failed" and manifest["runs"]["oltp_point_select-t0002-r1"]["error"] == "boom"


def test_failed_run_can_be_skipped(tmp_path):
    c = campaign(tmp_path, overrides=["run.on-error=continue"])
    manifest, _ = run(tmp_path, FakeBackend(fail={"oltp_point_select-t0002-r1", "rw-t0004-r1"}), c)
    assert manifest["status"] == "complete with failed runs"
    assert manifest["runs"]["oltp_point_select-t0002-r1"]["status"] == "failed"
    assert manifest["peaks"]["rw"]["threads"] == 2  # a failed point counts as no throughput


def test_bad_option_fails_before_touching_the_database(tmp_path):
    backend = FakeBackend()
    with pytest.raises(UsageError, match="invalid option: --bogus"):
        run(tmp_path, backend, campaign(tmp_path, overrides=["workload.2.options.bogus=1"]))
    assert backend.log == []


def test_table_size_from_memory_is_decided_once(tmp_path):
    c = campaign(
        tmp_path,
        overrides=[
            'data.table-size={memory-query = "SELECT @@innodb_buffer_pool_size", factor = 1.2, row-bytes = 200}'
        ],
    )
    backend = FakeBackend()
    manifest, _ = run(tmp_path, backend, c)
    expected = int(128 * 2**20 * 1.2 / (2 * 200))
    assert manifest["table_size"] == expected and "1.2" in manifest["table_size_source"]
    assert any(e[0] == "command" and e[1] == "prepare" for e in backend.log)
    doc = results.load(str(tmp_path / "res" / "rw-t0001-r1.json"))
    assert doc["campaign"]["table_size"] == expected
    again = FakeBackend()
    run(tmp_path, again, c)
    assert not any(e[0] == "rows" and "buffer_pool" in e[1] for e in again.log)


def test_sql_failure_is_one_clear_error(tmp_path):
    class Broken(FakeBackend):
        def sql(self, connection_argv, statements):
            raise ConnectError("cannot connect to MySQL server on 127.0.0.1:3306")

    with pytest.raises(RunAborted, match="SQL before-campaign failed: cannot connect"):
        run(tmp_path, Broken())


def test_estimate_runs(tmp_path):
    total, exact = executor.estimate_runs(campaign(tmp_path))
    assert not exact and total >= 4 + 2
    fixed = campaign(
        tmp_path,
        CAMPAIGN.replace('threads = "auto"', "threads = [1, 8]").replace(
            "auto = { start = 1, max = 8, refine = 0 }", ""
        ),
    )
    assert executor.estimate_runs(fixed) == (6, True)


def test_results_no_longer_in_the_plan_are_retired(tmp_path):
    run(tmp_path, FakeBackend())
    res = tmp_path / "res"
    (res / "other.json").write_text(json.dumps({"format": results.FORMAT, "campaign": {"name": "someone-else"}}))
    c = campaign(tmp_path, overrides=["workload.1.threads=[2]"])
    manifest, events = run(tmp_path, FakeBackend(), c)
    assert manifest["superseded"] == ["oltp_point_select-t0001-r1.json", "oltp_point_select-t0001-r2.json"]
    assert (res / "oltp_point_select-t0001-r1.json.superseded").exists()
    assert (res / "other.json").exists() and (res / "oltp_point_select-t0002-r1.json").exists()
    assert any("renamed to *.superseded" in e[1] for e in events if e[0] == "phase")


VARIANTS = """
name = "ab"
[connection]
db-driver = "mysql"
[run]
time = 1
repeats = 2
[[variant]]
name = "flush1"
labels = { flush = "1" }
sql = ["SET GLOBAL innodb_flush_log_at_trx_commit = 1"]
[[variant]]
name = "flush2"
labels = { flush = "2" }
sql = ["SET GLOBAL innodb_flush_log_at_trx_commit = 2"]
options = { mysql-ignore-errors = "1062" }
[[workload]]
test = "oltp_update_index"
threads = [1, 4]
"""


def test_variants_run_interleaved_round_by_round_with_their_switch_sql_and_labels(tmp_path):
    backend = FakeBackend()
    manifest, events = run(tmp_path, backend, campaign(tmp_path, VARIANTS))
    runs = [e[1] for e in events if e[0] == "run"]
    assert runs == [
        f"oltp_update_index-{v}-t{t:04d}-r{r}" for r in (1, 2) for t in (1, 4) for v in ("flush1", "flush2")
    ]
    switches = [e[1] for e in backend.log if e[0] == "sql"]
    assert switches == [f"SET GLOBAL innodb_flush_log_at_trx_commit = {n}" for _ in range(4) for n in (1, 2)]
    doc = results.load(str(tmp_path / "res" / "oltp_update_index-flush2-t0004-r2.json"))
    assert doc["labels"] == {"flush": "2", "variant": "flush2"}
    assert doc["campaign"]["variant"] == "flush2" and doc["campaign"]["repeat"] == 2
    assert doc["campaign"]["interleaved"] == ["flush1", "flush2"]
    assert manifest["runs"]["oltp_update_index-flush2-t0004-r2"]["variant"] == "flush2"
    assert executor.estimate_runs(campaign(tmp_path, VARIANTS)) == (8, True)


def test_variants_refuse_automatic_thread_counts(tmp_path):
    with pytest.raises(UsageError, match="cannot be combined with \\[\\[variant\\]\\]s"):
        campaign(tmp_path, VARIANTS.replace("threads = [1, 4]", 'threads = "auto"'))
    with pytest.raises(UsageError, match="name 'flush1' is used twice"):
        campaign(tmp_path, VARIANTS.replace('name = "flush2"', 'name = "flush1"'))
