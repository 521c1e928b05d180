"""A real regression, end to end: campaign -> store -> ``history check`` names its first run.

The same small campaign (oltp_write_only, 1 table of 10,000 rows, 1 thread, 3 repeats of
3 s after 1 s of warm-up) runs 8 times against a PRIVATE MariaDB, as a pipeline would per
build. Invocations b5-b8 carry two changes that a commit could bring: the server flushes the
redo log at every commit (``innodb_flush_log_at_trx_commit = 1`` against ``= 2`` for b1-b4,
``SET GLOBAL`` in ``sql.before-campaign``: never on a shared server; the binary log is off)
and the table gets a trigger that costs CPU on every UPDATE (``sql.after-prepare``,
``BENCHMARK(1500, MD5(...))``, about 0.5 ms). Each invocation is labelled ``commit=bN``. The
campaigns record themselves into one store (``--history-db``), and the results folder is also
imported with ``history import`` into a second; on both, ``history check --by=commit`` (and
``--by=started``) must exit 1 naming b5's first run as the first run of the regressed level,
for TPS and for p95.

Why both: what an fsync costs depends on the disk. Here it costs milliseconds, then 0.03 ms
for seconds at a time (a write-back cache); on the CI machine of 2026-12-07 the flush setting
alone cost 14 % of TPS, too little to place the step against p95's noise (it was put at b4).
The trigger's cost is CPU, the same on every disk. The data dir goes under /var/tmp (the
test fails if that is tmpfs). The fixture checks the premise (every b5 run slower than every
b1-b4 run, at most one later run not) and measures again, once, when it does not hold; when it
fails twice the test skips with the TPS figures, since the machine, not the gate, decided.
About 2 minutes (8 x 13 s of campaign and a server start), 4 when measured twice.
"""

from __future__ import annotations

import json
import os
import statistics
from pathlib import Path

import pytest
from private_servers import PrivateMariaDB, free_port, running
from test_history_store import cli, ok

pytestmark = [pytest.mark.mysql, pytest.mark.timeout(900)]

DISK = "/var/tmp"  # the private server's data dir: a real disk (fsync must cost something)
INVOCATIONS = 8
CHANGED_FROM = 5  # b5-b8 run with an fsync per commit
REPEATS = 3
SERIES = "oltp_write_only @ 1 thread (mysql)"
FIRST_RUN = "oltp_write_only-t0001-r1.json"
LAST_RUN = f"oltp_write_only-t0001-r{REPEATS}.json"
# only steps of 30 % or more are levels: the planted one is over 200 % in p95; at the default
# 5 % a noise step of -15 % in b8's p95 was a level of its own, and the check, which judges
# the latest level against the one before it, called p95 ok (CI of 127cf1a)
MIN_EFFECT = "--min-effect=0.3"

CAMPAIGN = """\
name = "perf-e2e"
[connection]
db-driver = "mysql"
mysql-host = "127.0.0.1"
mysql-port = {port}
mysql-user = "sbtest"
mysql-db = "sbtest"
[data]
tables = 1
table-size = 10000
[prepare]
threads = 1
[run]
time = 3
warmup = 1
repeats = {repeats}
pause = 0
report-interval = 1
[[workload]]
test = "oltp_write_only"
threads = [1]
"""


def filesystem(path: str) -> str:
    """The type of the file system ``path`` is on (the longest mount point above it)."""
    best, kind = "", "unknown"
    for line in Path("/proc/mounts").read_text().splitlines():
        mount, fstype = line.split()[1:3]
        inside = path == mount or path.startswith(mount.rstrip("/") + "/")
        if inside and len(mount) > len(best):
            best, kind = mount, fstype
    return kind


def flush(k: int) -> int:
    return 1 if k >= CHANGED_FROM else 2


# about 0.5 ms of CPU per updated row (MD5 of a 120-character string: 0.3 us here)
TRIGGER = (
    "CREATE TRIGGER IF NOT EXISTS cost BEFORE UPDATE ON sbtest1 FOR EACH ROW SET @cost = BENCHMARK(1500, MD5(NEW.c))"
)


def changes(k: int) -> list[str]:
    """The ``--set`` options of invocation ``k``: its flush setting, and from b5 on the trigger."""
    out = [f'sql.before-campaign=["SET GLOBAL innodb_flush_log_at_trx_commit = {flush(k)}"]']
    if k >= CHANGED_FROM:
        out.append(f'sql.after-prepare=["{TRIGGER}"]')
    return out


def run_campaigns(root: Path, port: int) -> None:
    (root / "perf.toml").write_text(CAMPAIGN.format(port=port, repeats=REPEATS))
    with running(PrivateMariaDB(port=port, parent=DISK)):
        for k in range(1, INVOCATIONS + 1):
            sets = [x for setting in changes(k) for x in ("--set", setting)]
            proc = ok(
                "campaign", "run", str(root / "perf.toml"), f"--results-dir={root / 'results' / f'b{k}'}",
                "--label", f"commit=b{k}", *sets, f"--history-db={root / 'self.sqlite'}",
                "--progress=plain", "--no-report",
            )  # fmt: skip
            assert f": {REPEATS} runs imported, 0 already there" in proc.stdout, proc.stdout


def tps_levels(results: Path) -> dict[int, list[int]]:
    return {k: [round(d["summary"]["tps"]) for d in runs_of(results, k)] for k in range(1, INVOCATIONS + 1)}


def a_clean_step(levels: dict[int, list[int]]) -> bool:
    """The premise: every b5 run slower than every b1-b4 run, and at most one later run not.
    This machine's virtual disk sometimes syncs for free (a write + fsync probe: 0.03 ms) for
    seconds at a time, and a run then costs nothing; with b5's first runs free the gate rightly
    puts the change later (one free run after b5 it takes as noise)."""
    floor = min(t for k, ts in levels.items() if flush(k) == 2 for t in ts)
    later = [t for k, ts in levels.items() if k > CHANGED_FROM for t in ts]
    return max(levels[CHANGED_FROM]) < floor and sum(t >= floor for t in later) <= 1


@pytest.fixture(scope="module")
def campaigns(tmp_path_factory) -> dict[str, Path]:
    """The 8 invocations' results (``results/bN``) and the store they recorded themselves in;
    measured again (once) when the machine gave no clean step."""
    if filesystem(DISK) in ("tmpfs", "ramfs"):
        pytest.fail(f"{DISK} is {filesystem(DISK)}: fsync costs nothing there, so the flush setting would not show")
    port = int(os.environ.get("PYSYSBENCH_TEST_HISTORY_MY_PORT", 0)) or free_port()
    tried = []
    for _ in range(2):
        root = tmp_path_factory.mktemp("histe2e")
        run_campaigns(root, port)
        tried.append(tps_levels(root / "results"))
        if a_clean_step(tried[-1]):
            return {"root": root, "results": root / "results", "store": root / "self.sqlite"}
    # The premise failed twice: the disk, not the gate, decided this run; the gate is not
    # judged on data with no clean step (test_history_detect covers the statistics on noise).
    pytest.skip(f"an fsync per commit cost nothing in some runs, twice: no clean step to find (TPS: {tried})")


def runs_of(results: Path, k: int) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((results / f"b{k}").glob("oltp_write_only-*.json"))]


def test_each_invocation_ran_with_its_setting(campaigns):
    """The server context of every result file shows the flush setting and its fsyncs."""
    for k in range(1, INVOCATIONS + 1):
        docs = runs_of(campaigns["results"], k)
        assert len(docs) == REPEATS and all(d["exit_code"] == 0 for d in docs)
        for d in docs:
            ctx = d["server_context"]
            assert ctx["settings"]["innodb_flush_log_at_trx_commit"] == str(flush(k))
            fsyncs = ctx["derived"]["fsyncs_per_trx"]
            assert fsyncs > 0.5 if flush(k) == 1 else fsyncs < 0.2, (k, fsyncs)
    print("TPS per invocation:", tps_levels(campaigns["results"]))


def finding_of(doc: dict, metric: str) -> dict:
    (verdict,) = [v for v in doc["verdicts"] if v["metric"] == metric]
    assert verdict["runs"] == INVOCATIONS * REPEATS and verdict["code"] == 1, verdict
    return verdict["findings"][-1]  # the latest level against the one before it


def assert_names_b5(store: str, results: Path, by: str) -> None:
    proc = cli("history", f"--history-db={store}", "check", f"--by={by}", MIN_EFFECT, "--output-format=json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    doc = json.loads(proc.stdout)
    for metric, kind in (("tps", -1), ("p95", 1)):
        f = finding_of(doc, metric)
        assert f["kind"] == "regression", f
        assert f["after_run"] == str(results / f"b{CHANGED_FROM}" / FIRST_RUN), f
        assert f["before_run"] == str(results / f"b{CHANGED_FROM - 1}" / LAST_RUN), f
        assert f["index"] == (CHANGED_FROM - 1) * REPEATS and f["runs_before"] >= REPEATS, f
        assert kind * f["effect"] > 0.3 and kind * f["high" if kind < 0 else "low"] > 0, f  # big, and sure


def test_check_names_the_first_run_of_invocation_5(campaigns):
    """On the store the campaigns recorded themselves in: one line per metric, exit 1."""
    store, results = campaigns["store"], campaigns["results"]
    proc = cli("history", f"--history-db={store}", "check", "--by=commit", MIN_EFFECT)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    print(proc.stdout)  # the figures docs/history.md quotes (pytest -s)
    lines = proc.stdout.splitlines()
    first = f"from {results / f'b{CHANGED_FROM}' / FIRST_RUN} (b{CHANGED_FROM}) on"
    for metric in ("tps -", "p95 +"):
        (line,) = [x for x in lines if x.startswith(f"regression: {SERIES}: {metric}")]
        assert first in line, line
    assert lines[-1].endswith("2 regression(s), 0 not enough data, 0 ok; exit 1"), proc.stdout
    for by in ("commit", "started"):
        assert_names_b5(str(store), results, by)


def test_imported_results_give_the_same_answer(campaigns, tmp_path):
    """The results folder imported afresh (manifests skipped) tells the same story."""
    store = tmp_path / "imported.sqlite"
    proc = ok("history", f"--history-db={store}", "import", str(campaigns["results"]))
    runs = INVOCATIONS * REPEATS
    assert f"{runs} runs imported, 0 already there, {INVOCATIONS} skipped" in proc.stdout, proc.stdout
    assert_names_b5(str(store), campaigns["results"], "commit")
    tps = {}
    for k in range(1, INVOCATIONS + 1):
        tps[k] = statistics.fmean(d["summary"]["tps"] for d in runs_of(campaigns["results"], k))
    print("mean TPS per invocation:", {k: round(v) for k, v in tps.items()})
