"""The OLTP event's statement stream, end to end on SQLite: what the C event loop sends
(a ``--time`` run) and what the Python event sends (``PYSYSBENCH_NATIVE=off``, an
``--events`` run) from the same ``--rand-seed`` with one thread -- every statement,
its values substituted, as SQLite traced it -- are the same, and equal the stream
recorded in ``data/oltp_event_streams.json`` (its SHA-256) before the event was
defined once as data (workloads/oltp.py).  ``PYSYSBENCH_UPDATE_GOLDEN=1`` rewrites that
file from the Python runs."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
TRACE = DATA / "sqlite_trace.py"
GOLDEN = DATA / "oltp_event_streams.json"
ROOT = Path(__file__).resolve().parents[2]
EVENTS = 20
DATA_SET = ["--tables=3", "--table-size=100"]
RUN = ["--threads=1", "--rand-seed=7", "--report-interval=0"]

CASES = [
    ("oltp_read_write",),
    ("oltp_read_write", "--range-selects=off", "--delete-inserts=3", "--index-updates=0"),
    ("oltp_read_write", "--skip-trx=on", "--point-selects=0", "--simple-ranges=2", "--range-size=7"),
    ("oltp_read_only",),
    ("oltp_read_only", "--distinct-ranges=0", "--rand-type=uniform"),
    ("oltp_write_only",),
    ("oltp_point_select",),
    ("oltp_point_select", "--rand-type=pareto"),
    ("oltp_update_index", "--index-updates=2"),
    ("oltp_update_non_index",),
]


def case_id(case: tuple[str, ...]) -> str:
    return " ".join(case)


def traced(db: Path, case: tuple[str, ...], limit: list[str], native: str) -> list[str]:
    """The statements of one run, one a line (values substituted)."""
    out = db.with_name(f"trace-{os.getpid()}-{native}.sql")
    out.unlink(missing_ok=True)
    cli(str(out), *case, "--db-driver=sqlite", f"--sqlite-db={db}", *DATA_SET, *RUN, *limit, "run", native=native)
    return out.read_text(encoding="utf-8").splitlines()


def cli(*args: str, native: str = "on") -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSYSBENCH_")}
    env["PYSYSBENCH_NATIVE"] = native
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    proc = subprocess.run(
        [sys.executable, str(TRACE), *args], check=False, capture_output=True, text=True, timeout=120, env=env
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def digest(lines: list[str]) -> str:
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("stream") / "sbtest.db"
    cli(os.devnull, "oltp_read_write", "--db-driver=sqlite", f"--sqlite-db={path}", *DATA_SET, "prepare")
    return path


@pytest.fixture(scope="module")
def golden() -> dict:
    found = json.loads(GOLDEN.read_text()) if GOLDEN.exists() else {}
    yield found
    if os.environ.get("PYSYSBENCH_UPDATE_GOLDEN") == "1":
        GOLDEN.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_c_loop_and_python_event_send_the_recorded_stream(db, golden, case):
    python = traced(db, case, [f"--events={EVENTS}", "--time=0"], "off")
    record = {"statements": len(python), "sha256": digest(python)}
    if os.environ.get("PYSYSBENCH_UPDATE_GOLDEN") == "1":
        golden[case_id(case)] = record
    assert golden[case_id(case)] == record
    for seconds in (1, 5):  # a loaded machine may run fewer events in a second
        c = traced(db, case, [f"--time={seconds}", "--events=0"], "on")
        if len(c) >= len(python):
            break
    assert len(c) >= len(python)
    assert c[: len(python)] == python
