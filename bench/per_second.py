#!/usr/bin/env python3
"""A run second by second, beside what the machine's scheduler did in that second.

Runs a command (sysbench or pysysbench, any workload, with --report-interval=1) and
prints, for each of its interval reports, the QPS it reported next to the machine's
rescheduling interrupts (RES in /proc/interrupts: a task woken on the other core while
that core runs something, one inter-processor interrupt each) and context switches
(ctxt in /proc/stat) over the same second, and both per query (the first row's counts
start with the command, its start-up included).

    .venv/bin/python bench/per_second.py -- \\
        sysbench oltp_point_select --db-driver=mysql --mysql-host=127.0.0.1 --mysql-user=sbtest \\
        --mysql-db=bench --tables=4 --table-size=10000 --threads=8 --time=15 --report-interval=1 run

Why it exists: on a 2-core machine that runs the client and the server, an 8-thread
point select moves between QPS levels within one run, for either tool, and the level
follows the wake-ups across cores (bench/journal/2026-12-05.md, "Where the 8-thread regimes come
from").  A run's 10-s average hides that; this shows it.  Linux only (/proc).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time

REPORT_RE = re.compile(r"^\[\s*(\d+)s\s*\].*?\bqps:\s*([\d.]+)")
RES_RE = re.compile(r"^\s*RES:((?:\s+\d+)+)", re.M)
CTXT_RE = re.compile(rb"^ctxt (\d+)", re.M)


def reschedule_interrupts(text: str) -> int:
    """The RES row of /proc/interrupts summed over the cores (0 where the row is missing)."""
    m = RES_RE.search(text)
    return sum(int(n) for n in m.group(1).split()) if m else 0


def context_switches(data: bytes) -> int:
    m = CTXT_RE.search(data)
    return int(m.group(1)) if m else 0


def machine_counts() -> tuple[float, int, int]:
    with open("/proc/interrupts") as fh:
        res = reschedule_interrupts(fh.read())
    with open("/proc/stat", "rb") as fh:
        ctxt = context_switches(fh.read())
    return time.monotonic(), res, ctxt


def report(line: str) -> tuple[int, float] | None:
    """(second, QPS) of an interval report line of either tool, else None."""
    m = REPORT_RE.match(line.strip())
    return (int(m.group(1)), float(m.group(2))) if m else None


def row(second: int, qps: float, before: tuple[float, int, int], after: tuple[float, int, int]) -> str:
    span = after[0] - before[0] or 1e-9
    res, ctxt = (after[1] - before[1]) / span, (after[2] - before[2]) / span
    per_q = (lambda n: f"{n / qps:.3f}") if qps else (lambda n: "n/a")
    return f"| {second} | {qps:,.0f} | {res:,.0f} | {per_q(res)} | {ctxt:,.0f} | {per_q(ctxt)} |"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("command", nargs="+", help="the benchmark command, after --")
    args = ap.parse_args()
    if not os.path.exists("/proc/interrupts"):
        print("per_second: needs Linux's /proc/interrupts and /proc/stat", file=sys.stderr)
        return 2
    if not any(a.startswith("--report-interval") for a in args.command):
        print(
            "per_second: the command needs --report-interval=1 (its per-second QPS is the first column)",
            file=sys.stderr,
        )
        return 2
    try:
        proc = subprocess.Popen(args.command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
    except OSError as exc:
        print(f"per_second: cannot start {args.command[0]}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    print("| second | QPS | rescheduling interrupts/s | per query | context switches/s | per query |")
    print("|---:|---:|---:|---:|---:|---:|")
    last = machine_counts()
    tail: list[str] = []
    for line in proc.stdout:
        seen = report(line)
        if seen is None:
            tail = (tail + [line.rstrip()])[-3:]
            continue
        now = machine_counts()
        print(row(seen[0], seen[1], last, now), flush=True)
        last = now
    code = proc.wait()
    if code:
        print(f"per_second: the command exited with {code}: {' / '.join(t for t in tail if t)}", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
