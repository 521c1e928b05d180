"""The statement streams of the bench's workloads, as a server logs them.

A refactor must not change what pysysbench sends.  This starts a private MariaDB
(general log on) and a private PostgreSQL (log_statement = all) on free ports,
runs each workload's prepare and a fixed-seed run (one thread, a fixed number of
events) with the C hot path and with ``PYSYSBENCH_NATIVE=off``, and prints one
line per stream: its statement count and a digest of the statements (values
included, connection ids and times left out).  Two checkouts compare by diffing
the output; ``--dump DIR`` keeps the statements themselves to find a difference.

    python bench/statement_stream.py [--checkout PATH | --sysbench] [--events N] [--dump DIR]

``--sysbench`` runs the installed sysbench on its own scripts, for the same streams
from the C original (the names are sysbench's script paths then).

``--face11`` compares pysysbench's 1.1 face (``--sysbench-compat=1.1``, C hot path on
and off) with the sysbench 1.1.0 binary (``--sysbench11 PATH``, default
``~/.cache/sysbench-1.1.0/bin/sysbench``): both run 1.1's bundled oltp_*.lua scripts
and bench/iibench11.lua with the same seed under ``--rand-type=uniform``, ``zipfian``
and ``gaussian``, and one line per stream says whether its digest is the reference's.
pysysbench's own (native) workloads of the same names run too, with ``--rand-compat=sysbench``:
their run's values (the statements on the sbtest tables, ``.../native`` lines) must be the
binary's; their prepare loads its own rows.  ``--dump DIR`` writes the first differing
statement; ``--only``, ``--servers``, ``--rands`` and ``--paths`` narrow the run.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE / "tests" / "integration"))
from private_servers import PrivateMariaDB, PrivatePostgres, free_port, running  # noqa: E402

WORKLOADS = [
    "oltp_read_write",
    "oltp_read_only",
    "oltp_write_only",
    "oltp_point_select",
    "oltp_update_index",
    "oltp_update_non_index",
    "oltp_delete",
    "oltp_insert",
    "select_random_points",
    "select_random_ranges",
    # the same through the Lua engine: sysbench's own scripts, unchanged
    "/usr/share/sysbench/oltp_read_write.lua",
    "/usr/share/sysbench/oltp_point_select.lua",
    "/usr/share/sysbench/oltp_insert.lua",
    "/usr/share/sysbench/select_random_ranges.lua",
]
SIZES = ["--tables=2", "--table-size=500"]
MY_LINE = re.compile(r"^(?:\d{6}\s+[\d:]+\s+)?\s*\d+\s+(Query|Prepare|Execute|Close stmt|Reset stmt)\s*(.*)$")
# the pre-flight's probe of a table's rows (engine/preflight.py): no drawn values, sysbench has none
PROBE = re.compile(r"SELECT max\(id\) FROM sbtest\d+ WHERE id <= \d+$")
PG_LINE = re.compile(r"(?:LOG|DETAIL):\s+(?:statement|execute [^:]*|parameters):\s*(.*)$")


def run(checkout: Path | None, args: list[str], native: bool) -> None:
    """One command of pysysbench from ``checkout``, or of the installed sysbench if None."""
    env = dict(os.environ, PYSYSBENCH_NATIVE="on" if native else "off")
    if checkout is not None:
        env["PYTHONPATH"] = str(checkout)
    cmd = [sys.executable, "-m", "pysysbench"] if checkout is not None else ["sysbench"]
    out = subprocess.run([*cmd, *args], cwd=checkout, env=env, capture_output=True, text=True, timeout=600)
    if out.returncode:
        raise SystemExit(f"statement_stream: {' '.join(args)} exited {out.returncode}: {out.stderr.strip()[-400:]}")


def my_statements(log: Path, start: int) -> list[str]:
    text = log.read_bytes()[start:].decode(errors="replace")
    return [f"{m[1]} {m[2]}" for line in text.splitlines() if (m := MY_LINE.match(line))]


def pg_statements(log: Path, start: int) -> list[str]:
    text = log.read_bytes()[start:].decode(errors="replace")
    return [m[1] for line in text.splitlines() if (m := PG_LINE.search(line))]


def stream(checkout: Path, server, logfile: Path, parse, workload: str, native: bool, events: int) -> list[str]:
    base = [workload, *server.options, *SIZES]
    # select_random_* have no prepare or cleanup of their own: oltp_read_only's tables serve them
    if "select_random" in workload:
        base[0] = workload.replace(Path(workload).stem, "oltp_read_only")
    tables = base
    run(checkout, [*tables, "cleanup"], native)
    start = logfile.stat().st_size if logfile.exists() else 0
    run(checkout, [*tables, "--threads=1", "prepare"], native)
    run(
        checkout,
        [
            workload,
            *base[1:],
            "--threads=1",
            f"--events={events}",
            "--time=0",
            "--rand-seed=11",
            "--rand-type=uniform",
            "run",
        ],
        native,
    )
    return parse(logfile, start)


REF11 = Path.home() / ".cache" / "sysbench-1.1.0" / "bin" / "sysbench"
LUA11 = Path("/work/shared/conformance/sysbench-1.1/src/lua")
SCRIPTS11 = [
    "oltp_read_write",
    "oltp_read_only",
    "oltp_write_only",
    "oltp_point_select",
    "oltp_update_index",
    "oltp_update_non_index",
    "oltp_delete",
    "oltp_insert",
    "select_random_points",
    "select_random_ranges",
    "iibench11",
]


def script11(name: str, lua_dir: Path) -> Path:
    """1.1's bundled script ``name`` (from the binary's share folder, else the suite's), or ours."""
    if name == "iibench11":
        return HERE / "bench" / "iibench11.lua"
    return lua_dir / f"{name}.lua"


def run11(cmd: list[str], env: dict[str, str], cwd: Path, args: list[str]) -> None:
    out = subprocess.run([*cmd, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    if out.returncode:
        raise SystemExit(f"statement_stream: {' '.join(args)} exited {out.returncode}: {out.stderr.strip()[-400:]}")


def settled(logfile: Path) -> int:
    """The log's size once the server has stopped writing to it (it may write a command's last
    statements after the client has exited): unchanged for 0.3 s, at most 10 s."""
    last, still, waited = -1, 0, 0.0
    while still < 3 and waited < 10:
        size = logfile.stat().st_size if logfile.exists() else 0
        still = still + 1 if size == last else 0
        last = size
        time.sleep(0.1)
        waited += 0.1
    return last


def stream11(
    side: tuple[list[str], dict[str, str]], server, logfile: Path, parse, script: Path, rand: str, events: int
):
    """(prepare, run) statements of one script under one sysbench: the 1.1.0 binary or pysysbench's 1.1 face
    (``script`` a bare name: pysysbench's own workload of that name, run in its directory)."""
    cmd, env = side
    sizes = ["--tables=1" if "select_random" in script.name else "--tables=2", "--table-size=500"]
    test = str(script) if script.parent != Path() else script.name
    base = [test, *server.options, *sizes, "--rand-seed=11", f"--rand-type={rand}"]
    run11(cmd, env, script.parent, [*base, "cleanup"])
    start = settled(logfile)
    run11(cmd, env, script.parent, [*base, "--threads=1", "prepare"])
    middle = settled(logfile)
    run11(cmd, env, script.parent, [*base, "--threads=1", f"--events={events}", "--time=0", "run"])
    settled(logfile)
    both, run = parse(logfile, start), parse(logfile, middle)
    return both[: len(both) - len(run)], run


def first_difference(ref: list[str], got: list[str]) -> str:
    for i, (r, g) in enumerate(zip(ref, got, strict=False)):
        if r != g:
            return f"statement {i + 1}:\n  1.1.0: {r}\n  ours:  {g}\n"
    return f"statement {min(len(ref), len(got)) + 1}: one stream ends ({len(ref)} vs {len(got)} statements)\n"


def data_statements(lines: list[str]) -> list[str]:
    """The statements of a run that carry its drawn values (those on the sbtest tables),
    without the statement kind: pysysbench's native workloads prepare them at other points
    and check the tables first (information_schema), the values are what must be equal."""
    kept = (line.split(" ", 1) for line in lines if "sbtest" in line and "information_schema" not in line)
    return [text for kind, text in kept if kind in ("Query", "Execute") and not PROBE.match(text)]


def digest(lines: list[str]) -> str:
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16]


def face11(a: argparse.Namespace, targets: list) -> int:
    """Every 1.1 stream of pysysbench against the 1.1.0 binary's; the number that differ."""
    lua_dir = a.sysbench11.parents[1] / "share" / "sysbench"
    lua_dir = lua_dir if (lua_dir / "oltp_common.lua").exists() else LUA11
    ref = ([str(a.sysbench11)], dict(os.environ))
    paths = a.paths.split(",")
    differing = 0
    for name, server, logfile, parse in targets:
        for script in (s for s in SCRIPTS11 if not a.only or s in a.only):
            path = script11(script, lua_dir)
            if not path.exists():
                continue
            for rand in a.rands.split(","):
                want = stream11(ref, server, logfile, parse, path, rand, a.events)
                for native in (True, False):
                    mode = "c" if native else "python"
                    if "lua" in paths:  # 1.1's script itself
                        got = stream11(ours11(a, native), server, logfile, parse, path, rand, a.events)
                        for phase, r, g in (("prepare", want[0], got[0]), ("run", want[1], got[1])):
                            differing += verdict(a, f"{name}/{script}/{rand}/{phase}/{mode}", r, g)
                    # pysysbench's workload of that name: the oltp_* ones (1.1's select_random_* write
                    # their statement over several lines, of which the log parser keeps the first)
                    if "native" in paths and script.startswith("oltp_"):
                        side = ours11(a, native, "--rand-compat=sysbench")
                        got = stream11(side, server, logfile, parse, Path(script), rand, a.events)
                        r, g = data_statements(want[1]), data_statements(got[1])
                        differing += verdict(a, f"{name}/{script}/{rand}/run/{mode}/native", r, g)
    return differing


def ours11(a: argparse.Namespace, native: bool, *extra: str) -> tuple[list[str], dict[str, str]]:
    """pysysbench's 1.1 face as run11 runs it (``native``: the C hot path on)."""
    env = dict(os.environ, PYTHONPATH=str(a.checkout), PYSYSBENCH_NATIVE="on" if native else "off")
    return [sys.executable, "-m", "pysysbench", "--sysbench-compat=1.1", *extra], env


def verdict(a: argparse.Namespace, key: str, r: list[str], g: list[str]) -> bool:
    """Print one stream's line (and, with --dump, its first difference); True when it differs."""
    same = r == g
    print(f"{key:60} {len(r):6} {len(g):6} {digest(r)} {digest(g)} {'identical' if same else 'DIFFERS'}", flush=True)
    if a.dump and not same:
        a.dump.mkdir(parents=True, exist_ok=True)
        stem = a.dump / key.replace("/", "_")
        stem.with_suffix(".txt").write_text(first_difference(r, g))
        stem.with_suffix(".1.1.0.log").write_text("\n".join(r) + "\n")
        stem.with_suffix(".ours.log").write_text("\n".join(g) + "\n")
    return not same


def servers(wanted: list[str]) -> list[tuple]:
    """(name, private server, its statement log, the log's parser) for each of ``wanted``."""
    targets: list[tuple] = []
    if "mysql" in wanted:
        my = PrivateMariaDB(port=free_port(), extra_args=("--general-log=1", "--general-log-file=general.log"))
        targets.append(("mysql", my, my.dir / "data" / "general.log", my_statements))
    if "pgsql" in wanted:
        pg = PrivatePostgres(port=free_port(), extra_settings="-c log_statement=all")
        targets.append(("pgsql", pg, pg.dir / "log", pg_statements))
    return targets


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--checkout", type=Path, default=HERE, help="the pysysbench checkout to run (default: this one)")
    ap.add_argument("--sysbench", action="store_true", help="run the installed sysbench instead (its own scripts)")
    ap.add_argument("--events", type=int, default=200)
    ap.add_argument("--dump", type=Path, help="write each stream's statements to DIR/<name>.txt")
    ap.add_argument("--face11", action="store_true", help="compare the 1.1 face with the 1.1.0 binary")
    ap.add_argument("--sysbench11", type=Path, default=REF11, help="the sysbench 1.1.0 binary (--face11)")
    ap.add_argument("--only", nargs="*", help="--face11: these scripts only (e.g. oltp_read_write)")
    ap.add_argument("--servers", default="mysql,pgsql", help="--face11: mysql, pgsql or both")
    ap.add_argument(
        "--rands",
        default="uniform,zipfian,gaussian",
        help="--face11: the --rand-type values to compare, comma-separated",
    )
    ap.add_argument(
        "--paths",
        default="lua,native",
        help="--face11: lua (1.1's scripts run by pysysbench's Lua engine), native (pysysbench's own workloads "
        "of those names, --rand-compat=sysbench, the run's values) or both",
    )
    a = ap.parse_args()
    if a.face11 and not a.sysbench11.is_file():
        raise SystemExit(f"statement_stream: no sysbench 1.1.0 binary at {a.sysbench11}")
    wanted = a.servers.split(",") if a.face11 else ["mysql", "pgsql"]
    if not wanted or set(wanted) - {"mysql", "pgsql"}:
        raise SystemExit(f"statement_stream: --servers takes mysql, pgsql or mysql,pgsql, not {a.servers!r}")
    targets = servers(wanted)
    with running(*(t[1] for t in targets)):
        if a.face11:
            differing = face11(a, targets)
            print(f"{differing} differing", flush=True)
            raise SystemExit(1 if differing else 0)
        for name, server, logfile, parse in targets:
            for workload in WORKLOADS:
                for native in (True,) if a.sysbench else (True, False):
                    if a.sysbench and not workload.endswith(".lua"):
                        workload = f"/usr/share/sysbench/{workload}.lua"
                    lines = stream(
                        None if a.sysbench else a.checkout, server, logfile, parse, workload, native, a.events
                    )
                    key = f"{name}/{workload}/{'c' if native else 'python'}"
                    print(
                        f"{key:45} {len(lines):7} {hashlib.sha256(chr(10).join(lines).encode()).hexdigest()[:16]}",
                        flush=True,
                    )
                    if a.dump:
                        a.dump.mkdir(parents=True, exist_ok=True)
                        (a.dump / (key.replace("/", "_") + ".txt")).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
