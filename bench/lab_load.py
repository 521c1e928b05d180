#!/usr/bin/env python3
"""Loading a Spider lab: each data node directly (``--load-nodes``) against through Spider.

On one ``pysysbench lab up spider`` (its Spider tables defined, no rows), each round loads the
same data set (default 4 tables x 250,000 rows over 3 data nodes) in two ways, in an order
that alternates from round to round:

* ``nodes``: ``pysysbench oltp_read_write prepare`` through compute1 with
  ``--load-nodes=lab:DIR`` (each node's rows, id mod N, straight into it; one connection per
  node and table group, ``--threads`` = nodes x groups);
* ``spider``: what the lab did before: pysysbench's prepare into a staging database on
  compute1, then ``INSERT INTO sbtest.sbtestN SELECT * FROM stage.sbtestN`` through Spider
  (the rows cross compute1 twice), the data nodes' tables created first with their index.

Each figure is the wall time of the whole load; rows/s = tables x rows / time.  Every load is
checked: the row count through compute2 (the other compute node) is tables x rows.

    .venv/bin/python bench/lab_load.py                  # 3 rounds, 4 x 250,000 rows (about 3 min)
    .venv/bin/python bench/lab_load.py --rounds=1 --table-size=50000 --groups=1

The machine is shared and noisy: read the per-round ratios.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PY = sys.executable
STAGE = "bench_stage"
DDL = (
    "CREATE TABLE sbtest.sbtest{t} (id INTEGER NOT NULL, k INTEGER DEFAULT '0' NOT NULL, "
    "c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id), KEY k_{t} (k))"
)


def cli(*args: str) -> str:
    proc = subprocess.run([PY, "-m", "pysysbench", *args], capture_output=True, text=True)
    if proc.returncode:
        sys.exit(f"pysysbench {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}{proc.stderr}")
    return proc.stdout


def sql(port: int, statement: str) -> str:
    out = subprocess.run(
        ["mariadb", "-h127.0.0.1", f"-P{port}", "-uroot", "-N", "-B", "-e", statement],
        capture_output=True,
        text=True,
    )
    if out.returncode:
        sys.exit(f"SQL on port {port} failed: {out.stderr.strip()}\n{statement[:200]}")
    return out.stdout.strip()


def ports(lab: Path, role: str) -> list[int]:
    return [n["port"] for n in json.loads((lab / "lab.json").read_text())["nodes"] if n["role"] == role]


def prepare_args(port: int, db: str, tables: int, size: int, threads: int) -> list[str]:
    return [
        "oltp_read_write", "--db-driver=mysql", "--mysql-host=127.0.0.1", f"--mysql-port={port}",
        "--mysql-user=root", f"--mysql-db={db}", f"--tables={tables}", f"--table-size={size}",
        f"--threads={threads}", "--auto-inc=off", "--rand-seed=7",
    ]  # fmt: skip


def reset(data: list[int], tables: int) -> None:
    drops = "; ".join(f"DROP TABLE IF EXISTS sbtest.sbtest{t}" for t in range(1, tables + 1))
    for p in data:
        sql(p, drops)


def load_nodes(lab: Path, tables: int, size: int, groups: int) -> None:
    compute1, data = ports(lab, "compute")[0], ports(lab, "data")
    reset(data, tables)
    threads = len(data) * groups
    cli(*prepare_args(compute1, "sbtest", tables, size, threads), f"--load-nodes=lab:{lab}", "prepare")


def load_spider(lab: Path, tables: int, size: int, groups: int) -> None:
    compute1, data = ports(lab, "compute")[0], ports(lab, "data")
    reset(data, tables)
    for p in data:
        sql(p, "; ".join(DDL.format(t=t) for t in range(1, tables + 1)))
    sql(compute1, f"DROP DATABASE IF EXISTS {STAGE}; CREATE DATABASE {STAGE}")
    cli(*prepare_args(compute1, STAGE, tables, size, min(tables, len(data) * groups)), "prepare")
    copies = [f"INSERT INTO sbtest.sbtest{t} SELECT id, k, c, pad FROM {STAGE}.sbtest{t}" for t in range(1, tables + 1)]
    sql(compute1, "; ".join([*copies, f"DROP DATABASE {STAGE}"]))


METHODS = {"nodes": load_nodes, "spider": load_spider}


def check(lab: Path, tables: int, size: int) -> None:
    compute2 = ports(lab, "compute")[1]
    for t in range(1, tables + 1):
        got = int(sql(compute2, f"SELECT COUNT(*) FROM sbtest.sbtest{t}"))
        if got != size:
            sys.exit(f"sbtest{t} holds {got} rows through compute2, not {size}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tables", type=int, default=4)
    ap.add_argument("--table-size", type=int, default=250_000)
    ap.add_argument("--nodes", type=int, default=3)
    ap.add_argument("--groups", type=int, default=1, help="connections per data node (tables loaded at once)")
    a = ap.parse_args()
    parent = Path(tempfile.mkdtemp(prefix="lab-load-"))
    parent.chmod(0o755)  # the servers run as mysql when this runs as root
    lab = parent / "lab"
    cli("lab", "up", "spider", f"--dir={lab}", f"--nodes={a.nodes}", f"--tables={a.tables}", "--table-size=0")
    times: dict[str, list[float]] = {m: [] for m in METHODS}
    ratios = []
    try:
        for r in range(a.rounds):
            order = list(METHODS) if r % 2 == 0 else list(reversed(METHODS))
            for m in order:
                t0 = time.perf_counter()
                METHODS[m](lab, a.tables, a.table_size, a.groups)
                times[m].append(time.perf_counter() - t0)
                check(lab, a.tables, a.table_size)
            ratios.append(times["spider"][-1] / times["nodes"][-1])
            rows = a.tables * a.table_size
            print(
                f"round {r + 1}: "
                + ", ".join(f"{m} {times[m][-1]:.1f} s ({rows / times[m][-1]:,.0f} rows/s)" for m in order)
                + f"; spider/nodes {ratios[-1]:.2f}",
                flush=True,
            )
    finally:
        cli("lab", "down", f"--dir={lab}")
        parent.rmdir()
    rows = a.tables * a.table_size
    print(f"{a.tables} x {a.table_size:,} rows over {a.nodes} data nodes, {a.groups} connection(s) per node:")
    for m in METHODS:
        med = statistics.median(times[m])
        print(f"  {m:7s} median {med:.1f} s, {rows / med:,.0f} rows/s")
    print(f"  spider/nodes per round: {', '.join(f'{x:.2f}' for x in ratios)} (median {statistics.median(ratios):.2f})")


if __name__ == "__main__":
    main()
