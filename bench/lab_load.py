#!/usr/bin/env python3
"""Loading a sharded lab: each node directly (``--load-nodes``) against through the front.

On one ``pysysbench lab up spider|pgshard`` (its front tables defined, no rows), each round
loads the same data set (default 4 tables x 250,000 rows over 3 data nodes / shards) in two
ways, in an order that alternates from round to round:

* ``nodes``: ``pysysbench oltp_read_write prepare`` through the first front node with
  ``--load-nodes=lab:DIR`` (each node's rows straight into it; one connection per node and
  table group, ``--threads`` = nodes x groups);
* ``front``: what the labs did before: pysysbench's prepare into a staging database (spider)
  or schema (pgshard) on the first front node, then ``INSERT ... SELECT`` through Spider /
  the foreign partitions (the rows cross the front node twice), the nodes' tables created
  first with their index.

Each figure is the wall time of the whole load; rows/s = tables x rows / time.  Every load is
checked: the row count through the second front node is tables x rows.

    .venv/bin/python bench/lab_load.py                  # spider, 3 rounds, 4 x 250,000 rows (about 3 min)
    .venv/bin/python bench/lab_load.py --lab=pgshard --rounds=1 --table-size=50000

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
COLUMNS = (
    "id INTEGER NOT NULL, k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, "
    "pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id)"
)
SHAPES = {  # lab -> (front role, node role, client, database option prefix)
    "spider": ("compute", "data", "mysql", "--mysql"),
    "pgshard": ("coordinator", "shard", "pgsql", "--pgsql"),
}


def cli(*args: str) -> str:
    proc = subprocess.run([PY, "-m", "pysysbench", *args], capture_output=True, text=True)
    if proc.returncode:
        sys.exit(f"pysysbench {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}{proc.stderr}")
    return proc.stdout


def sql(lab: str, port: int, statement: str) -> str:
    if SHAPES[lab][2] == "mysql":
        argv = ["mariadb", "-h127.0.0.1", f"-P{port}", "-uroot", "-N", "-B", "sbtest", "-e", statement]
    else:
        argv = ["psql", "-X", "-q", "-At", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "-d", "sbtest"]
        argv += ["-v", "ON_ERROR_STOP=1", "-c", statement]
    out = subprocess.run(argv, capture_output=True, text=True)
    if out.returncode:
        sys.exit(f"SQL on port {port} failed: {out.stderr.strip()}\n{statement[:200]}")
    return out.stdout.strip()


def ports(lab: Path, role: str) -> list[int]:
    return [n["port"] for n in json.loads((lab / "lab.json").read_text())["nodes"] if n["role"] == role]


def prepare_args(name: str, port: int, user: str, tables: int, size: int, threads: int) -> list[str]:
    client, opt = SHAPES[name][2], SHAPES[name][3]
    return [
        "oltp_read_write", f"--db-driver={client}", f"{opt}-host=127.0.0.1", f"{opt}-port={port}",
        f"{opt}-user={user}", f"{opt}-db=sbtest", f"--tables={tables}", f"--table-size={size}",
        f"--threads={threads}", "--auto-inc=off", "--rand-seed=7",
    ]  # fmt: skip


class Lab:
    def __init__(self, name: str, path: Path, tables: int, size: int, groups: int):
        self.name, self.path, self.tables, self.size, self.groups = name, path, tables, size, groups
        front, node, _, _ = SHAPES[name]
        self.front, self.nodes = ports(path, front), ports(path, node)
        self.user = "root" if name == "spider" else "sbtest"

    def reset(self) -> None:
        for p in self.nodes:
            sql(self.name, p, "; ".join(f"DROP TABLE IF EXISTS sbtest{t}" for t in range(1, self.tables + 1)))

    def load_nodes(self) -> None:
        self.reset()
        args = prepare_args(self.name, self.front[0], self.user, self.tables, self.size, len(self.nodes) * self.groups)
        cli(*args, f"--load-nodes=lab:{self.path}", "prepare")

    def load_front(self) -> None:
        self.reset()
        t_range = range(1, self.tables + 1)
        ddl = [f"CREATE TABLE sbtest{t} ({COLUMNS}); CREATE INDEX k_{t} ON sbtest{t}(k)" for t in t_range]
        own = "" if self.name == "spider" else "SET ROLE sbtest; "
        for p in self.nodes:
            sql(self.name, p, own + "; ".join(ddl))
        threads = min(self.tables, len(self.nodes) * self.groups)
        if self.name == "spider":
            sql(self.name, self.front[0], f"DROP DATABASE IF EXISTS {STAGE}; CREATE DATABASE {STAGE}")
            args = prepare_args(self.name, self.front[0], "root", self.tables, self.size, threads)
            cli(*[a if not a.startswith("--mysql-db=") else f"--mysql-db={STAGE}" for a in args], "prepare")
            copies = [f"INSERT INTO sbtest{t} SELECT id, k, c, pad FROM {STAGE}.sbtest{t}" for t in t_range]
            sql(self.name, self.front[0], "; ".join([*copies, f"DROP DATABASE {STAGE}"]))
        else:  # a role whose search_path is its staging schema
            sql(self.name, self.front[0], f"CREATE ROLE {STAGE} LOGIN; CREATE SCHEMA {STAGE} AUTHORIZATION {STAGE}")
            sql(self.name, self.front[0], f"ALTER ROLE {STAGE} SET search_path = {STAGE}")
            cli(*prepare_args(self.name, self.front[0], STAGE, self.tables, self.size, threads), "prepare")
            copies = [f"INSERT INTO public.sbtest{t} SELECT id, k, c, pad FROM {STAGE}.sbtest{t};" for t in t_range]
            sql(self.name, self.front[0], " ".join(copies))
            sql(self.name, self.front[0], f"DROP SCHEMA {STAGE} CASCADE; DROP ROLE {STAGE}")

    def check(self) -> None:
        for t in range(1, self.tables + 1):
            got = int(sql(self.name, self.front[1], f"SELECT COUNT(*) FROM sbtest{t}"))
            if got != self.size:
                sys.exit(f"sbtest{t} holds {got} rows through the second front node, not {self.size}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lab", choices=sorted(SHAPES), default="spider")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tables", type=int, default=4)
    ap.add_argument("--table-size", type=int, default=250_000)
    ap.add_argument("--nodes", type=int, default=3)
    ap.add_argument("--groups", type=int, default=1, help="connections per node (tables loaded at once)")
    a = ap.parse_args()
    parent = Path(tempfile.mkdtemp(prefix="lab-load-"))
    parent.chmod(0o755)  # the servers run as mysql / postgres when this runs as root
    path = parent / "lab"
    cli("lab", "up", a.lab, f"--dir={path}", f"--nodes={a.nodes}", f"--tables={a.tables}", "--table-size=0")
    lab = Lab(a.lab, path, a.tables, a.table_size, a.groups)
    methods = {"nodes": lab.load_nodes, "front": lab.load_front}
    times: dict[str, list[float]] = {m: [] for m in methods}
    ratios = []
    rows = a.tables * a.table_size
    try:
        for r in range(a.rounds):
            order = list(methods) if r % 2 == 0 else list(reversed(methods))
            for m in order:
                t0 = time.perf_counter()
                methods[m]()
                times[m].append(time.perf_counter() - t0)
                lab.check()
            ratios.append(times["front"][-1] / times["nodes"][-1])
            line = ", ".join(f"{m} {times[m][-1]:.1f} s ({rows / times[m][-1]:,.0f} rows/s)" for m in order)
            print(f"round {r + 1}: {line}; front/nodes {ratios[-1]:.2f}", flush=True)
    finally:
        cli("lab", "down", f"--dir={path}")
        parent.rmdir()
    print(f"{a.lab}: {a.tables} x {a.table_size:,} rows over {a.nodes} nodes, {a.groups} connection(s) per node:")
    for m in methods:
        med = statistics.median(times[m])
        print(f"  {m:6s} median {med:.1f} s, {rows / med:,.0f} rows/s")
    print(f"  front/nodes per round: {', '.join(f'{x:.2f}' for x in ratios)} (median {statistics.median(ratios):.2f})")


if __name__ == "__main__":
    main()
