#!/usr/bin/env python3
"""The built-in tests side by side: the real sysbench 1.0.20 against pysysbench (issue 22).

Cases: ``cpu --cpu-max-prime=20000`` (events per second), ``memory`` read and write at
1 and 2 threads (operations per second) and ``fileio --file-test-mode=rndrw``
(read + written MiB/s, files prepared once by sysbench in a scratch directory). The
two tools alternate within each round, the order flipping every round; the script
prints each round's figures and, per case, the median over rounds of both and of the
ratio pysysbench / sysbench (target: within 10 %).

    .venv/bin/python bench/builtin_vs_sysbench.py                  # 5 rounds of 3 s per run (about 4 min)
    .venv/bin/python bench/builtin_vs_sysbench.py --rounds=1 --time=2 --cases=cpu,memory-write-1

Needs ``sysbench`` on PATH (apt-get install sysbench).  The machine is shared: compare
the ratios, not the absolute numbers.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
FILEIO = ["fileio", "--file-num=4", "--file-total-size=64M"]
CASES = {
    "cpu": (["cpu", "--cpu-max-prime=20000", "--threads=1"], "eps"),
    "memory-read-1": (["memory", "--memory-oper=read", "--threads=1"], "ops"),
    "memory-read-2": (["memory", "--memory-oper=read", "--threads=2"], "ops"),
    "memory-write-1": (["memory", "--memory-oper=write", "--threads=1"], "ops"),
    "memory-write-2": (["memory", "--memory-oper=write", "--threads=2"], "ops"),
    "fileio-rndrw": (FILEIO + ["--file-test-mode=rndrw", "--threads=1"], "mib"),
}


def figure(out: str, kind: str) -> float:
    if kind == "eps":
        return float(re.search(r"events per second:\s+([\d.]+)", out).group(1))
    if kind == "ops":
        return float(re.search(r"Total operations: \d+ \(\s*([\d.]+) per second\)", out).group(1))
    read = float(re.search(r"read, MiB/s:\s+([\d.]+)", out).group(1))
    written = float(re.search(r"written, MiB/s:\s+([\d.]+)", out).group(1))
    return read + written


def run(cmd: list[str], cwd: str) -> str:
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}): {(p.stdout + p.stderr).strip()[-400:]}")
    return p.stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--time", type=int, default=3, help="seconds per run")
    ap.add_argument("--cases", default=",".join(CASES), help="comma-separated: " + ", ".join(CASES))
    ap.add_argument("--sysbench", default=shutil.which("sysbench") or "sysbench")
    ap.add_argument("--pysysbench", default=str(Path(sys.executable).with_name("pysysbench")))
    a = ap.parse_args()
    cases = [c for c in a.cases.split(",") if c]
    for c in cases:
        if c not in CASES:
            sys.exit(f"unknown case '{c}' (choose from {', '.join(CASES)})")
    env_note = os.environ.get("PYSYSBENCH_NATIVE", "on")
    scratch = tempfile.mkdtemp(prefix="builtin-bench-")
    tools = {"sysbench": [a.sysbench], "pysysbench": [a.pysysbench]}
    results: dict[str, dict[str, list[float]]] = {c: {"sysbench": [], "pysysbench": []} for c in cases}
    try:
        if any(c.startswith("fileio") for c in cases):
            run([a.sysbench] + FILEIO + ["prepare"], scratch)
        print(
            f"# {a.rounds} rounds, {a.time} s per run, PYSYSBENCH_NATIVE={env_note}, "
            f"load average {os.getloadavg()[0]:.1f}"
        )
        for r in range(a.rounds):
            order = ["sysbench", "pysysbench"] if r % 2 == 0 else ["pysysbench", "sysbench"]
            for c in cases:
                args, kind = CASES[c]
                for tool in order:
                    out = run(tools[tool] + args + [f"--time={a.time}", "--events=0", "run"], scratch)
                    results[c][tool].append(figure(out, kind))
                sb, py = results[c]["sysbench"][-1], results[c]["pysysbench"][-1]
                print(
                    f"round {r + 1} {c:15s} sysbench {sb:14.2f}  pysysbench {py:14.2f}  ratio {py / sb:5.3f}",
                    flush=True,
                )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print()
    print(f"{'case':15s} {'unit':8s} {'sysbench':>14s} {'pysysbench':>14s} {'ratio (median)':>15s}")
    for c in cases:
        unit = {"eps": "events/s", "ops": "ops/s", "mib": "MiB/s"}[CASES[c][1]]
        sb = statistics.median(results[c]["sysbench"])
        py = statistics.median(results[c]["pysysbench"])
        ratios = [p / s for p, s in zip(results[c]["pysysbench"], results[c]["sysbench"])]
        print(f"{c:15s} {unit:8s} {sb:14.2f} {py:14.2f} {statistics.median(ratios):15.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
