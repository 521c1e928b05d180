#!/usr/bin/env python3
"""How many of a benchmark's threads are really at work, second by second:
PostgreSQL's view of a run.

Runs a command (sysbench or pysysbench, any workload) and samples the server
every --interval seconds: sessions connected to the database, sessions inside a
transaction, sessions waiting on a row lock, and transactions committed.  Time
is counted from the moment the command prints "Threads started!", so the
numbers of both tools line up.

    .venv/bin/python bench/session_ramp.py -- \\
        sysbench oltp_read_only --db-driver=pgsql --pgsql-host=127.0.0.1 --pgsql-user=sbtest \\
        --pgsql-db=bench --tables=4 --table-size=10000 --threads=1000 --time=10 run

Why it exists: at 1000 threads on two cores, sysbench 1.0.20's threads leave
their start barrier one at a time (each must take the barrier's mutex again after
the broadcast), so for the first seconds of its run only some hundreds of its
threads are inside a transaction; see bench/journal/2026-11-30.md, "At 1000
threads, sysbench's threads start late".

PostgreSQL only: on MariaDB the observer's own query (information_schema.innodb_trx
with 1000 sessions) stalled for seconds at a time, too coarse for a ramp.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time

STARTED = b"Threads started!"

PG_SQL = """SELECT count(*),
       count(*) FILTER (WHERE xact_start IS NOT NULL),
       count(*) FILTER (WHERE wait_event_type = 'Lock'),
       (SELECT xact_commit FROM pg_stat_database WHERE datname = $1)
FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()"""


async def pg_sampler(args):
    import asyncpg

    conn = await asyncpg.connect(host=args.host, port=args.port, user=args.user, database="postgres")

    async def sample():
        return tuple(await conn.fetchrow(PG_SQL, args.db))

    return sample, conn.close


async def run(args) -> int:
    try:
        sample, close = await pg_sampler(args)
    except Exception as exc:  # noqa: BLE001 -- one line, whatever the driver raised
        print(f"session_ramp: cannot connect to PostgreSQL as an observer: {exc}", file=sys.stderr)
        return 2
    try:
        proc = await asyncio.create_subprocess_exec(
            *args.command, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
        )
    except OSError as exc:
        await close()
        print(f"session_ramp: cannot start {args.command[0]}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    started: list[float] = []
    output: list[bytes] = []

    async def read_output():
        async for line in proc.stdout:
            output.append(line)
            if not started and line.startswith(STARTED):
                started.append(time.monotonic())

    reader = asyncio.create_task(read_output())
    rows = []
    while not reader.done():
        rows.append((time.monotonic(), *(await sample())))
        await asyncio.sleep(args.interval)
    await proc.wait()
    await close()
    if not started:
        sys.stdout.buffer.write(b"".join(output[-5:]))
        seen = "its last lines are above" if output else "it printed nothing"
        print(
            f"session_ramp: the command never printed 'Threads started!' ({seen}; exit code {proc.returncode})",
            file=sys.stderr,
        )
        return proc.returncode or 1
    sys.stdout.buffer.write(b"".join(line for line in output if args.echo or b"per sec." in line))
    t0 = started[0]
    base = next((r[4] for r in rows if r[0] >= t0), rows[-1][4])
    print(f"{'t (s)':>7} {'connected':>9} {'in trx':>7} {'lock wait':>9} {'commits':>8}")
    shown = -1.0
    for at, connected, in_trx, lock_wait, commits in rows:
        if at < t0 - args.interval or at - t0 < shown + args.every - 1e-9:
            continue
        shown = at - t0
        print(f"{at - t0:7.2f} {connected:9d} {in_trx:7d} {lock_wait:9d} {commits - base:8d}")
    return proc.returncode


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", default="bench", help="database the command's sessions use (default: bench)")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=5432)
    ap.add_argument("--user", default="postgres", help="observer's user (default: postgres)")
    ap.add_argument("--interval", type=float, default=0.05, help="seconds between samples (default: 0.05)")
    ap.add_argument("--every", type=float, default=0.25, help="seconds between printed rows (default: 0.25)")
    ap.add_argument("--echo", action="store_true", help="print the command's whole output, not its totals only")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="-- then the benchmark command")
    args = ap.parse_args()
    args.command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not args.command:
        ap.error("no command given: session_ramp.py -- sysbench ... run")
    return asyncio.run(run(args))


if __name__ == "__main__":
    sys.exit(main())
