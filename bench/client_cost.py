#!/usr/bin/env python3
"""What the client costs per query (issue 44): sysbench 1.0.20 against pysysbench, counted.

Same server, same options, same ``--rand-seed``; database ``clientcost`` (created here as
root, one table of 10,000 rows, dropped with ``--cleanup``).  Per case:

* **instructions per query**: user-space instructions of the client's whole process tree
  (valgrind's cachegrind, ``--trace-children=yes``) of two runs at the same ``--time`` with
  ``--rate`` R and 3R: start-up, shut-down and every per-second cost (timers, samples,
  polling) are the same in both and cancel; the difference over the difference in queries
  is what a query costs, its rate-limited event's share of waiting included;
* **context switches and system calls per query**: ``perf stat -e
  context-switches,raw_syscalls:sys_enter`` (children included) of an unthrottled run;
* **peak RSS** of the process tree (sampled every 50 ms) of that run's twin without perf, and
  its **peak PSS** (a page shared by several processes of the tree counts once in all: a
  forked worker's inherited pages count twice in the RSS sum);
* **start-up CPU**: user + system CPU of the tree of a ``--time=1`` run.

Cases: point_select and read_write as pysysbench's bundled workloads and through its Lua
engine (the sysbench package's ``oltp_*.lua``, ``--lua-bundled=on``), and
bench/ten_statements.lua (a script of our own: ten statements per event through the sql API);
sysbench runs the ``.lua`` file each time.  MariaDB and PostgreSQL, 1 and 8 threads.

    python bench/client_cost.py --quick                 # MariaDB, 1 thread (about 25 min)
    python bench/client_cost.py                         # every case
    python bench/client_cost.py --quick --write-doc     # and the table into docs/performance.md

Server runs are taken under ``flock /tmp/pysysbench-helper-db.lock`` one command at a time.
1000 threads need ``max_connections`` above 1000 (the shared servers have 151 and 100):
``--threads=1000 --mysql-port=...`` on a private server.  Byte-code of the checkout is
compiled first (``python -m compileall -q pysysbench``: with PYTHONDONTWRITEBYTECODE set,
every run would compile every module); PYTHONHASHSEED=0 for both tools.
"""

from __future__ import annotations

import argparse
import fcntl
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
from compare_sysbench import measure  # noqa: E402  (RSS and CPU of a process tree)

DB = "clientcost"
LOCK = "/tmp/pysysbench-helper-db.lock"
LUA_DIR = "/usr/share/sysbench"
OWN_SCRIPT = str(REPO / "bench" / "ten_statements.lua")
PYSYSBENCH = [sys.executable, "-m", "pysysbench"]
SEED = "--rand-seed=7"
RATE_TIME_S, PLAIN_TIME_S = 10, 5
RATES = {"point_select": 200, "read_write": 20, "ten_statements": 20}  # and 3x: the server's fsyncs cap the writers
DOC = REPO / "docs" / "performance.md"
BEGIN, END = "<!-- client_cost.py: begin -->", "<!-- client_cost.py: end -->"


def conn(server: str, port: int) -> list[str]:
    if server == "mysql":
        return ["--db-driver=mysql", "--mysql-host=127.0.0.1", f"--mysql-port={port or 3306}",
                "--mysql-user=sbtest", f"--mysql-db={DB}"]  # fmt: skip
    return ["--db-driver=pgsql", "--pgsql-host=127.0.0.1", f"--pgsql-port={port or 5432}",
            "--pgsql-user=sbtest", f"--pgsql-db={DB}"]  # fmt: skip


@dataclass(frozen=True)
class Case:
    workload: str  # point_select, read_write, ten_statements
    path: str  # bundled, lua
    server: str
    threads: int

    @property
    def name(self) -> str:
        return f"{self.workload} {self.path} {self.server} {self.threads} thr"

    def argv(self, tool: str, port: int) -> list[str]:
        """The command line without the run length: sysbench always runs the .lua file."""
        script = OWN_SCRIPT if self.workload == "ten_statements" else f"{LUA_DIR}/oltp_{self.workload}.lua"
        tables = [] if self.workload == "ten_statements" else ["--tables=1"]  # its own options: table_size only
        common = [*conn(self.server, port), *tables, "--table-size=10000", f"--threads={self.threads}", SEED]
        if tool == "sysbench":
            return ["sysbench", script, *common]
        if self.path == "bundled":
            return [*PYSYSBENCH, f"oltp_{self.workload}", *common]
        return [*PYSYSBENCH, "--lua-bundled=on", script, *common]


@dataclass
class Figures:
    instructions_per_query: float = math.nan
    switches_per_query: float = math.nan
    syscalls_per_query: float = math.nan
    rss_mb: float = math.nan
    pss_mb: float = math.nan
    startup_cpu_s: float = math.nan
    notes: list[str] = field(default_factory=list)


@contextmanager
def db_lock() -> Iterator[None]:
    """The helpers' shared-server lock, held by this process (no flock process in the tree)."""
    with open(LOCK, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


QUERIES_RE = re.compile(r"^\s+queries:\s+(\d+)", re.M)


def run_text(cmd: list[str]) -> str:
    with db_lock():
        out = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    found = QUERIES_RE.search(out.stdout)
    if out.returncode != 0 or found is None:
        last = (out.stderr.strip() or out.stdout.strip() or "no output").splitlines()[-1]
        raise RuntimeError(f"{' '.join(cmd[:3])}... failed (exit {out.returncode}): {last}")
    return out.stdout


def instructions(cmd: list[str]) -> tuple[int, int]:
    """(user-space instructions of the whole tree, queries) of one run under cachegrind."""
    with tempfile.TemporaryDirectory(prefix="client-cost-") as tmp:
        grind = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--trace-children=yes",
                 f"--cachegrind-out-file={tmp}/cg.%p"]  # fmt: skip
        text = run_text([*grind, *cmd])
        total = 0
        for path in Path(tmp).glob("cg.*"):
            found = re.search(r"^summary:\s+(\d+)", path.read_text(), re.M)
            total += int(found.group(1)) if found else 0
    return total, int(QUERIES_RE.search(text).group(1))  # type: ignore[union-attr]


def per_query_instructions(base: list[str], rate: int, repeats: int = 1) -> float:
    """(Ir(3R) - Ir(R)) / (queries(3R) - queries(R)) at the same --time: every per-second cost
    cancels; the median over ``repeats`` pairs (a pair's figure moves by a few percent with
    how the wake-ups of the two runs fell, for sysbench as for pysysbench)."""
    out = []
    for _ in range(repeats):
        low = instructions([*base, f"--time={RATE_TIME_S}", f"--rate={rate}", "run"])
        high = instructions([*base, f"--time={RATE_TIME_S}", f"--rate={3 * rate}", "run"])
        out.append((high[0] - low[0]) / max(high[1] - low[1], 1))
    return statistics.median(out)


def perf_counts(base: list[str]) -> tuple[float, float]:
    """Context switches and system calls per query of an unthrottled run (children included)."""
    with tempfile.NamedTemporaryFile("r", suffix=".perf") as out:
        perf = ["perf", "stat", "-x,", "-o", out.name, "-e", "context-switches,raw_syscalls:sys_enter", "--"]
        queries = int(QUERIES_RE.search(run_text([*perf, *base, f"--time={PLAIN_TIME_S}", "run"])).group(1))  # type: ignore[union-attr]
        counts = {}
        for line in out.read().splitlines():
            parts = line.split(",")
            if len(parts) > 2 and parts[0].strip().isdigit():
                counts[parts[2]] = int(parts[0])
    return counts.get("context-switches", 0) / queries, counts.get("raw_syscalls:sys_enter", 0) / queries


def tree_run(base: list[str], seconds: int) -> tuple[float, float, float]:
    """(peak RSS MB, CPU s, peak PSS MB) of the process tree of one run."""
    with db_lock():
        m = measure([*base, f"--time={seconds}", "run"], seconds * 10 + 120)
    if isinstance(m, str):
        raise RuntimeError(m)
    return m.rss_mb, m.cpu_s, m.pss_mb


def figures(case: Case, tool: str, port: int, grind: bool, repeats: int = 1) -> Figures:
    f = Figures()
    base = case.argv(tool, port)
    steps = (
        [
            (
                "instructions",
                lambda: setattr(
                    f, "instructions_per_query", per_query_instructions(base, RATES[case.workload], repeats)
                ),
            )
        ]
        if grind
        else []
    )
    steps += [
        ("perf", lambda: (setattr(f, "switches_per_query", (p := perf_counts(base))[0]),
                          setattr(f, "syscalls_per_query", p[1]))),
        ("rss", lambda: (setattr(f, "rss_mb", (t := tree_run(base, PLAIN_TIME_S))[0]), setattr(f, "pss_mb", t[2]))),
        ("start-up", lambda: setattr(f, "startup_cpu_s", tree_run(base, 1)[1])),
    ]  # fmt: skip
    for what, step in steps:
        try:
            step()
        except (RuntimeError, OSError, ValueError) as e:
            f.notes.append(f"{tool} {what}: {e}")
    return f


COLUMNS = (
    ("instructions/query", "instructions_per_query", "{:,.0f}"),
    ("context switches/query", "switches_per_query", "{:.2f}"),
    ("syscalls/query", "syscalls_per_query", "{:.2f}"),
    ("peak RSS MB", "rss_mb", "{:.0f}"),
    ("peak PSS MB", "pss_mb", "{:.0f}"),
    ("start-up CPU s (--time=1)", "startup_cpu_s", "{:.3f}"),
)


def cell(value: float, spec: str) -> str:
    return "-" if math.isnan(value) else spec.format(value)


def header() -> list[str]:
    cols = ["case"]
    for title, _, _ in COLUMNS:
        cols += [f"sysbench {title}", f"pysysbench {title}", "ratio"]
    return ["| " + " | ".join(cols) + " |", "|---" + "|---:" * (len(cols) - 1) + "|"]


def row(case: Case, sb: Figures, py: Figures) -> str:
    cells = [case.name]
    for _, attr, spec in COLUMNS:
        a, b = getattr(sb, attr), getattr(py, attr)
        cells += [cell(a, spec), cell(b, spec), cell(b / a if a else math.nan, "{:.2f}")]
    return "| " + " | ".join(cells) + " |"


def admin(server: str, sql: str) -> None:
    cmd = (["mysql", "-uroot", "-e", sql] if server == "mysql"
           else ["psql", "-h", "127.0.0.1", "-U", "postgres", "-qAtc", sql])  # fmt: skip
    subprocess.run(cmd, check=True, capture_output=True, text=True)


def prepare(server: str, port: int) -> None:
    """The database clientcost with one sbtest table of 10,000 rows (sysbench's own prepare)."""
    if server == "mysql":
        admin(server, f"CREATE DATABASE IF NOT EXISTS {DB}; GRANT ALL ON {DB}.* TO 'sbtest'@'%'")
    else:
        exists = subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-Atc",
                                 f"SELECT 1 FROM pg_database WHERE datname = '{DB}'"],
                                capture_output=True, text=True).stdout.strip()  # fmt: skip
        if not exists:
            admin(server, f"CREATE DATABASE {DB} OWNER sbtest")
    base = ["sysbench", "oltp_read_write", *conn(server, port), "--tables=1", "--table-size=10000"]
    with db_lock():
        subprocess.run([*base, "cleanup"], capture_output=True)
        subprocess.run([*base, "prepare"], check=True, capture_output=True)


def cases(a: argparse.Namespace) -> list[Case]:
    out = []
    for server in a.servers:
        for threads in a.threads:
            for workload in ("point_select", "read_write", "ten_statements"):
                for path in ("bundled", "lua") if workload != "ten_statements" else ("lua",):
                    out.append(Case(workload, path, server, threads))
    return out


def write_doc(lines: list[str], command: str) -> None:
    text = DOC.read_text()
    block = "\n".join([BEGIN, "```", f"$ {command}", *lines, "```", END])
    if BEGIN in text:
        head, rest = text.split(BEGIN, 1)
        text = head + block + rest.split(END, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n## Client cost per query: `bench/client_cost.py`\n\n" + block + "\n"
    DOC.write_text(text)


def parse() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="MariaDB, 1 thread only")
    p.add_argument("--servers", default="mysql,pgsql", help="mysql,pgsql")
    p.add_argument("--threads", default="1,8", help="thread counts (1,8)")
    p.add_argument("--port", type=int, default=0, help="the server's port (a private server for 1000 threads)")
    p.add_argument("--no-valgrind", action="store_true", help="skip the instruction counts (the slow part)")
    p.add_argument("--repeats", type=int, default=3, help="instruction pairs per case; their median (3)")
    p.add_argument("--write-doc", action="store_true", help="write the table into docs/performance.md")
    p.add_argument("--cleanup", action="store_true", help="drop the database clientcost at the end")
    a = p.parse_args()
    a.servers = ["mysql"] if a.quick else [s for s in a.servers.split(",") if s]
    a.threads = [1] if a.quick else [int(t) for t in a.threads.split(",") if t]
    if any(s not in ("mysql", "pgsql") for s in a.servers) or any(t < 1 for t in a.threads) or a.repeats < 1:
        p.error("--servers: mysql and/or pgsql; --threads, --repeats: positive numbers")
    return a


def main() -> int:
    a = parse()
    os.environ.update(PYTHONHASHSEED="0", PYTHONPATH=str(REPO))
    for key in [k for k in os.environ if k.startswith("PYSYSBENCH_")]:
        del os.environ[key]
    subprocess.run([sys.executable, "-m", "compileall", "-q", "pysysbench"], cwd=REPO, check=True)
    command = "python bench/client_cost.py " + " ".join(sys.argv[1:])
    lines = [f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average {os.getloadavg()[0]:.2f}; "
             f"instructions: cachegrind, --time={RATE_TIME_S} at --rate=R and 3R (R: {RATES}), "
             f"median of {a.repeats} pair(s); "
             f"perf and RSS: --time={PLAIN_TIME_S} unthrottled", *header()]  # fmt: skip
    print("\n".join(lines), flush=True)
    notes: list[str] = []
    sysbench_cache: dict[tuple[str, str, int], Figures] = {}
    for server in a.servers:
        prepare(server, a.port)
        for case in [c for c in cases(a) if c.server == server]:
            key = (case.workload, case.server, case.threads)
            if key not in sysbench_cache:
                sysbench_cache[key] = figures(case, "sysbench", a.port, not a.no_valgrind, a.repeats)
            sb, py = sysbench_cache[key], figures(case, "pysysbench", a.port, not a.no_valgrind, a.repeats)
            lines.append(row(case, sb, py))
            notes += [f"# {case.name}: {n}" for n in py.notes + sb.notes]
            print(lines[-1], flush=True)
        if a.cleanup:
            admin(server, f"DROP DATABASE IF EXISTS {DB}")
    for n in dict.fromkeys(notes):
        print(n, file=sys.stderr)
    if a.write_doc:
        write_doc(lines + list(dict.fromkeys(notes)), command)
    return 1 if notes else 0


if __name__ == "__main__":
    sys.exit(main())
