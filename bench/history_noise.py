#!/usr/bin/env python3
"""Real run-to-run noise for the regression detection's tests (tests/data/history_noise.json).

Runs one short pysysbench workload N times on this machine (SQLite, a private file) and keeps,
per run, the per-second TPS and the per-second 95th-percentile latency from its result file.
tests/unit/test_history_detect.py builds its synthetic series from these runs (a known step
added), so the noise they test against is the noise this machine shows.

    PYTHONPATH=$PWD .venv/bin/python bench/history_noise.py --runs=30 --output=tests/data/history_noise.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

WORKLOAD = ["oltp_read_only", "--table-size=10000"]
RUN = ["run", "--time=5", "--warmup-time=1", "--report-interval=1", "--worker-sessions=off"]


def _pysysbench(db: Path, *args: str) -> None:
    cmd = [sys.executable, "-m", "pysysbench", *WORKLOAD, f"--sqlite-db={db}", *args]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=os.environ.copy())


def _one_run(db: Path, result: Path) -> dict[str, list[float]]:
    _pysysbench(db, *RUN, f"--result-file={result}")
    doc = json.loads(result.read_text())
    rows = doc["intervals"]
    return {"tps": [round(r["tps"], 2) for r in rows], "p95_ms": [round(r["latency_pct_ms"], 4) for r in rows]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--output", required=True)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "noise.db"
        _pysysbench(db, "prepare")
        runs = [_one_run(db, Path(tmp) / f"r{i}.json") for i in range(args.runs)]
    doc = {
        "what": "per-second TPS and p95 (ms) of repeated pysysbench runs on one machine (bench/history_noise.py)",
        "command": " ".join(["pysysbench", *WORKLOAD, "--sqlite-db=DB", *RUN]),
        "load_average": os.getloadavg()[0],
        "runs": runs,
    }
    Path(args.output).write_text(json.dumps(doc, indent=None, separators=(",", ":")) + "\n")
    print(f"{len(runs)} runs -> {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
