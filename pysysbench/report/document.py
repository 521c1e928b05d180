"""A report as data: sections, tables, charts, environment, commands.

Role: turn loaded runs into a :class:`Report` that the Markdown and HTML
renderers only have to lay out, and write the files (``report.md``,
``report.html``, ``charts/*.png``).  Everything comes from result files.
"""

from __future__ import annotations

import os
import re
from dataclasses import field

from ..core.errors import UsageError
from ..core.files import write_atomic
from ..core.record import record
from .faults import fault_table
from .model import Cell, Run, cells
from .nodes import nodes_chart, nodes_table, skew_notes
from .tables import (
    TableData,
    environment_rows,
    peak_sentence,
    peaks,
    reproduce_commands,
    run_warnings,
    runs_table,
    spans_sentence,
    summary_notes,
    summary_table,
    variant_keys,
    workload_table,
)

CHART_TITLES = {
    "scaling": "throughput and 95% latency against threads",
    "qps": "queries per second against threads",
    "timeseries": "per-interval throughput and latency of every run",
    "percentiles": "latency percentiles (histograms of the repeats merged)",
    "nodes": "per-node throughput of the runs that sampled their nodes (--server-nodes)",
}


@record(frozen=True)
class Chart:
    kind: str
    file: str  # relative to the report directory
    alt: str
    png: bytes = field(repr=False)


@record(frozen=True)
class Section:
    workload: str
    tests: list[str]
    table: TableData
    peaks: list[str]
    charts: list[Chart]
    runs: TableData | None = None  # one row per run: steadiness, saturation, host, server
    warnings: list[str] = field(default_factory=list)
    nodes: TableData | None = None  # --server-nodes: one row per database node of each run (report/nodes.py)
    faults: TableData | None = None  # the runs that killed a lab node (--fault)


@record(frozen=True)
class Report:
    title: str
    description: str
    runs: list[Run]
    summary: TableData
    sections: list[Section]
    environment: list[tuple[str, str]]
    commands: list[str]
    failed: list[Run]
    notes: list[str] = field(default_factory=list)  # warnings under the summary


CHARTS_HINT = "charts left out: matplotlib is not installed (pip install 'pysysbench[report]' adds them)"


def charts_available() -> bool:
    """matplotlib is an optional extra (``pysysbench[report]``): tables work without it."""
    try:
        import matplotlib.figure  # noqa: F401
    except ImportError:
        return False
    return True


def slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.+-]+", "_", name).strip("_") or "workload"


def default_title(runs: list[Run]) -> str:
    names = []
    for r in runs:
        name = r.campaign.get("name")
        if name and name not in names:
            names.append(name)
    return f"Benchmark report: {', '.join(names)}" if names else "Benchmark report"


def build(runs: list[Run], *, title: str | None = None, with_charts: bool = True) -> Report:
    if not runs:
        raise UsageError("no result files found: give result files or directories holding them")
    all_cells = cells(runs)
    if not all_cells:
        raise UsageError(f"none of the {len(runs)} result files holds a successful run")
    keys = variant_keys(all_cells)
    sections = [_section(w, cl, keys, runs, with_charts) for w, cl in all_cells.items()]
    ok = [r for r in runs if r.ok]
    return Report(
        title=title or default_title(runs),
        description=_description(runs, all_cells),
        runs=runs,
        summary=summary_table(all_cells),
        sections=sections,
        environment=environment_rows(ok),
        commands=reproduce_commands(ok, all_cells),
        failed=[r for r in runs if not r.ok],
        notes=summary_notes(all_cells),
    )


def _description(runs: list[Run], all_cells: dict[str, list[Cell]]) -> str:
    ok = sum(1 for r in runs if r.ok)
    n_cells = sum(len(cl) for cl in all_cells.values())
    return f"{ok} successful runs ({n_cells} workload x thread-count cells, {len(all_cells)} workloads)" + (
        f"; {len(runs) - ok} failed or interrupted runs are listed at the end" if ok < len(runs) else ""
    )


def _section(workload: str, cell_list: list[Cell], keys: list[str], runs: list[Run], with_charts: bool) -> Section:
    tests = sorted({r.test for c in cell_list for r in c.runs})
    charts = []
    if with_charts:
        from . import charts as ch  # matplotlib is heavy: load it only when a chart is drawn

        for kind, fn in ch.CHARTS.items():
            charts.append(
                Chart(
                    kind,
                    f"charts/{slug(workload)}-{kind}.png",
                    f"{workload}: {CHART_TITLES[kind]}",
                    fn(workload, cell_list, keys),
                )
            )
        if (node_png := nodes_chart(workload, cell_list)) is not None:
            kind = "nodes"
            charts.append(
                Chart(kind, f"charts/{slug(workload)}-{kind}.png", f"{workload}: {CHART_TITLES[kind]}", node_png)
            )
    return Section(
        workload,
        tests,
        workload_table(cell_list),
        [peak_sentence(p, keys) for p in peaks(cell_list)] + spans_sentence(cell_list),
        charts,
        runs_table(cell_list),
        run_warnings(cell_list, keys) + skew_notes(cell_list),
        nodes=nodes_table(cell_list),
        faults=fault_table(cell_list),
    )


def write(report: Report, out_dir: str, markdown: str, html: str) -> list[str]:
    """Write report.md, report.html and the chart PNGs (each atomically); return the paths."""
    files: list[tuple[str, str | bytes]] = [
        (os.path.join(out_dir, "report.md"), markdown),
        (os.path.join(out_dir, "report.html"), html),
    ]
    files += [(os.path.join(out_dir, c.file), c.png) for s in report.sections for c in s.charts]
    for path, data in files:
        write_atomic(path, data, "report")
    return [path for path, _ in files]
