"""Commands beyond sysbench's grammar: ``campaign``, ``report``, ``compare``, ``export``.

Role: the thin CLI over ``pysysbench.campaign`` and ``pysysbench.report``:
parse arguments (argparse; errors are one line, exit code 1), call the
library, print.  Registered in :mod:`pysysbench.cli.subcommands`.

    pysysbench campaign run FILE [--results-dir=DIR] [--label K=V]... [--set KEY.PATH=VALUE]...
                                 [--restart] [--progress=auto|rich|plain] [--no-report]
    pysysbench campaign check FILE [--set ...]
    pysysbench report RESULTS... [--output=DIR] [--title=TEXT] [--no-charts]
    pysysbench compare A B [C ...] [--by=LABEL] [--from=DIR]... [--metric=tps,p95] [--min-effect=0.01]
                                   [--output=DIR]
    pysysbench export RESULTS... --format=csv|jsonl [--output=FILE] [--intervals]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys

from ..campaign import executor, onlab, spec
from ..campaign.backend import InProcessBackend
from ..campaign.plan import Planner
from ..core import switches
from ..core.errors import PySysbenchError, RunAborted, UsageError
from ..core.files import write_atomic
from ..report import compare as cmp
from ..report import document, export, html, markdown
from ..report.model import load_runs
from .progress import PlainDisplay, RichDisplay, peak_line
from .subcommands import subcommand

DEFAULT_RESULTS_ROOT = "results"
DEFAULT_REPORT_DIR = "report"


class Parser(argparse.ArgumentParser):
    """argparse that raises the project's UsageError instead of exiting with 2."""

    def error(self, message: str):
        raise UsageError(f"{self.prog}: {message} (see '{self.prog} --help')")


class HelpShown(Exception):
    pass


def _parse(parser: Parser, argv: list[str]) -> argparse.Namespace:
    try:
        return parser.parse_args(argv)
    except SystemExit as exc:  # --help printed its text
        if exc.code in (0, None):
            raise HelpShown() from None
        raise UsageError(f"{parser.prog}: invalid arguments") from None


def _entry(fn):
    """Map ``--help`` to exit code 0."""

    def wrapper(argv: list[str], out) -> int:
        try:
            return fn(argv, out)
        except HelpShown:
            return 0

    wrapper.__doc__ = fn.__doc__
    return wrapper


# --- campaign ------------------------------------------------------------------------------


def _campaign_parser() -> Parser:
    p = Parser(prog="pysysbench campaign", description="Run a campaign file (see examples/campaign-example.toml).")
    sub = p.add_subparsers(dest="action", required=True, parser_class=Parser)
    run = sub.add_parser("run", help="run (or resume) a campaign")
    check = sub.add_parser("check", help="validate a campaign file and print its runs")
    for sp in (run, check):
        sp.add_argument("file", help="campaign file (TOML)")
        sp.add_argument(
            "--set",
            action="append",
            default=[],
            metavar="KEY.PATH=VALUE",
            help="override a value of the file, e.g. run.time=5 or connection.mysql-db=bench",
        )
        sp.add_argument(
            "--label",
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help="add or replace a label stored with every result",
        )
        sp.add_argument("--results-dir", help="where results go (default: results/<campaign name>)")
        sp.add_argument(
            "--lab",
            metavar="DIR",
            help="run against the look-alike of 'pysysbench lab up' in DIR: its connection, its data (docs/lab.md)",
        )
    run.add_argument("--restart", action="store_true", help="ignore stored results and prepare again")
    run.add_argument("--progress", choices=("auto", "rich", "plain"), default="auto")
    run.add_argument("--no-report", action="store_true", help="do not render the report at the end")
    run.add_argument(
        "--history-db",
        metavar="PATH|URL",
        help="record the results in this history store (default: $PYSYSBENCH_HISTORY_DB when set; docs/history.md)",
    )
    return p


def _load_campaign(args: argparse.Namespace) -> spec.Campaign:
    c = spec.load(args.file, args.set)
    labels = dict(c.labels)
    for item in args.label:
        if "=" not in item or not item.split("=", 1)[0]:
            raise UsageError(f"--label '{item}': expected KEY=VALUE")
        key, value = item.split("=", 1)
        labels[key] = value
    c = dataclasses.replace(c, labels=labels)
    return onlab.attach(c, args.lab) if args.lab else c


@subcommand("campaign")
@_entry
def campaign_command(argv: list[str], out) -> int:
    """pysysbench campaign run|check FILE ..."""
    args = _parse(_campaign_parser(), argv)
    c = _load_campaign(args)
    name = onlab.results_name(c, args.lab) if args.lab else c.name
    results_dir = args.results_dir or os.path.join(DEFAULT_RESULTS_ROOT, name)
    if args.action == "check":
        return _check(c, results_dir, out)
    return _run(c, results_dir, args, out)


def _check(c: spec.Campaign, results_dir: str, out) -> int:
    warnings = executor.CampaignRun(c, results_dir, InProcessBackend()).check()
    planner = Planner(c, results_dir, c.table_size if isinstance(c.table_size, int) else None)
    total, exact = executor.estimate_runs(c)
    out(
        f"campaign '{c.name}': {len(c.workloads)} workloads, {'' if exact else 'about '}{total} runs; "
        f"labels: {c.labels or 'none'}; results: {results_dir}"
    )
    if c.prepare:
        out(f"  prepare: pysysbench {' '.join(planner.prepare_request('prepare').command_line)}")
    for v in c.variants:
        out(
            f"  variant {v.name} (interleaved round by round): labels {v.labels or 'none'}"
            + (f"; before each of its runs: {'; '.join(v.sql)}" if v.sql else "")
        )
    for w in c.workloads:
        threads = (
            ", ".join(map(str, w.threads))
            if w.threads
            else f"auto from {w.auto.start} (x{w.auto.factor:g}, max {w.auto.max}, by {w.auto.metric})"
        )
        out(f"  {w.name}: threads {threads}; {w.repeats} x {w.time_s} s (+{w.warmup_s} s warm-up)")
        first = w.threads[0] if w.threads else w.auto.start
        out(f"    pysysbench {' '.join(planner.run(w, first, 1, 'list', (c.variants or (None,))[0]).command_line)}")
    for w in warnings:
        out(w)
    out("campaign file OK")
    return 0


def _display(mode: str, out):
    rich = mode == "rich" or (mode == "auto" and sys.stdout.isatty())
    return RichDisplay() if rich else PlainDisplay(out)


def _run(c: spec.Campaign, results_dir: str, args: argparse.Namespace, out) -> int:
    display = _display(args.progress, out)
    backend = InProcessBackend(on_line=display.line)
    try:
        with display:
            manifest = executor.run_campaign(c, results_dir, backend, display.events(), restart=args.restart)
    except KeyboardInterrupt:
        _record_history(args, results_dir, out)
        raise RunAborted(
            f"campaign interrupted; what was measured is in {results_dir}: rerun the same command to resume",
            executor.EXIT_INTERRUPTED,
        ) from None
    _record_history(args, results_dir, out)
    runs = manifest["runs"].values()
    counts = {s: sum(1 for r in runs if r["status"] == s) for s in ("ok", "stored", "failed")}
    out(
        f"campaign '{c.name}' {manifest['status']}: {counts['ok']} runs executed, {counts['stored']} taken from "
        f"earlier invocations, {counts['failed']} failed; results in {results_dir}"
    )
    if not args.no_report:
        paths = _render_report([results_dir], os.path.join(results_dir, DEFAULT_REPORT_DIR), None, True, out)
        out(f"report: {paths[0]} and {paths[1]}")
    return 0 if counts["failed"] == 0 else 1


def _record_history(args: argparse.Namespace, results_dir: str, out) -> None:
    """Import the campaign's result files into the history store when one is configured
    (``--history-db`` or ``PYSYSBENCH_HISTORY_DB``): each run once, a resumed campaign's
    earlier runs counted as already there.  A store that fails is one line, not the campaign's end."""
    if not (args.history_db or switches.HISTORY_DB.raw()):
        return
    from ..history import imports
    from ..history.store import locate

    try:
        location = locate(args.history_db)
        report = imports.record_folder(location, results_dir)
        failed = "".join(f"; failed: {line}" for line in report.failed[:3])
        out(imports.summary_line(report, location).replace("history import:", "history:", 1) + failed)
    except PySysbenchError as exc:
        out(f"history: the results were not recorded: {exc}")


# --- report ---------------------------------------------------------------------------------


def _render_report(inputs: list[str], out_dir: str, title: str | None, charts: bool, out=None) -> list[str]:
    if charts and not document.charts_available():
        charts = False
        if out is not None:
            out(document.CHARTS_HINT)
    rep = document.build(load_runs(inputs), title=title, with_charts=charts)
    return document.write(rep, out_dir, markdown.render(rep), html.render(rep))


@subcommand("report")
@_entry
def report_command(argv: list[str], out) -> int:
    """pysysbench report RESULTS... [--output=DIR]"""
    p = Parser(
        prog="pysysbench report",
        description="Render Markdown + PNG charts and one self-contained HTML "
        "file from result files (files or directories, e.g. a campaign's results directory).",
    )
    p.add_argument("results", nargs="+", help="result files or directories")
    p.add_argument("--output", default=DEFAULT_REPORT_DIR, help=f"output directory (default: {DEFAULT_REPORT_DIR})")
    p.add_argument("--title", help="report title (default: from the campaign names)")
    p.add_argument("--no-charts", action="store_true", help="tables only")
    args = _parse(p, argv)
    paths = _render_report(args.results, args.output, args.title, not args.no_charts, out)
    out(f"report: {paths[0]} and {paths[1]} ({len(paths) - 2} charts)")
    return 0


# --- compare --------------------------------------------------------------------------------


@subcommand("compare")
@_entry
def compare_command(argv: list[str], out) -> int:
    """pysysbench compare A B [C ...]"""
    p = Parser(
        prog="pysysbench compare",
        description="Compare groups of runs per workload and thread count. "
        "A group is a result file, a directory of results, or a label selector KEY=VALUE[,KEY=VALUE] "
        "matched against the results under --from. The first group is the baseline.",
    )
    p.add_argument("groups", nargs="+", help="result files, directories or label selectors")
    p.add_argument("--by", help="split all given results into groups by the value of this label")
    p.add_argument(
        "--from",
        dest="pool",
        action="append",
        default=[],
        help=f"where label selectors look for results (default: {DEFAULT_RESULTS_ROOT})",
    )
    p.add_argument(
        "--metric",
        default="tps,p95",
        help="comma-separated: tps, qps, p95, p99, avg, errors_per_s; from the server context: "
        "hit_ratio, lock_waits_per_trx, fsyncs_per_trx, server_cpu_us_per_query; client_cpu_us_per_query",
    )
    p.add_argument(
        "--min-effect",
        type=float,
        default=cmp.DEFAULT_MIN_EFFECT,
        help="smallest relative difference called better/worse (default 0.01 = 1%%)",
    )
    p.add_argument("--output", help="also write compare.md and compare.html into this directory")
    p.add_argument("--title", default="Comparison")
    args = _parse(p, argv)
    groups = cmp.make_groups(args.groups, by=args.by, pool_dirs=args.pool or [DEFAULT_RESULTS_ROOT])
    comparisons = [
        cmp.compare(groups, m.strip(), min_effect=args.min_effect) for m in args.metric.split(",") if m.strip()
    ]
    _print_comparison(groups, comparisons, out)
    if args.output:
        _write_comparison(args.output, args.title, groups, comparisons, out)
    return 0


def _print_comparison(groups: list[cmp.Group], comparisons: list[cmp.Comparison], out) -> None:
    from rich.console import Console

    from ..report.terminal import comparison_table

    console = Console(file=out.stream if hasattr(out, "stream") else None, soft_wrap=False)
    for name, size in cmp.group_sizes(groups):
        console.print(f"{name}: {size}", highlight=False, markup=False, soft_wrap=True)  # names whole
    for c in comparisons:
        for workload in c.rows:
            console.print(comparison_table(c, workload))
    for note in cmp.notes(groups, comparisons):
        console.print(note, highlight=False, markup=False)


def _write_comparison(out_dir: str, title: str, groups, comparisons, out) -> None:
    for name, text in (
        ("compare.md", markdown.render_comparison(title, groups, comparisons)),
        ("compare.html", html.render_comparison(title, groups, comparisons)),
    ):
        write_atomic(os.path.join(out_dir, name), text, "comparison")
    out(f"comparison: {os.path.join(out_dir, 'compare.md')} and {os.path.join(out_dir, 'compare.html')}")


# --- export ---------------------------------------------------------------------------------


@subcommand("export")
@_entry
def export_command(argv: list[str], out) -> int:
    """pysysbench export RESULTS... --format=csv|jsonl [--output=FILE]"""
    p = Parser(
        prog="pysysbench export",
        description="Flatten result files into CSV or JSON lines "
        "(one row per run, or per report interval with --intervals).",
    )
    p.add_argument("results", nargs="+", help="result files or directories")
    p.add_argument("--format", choices=export.FORMATS, required=True)
    p.add_argument("--output", help="output file (default: standard output)")
    p.add_argument("--intervals", action="store_true", help="one row per report interval of every run")
    args = _parse(p, argv)
    runs = load_runs(args.results)
    if not runs:
        raise UsageError("no result files found: give result files or directories holding them")
    text = export.render(runs, args.format, intervals=args.intervals)
    if not args.output:
        out.raw(text)
        return 0
    write_atomic(args.output, text, "export")
    out(f"export: {text.count(chr(10)) - (1 if args.format == 'csv' else 0)} rows -> {args.output}")
    return 0


__all__ = ["campaign_command", "report_command", "compare_command", "export_command", "peak_line"]
