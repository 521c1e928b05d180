"""Trend pages and the dashboard (``history trend``, ``history dashboard``): static HTML and PNG.

Role: for each series (``series.py``) a page with one chart per metric: each run's value over
the label axis with its noise band (the min-max of the run's per-interval values), the
levels between change points (``detect.detect``) drawn as lines and each change point marked
with its effect; each point is a link (an image map over the chart, and the table under it)
to the run's JSON dump in ``runs/``.  The dashboard's ``index.html`` shows every series with
a small chart and the gate's verdict per metric (``gate.py``).  Charts are drawn as the
report's are (``report/charts.py``: Agg, its style and PNG palette); pages use the report's
CSS and open without a network (no scripts, relative links only).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..core import files
from ..core.errors import UsageError
from ..report.charts import DPI, WIDTH_IN, _style, png
from ..report.html import page
from .detect import OK, REGRESSION, Finding, Settings, detect
from .gate import decide, finding_text
from .series import METRIC_TITLES, RunPoint, Series
from .store import Store

MAX_TICKS = 16
EXTRA_CSS = """<style>
.ok { color: #116329; font-weight: 600; } .regression { color: #a40e26; font-weight: 600; }
.undecided { color: #9a6700; font-weight: 600; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(330px, 1fr)); gap: 1rem; }
.card { border: 1px solid #d0d7de; border-radius: 6px; padding: .6rem; }
.card h3 { font-size: 1rem; margin: 0 0 .4rem 0; }
.card img { width: 100%; height: auto; }
.card ul { margin: .3rem 0 0 0; padding-left: 1.1rem; font-size: .85rem; }
</style>"""


@dataclass(frozen=True)
class Chart:
    png: bytes
    areas: list[tuple[int, int, RunPoint, float]]  # x, y in pixels of the image, the run, its value


async def run_documents(store: Store, found: Sequence[Series]) -> dict[int, dict[str, Any]]:
    """Every run of ``found`` whole (``Store.run``), by id: the dumps the pages link to."""
    out = {}
    for s in found:
        for r in s.runs:
            run = await store.run(r.id)
            if run is not None:
                out[r.id] = run
    return out


def _ticks(runs: Sequence[RunPoint]) -> tuple[list[int], list[str]]:
    """One tick at the first run of each label, at most MAX_TICKS (evenly thinned)."""
    firsts = [i for i, r in enumerate(runs) if i == 0 or r.label != runs[i - 1].label]
    step = max(1, -(-len(firsts) // MAX_TICKS))
    keep = firsts[::step]
    return keep, [_short(runs[i].label) for i in keep]


def _short(label: str) -> str:
    if len(label) == 40 and all(c in "0123456789abcdef" for c in label):
        return label[:10]  # a full commit hash
    return label if len(label) <= 25 else label[:24] + "…"


def chart(s: Series, metric: str, findings: Sequence[Finding], by: str, small: bool = False) -> Chart:
    """The metric over the axis: points with their noise band, levels, change points marked."""
    runs = s.with_values(metric)
    points = s.points(metric)
    title, unit = METRIC_TITLES[metric]
    fig = Figure(figsize=(4.4, 2.2) if small else (WIDTH_IN, 3.6), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    xs = list(range(len(points)))
    ys = [p.value for p in points]
    bands = [r.band(metric) or (v, v) for r, v in zip(runs, ys)]
    low = [max(v - b[0], 0.0) for v, b in zip(ys, bands)]
    high = [max(b[1] - v, 0.0) for v, b in zip(ys, bands)]
    ax.errorbar(
        xs,
        ys,
        yerr=[low, high],
        fmt="o",
        color="#1f6feb",
        ecolor="#8cb4f0",
        capsize=2,
        markersize=3 if small else 5,
        label="run\n(bar: min-max\nof its intervals)",
    )
    _levels(ax, ys, findings)
    for f in findings:
        color = "#c62828" if f.kind == "regression" else "#2e7d32"
        ax.axvline(f.index - 0.5, color=color, linestyle="--", linewidth=1.4)
        if not small:
            ax.annotate(
                f"{f.effect:+.1%}",
                (f.index - 0.5, 1.0),
                xycoords=("data", "axes fraction"),
                xytext=(4, -12),
                textcoords="offset points",
                color=color,
                fontsize="small",
                fontweight="bold",
            )
    ticks, labels = _ticks(runs)
    ax.set_xticks(ticks, labels, rotation=30 if not small else 45, ha="right", fontsize="x-small" if small else "small")
    ax.set_xlim(-0.6, max(len(points) - 0.4, 0.6))
    ax.set_ylim(bottom=0)
    ax.set_ylabel(unit, fontsize="small" if small else None)
    ax.set_title(f"{s.key.name()}: {title}" if not small else title, fontsize="small" if small else None)
    if not small:
        ax.set_xlabel(f"runs by {by}")
        ax.legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    _style(fig)
    fig.canvas.draw()
    height = fig.bbox.height
    areas = []
    for x, y, r in zip(xs, ys, runs):
        px, py = ax.transData.transform((x, y))
        areas.append((round(px), round(height - py), r, y))
    return Chart(png(fig), areas)


def _levels(ax: Any, ys: Sequence[float], findings: Sequence[Finding]) -> None:
    """Each level's mean as a horizontal line over its runs."""
    cuts = [0, *(f.index for f in findings), len(ys)]
    for a, b in zip(cuts, cuts[1:]):
        if b > a:
            mean = sum(ys[a:b]) / (b - a)
            ax.hlines(mean, a - 0.4, b - 0.6, color="#6e7781", linewidth=1.2, label="level" if a == 0 else None)


def _image(name: str, c: Chart, metric: str, alt: str) -> str:
    areas = "".join(
        f'<area shape="circle" coords="{x},{y},7" href="runs/{r.id}.json" '
        f'alt="{escape(r.run)}" title="{escape(r.label)}: {v:.4g} ({escape(os.path.basename(r.run))})">'
        for x, y, r, v in c.areas
    )
    return (
        f'<figure><img class="chart" src="{escape(name)}" alt="{escape(alt)}" usemap="#map-{metric}">'
        f'<map name="map-{metric}">{areas}</map><figcaption>{escape(alt)}</figcaption></figure>'
    )


def _runs_table(runs: Sequence[RunPoint], metric: str) -> str:
    rows = []
    for i, r in enumerate(runs, 1):
        p = r.point(metric)
        band = r.band(metric)
        rows.append(
            f"<tr><td class='num'>{i}</td><td>{escape(r.label)}</td><td>{escape(r.started_at)}</td>"
            f"<td class='num'>{'' if p is None else f'{p.value:.4g}'}</td>"
            f"<td class='num'>{'' if band is None else f'{band[0]:.4g} – {band[1]:.4g}'}</td>"
            f"<td><a href='runs/{r.id}.json'>run {r.id}</a></td><td><code>{escape(r.run)}</code></td></tr>"
        )
    head = (
        "<tr><th>#</th><th>label</th><th>started</th><th>value</th><th>intervals</th><th>run</th><th>source</th></tr>"
    )
    return (
        f"<details><summary>Runs</summary><table><thead>{head}</thead><tbody>{''.join(rows)}</tbody></table></details>"
    )


def series_page(s: Series, metrics: Sequence[str], settings: Settings, by: str) -> tuple[str, dict[str, bytes]]:
    """The page of one series and its charts (file name -> PNG bytes)."""
    images: dict[str, bytes] = {}
    body = [
        '<p><a href="index.html">All series</a></p>',
        f"<h1>{escape(s.key.name())}</h1>",
        f'<p class="muted">{len(s.runs)} runs by {escape(by)}'
        + (f"; {s.left_out} without a {escape(by)} label left out" if s.left_out else "")
        + f". Change points: e-divisive, significance {settings.alpha:g}, minimum effect "
        f"{settings.min_effect:.0%}, {settings.min_runs} runs per level. Click a point for its run.</p>",
    ]
    for metric in metrics:
        points = s.points(metric)
        title, unit = METRIC_TITLES[metric]
        body.append(f'<h2 id="{metric}">{escape(title)} ({escape(unit)})</h2>')
        if not points:
            body.append('<p class="muted">No run has this metric.</p>')
            continue
        findings = detect(points, metric, settings)
        c = chart(s, metric, findings, by)
        name = f"{s.key.slug()}-{metric}.png"
        images[name] = c.png
        body.append(_image(name, c, metric, f"{s.key.name()}: {title} over {by}"))
        items = [f"<li class='{f.kind}'>change point at run {f.index + 1}: {escape(f.line())}</li>" for f in findings]
        body.append(f"<ul>{''.join(items)}</ul>" if items else '<p class="muted">No change point beyond noise.</p>')
        body.append(_runs_table(s.with_values(metric), metric))
    return page(f"History: {s.key.name()}", [EXTRA_CSS, *body]), images


def index_page(
    found: Sequence[Series], metrics: Sequence[str], settings: Settings, by: str, dashboard: bool
) -> tuple[str, dict[str, bytes]]:
    """The list of every series; the dashboard's has a small chart and the gate's verdicts each."""
    images: dict[str, bytes] = {}
    cards = []
    for s in found:
        link = f"{s.key.slug()}.html"
        if not dashboard:
            cards.append(f'<li><a href="{escape(link)}">{escape(s.key.name())}</a> ({len(s.runs)} runs)</li>')
            continue
        verdicts = [v for m in metrics for v in decide([s], m, settings, None)]
        items = "".join(
            f"<li><span class='{_cls(v.decision.code)}'>{_word(v.decision.code)}</span> {escape(finding_text(v, short=True))}</li>"
            for v in verdicts
        )
        metric = metrics[0]
        img = ""
        if s.points(metric):
            name = f"small-{s.key.slug()}-{metric}.png"
            images[name] = chart(s, metric, detect(s.points(metric), metric, settings), by, small=True).png
            img = f'<a href="{escape(link)}"><img src="{escape(name)}" alt="{escape(s.key.name())}: {metric}"></a>'
        cards.append(
            f'<div class="card"><h3><a href="{escape(link)}">{escape(s.key.name())}</a></h3>{img}<ul>{items}</ul></div>'
        )
    title = "History dashboard" if dashboard else "History trends"
    lead = f'<p class="muted">{len(found)} series, runs by {escape(by)}.</p>'
    body = [
        f"<h1>{title}</h1>",
        lead,
        f'<div class="cards">{"".join(cards)}</div>' if dashboard else f"<ul>{''.join(cards)}</ul>",
    ]
    return page(title, [EXTRA_CSS, *body]), images


def _cls(code: int) -> str:
    return {OK: "ok", REGRESSION: "regression"}.get(code, "undecided")


def _word(code: int) -> str:
    return {OK: "ok", REGRESSION: "regression"}.get(code, "not enough data")


def write(
    folder: str,
    found: Sequence[Series],
    metrics: Sequence[str],
    settings: Settings,
    runs: Mapping[int, Mapping[str, Any]],
    by: str = "started",
    dashboard: bool = False,
) -> int:
    """Write every series' page, the index and the runs' dumps into ``folder``; the files written."""
    out: dict[str, str | bytes] = {}
    for s in found:
        html_text, images = series_page(s, metrics, settings, by)
        out[f"{s.key.slug()}.html"] = html_text
        out.update(images)
    html_text, images = index_page(found, metrics, settings, by, dashboard)
    out["index.html"] = html_text
    out.update(images)
    for run_id, run in runs.items():
        out[os.path.join("runs", f"{run_id}.json")] = json.dumps(run, indent=1) + "\n"
    try:
        os.makedirs(os.path.join(folder, "runs"), exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create the folder '{folder}': {files.problem(exc)}") from None
    for name, data in out.items():
        files.write_atomic(os.path.join(folder, name), data, what="history page")
    return len(out)
