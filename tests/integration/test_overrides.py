"""A user's Python is never replaced by the C event loop.

A subclass of a bundled OLTP workload that overrides a step helper (``_points``
of ``OltpUpdateIndex``, ...) inherits ``parts``; the C loop once ran in its
place in time-limited runs (0 calls of the override in 837,455 events).  Here the
override is counted, on MariaDB and PostgreSQL, with ``--time`` and ``--events``:
it must be called once per use in every recorded event (and in restarted ones).
"""

from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
# (bundled class, helper, calls per event)
CASES = [("OltpUpdateIndex", "_points", 1), ("OltpReadWrite", "_non_index", 1), ("OltpReadWrite", "_points", 2)]


@pytest.mark.parametrize("limit", ["--time=1", "--events=300"])
@pytest.mark.parametrize("cls,helper,per_event", CASES, ids=[f"{c}.{h}" for c, h, _ in CASES])
def test_override_runs_once_per_use(
    server_db, run_cli, parse_summary, tmp_path, monkeypatch, limit, cls, helper, per_event
):
    counts = tmp_path / "counts"
    counts.mkdir()
    monkeypatch.setenv("OVERRIDE_CLASS", cls)
    monkeypatch.setenv("OVERRIDE_HELPER", helper)
    monkeypatch.setenv("OVERRIDE_COUNT_DIR", str(counts))
    script = str(DATA / "override_workload.py")
    common = [script, *server_db.opts, "--tables=2", "--table-size=1000"]
    run_cli.ok(*common, "prepare")
    # two threads in two worker processes; one table row each would deadlock: 1000 rows
    proc = run_cli.ok(
        *common, "--threads=2", limit, "--time=0" if limit.startswith("--events") else "--events=0", "run"
    )
    summary = parse_summary(proc.stdout)
    events, restarts = summary["events"], summary["ignored_errors"]
    calls = sum(int(p.read_text()) for p in counts.iterdir())
    assert events > 0
    # an event restarted after an ignorable error (a deadlock) uses the helper again,
    # or not, depending on where the error struck
    assert events * per_event <= calls <= (events + restarts) * per_event, (calls, events, restarts, proc.stdout)
