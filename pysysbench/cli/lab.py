"""``pysysbench lab up|status|down``: the thin CLI over :mod:`pysysbench.lab`.

pysysbench lab up NAME [--dir D] [--nodes N] [--install]
pysysbench lab status [--dir D]
pysysbench lab down [--dir D] [--keep]
pysysbench lab kill NODE [--dir D]
pysysbench lab start NODE [--dir D]
"""

from __future__ import annotations

import time

from ..lab import api
from .subcommands import subcommand
from .tools import Parser, _entry, _parse


def _parser() -> Parser:
    p = Parser(prog="pysysbench lab", description="Cluster look-alikes on this machine (docs/lab.md).")
    sub = p.add_subparsers(dest="action", required=True, parser_class=Parser)
    up = sub.add_parser("up", help="start a look-alike: galera, spider or pgshard")
    up.add_argument("name", choices=sorted(api.LABS))
    up.add_argument("--nodes", type=int, help="galera: group members (3); spider: data nodes (3); pgshard: shards (3)")
    up.add_argument(
        "--tables", type=int, default=1, help="spider, pgshard: sbtest tables the lab creates and loads (1)"
    )
    up.add_argument("--table-size", type=int, default=10000, help="spider, pgshard: rows per table (10000)")
    up.add_argument("--install", action="store_true", help="install missing packages with apt-get (root)")
    status = sub.add_parser("status", help="what the lab in --dir runs")
    down = sub.add_parser("down", help="stop what the lab started and remove its data")
    down.add_argument("--keep", action="store_true", help="keep the data folders")
    kill = sub.add_parser("kill", help="kill one node as a crash would (SIGKILL)")
    start = sub.add_parser("start", help="start a killed node again (a galera member joins the group again)")
    for sp in (kill, start):
        sp.add_argument("node", help="the node's name in 'lab status' (node2, data1, shard1, proxy, ...)")
    for sp in (up, status, down, kill, start):
        sp.add_argument("--dir", default=api.default_dir(), help=f"the lab's folder (default {api.default_dir()})")
    return p


@subcommand("lab")
@_entry
def lab_command(argv: list[str], out) -> int:
    """pysysbench lab up NAME | status | down | kill NODE | start NODE"""
    args = _parse(_parser(), argv)
    return ACTIONS[args.action](args, out)


def _up(args, out) -> int:
    m = api.up(
        args.name, args.dir, args.nodes, args.install, lambda line: out(f"lab: {line}"), args.tables, args.table_size
    )
    out(f"lab {m.lab} up in {m.up_s:.1f} s ({len(m.nodes)} processes); manifest {api.manifest.path(m.dir)}")
    out("connect with:")
    out("  " + " ".join(m.options))
    if "read" in m.ports:
        out(f"  (reads balanced over all nodes: --mysql-port={m.ports['read']})")
    if m.tables:
        out(f"  (sbtest1..{m.tables[0]} hold {m.tables[1]} rows each already: run without prepare)")
    out(f"stop with: pysysbench lab down --dir {m.dir}")
    return 0


def _status(args, out) -> int:
    m, rows = api.status(args.dir)
    out(f"lab {m.lab} in {m.dir} ({m.state}); connect with: {' '.join(m.options)}")
    for node, (name, state) in zip(m.nodes, rows):
        pid = f"pid {node.pid}" if node.pid else "no pid"
        out(f"  {name:<10} {node.role:<11} 127.0.0.1:{node.port:<6} {pid:<12} {state}")
    return 0 if all(state != "not running" for _, state in rows) else 1


def _down(args, out) -> int:
    m, running = api.down(args.dir, args.keep)
    kept = f"; data kept in {m.dir}" if args.keep else f"; {m.dir} removed"
    out(f"lab {m.lab} down: {running} processes stopped{kept}")
    return 0


def _kill(args, out) -> int:
    m = api.kill(args.dir, args.node)
    out(f"lab {m.lab}: {args.node} killed; start it again with: pysysbench lab start {args.node} --dir {m.dir}")
    return 0


def _start(args, out) -> int:
    t0 = time.monotonic()
    m = api.start(args.dir, args.node, lambda line: out(f"lab: {line}"))
    out(f"lab {m.lab}: {args.node} started again in {time.monotonic() - t0:.1f} s (pid {m.node(args.node).pid})")
    return 0


ACTIONS = {"up": _up, "status": _status, "down": _down, "kill": _kill, "start": _start}
