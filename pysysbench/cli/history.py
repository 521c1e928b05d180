"""``pysysbench history``: the results store from the command line.

    pysysbench history where [--history-db=PATH|URL]
    pysysbench history import PATH... [--label K=V]... [--history-db=...]
    pysysbench history list [--workload W] [--threads N] [--label K=V]... [--limit N]
                            [--output-format=text|json] [--history-db=...]
    pysysbench history show RUN_ID [--output-format=text|json] [--history-db=...]
    pysysbench history check [--against=LABEL|last-N] [--by AXIS] [--metric tps,p95] [--alpha A]
                             [--min-effect E] [--min-runs N] [--allow-short] [filters] [--output-format=text|json]
    pysysbench history trend --output DIR [--by AXIS] [--metric ...] [filters]
    pysysbench history dashboard --output DIR [--by AXIS] [--metric ...] [filters]

Role: the thin CLI over ``pysysbench.history`` (argument parsing, printing, exit codes);
registered in :mod:`pysysbench.cli.subcommands`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from ..core.errors import UsageError
from ..history import gate, imports, series
from ..history.detect import Settings
from ..history.imports import summary_line
from ..history.store import Filter, Location, Store, locate
from .subcommands import subcommand
from .tools import Parser, _entry, _parse

PROGRESS_EVERY = 100  # files per progress line of an import
T = TypeVar("T")


def _parser() -> Parser:
    p = Parser(prog="pysysbench history", description="The results store: runs over time (docs/history.md).")
    db_help = (
        "the store: an SQLite file or a postgresql:// URL (default: $PYSYSBENCH_HISTORY_DB, "
        "else ~/.local/share/pysysbench/history.sqlite)"
    )
    p.add_argument("--history-db", metavar="PATH|URL", help=db_help)
    common = Parser(add_help=False)  # --history-db after the action word too, without resetting it
    common.add_argument("--history-db", metavar="PATH|URL", default=argparse.SUPPRESS, help=db_help)
    sub = p.add_subparsers(dest="action", required=True, parser_class=Parser)
    sub.add_parser("where", parents=[common], help="print where the store is")
    imp = sub.add_parser("import", parents=[common], help="import result files and folders of them")
    imp.add_argument("paths", nargs="+", metavar="PATH", help="result files, or folders walked for them")
    imp.add_argument("--label", action="append", default=[], metavar="KEY=VALUE", help="add a label to every run")
    ls = sub.add_parser("list", parents=[common], help="list the runs stored")
    ls.add_argument("--workload", help="only runs of this workload")
    ls.add_argument("--threads", type=int, help="only runs with this many threads")
    ls.add_argument("--label", action="append", default=[], metavar="KEY=VALUE", help="only runs with this label")
    ls.add_argument("--limit", type=int, help="at most this many runs (the oldest first)")
    show = sub.add_parser("show", parents=[common], help="one run, whole")
    show.add_argument("run_id", type=int, metavar="RUN_ID")
    chk = sub.add_parser("check", parents=[common], help="exit 0/1/2: is the latest level a regression?")
    chk.add_argument("--against", metavar="LABEL|last-N", help="compare the latest label's runs with these")
    chk.add_argument("--alpha", type=float, default=0.01, help="significance level (default 0.01)")
    chk.add_argument("--min-effect", type=float, default=0.05, help="smallest change worth a finding (default 0.05)")
    chk.add_argument("--min-runs", type=int, default=3, help="runs a level needs (default 3)")
    chk.add_argument("--allow-short", action="store_true", help="series with too few runs do not make the exit 2")
    trend = sub.add_parser("trend", parents=[common], help="an HTML page and PNG charts per series")
    dash = sub.add_parser("dashboard", parents=[common], help="a static HTML index of every series")
    for sp in (chk, trend, dash):
        _series_args(sp)
    for sp in (trend, dash):
        sp.add_argument("--output", required=True, metavar="DIR", help="the folder the pages are written to")
        sp.add_argument("--alpha", type=float, default=0.01, help="significance level of change points")
        sp.add_argument("--min-effect", type=float, default=0.05, help="smallest change marked (default 0.05)")
        sp.add_argument("--min-runs", type=int, default=3, help="runs a level needs (default 3)")
    for sp in (ls, show, chk):
        sp.add_argument("--output-format", choices=("text", "json"), default="text")
    return p


def _series_args(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("--workload", help="only series of this workload")
    sp.add_argument("--threads", type=int, help="only series with this many threads")
    sp.add_argument("--label", action="append", default=[], metavar="KEY=VALUE", help="only runs with this label")
    sp.add_argument("--by", choices=series.AXES, default="started", help="the label axis (default: started)")
    sp.add_argument("--metric", default="tps,p95", help="metrics, comma-separated: tps,qps,p95,p99,errors")


def _with_store(location: Location, work: Callable[[Store], Awaitable[T]]) -> T:
    async def go() -> T:
        store = await Store.open(location)
        try:
            return await work(store)
        finally:
            await store.close()

    return asyncio.run(go())


@subcommand("history")
@_entry
def history_command(argv: list[str], out) -> int:
    """pysysbench history where|import|list|show ..."""
    args = _parse(_parser(), argv)
    location = locate(args.history_db)
    if args.action == "where":
        out(location.shown())
        return 0
    if args.action == "import":
        return _import(location, args, out)
    if args.action == "list":
        return _list(location, args, out)
    if args.action == "check":
        return _check(location, args, out)
    if args.action in ("trend", "dashboard"):
        return _pages(location, args, out)
    return _show(location, args, out)


# --- import -------------------------------------------------------------------------------------


def _import(location: Location, args: argparse.Namespace, out) -> int:
    labels = imports.parse_labels(args.label)

    def progress(done: int, total: int) -> None:
        out(f"history import: {done}/{total} files")

    report = _with_store(
        location,
        lambda store: imports.import_paths(store, args.paths, labels=labels, progress=progress, every=PROGRESS_EVERY),
    )
    for line in report.failed:
        out(f"history import: failed: {line}")
    out(summary_line(report, location))
    return 1 if report.failed else 0


# --- list and show ------------------------------------------------------------------------------


def _list(location: Location, args: argparse.Namespace, out) -> int:
    if args.limit is not None and args.limit < 0:
        raise UsageError("pysysbench history list: --limit must be 0 or more")
    f = Filter(
        workload=args.workload,
        threads=args.threads,
        labels=tuple(imports.parse_labels(args.label).items()),
        limit=args.limit,
    )
    runs = _with_store(location, lambda store: store.runs(f))
    if args.output_format == "json":
        out.raw(json.dumps(runs, indent=1) + "\n")
        return 0
    for line in table(runs):
        out(line)
    return 0


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _ms(value: float | None) -> str:
    """A latency in milliseconds to four significant digits (0.003402, 12.05)."""
    return "-" if value is None else f"{value:.4g}"


def table(runs: list[dict[str, Any]]) -> list[str]:
    """The text table of ``history list``: one line per run, a header, and a last line
    saying how many."""
    head = ("ID", "STARTED", "WORKLOAD", "THREADS", "DRIVER", "TPS", "P95_MS", "LABELS", "SOURCE")
    rows = [
        (
            str(r["id"]),
            r["started_at"] or "-",
            r["workload"],
            "-" if r["threads"] is None else str(r["threads"]),
            r["driver"] or "-",
            _num(r["tps"]),
            _ms(r["latency_p95_ms"]),
            ",".join(f"{k}={v}" for k, v in sorted(r["labels"].items())) or "-",
            r["source"],
        )
        for r in runs
    ]
    widths = [max(len(c) for c in col) for col in zip(head, *rows)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in (head, *rows)]
    lines.append(f"{len(runs)} run{'' if len(runs) == 1 else 's'}")
    return lines


def _show(location: Location, args: argparse.Namespace, out) -> int:
    run = _with_store(location, lambda store: store.run(args.run_id))
    if run is None:
        raise UsageError(f"pysysbench history show: no run {args.run_id} in the store {location.shown()}")
    if args.output_format == "json":
        out.raw(json.dumps(run, indent=1) + "\n")
        return 0
    for line in show_lines(run):
        out(line)
    return 0


def show_lines(run: dict[str, Any]) -> list[str]:
    """``history show``'s text: what the run was, where it came from, what it measured."""
    doc = run["document"]
    intervals = doc.get("intervals") or []
    histogram = (doc.get("summary") or {}).get("histogram") or {}
    tps = [iv.get("tps") for iv in intervals if isinstance(iv.get("tps"), (int, float))]
    labels = ", ".join(f"{k}={v}" for k, v in sorted(run["labels"].items())) or "none"
    lines = [
        f"run {run['id']}: {run['workload']}, {run['threads'] if run['threads'] is not None else '?'} threads, "
        f"{run['driver'] or '?'} (exit code {run['exit_code'] if run['exit_code'] is not None else '?'})",
        f"source:    {run['source']} ({run['source_kind']}), imported {run['imported_at']}",
        f"started:   {run['started_at'] or '-'}",
        f"labels:    {labels}",
        f"server:    {run['server_version'] or '-'}",
        f"command:   {' '.join(doc.get('command_line') or []) or '-'}",
        f"tps:       {_num(run['tps'])}   qps: {_num(run['qps'])}   errors/s: {_num(run['errors_per_s'])}",
        f"latency:   avg {_ms(run['latency_avg_ms'])} ms   p95 {_ms(run['latency_p95_ms'])} ms   "
        f"p99 {_ms(run['latency_p99_ms'])} ms",
        f"intervals: {len(intervals)}" + (f" (tps from {min(tps):.2f} to {max(tps):.2f})" if tps else ""),
        f"histogram: {len(histogram)} non-empty buckets, {sum(histogram.values())} events",
    ]
    if doc.get("error"):
        lines.append(f"error:     {doc['error']}")
    return lines


# --- check, trend, dashboard --------------------------------------------------------------------


def _settings(args: argparse.Namespace) -> tuple[Settings, list[str]]:
    """The detection settings and metrics of the command line (a bad one: a usage error)."""
    try:
        return Settings(alpha=args.alpha, min_effect=args.min_effect, min_runs=args.min_runs), series.parse_metrics(
            args.metric
        )
    except ValueError as exc:
        raise UsageError(f"pysysbench history {args.action}: {exc}") from None


def _series(location: Location, args: argparse.Namespace) -> list[series.Series]:
    f = Filter(workload=args.workload, threads=args.threads, labels=tuple(imports.parse_labels(args.label).items()))
    return _with_store(location, lambda store: series.load(store, f, args.by))


def _check(location: Location, args: argparse.Namespace, out) -> int:
    settings, metrics = _settings(args)
    try:
        gate.check_against(args.against)
    except ValueError as exc:
        raise UsageError(f"pysysbench history check: {exc}") from None
    found = _series(location, args)
    result = gate.gate(found, metrics, settings, against=args.against, allow_short=args.allow_short)
    if args.output_format == "json":
        out.raw(json.dumps(gate.as_json(result, location.shown(), args.by), indent=1) + "\n")
    else:
        for line in gate.lines(result, location.shown()):
            out(line)
    return result.code


def _pages(location: Location, args: argparse.Namespace, out) -> int:
    try:
        from ..history import pages  # matplotlib is heavy and optional: loaded for pages only
    except ImportError:
        raise UsageError(
            f"pysysbench history {args.action} draws charts with matplotlib, which is not installed "
            "(pip install 'pysysbench[report]' adds it)"
        ) from None

    settings, metrics = _settings(args)
    found = _series(location, args)
    if not found:
        raise UsageError(f"pysysbench history {args.action}: no runs match in the store {location.shown()}")
    runs = _with_store(location, lambda store: pages.run_documents(store, found))
    written = pages.write(args.output, found, metrics, settings, runs, by=args.by, dashboard=args.action == "dashboard")
    out(f"history {args.action}: {len(found)} series, {written} files written to {args.output}")
    return 0


__all__ = ["history_command"]
