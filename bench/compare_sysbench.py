#!/usr/bin/env python3
"""Side-by-side: the real sysbench 1.0.20 binary against pysysbench.

Same local server, same tables, same options; the two tools alternate, several
rounds per case, and for each case the script prints the median over rounds of
QPS (both), the ratio pysysbench / sysbench, client CPU microseconds per query
(user + system time of the client's whole process tree, start-up included,
divided by the queries it reported), peak client RSS (the sum over the
process tree, sampled every 50 ms), and the server's CPU per query: the server's
own CPU time (MariaDB's mariadbd; PostgreSQL's postmaster with its backends, live
and reaped) over the run, divided by the same queries.  From that, the client-free
limit of this machine: cores / (server CPU per query), the QPS the server would
reach if the client cost nothing and it had every core; each tool's QPS is shown
as a share of it.  The last column has each round's QPS ratio (the two tools run
back to back) and the median of those: a round is one draw of the machine's state,
and the ratio of the medians can pass while most rounds do not.  After the table, issue
21's must per case (QPS ratio >= 1.0 and client CPU ratio <= 1.0 at 8 threads, QPS ratio
>= 1.1 at 1000): the ratio of the paired rounds' means with its 95 % interval, "holds" or
"misses" only when the whole interval is on one side of the bound, "within noise" when it
spans it, and how many rounds are on the good side.

    .venv/bin/python bench/compare_sysbench.py --long          # 60-s runs: the steady state, not the start-up
    .venv/bin/python bench/compare_sysbench.py --startup       # client CPU of --time=1 runs at 8 threads,
                                                               # and of pure start-up (also with --mysql-dry-run)

    .venv/bin/python bench/compare_sysbench.py                 # all cases (about 25 min with 5 rounds)
    .venv/bin/python bench/compare_sysbench.py --rounds=1 --time=5 --cases=point_select:8:mysql

Tables: 4, of 10,000 rows at 8 threads (the issue's reference) and of 100 rows per
thread at more threads (100,000 at 1000): 1000 oltp_read_write transactions on
4 x 10,000 rows gridlock on PostgreSQL's row locks within seconds, and then both
tools measure its deadlock detector, not themselves (bench/journal/2026-11-30.md).
--table-size=N uses N rows for every case.

Needs `sysbench` (apt-get install sysbench) and the local MariaDB / PostgreSQL
with the `sbtest` user (scripts/setup-databases.sh); uses the database `bench`,
which it creates when run as root.  Timings on a shared 2-core machine are
noisy: compare the ratios, not the absolute numbers.
"""

from __future__ import annotations

import argparse
import operator
import os
import platform
import re
import signal
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from pysysbench.engine.servercontext import process_cpu_s  # noqa: E402  (this checkout's, not an installed one)
from pysysbench.stats.noise import paired_difference  # noqa: E402

PYSYSBENCH = [sys.executable, "-m", "pysysbench"]
DB = "bench"
TABLES = 4
# rows per table: the issue's 10,000 at 8 threads; at 1000 threads 100 per thread, because
# 1000 read_write transactions on 4 x 10,000 rows gridlock on row locks (bench/journal/2026-11-30.md)
MIN_TABLE_SIZE, ROWS_PER_THREAD = 10_000, 100


def table_size(threads: int, fixed: int) -> int:
    return fixed or max(MIN_TABLE_SIZE, ROWS_PER_THREAD * threads)


WORKLOADS = ("point_select", "read_only", "read_write")
THREADS = (8, 1000)
SERVERS = ("mysql", "pgsql")
CONN = {
    "mysql": ["--db-driver=mysql", "--mysql-host=127.0.0.1", "--mysql-user=sbtest", f"--mysql-db={DB}"],
    "pgsql": ["--db-driver=pgsql", "--pgsql-host=127.0.0.1", "--pgsql-user=sbtest", f"--pgsql-db={DB}"],
    "dryrun": ["--db-driver=mysql", "--mysql-dry-run=on"],  # --startup only: no server, pure client start-up
}
QPS_RE = re.compile(r"^\s+queries:\s+(\d+)\s+\(([\d.]+) per sec\.\)", re.M)
SAMPLE_S = 0.05
FORCED_SHUTDOWN_S = 5
RUN_LIMIT_FACTOR, RUN_LIMIT_EXTRA_S = 3, 60  # a run still going after this is reported, not waited for


@dataclass
class Measure:
    qps: float
    queries: int
    cpu_s: float
    rss_mb: float
    server_cpu_s: float = float("nan")
    pss_mb: float = float("nan")  # the tree's peak proportional set size (tree_memory_kb)

    @property
    def cpu_us_per_query(self) -> float:
        return self.cpu_s / self.queries * 1e6 if self.queries else float("nan")

    @property
    def server_us_per_query(self) -> float:
        return self.server_cpu_s / self.queries * 1e6 if self.queries else float("nan")


SERVER_PID_SQL = {
    "mysql": ["mysql", "-uroot", "-N", "-e", "SELECT @@pid_file"],
    "pgsql": ["psql", "-h", "127.0.0.1", "-U", "postgres", "-Atc", "SHOW data_directory"],
}


def server_pid(server: str) -> int | None:
    """The server's main process when it runs on this host (its pid file), else None."""
    out = subprocess.run(SERVER_PID_SQL[server], capture_output=True, text=True).stdout.strip()
    path = Path(out) / "postmaster.pid" if server == "pgsql" else Path(out)
    try:
        pid = int(path.read_text().split()[0])
        os.kill(pid, 0)
    except (OSError, ValueError, IndexError):
        return None
    return pid


def server_cpu_s(server: str, pid: int | None) -> float:
    """CPU seconds the server has used so far (NaN when it is not on this host): mariadbd's
    threads; for PostgreSQL the postmaster with its backends, reaped and live -- the
    server-context reading of result files (engine/servercontext.py), so both agree."""
    used = process_cpu_s(pid, children=server == "pgsql") if pid is not None else None
    return float("nan") if used is None else used


PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024
MAX_THREADS_SCANNED = 64


def _children(pid: int) -> list[int]:
    """Child processes of ``pid`` from /proc/PID/task/TID/children.  Only the main
    thread's list when the process has many threads (sysbench with 1000 threads
    forks nothing; pysysbench spawns its workers from the main thread)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    if len(tasks) > MAX_THREADS_SCANNED:
        tasks = [str(pid)]
    out: list[int] = []
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as fh:
                out.extend(int(c) for c in fh.read().split())
        except OSError:
            continue
    return out


def tree_memory_kb(root: int) -> tuple[int, int]:
    """(RSS, PSS) of ``root`` and all its descendants.  The RSS sum counts a page shared by
    several of them in each (a forked worker's inherited pages twice); PSS divides each page
    among the processes that map it, so the tree's sum counts it once (libraries shared with
    processes outside the tree in part): what the tree adds to the machine's memory.  Walks
    the process tree down from ``root`` instead of scanning all of /proc: with 1000
    PostgreSQL backends a full scan every 50 ms cost the bench a third of a core, taken from
    the two tools it measures."""
    rss = pss = 0
    stack = [root]
    while stack:
        pid = stack.pop()
        try:
            with open(f"/proc/{pid}/statm") as fh:
                rss += int(fh.read().split()[1]) * PAGE_KB
            with open(f"/proc/{pid}/smaps_rollup") as fh:
                pss += next((int(line.split()[1]) for line in fh if line.startswith("Pss:")), 0)
        except (OSError, IndexError, ValueError):
            continue
        stack.extend(_children(pid))
    return rss, pss


def measure(cmd: list[str], limit_s: float, server: str = "", pid: int | None = None) -> Measure | str:
    """One run, or why there is no figure: it had not finished ``limit_s`` seconds
    after it started, or it failed (its last line).  ``server``/``pid``: the server
    whose CPU time over the run is recorded too."""
    server_before = server_cpu_s(server, pid) if server else float("nan")
    # a session of its own, so the watchdog kills the whole tree (pysysbench's worker
    # processes hold the output pipe open: killing the parent alone left read() waiting)
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=REPO, start_new_session=True
    )
    peak = [0, 0]
    done = threading.Event()

    def kill_tree() -> None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass

    watchdog = threading.Timer(limit_s, kill_tree)
    watchdog.start()

    def sampler() -> None:
        while not done.is_set():
            rss, pss = tree_memory_kb(proc.pid)
            peak[0], peak[1] = max(peak[0], rss), max(peak[1], pss)
            done.wait(SAMPLE_S)

    t = threading.Thread(target=sampler, daemon=True)
    t.start()
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    done.set()
    t.join()
    server_used = (server_cpu_s(server, pid) if server else float("nan")) - server_before
    if not watchdog.is_alive():
        return f"did not finish within {limit_s:.0f} s"
    watchdog.cancel()
    m = QPS_RE.search(out)
    # --forced-shutdown ends both tools with exit code 2 after printing their figures
    forced = proc.returncode == 2 and "forcing shutdown" in out
    if (proc.returncode != 0 and not forced) or not m:
        last = [line for line in out.splitlines() if line.strip()][-1:] or ["no output"]
        print(f"# failed (exit {proc.returncode}): {' '.join(cmd)}: {last[0].strip()}", file=sys.stderr, flush=True)
        return f"failed: {last[0].strip()}"
    # wait4's usage covers the child and every descendant it waited for
    return Measure(
        float(m.group(2)), int(m.group(1)), usage.ru_utime + usage.ru_stime, peak[0] / 1024, server_used, peak[1] / 1024
    )


LUA_SCRIPTS = "/usr/share/sysbench"


def run_cmds(
    workload: str, threads: int, server: str, seconds: int, rows: int, lua: bool = False
) -> tuple[list[str], list[str]]:
    """sysbench's and pysysbench's command lines; ``lua``: both run the sysbench package's
    ``.lua`` file (pysysbench through its Lua engine, --lua-bundled=on)."""
    # --forced-shutdown: at 1000 threads PostgreSQL read_write queues on row locks and neither tool
    # finishes its in-flight events for minutes after --time (both stop 5 s after it instead)
    common = [
        f"--tables={TABLES}",
        f"--table-size={rows}",
        f"--threads={threads}",
        f"--time={seconds}",
        f"--forced-shutdown={FORCED_SHUTDOWN_S}",
    ]
    name = f"{LUA_SCRIPTS}/oltp_{workload}.lua" if lua else f"oltp_{workload}"
    ours = [*PYSYSBENCH, "--lua-bundled=on"] if lua else PYSYSBENCH
    return (["sysbench", name, *CONN[server], *common, "run"], [*ours, name, *CONN[server], *common, "run"])


def ensure_database() -> None:
    subprocess.run(
        [
            "mysql",
            "-uroot",
            "-e",
            f"CREATE DATABASE IF NOT EXISTS {DB}; "
            f"GRANT ALL ON {DB}.* TO sbtest@'127.0.0.1', sbtest@'localhost', sbtest@'%'",
        ],
        check=False,
    )
    subprocess.run(
        ["psql", "-h", "127.0.0.1", "-U", "postgres", "-qc", f"CREATE DATABASE {DB} OWNER sbtest"],
        capture_output=True,
        check=False,
    )


QUIET_SQL = {
    "mysql": ["mysql", "-uroot", "-N", "-e", f"SELECT COUNT(*) FROM information_schema.processlist WHERE db = '{DB}'"],
    "pgsql": [
        "psql",
        "-h",
        "127.0.0.1",
        "-U",
        "postgres",
        "-Atc",
        f"SELECT COUNT(*) FROM pg_stat_activity WHERE datname = '{DB}'",
    ],
}
QUIET_WAIT_S = 120


def wait_quiet(server: str) -> None:
    """Start every run on a server with no session of the previous one left: 1000
    sessions ending (or still queued on locks) slowed the next run's connects past
    sysbench's 30-second thread-init limit."""
    if server not in QUIET_SQL:  # the dry run: no server
        return
    deadline = time.monotonic() + QUIET_WAIT_S
    while time.monotonic() < deadline:
        out = subprocess.run(QUIET_SQL[server], capture_output=True, text=True).stdout.strip()
        if out == "0":
            return
        time.sleep(0.5)
    print(f"# {server}: sessions of the previous run still open after {QUIET_WAIT_S} s", file=sys.stderr)


def prepare(server: str, rows: int) -> None:
    base = [*PYSYSBENCH, "oltp_common", *CONN[server], f"--tables={TABLES}", f"--table-size={rows}"]
    for step in (["cleanup"], ["--threads=4", "prepare"]):
        done = subprocess.run([*base, *step], capture_output=True, text=True, cwd=REPO)
        if done.returncode:
            last = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()[-1]
            sys.exit(
                f"compare_sysbench: {server} {step[-1]} failed: {last}\n"
                "(is the server up with the sbtest user? run: bash scripts/setup-databases.sh)"
            )


def parse_case(text: str) -> tuple[str, str, str]:
    """``workload:threads:server``; the workload with or without its ``oltp_`` prefix."""
    parts = text.split(":")
    if len(parts) != 3 or not parts[1].isdigit() or parts[2] not in CONN:
        sys.exit(
            f"compare_sysbench: bad case '{text}': expected workload:threads:server, "
            f"e.g. point_select:8:mysql (servers: {', '.join(CONN)})"
        )
    return parts[0].removeprefix("oltp_"), parts[1], parts[2]


LONG_S = 60
STARTUP_CASES = ("point_select:8:mysql", "point_select:8:pgsql", "point_select:8:dryrun")


def rounds_of(
    sb_cmd: list[str], py_cmd: list[str], rounds: int, limit_s: float, server: str, pid: int | None
) -> tuple[list, list]:
    """``rounds`` runs of each tool; they alternate, and so does which one goes first."""
    sb, py = [], []
    for r in range(rounds):
        order = ((sb_cmd, sb), (py_cmd, py)) if r % 2 == 0 else ((py_cmd, py), (sb_cmd, sb))
        for cmd, out in order:
            wait_quiet(server)
            out.append(measure(cmd, limit_s, server, pid))
    return sb, py


def fmt(value: float, spec: str) -> str:
    return "n/a" if value != value else format(value, spec)  # NaN: the server is not on this host


def case_row(name: str, rows: int, sb: list[Measure], py: list[Measure]) -> str:
    med = statistics.median
    pairs = list(zip(sb, py))
    # each round's ratio (the two tools ran back to back), and their median: a round is one
    # draw of this machine's state, and the ratio of the medians can pass while most rounds
    # do not (bench/journal/2026-12-03.md, "The 8-thread point select's two regimes")
    ratios = [p.qps / s.qps for s, p in pairs]
    rounds = ", ".join(f"{r:.2f}" for r in ratios) + (f" (median {med(ratios):.2f})" if len(ratios) > 1 else "")
    s_qps, p_qps = med(m.qps for m in sb), med(m.qps for m in py)
    s_cpu, p_cpu = med(m.cpu_us_per_query for m in sb), med(m.cpu_us_per_query for m in py)
    # the server's CPU per query, whichever tool drove it: the limit is the hardware's, not a tool's;
    # each tool's own median beside it, since the two do not load the server alike at 1000 threads
    # (bench/journal/2026-12-04.md, "At 1000 threads on a fast machine")
    srv = med(m.server_us_per_query for m in sb + py)
    s_srv, p_srv = med(m.server_us_per_query for m in sb), med(m.server_us_per_query for m in py)
    limit = (os.cpu_count() or 1) / srv * 1e6 if srv == srv and srv > 0 else float("nan")
    srv_cell = fmt(srv, ".1f") + ("" if srv != srv else f" ({fmt(s_srv, '.1f')} / {fmt(p_srv, '.1f')})")
    return (
        f"| {name} | {rows:,} | {s_qps:,.0f} | {p_qps:,.0f} | {p_qps / s_qps:.2f} "
        f"| {s_cpu:.1f} | {p_cpu:.1f} | {p_cpu / s_cpu:.2f} | {max(m.rss_mb for m in sb):.0f} "
        f"| {max(m.rss_mb for m in py):.0f} | {srv_cell} | {fmt(limit, ',.0f')} "
        f"| {fmt(s_qps / limit, '.2f')} | {fmt(p_qps / limit, '.2f')} | {rounds} |"
    )


# issue 21's "must" column: (threads, figure) -> (bound, direction); the QPS ratio must reach
# its bound, the client CPU per query ratio must stay at or below it
MUST = {(8, "QPS"): (1.0, ">="), (8, "CPU"): (1.0, "<="), (1000, "QPS"): (1.1, ">=")}


def must_cell(pairs: list[tuple[float, float]], bound: float, op: str) -> str:
    """The ratio pysysbench / sysbench of paired rounds against ``bound``: its 95 %
    interval from the spread of the rounds' differences (stats/noise.py, the test
    ``compare`` uses), so drift that moves both runs of a round cancels; the verdict
    is "holds" or "misses" only when the whole interval is on one side of the bound,
    and beside it how many rounds are on the bound's good side."""
    good_side = operator.ge if op == ">=" else operator.le
    d = paired_difference(pairs, 0.0)
    good = sum(good_side(y / x, bound) for x, y in pairs if x)
    rounds = f"{good} of {len(pairs)} rounds {op} {bound:.1f}"
    if d.noise is None:
        return f"{d.ratio:.2f}: one round, noise unknown; {rounds}"
    lo, hi = d.ratio - d.noise, d.ratio + d.noise
    ends = [good_side(lo, bound), good_side(hi, bound)]
    word = "holds" if all(ends) else "misses" if not any(ends) else "within noise"
    return f"{word}: {d.ratio:.2f} ({lo:.2f} to {hi:.2f}); {rounds}"


def must_row(name: str, threads: int, sb: list[Measure], py: list[Measure]) -> str | None:
    """``name``'s line of the must table, None when the issue sets no bound at ``threads``."""
    cells = []
    for figure, value in (("QPS", lambda m: m.qps), ("CPU", lambda m: m.cpu_us_per_query)):
        bound = MUST.get((threads, figure))
        cells.append("" if bound is None else must_cell([(value(s), value(p)) for s, p in zip(sb, py)], *bound))
    return None if not any(cells) else f"| {name} | {' | '.join(cells)} |"


def startup(args: argparse.Namespace, lua: bool) -> int:
    """Client CPU seconds of ``--time=1`` runs at 8 threads (start-up, connections and one
    second of load), each tool, alternating; pysysbench's minus sysbench's.  Beside it the
    pure start-up: ``--events=THREADS --time=0`` (start, connect and prepare every thread,
    one event each, end), where the second of load, and so the CPU per query, is out of
    the figure; the ``dryrun`` server runs only that, with ``--mysql-dry-run=on``."""
    print(
        "# CPU s: user + system of the whole process tree; min over the rounds (median in brackets); "
        "difference: pysysbench's min minus sysbench's min (each round's in the last column)"
    )
    print(
        "| case | run | sysbench CPU s | pysysbench CPU s | difference s | sysbench queries "
        "| pysysbench queries | difference per round |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for workload, threads, server in [parse_case(c) for c in (args.cases or ",".join(STARTUP_CASES)).split(",") if c]:
        rows = table_size(int(threads), args.table_size)
        if server != "dryrun":
            prepare(server, rows)
        sb_timed, py_timed = run_cmds(workload, int(threads), server, 1, rows, lua)
        runs = [] if server == "dryrun" else [("--time=1", sb_timed, py_timed)]
        pure = [f"--events={threads}", "--time=0"]
        runs.append((" ".join(pure), [*sb_timed[:-1], *pure, "run"], [*py_timed[:-1], *pure, "run"]))
        for label, sb_cmd, py_cmd in runs:
            sb, py = rounds_of(sb_cmd, py_cmd, args.rounds, RUN_LIMIT_EXTRA_S, server, None)
            print(startup_row(f"{workload} {threads} thr {server}", label, sb, py), flush=True)
    return 0


def startup_row(name: str, label: str, sb: list, py: list) -> str:
    pairs = [(s, p) for s, p in zip(sb, py) if isinstance(s, Measure) and isinstance(p, Measure)]
    if not pairs:
        return f"| {name} | {label} | no figure: {next(m for m in sb + py if isinstance(m, str))} |"
    med = statistics.median
    s_cpu, p_cpu = [s.cpu_s for s, _ in pairs], [p.cpu_s for _, p in pairs]
    per = ", ".join(f"{p.cpu_s - s.cpu_s:+.2f}" for s, p in pairs)
    return (
        f"| {name} | {label} | {min(s_cpu):.3f} ({med(s_cpu):.3f}) | {min(p_cpu):.3f} ({med(p_cpu):.3f}) "
        f"| {min(p_cpu) - min(s_cpu):+.3f} | {med(s.queries for s, _ in pairs):,.0f} "
        f"| {med(p.queries for _, p in pairs):,.0f} | {per} |"
    )


def main(lua: bool = False, workloads: tuple[str, ...] = WORKLOADS, doc: str | None = None) -> int:
    ap = argparse.ArgumentParser(description=(doc or __doc__).splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5, help="rounds per case (default: 5)")
    ap.add_argument("--time", type=int, default=10, help="seconds per run (default: 10)")
    ap.add_argument(
        "--long",
        action="store_true",
        help=f"{LONG_S}-s runs (the seeds run 60 s to 20 min): the steady state, not the start-up",
    )
    ap.add_argument(
        "--startup",
        action="store_true",
        help="client CPU of --time=1 runs at 8 threads instead (start-up cost; "
        f"default cases: {', '.join(STARTUP_CASES)})",
    )
    ap.add_argument("--cases", default="", help="comma list of workload:threads:server (default: all)")
    ap.add_argument(
        "--table-size",
        type=int,
        default=0,
        help=f"rows per table for every case (default: {ROWS_PER_THREAD} per thread, at least {MIN_TABLE_SIZE:,})",
    )
    args = ap.parse_args()
    if args.table_size < 0:
        ap.error("--table-size must be positive")
    if args.rounds < 1 or args.time < 1:
        ap.error("--rounds and --time must be at least 1")
    if args.long:
        args.time = LONG_S
    ensure_database()
    # byte-code as a pip-installed package has it (pip compiles at install time); with
    # PYTHONDONTWRITEBYTECODE set, as on CI machines, every run would compile its own
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "pysysbench")], check=False)
    print(
        f"# machine: {platform.node()} {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}; {TABLES} tables, "
        f"{1 if args.startup else args.time} s per run, {args.rounds} rounds, tools alternating; "
        f"load average at start {os.getloadavg()[0]:.2f}"
    )
    print(f"# command: {' '.join([Path(sys.executable).name, 'bench/' + Path(sys.argv[0]).name, *sys.argv[1:]])}")
    if args.startup:
        return startup(args, lua)
    cases = [parse_case(c) for c in args.cases.split(",") if c] or [
        (w, str(t), s) for s in SERVERS for t in THREADS for w in workloads
    ]
    if any(server not in SERVERS for _, _, server in cases):
        ap.error("the dryrun server measures start-up only (--startup)")
    print(
        "# server CPU us/q: the server's CPU time over the run / queries (median over both tools' runs; "
        "in brackets each tool's own, sysbench / pysysbench); "
        f"limit QPS: {os.cpu_count()} cores / server CPU per query (no client cost); share: QPS / limit"
    )
    print(
        "# ratio: pysysbench's median QPS / sysbench's; per round: each round's pysysbench / sysbench, "
        "and the median of those"
    )
    print(
        "| case | rows/table | sysbench QPS | pysysbench QPS | ratio | sysbench CPU us/q | pysysbench CPU us/q | CPU ratio "
        "| sysbench RSS MB | pysysbench RSS MB | server CPU us/q | limit QPS | sysbench share | pysysbench share "
        "| QPS ratio per round |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    prepared: dict[str, int] = {}
    musts: list[str] = []
    for workload, threads, server in cases:
        rows = table_size(int(threads), args.table_size)
        if prepared.get(server) != rows:
            prepare(server, rows)
            prepared[server] = rows
        sb_cmd, py_cmd = run_cmds(workload, int(threads), server, args.time, rows, lua)
        limit_s = args.time * RUN_LIMIT_FACTOR + RUN_LIMIT_EXTRA_S
        sb, py = rounds_of(sb_cmd, py_cmd, args.rounds, limit_s, server, server_pid(server))
        pairs = [(s_m, p_m) for s_m, p_m in zip(sb, py) if isinstance(s_m, Measure) and isinstance(p_m, Measure)]
        name = f"{workload} {threads} thr {server}"
        if not pairs:
            why = next(m for m in sb + py if not isinstance(m, Measure))
            tool = "sysbench" if any(not isinstance(m, Measure) for m in sb) else "pysysbench"
            print(f"| {name} | {rows:,} | {tool}: {why} |", flush=True)
            continue
        sb_ok, py_ok = [p[0] for p in pairs], [p[1] for p in pairs]
        print(case_row(name, rows, sb_ok, py_ok), flush=True)
        row = None if lua else must_row(name, int(threads), sb_ok, py_ok)
        if row is not None:
            musts.append(row)
    if musts:
        print(
            "\n# issue 21's must: ratio pysysbench / sysbench of the mean over the paired rounds, its 95 % "
            "interval in brackets (the spread of the rounds' differences); holds / misses only when the "
            "whole interval is on one side of the bound"
        )
        print("| case | QPS ratio | client CPU per query ratio |")
        print("|---|---|---|")
        print("\n".join(musts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
