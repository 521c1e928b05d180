#!/usr/bin/env python3
"""Prepare speed: sysbench 1.0.20, pysysbench and the server's own bulk load, same run.

For each server (MariaDB, PostgreSQL) and each round, in an order that rotates
from round to round, the same data set (default 4 tables x 1,000,000 rows, 4
threads) is prepared by

* ``sysbench oltp_read_write ... prepare`` (multi-row INSERTs of 512 KiB);
* ``pysysbench oltp_read_write ... prepare`` (the default fast path);
* the server itself, from pre-generated files of the same rows: MariaDB
  ``LOAD DATA INFILE`` (a server-side file, as root), PostgreSQL ``COPY ...
  FROM 'file'`` (as postgres), one per table in parallel, then ``CREATE INDEX``
  on k in parallel -- the physical limit the issue measures against;
* the same server-side file load with the statement options pysysbench uses
  ("file*": MariaDB ``CHARACTER SET binary``, PostgreSQL's primary key built after
  the COPY) -- the limit of pysysbench's own method, with no client at all.

Each figure is the wall time of the whole job (for the two tools: the whole
command, start-up included) and rows/s = tables x rows / time.  Before the
rounds it measures row generation alone (no database): one process generating
in a loop, and the prepare's client pipeline (generator processes -> pipes ->
the loading process) feeding a sink that discards the bytes.  The summary prints
the medians over rounds and the ratios of the issue's table, each also as the
median of the per-round ratios (a ratio taken within one round is less exposed
to the slow drift of a shared machine than a ratio of medians).

    .venv/bin/python bench/prepare_speed.py                       # both servers, 3 rounds (about 8 min)
    .venv/bin/python bench/prepare_speed.py --servers=pgsql --rounds=1 --table-size=100000

Needs `sysbench`, the local servers with the `sbtest` user and the database
`load` on both (scripts/setup-databases.sh), and root / postgres access for the
server-side file loads.  Uses about 200 bytes x rows x tables of disk under /tmp
(deleted at the end).  The machine is shared and noisy: read the ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

DB = "load"
MY = ["--db-driver=mysql", "--mysql-host=127.0.0.1", "--mysql-user=sbtest", f"--mysql-db={DB}"]
PG = ["--db-driver=pgsql", "--pgsql-host=127.0.0.1", "--pgsql-user=sbtest", f"--pgsql-db={DB}"]
CONN = {"mysql": MY, "pgsql": PG}
NAMES = {"mysql": "MariaDB", "pgsql": "PostgreSQL"}
FILE_DIR = Path("/tmp/pysysbench-prepare-bench")
SETTLE_TIMEOUT_S = 60
DIRTY_PAGES_SETTLED = 2000
# the "must reach" ratios: (vs sysbench, vs the server's own file load)
TARGETS = {"mysql": (1.1, 0.8), "pgsql": (2.0, 0.8)}


@dataclass
class Case:
    seconds: list[float] = field(default_factory=list)


def sh(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if proc.returncode != 0:
        raise SystemExit(f"$ {' '.join(cmd)}\nexit {proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return proc


def my_root(sql: str) -> str:
    return sh(
        ["mysql", "--protocol=TCP", "-h127.0.0.1", "-uroot", "--batch", "--skip-column-names", DB, "-e", sql]
    ).stdout


def pg_super(sql: str) -> str:
    return sh(["psql", "-X", "-q", "-At", "-h", "127.0.0.1", "-U", "postgres", "-d", DB, "-c", sql]).stdout


def drop_tables(server: str, tables: int) -> None:
    names = ", ".join(f"sbtest{t}" for t in range(1, tables + 1))
    if server == "mysql":
        my_root(f"DROP TABLE IF EXISTS {names}")
    else:
        pg_super(f"DROP TABLE IF EXISTS {names}")


def settle(server: str) -> None:
    """Let the server write back the previous load before the next one starts."""
    if server == "pgsql":
        pg_super("CHECKPOINT")
        return
    deadline = time.monotonic() + SETTLE_TIMEOUT_S
    while time.monotonic() < deadline:
        dirty = int(
            my_root(
                "SELECT variable_value FROM information_schema.global_status "
                "WHERE variable_name = 'Innodb_buffer_pool_pages_dirty'"
            ).strip()
            or 0
        )
        if dirty < DIRTY_PAGES_SETTLED:
            return
        time.sleep(1)


def timed(cmds: list[list[str]]) -> float:
    """Run the commands in parallel; wall seconds until all have finished."""
    t0 = time.perf_counter()
    procs = [subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for c in cmds]
    for p, c in zip(procs, cmds):
        out, err = p.communicate()
        if p.returncode != 0:
            raise SystemExit(f"$ {' '.join(c)}\nexit {p.returncode}\n{out[-2000:]}\n{err[-2000:]}")
    return time.perf_counter() - t0


# --- the three contenders ----------------------------------------------------------------


def run_sysbench(server: str, a) -> float:
    return timed(
        [
            [
                "sysbench",
                "oltp_read_write",
                *CONN[server],
                f"--tables={a.tables}",
                f"--table-size={a.table_size}",
                f"--threads={a.threads}",
                "prepare",
            ]
        ]
    )


def run_pysysbench(server: str, a) -> float:
    return timed(
        [
            [
                sys.executable,
                "-m",
                "pysysbench",
                "oltp_read_write",
                *CONN[server],
                f"--tables={a.tables}",
                f"--table-size={a.table_size}",
                f"--threads={a.threads}",
                "prepare",
            ]
        ]
    )


CREATE = {
    "mysql": (
        "CREATE TABLE sbtest{t}(\n  id INTEGER NOT NULL AUTO_INCREMENT,\n  k INTEGER DEFAULT '0' NOT NULL,\n"
        "  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL,\n  PRIMARY KEY (id)\n"
        ") /*! ENGINE = innodb */ "
    ),
    "pgsql": (
        "CREATE TABLE sbtest{t}(\n  id SERIAL,\n  k INTEGER DEFAULT '0' NOT NULL,\n"
        "  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL,\n  PRIMARY KEY (id)\n)  "
    ),
}


def run_server_file(server: str, a, same_as_pysysbench: bool = False) -> float:
    """The server's own bulk load of the pre-generated files, then the k indexes.

    ``same_as_pysysbench``: with the statement options pysysbench uses (MariaDB:
    ``CHARACTER SET binary``; PostgreSQL: the primary key dropped during COPY and
    added back after it), i.e. the limit of pysysbench's own method."""
    for t in range(1, a.tables + 1):
        (my_root if server == "mysql" else pg_super)(CREATE[server].format(t=t))
    if server == "mysql":
        cli = ["mysql", "--protocol=TCP", "-h127.0.0.1", "-uroot", DB, "-e"]
        opts = " CHARACTER SET binary" if same_as_pysysbench else ""
        load = "LOAD DATA INFILE '{f}' INTO TABLE sbtest{t}" + opts + " (id, k, c, pad)"
    else:
        cli = ["psql", "-X", "-q", "-h", "127.0.0.1", "-U", "postgres", "-d", DB, "-v", "ON_ERROR_STOP=1", "-c"]
        load = "COPY sbtest{t} (id, k, c, pad) FROM '{f}'"
        if same_as_pysysbench:
            load = (
                "ALTER TABLE sbtest{t} DROP CONSTRAINT sbtest{t}_pkey; "
                + load
                + "; ALTER TABLE sbtest{t} ADD PRIMARY KEY (id)"
            )
    t_load = timed([cli + [load.format(f=FILE_DIR / f"sbtest{t}.tsv", t=t)] for t in range(1, a.tables + 1)])
    t_index = timed([cli + [f"CREATE INDEX k_{t} ON sbtest{t}(k)"] for t in range(1, a.tables + 1)])
    if server == "pgsql":  # as pysysbench and sysbench leave it: the sequence past the ids
        pg_super("; ".join(f"SELECT setval('sbtest{t}_id_seq', {a.table_size})" for t in range(1, a.tables + 1)))
    return t_load + t_index


CONTENDERS = {
    "sysbench": run_sysbench,
    "pysysbench": run_pysysbench,
    "server file": run_server_file,
    "server file*": lambda server, a: run_server_file(server, a, same_as_pysysbench=True),
}


# --- row generation alone -------------------------------------------------------------------


def generation_one_process(rows: int, size: int) -> tuple[float, float]:
    """rows/s of one process generating blocks in a loop (wall, CPU)."""
    from pysysbench.load.layout import RandParams, block_range
    from pysysbench.load.rows import RowGenerator

    gen = RowGenerator(size, RandParams(), 1, "tsv")
    blocks = list(block_range(1, size))
    t0, c0, done, i = time.perf_counter(), time.process_time(), 0, 0
    while done < rows:
        done += len(gen.block(1 + i // len(blocks), blocks[i % len(blocks)])) // gen.layout.row_bytes
        i += 1
    return done / (time.perf_counter() - t0), done / (time.process_time() - c0)


async def _pipeline(tables: int, size: int, streams: int) -> float:
    from pysysbench.load.layout import RandParams
    from pysysbench.load.source import GeneratorProcess, PipeStream, RangeJob

    gens = [GeneratorProcess(i) for i in range(streams)]
    queue = list(range(1, tables + 1))

    async def drain(gen) -> int:
        n = 0
        while queue:
            job = RangeJob(queue.pop(0), 1, size, size, RandParams(), 1, "tsv")
            stream = PipeStream(job, gen)
            async for chunk in stream.chunks():
                n += len(chunk)
            await stream.finish()
            stream.close()
        return n

    try:
        t0 = time.perf_counter()
        await asyncio.gather(*(drain(g) for g in gens))
        return tables * size / (time.perf_counter() - t0)
    finally:
        await asyncio.gather(*(g.close() for g in gens))


def write_files(a) -> None:
    from pysysbench.load.layout import RandParams, block_range
    from pysysbench.load.rows import RowGenerator

    FILE_DIR.mkdir(exist_ok=True)
    FILE_DIR.chmod(0o755)
    gen = RowGenerator(a.table_size, RandParams(), 12345, "tsv")
    for t in range(1, a.tables + 1):
        path = FILE_DIR / f"sbtest{t}.tsv"
        with open(path, "wb") as fh:
            for b in block_range(1, a.table_size):
                fh.write(gen.block(t, b))
        path.chmod(0o644)


# --- report ------------------------------------------------------------------------------------


def machine() -> str:
    cpu = next(
        (line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
        platform.processor(),
    )
    mem = next(int(line.split()[1]) // 1024 for line in open("/proc/meminfo") if line.startswith("MemTotal"))
    my = my_root("SELECT VERSION()").strip()
    pg = pg_super("SHOW server_version").strip()
    sb = sh(["sysbench", "--version"]).stdout.strip()
    return (
        f"{os.cpu_count()} x {cpu}, {mem} MiB RAM, {platform.platform()}; MariaDB {my}, PostgreSQL {pg}, "
        f"{sb}; Python {platform.python_version()}"
    )


def ratio_line(label: str, values: list[float], target: float | None) -> str:
    med = statistics.median(values)
    verdict = "" if target is None else ("  (target >= %.1fx: %s)" % (target, "met" if med >= target else "NOT met"))
    rounds = ", ".join(f"{v:.2f}" for v in values)
    return f"  {label:<44} {med:5.2f}x  [rounds: {rounds}]{verdict}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--servers", default="mysql,pgsql")
    ap.add_argument("--tables", type=int, default=4)
    ap.add_argument("--table-size", type=int, default=1_000_000)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    servers = [s for s in a.servers.split(",") if s]
    rows = a.tables * a.table_size
    print(f"machine: {machine()}")
    print(
        f"data set: {a.tables} tables x {a.table_size} rows, {a.threads} threads; database '{DB}'; "
        f"load average at start {os.getloadavg()[0]:.2f}"
    )
    print(f"command: {' '.join([Path(sys.executable).name, *sys.argv])}\n")

    one_wall, one_cpu = generation_one_process(min(rows, 2_000_000), a.table_size)
    # best of two: the least-disturbed run of a shared machine is the most honest figure
    pipe = max(asyncio.run(_pipeline(a.tables, a.table_size, min(a.threads, a.tables))) for _ in range(2))
    print(
        f"row generation alone (no database): one process {one_wall:,.0f} rows/s wall "
        f"({one_cpu:,.0f} rows/s per CPU second); the prepare's client pipeline "
        f"({min(a.threads, a.tables)} generator processes -> pipes -> loading process -> discard) "
        f"{pipe:,.0f} rows/s\n"
    )

    write_files(a)
    results = {s: {c: Case() for c in CONTENDERS} for s in servers}
    order = list(CONTENDERS)
    try:
        for r in range(a.rounds):
            for server in servers:
                for name in order[r % len(order) :] + order[: r % len(order)]:
                    drop_tables(server, a.tables)
                    settle(server)
                    secs = CONTENDERS[name](server, a)
                    results[server][name].seconds.append(secs)
                    print(
                        f"round {r + 1} {NAMES[server]:<10} {name:<13} {secs:7.2f} s  {rows / secs:10,.0f} rows/s  "
                        f"(load average {os.getloadavg()[0]:.2f})",
                        flush=True,
                    )
            print()
    finally:
        for server in servers:
            drop_tables(server, a.tables)
        shutil.rmtree(FILE_DIR, ignore_errors=True)

    print(
        f"summary (median of {a.rounds} round(s); rows/s = {rows:,} rows / wall time; 'file' = the server's "
        "own bulk load of a pre-generated file + index; 'file*' = the same with pysysbench's statement options)\n"
    )
    print(
        "| server | sysbench | pysysbench | file | file* | pysysbench / sysbench | pysysbench / file | "
        "pysysbench / file* |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for server in servers:
        res = results[server]
        med = {c: statistics.median(res[c].seconds) for c in CONTENDERS}
        ratio = {
            c: statistics.median(o / p for o, p in zip(res[c].seconds, res["pysysbench"].seconds)) for c in CONTENDERS
        }

        def cell(c: str, med: dict = med, rows: int = rows) -> str:
            return f"{med[c]:.1f} s, {rows / med[c]:,.0f} rows/s"

        print(
            f"| {NAMES[server]} | {cell('sysbench')} | {cell('pysysbench')} | {cell('server file')} | "
            f"{cell('server file*')} | {ratio['sysbench']:.2f}x | {ratio['server file']:.2f}x | "
            f"{ratio['server file*']:.2f}x |"
        )
    print(
        f"\nrow generation alone: {pipe:,.0f} rows/s through the client pipeline = "
        + ", ".join(
            f"{pipe / (rows / statistics.median(results[s]['pysysbench'].seconds)):.1f}x pysysbench's {NAMES[s]} rate"
            for s in servers
        )
        + "\n"
    )
    for server in servers:
        res = results[server]
        t_sb, t_file = TARGETS[server]

        def per_round(c: str, res: dict = res) -> list:
            return [o / p for o, p in zip(res[c].seconds, res["pysysbench"].seconds)]

        print(f"{NAMES[server]}:")
        print(ratio_line("pysysbench rows/s / sysbench rows/s", per_round("sysbench"), t_sb))
        print(ratio_line("pysysbench rows/s / server's file load", per_round("server file"), t_file))
        print(ratio_line("pysysbench rows/s / server's file load*", per_round("server file*"), None))
    print(f"\nload average at end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
