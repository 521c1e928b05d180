#!/usr/bin/env python3
"""CI guard (issue 44): pysysbench's own instructions per event may not grow unnoticed.

Counts, with valgrind's cachegrind, the user-space instructions of the whole client
process tree on the dry-run driver (``--mysql-dry-run``: no server, nothing sent, every
statement answered at once), for the bundled Python/C workloads and for sysbench's own
``.lua`` files through the Lua engine (``--lua-bundled=on``, the sysbench package's
``/usr/share/sysbench/oltp_*.lua``).  One case is two runs that differ only in
``--events`` (``--time=0 --rand-seed=7 --threads=1``): start-up and shut-down cancel in
the difference, and instructions per event = (Ir(long) - Ir(short)) / (events difference).
Each is held against bench/client_cost_baseline.json with a tolerance of 3 %: a case that
costs more is measured again, up to twice, and judged by its lowest count (what a loaded
machine adds -- timers, the per-second work beyond the subtracted estimate -- only adds
instructions, while a real regression is in every count); still over, it fails with both
numbers and their ratio. One that costs more than 3 % less passes with a note to lower the
baseline.

    python bench/client_cost_guard.py                    # check (scripts/gates.sh runs this)
    python bench/client_cost_guard.py --repeat=3         # check with the least of 3; prints the spread
    python bench/client_cost_guard.py --update --why="the Lua bridge resumes once per event now"

The baseline changes only in a commit that says why (``--update`` needs ``--why`` and
writes it into the file).  Deterministic enough to hold 3 %: PYTHONHASHSEED=0 for every
run (set and dict orders, the interned strings' hashes), the package's byte-code compiled
first (``python -m compileall -q pysysbench``: a machine with PYTHONDONTWRITEBYTECODE set
would otherwise compile every module in every run), PYSYSBENCH_* variables dropped, the C
extension required (the baseline counts it).  What is left is the work pysysbench does per
second of wall time (about 0.25 M instructions a second under valgrind, the run's sampling
timers), well under 1 % of a case.  Needs valgrind (``apt-get install valgrind``): without
it the guard fails, it does not skip.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BASELINE = REPO / "bench" / "client_cost_baseline.json"
TOLERANCE = 0.03
RETRIES = 2  # measurements more of a case over the tolerance
COMMON = ("--mysql-dry-run", "--time=0", "--rand-seed=7", "--threads=1")
PREFIX = "client-cost:"
# the addresses of objects decide collisions in CPython's type attribute cache (keyed by the
# name's address): with the address space randomised, one run in a few paid 0.7 M more lookups
NO_ASLR = ("setarch", "-R") if shutil.which("setarch") else ()


@dataclass(frozen=True)
class Case:
    args: tuple[str, ...]
    events: tuple[int, int]  # the short and the long run


CASES = {
    "native point_select": Case(("oltp_point_select",), (1000, 11000)),
    "native read_write": Case(("oltp_read_write",), (100, 900)),
    "lua point_select": Case(("oltp_point_select", "--lua-bundled=on"), (1000, 11000)),
    "lua read_write": Case(("oltp_read_write", "--lua-bundled=on"), (100, 900)),
}


class GuardError(Exception):
    """One line that says why the guard could not count."""


def run_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSYSBENCH_")}
    env["PYTHONHASHSEED"] = "0"
    env["PYTHONPATH"] = str(REPO)
    return env


def preflight() -> str:
    """valgrind is there, the byte-code compiled, the C extension used; returns the tools' versions."""
    if shutil.which("valgrind") is None:
        raise GuardError("valgrind is not installed (apt-get install valgrind): the guard cannot count, so it fails")
    subprocess.run([sys.executable, "-m", "compileall", "-q", "pysysbench"], cwd=REPO, env=run_env(), check=True)
    probe = "from pysysbench.runtime import native; print(native.ENABLED)"
    out = subprocess.run([sys.executable, "-c", probe], cwd=REPO, env=run_env(), capture_output=True, text=True)
    if out.stdout.strip() != "True":
        raise GuardError("the C extension is not built (python setup.py build_ext --inplace): the baseline counts it")
    valgrind = subprocess.run(["valgrind", "--version"], capture_output=True, text=True).stdout.strip()
    aslr = "address randomisation off" if NO_ASLR else "address randomisation on (no setarch)"
    return f"{valgrind}, Python {platform.python_version()}, {aslr}"


@dataclass(frozen=True)
class Count:
    instructions: int  # the whole process tree's, user space
    seconds: float  # the run's measured phase ("total time"), wall clock under valgrind


def count(args: tuple[str, ...], events: int, pin: str = "") -> Count:
    """One dry run under cachegrind (``pin``: taskset's CPU list, "" for none)."""
    with tempfile.TemporaryDirectory(prefix="pysysbench-cost-") as tmp:
        cmd = [
            *NO_ASLR, *(("taskset", "-c", pin) if pin else ()), "valgrind", "--tool=cachegrind", "--cache-sim=no",
            "--trace-children=yes", f"--cachegrind-out-file={tmp}/cg.%p", sys.executable, "-m", "pysysbench",
            *args, *COMMON, f"--events={events}", "run",
        ]  # fmt: skip
        out = subprocess.run(cmd, cwd=tmp, env=run_env(), capture_output=True, text=True)
        done = re.search(r"total number of events:\s+(\d+)", out.stdout)
        took = re.search(r"total time:\s+([\d.]+)s", out.stdout)
        if out.returncode != 0 or done is None or took is None or int(done.group(1)) != events:
            last = (out.stderr.strip().splitlines() or ["(no output)"])[-1]
            raise GuardError(f"the run {' '.join(args)} --events={events} failed (exit {out.returncode}): {last}")
        total = 0
        for path in Path(tmp).glob("cg.*"):
            found = re.search(r"^summary:\s+(\d+)", path.read_text(), re.M)
            total += int(found.group(1)) if found else 0
        return Count(total, float(took.group(1)))


def per_event(name: str, short: Count, long: Count, per_second: float) -> float:
    """(Ir(long) - Ir(short) - per_second x (the longer measured phase)) / events difference."""
    first, last = CASES[name].events
    return (long.instructions - short.instructions - per_second * (long.seconds - short.seconds)) / (last - first)


def measure(names: list[str], repeat: int, jobs: int, per_second: dict[str, float]) -> dict[str, list[float]]:
    """Instructions per event of each case, `repeat` times (the runs `jobs` at a time)."""
    runs = [(name, n, r) for r in range(repeat) for name in names for n in CASES[name].events]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        counts = dict(zip(runs, pool.map(lambda run: count(CASES[run[0]].args, run[1]), runs)))
    out: dict[str, list[float]] = {}
    for name in names:
        short, long = CASES[name].events
        out[name] = [
            per_event(name, counts[name, short, r], counts[name, long, r], per_second[name]) for r in range(repeat)
        ]
    return out


def measured_per_second(names: list[str]) -> dict[str, float]:
    """One figure for every case: the per-second work is the same code whatever the workload
    (the run's 1-s samples), and one stretched pair per case is noisy (0.1-0.5 M a second
    on a loaded machine), so the median over the cases."""
    each = [per_second_cost(name) for name in names]
    return dict.fromkeys(names, statistics.median(each))


def per_second_cost(name: str) -> float:
    """What the run costs per second of wall time whatever it does (the reconnect watch's
    samples, timers): the long run alone on one CPU and again sharing it with two busy
    loops, which stretches its measured phase; the instructions that grow with it, per second."""
    cpu = str((os.cpu_count() or 1) - 1)
    args, events = CASES[name].args, CASES[name].events[1]
    alone = count(args, events, cpu)
    hogs = [subprocess.Popen(["taskset", "-c", cpu, "sh", "-c", "while :; do :; done"]) for _ in range(2)]
    try:
        stretched = count(args, events, cpu)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    if stretched.seconds - alone.seconds < 1.0:
        raise GuardError(
            f"{name}: sharing a CPU did not stretch the run ({alone.seconds:.1f} s, {stretched.seconds:.1f} s)"
        )
    return max(0.0, (stretched.instructions - alone.instructions) / (stretched.seconds - alone.seconds))


def spread(values: list[float]) -> str:
    if len(values) < 2:
        return ""
    mid = statistics.median(values)
    each = ", ".join(f"{v:,.0f}" for v in values)
    return f"; runs {each}, spread {(max(values) - min(values)) / mid * 100:.2f} %"


def check(per_event: dict[str, list[float]], baseline: dict) -> bool:
    """One line per case against the baseline; True when none costs more than the tolerance allows."""
    ok = True
    tolerance = float(baseline.get("tolerance", TOLERANCE))
    for name, values in per_event.items():
        now = min(values)  # noise only adds instructions (see the module's docstring)
        before = float(baseline["cases"][name]["instructions_per_event"])
        ratio = now / before
        if ratio > 1 + tolerance:
            verdict, ok = f"FAILED: costs {ratio - 1:.1%} more than the baseline (tolerance {tolerance:.0%})", False
        elif ratio < 1 - tolerance:
            verdict = f"ok, {1 - ratio:.1%} below the baseline: lower it (--update --why=...)"
        else:
            verdict = "ok"
        print(f"{PREFIX} {name}: before {before:,.0f}, after {now:,.0f} instructions/event, "
              f"ratio {ratio:.3f}{spread(values)}: {verdict}")  # fmt: skip
    return ok


def remeasure(per_event: dict[str, list[float]], baseline: dict, jobs: int, per_second: dict[str, float]) -> None:
    """Measure a case over the tolerance again, up to RETRIES times, adding to its counts."""
    tolerance = float(baseline.get("tolerance", TOLERANCE))
    for _ in range(RETRIES):
        over = [
            name
            for name, values in per_event.items()
            if min(values) > float(baseline["cases"][name]["instructions_per_event"]) * (1 + tolerance)
        ]
        if not over:
            return
        for name, values in measure(over, 1, jobs, per_second).items():
            per_event[name] += values


def stored(baseline: dict, names: list[str]) -> dict[str, float]:
    """Each case's per-second cost from the baseline, which must hold the case with these run lengths."""
    cases = baseline.get("cases", {})
    for name in names:
        if name not in cases or tuple(cases[name].get("events", ())) != CASES[name].events:
            raise GuardError(f"{name}: not in {BASELINE.name} with events {CASES[name].events} (--update --why=...)")
    return {name: float(cases[name]["per_second"]) for name in names}


def update(per_event: dict[str, list[float]], per_second: dict[str, float], why: str, tools: str) -> None:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True)
    data = {
        "why": why,
        "command": "python bench/client_cost_guard.py --update --repeat=3 --why=...; checked by: "
        "python bench/client_cost_guard.py (scripts/gates.sh)",
        "measured": f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} at {commit.stdout.strip()} "
        f"(+ working tree), {tools}",
        "run": f"setarch -R valgrind --tool=cachegrind --trace-children=yes python -m pysysbench TEST "
        f"{' '.join(COMMON)} --events=N run; PYTHONHASHSEED=0",
        "per_event": "(Ir(long) - Ir(short) - per_second x (total time(long) - total time(short))) / (events difference)",
        "per_second": "instructions per wall second of the measured phase whatever it does (the run's 1-s samples, "
        "timers), from the long run alone on a CPU and stretched by two busy loops on it",
        "tolerance": TOLERANCE,
        "cases": {
            name: {"args": list(CASES[name].args), "events": list(CASES[name].events),
                   "instructions_per_event": round(statistics.median(values)), "per_second": round(per_second[name])}
            for name, values in per_event.items()
        },
    }  # fmt: skip
    BASELINE.write_text(json.dumps(data, indent=2) + "\n")
    for name, values in per_event.items():
        print(f"{PREFIX} {name}: {statistics.median(values):,.0f} instructions/event, "
              f"{per_second[name]:,.0f} per second{spread(values)}")  # fmt: skip
    print(f"{PREFIX} baseline written: {BASELINE.relative_to(REPO)}")


def parse() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", default=",".join(CASES), help="comma-separated, of: " + ", ".join(CASES))
    p.add_argument("--repeat", type=int, default=1, help="measure each case N times, judge by the least (1)")
    p.add_argument("--jobs", type=int, default=2, help="valgrind runs at a time (2)")
    p.add_argument("--update", action="store_true", help="write the baseline instead of checking against it")
    p.add_argument("--why", default="", help="with --update: why the baseline changes (kept in the file)")
    a = p.parse_args()
    a.names = [c.strip() for c in a.cases.split(",") if c.strip()]
    unknown = [n for n in a.names if n not in CASES]
    if unknown or a.repeat < 1 or a.jobs < 1 or (a.update and not a.why.strip()):
        what = f"unknown case {unknown[0]!r}" if unknown else "--update needs --why=TEXT; --repeat, --jobs >= 1"
        p.error(what)
    return a


def main() -> int:
    a = parse()
    start = time.monotonic()
    try:
        tools = preflight()
        baseline = {} if a.update else json.loads(BASELINE.read_text())
        per_second = measured_per_second(a.names) if a.update else stored(baseline, a.names)
        per_event = measure(a.names, a.repeat, a.jobs, per_second)
        if not a.update:
            remeasure(per_event, baseline, a.jobs, per_second)
    except (GuardError, OSError, ValueError, KeyError, subprocess.CalledProcessError) as e:
        print(f"{PREFIX} FAILED: {e}", file=sys.stderr)
        return 1
    took = f"{time.monotonic() - start:.0f} s"
    if a.update:
        update(per_event, per_second, a.why.strip(), tools)
        return 0
    if check(per_event, baseline):
        print(f"{PREFIX} {len(per_event)} case(s) within {TOLERANCE:.0%} of {BASELINE.name} ({took}; {tools})")
        return 0
    print(f"{PREFIX} FAILED: a case costs more per event than {BASELINE.name} allows ({took})", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
