"""Charts: matplotlib figures rendered to PNG bytes (Agg, no display needed).

Role: the pictures a benchmark report needs per workload — throughput and
latency against threads and QPS against threads (one line per variant, error
bars of 1 sd when repeats exist and a note saying so, client-saturated and
unsteady cells ringed), the per-interval time series of every run (repeats by
marker), and latency
percentile curves from the stored histograms (repeats merged exactly) on a
"nines" axis.  Figures are built with ``matplotlib.figure.Figure`` directly, so
no global pyplot state is touched.
"""

from __future__ import annotations

import io
import math
from bisect import bisect_left
from itertools import accumulate

from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator, ScalarFormatter
from PIL import Image

from ..stats.histogram import bucket_value_ms
from .faults import mark as mark_fault
from .model import Cell, variant_text, variants

DPI = 90
WIDTH_IN = 9.0
LINESTYLES = ("-", "--", ":", "-.")
NINES_TICKS = ((0, "0%"), (1, "90%"), (2, "99%"), (3, "99.9%"), (4, "99.99%"), (5, "99.999%"))
CURVE_POINTS = 160
PNG_COLOURS = 128


def png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    return compact(buf.getvalue())


def compact(raw: bytes) -> bytes:
    """Line charts use few colours: a palette PNG is about 3x smaller and looks the same
    (Pillow comes with matplotlib).  Keeps committed samples and HTML reports small."""
    img = Image.open(io.BytesIO(raw)).convert("RGB")
    img = img.quantize(colors=PNG_COLOURS, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    out = io.BytesIO()
    img.save(out, format="PNG", optimize=True)
    return out.getvalue()


def _style(fig: Figure) -> None:
    for ax in fig.axes:
        ax.grid(True, which="major", alpha=0.3)
        ax.spines[["top", "right"]].set_visible(False)


def _thread_axis(ax, threads: list[int]) -> None:
    """Log2 axis when the thread counts span 8x or more (doubling sweeps), else linear."""
    ts = sorted(set(threads))
    if ts and ts[-1] / max(ts[0], 1) >= 8:
        ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(FixedLocator(ts))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.set_xlabel("threads")


REPEAT_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def _spread_label(cell_list: list[Cell]) -> str | None:
    """What the error bars show (None: no repeats, no bars)."""
    ns = sorted({len(c.runs) for c in cell_list})
    if ns[-1] < 2:
        return None
    n = f"{ns[0]}" if len(ns) == 1 else f"{ns[0]}-{ns[-1]}"
    return f"error bars: ±1 sd of {n} repeats (not a confidence interval)"


def _mark_flagged(ax, mine: list[Cell], metric: str, labelled: set[str], dodge: float = 1.0) -> None:
    """Client-saturated cells get a red ring, unsteady ones an orange square, so a
    reader sees which points may be the client's limit or a trend's average."""
    for flag, test, style in (
        (
            "client saturated",
            lambda r: r.saturated,
            dict(marker="o", s=170, facecolors="none", edgecolors="#c62828", linewidths=2),
        ),
        (
            "unsteady run",
            lambda r: r.steady is False,
            dict(marker="s", s=120, facecolors="none", edgecolors="#ef6c00", linewidths=1.6),
        ),
    ):
        pts = [(c.threads * dodge, c.sample(metric).mean) for c in mine if any(test(r) for r in c.runs)]
        if pts:
            label = flag if flag not in labelled else None
            labelled.add(flag)
            ax.scatter([p[0] for p in pts], [p[1] for p in pts], zorder=5, label=label, **style)


def _against_threads(workload: str, cell_list: list[Cell], keys: list[str], panels) -> bytes:
    fig = Figure(figsize=(WIDTH_IN, 3.6 if len(panels) > 1 else 3.0), layout="constrained")
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    labelled: set[str] = set()
    vs = variants(cell_list)
    for i, v in enumerate(vs):
        mine = sorted((c for c in cell_list if c.variant == v), key=lambda c: c.threads)
        # variants side by side (a small shift, the ticks stay on the thread counts) so that
        # error bars at the same thread count do not hide each other
        dodge = 1 + 0.04 * (i - (len(vs) - 1) / 2)
        ts = [c.threads * dodge for c in mine]
        label = variant_text(v, keys) if keys else None
        for ax, (metric, _, _) in zip(axes, panels):
            s = [c.sample(metric) for c in mine]
            ax.errorbar(
                ts,
                [x.mean for x in s],
                yerr=[x.sd for x in s],
                marker="o",
                capsize=3,
                linestyle=LINESTYLES[i % len(LINESTYLES)],
                label=label,
            )
            if metric in ("tps", "qps"):
                _mark_flagged(ax, mine, metric, labelled, dodge)
    threads = sorted({c.threads for c in cell_list})
    for ax, (_, title, unit) in zip(axes, panels):
        ax.set_title(f"{workload}: {title}")
        ax.set_ylabel(unit)
        _thread_axis(ax, threads)
        if len(threads) == 1:  # one thread count: keep the (dodged) points off the frame
            ax.set_xlim(threads[0] * 0.85, threads[0] * 1.15)
        ax.set_ylim(bottom=0)
    if keys or labelled:
        axes[0].legend(fontsize="small")
    spread = _spread_label(cell_list)
    if spread:
        fig.supxlabel(spread, fontsize="small", color="#57606a")
    _style(fig)
    return png(fig)


def scaling(workload: str, cell_list: list[Cell], keys: list[str]) -> bytes:
    """TPS and p95 latency against threads, one line per variant; error bars are the sd of
    the repeats (said under the chart), flagged cells are marked."""
    return _against_threads(
        workload, cell_list, keys, (("tps", "throughput", "transactions/s"), ("p95", "95% latency", "ms"))
    )


def qps_scaling(workload: str, cell_list: list[Cell], keys: list[str]) -> bytes:
    """Queries per second against threads (the figure PolarDB-X ranks by)."""
    return _against_threads(workload, cell_list, keys, (("qps", "queries per second", "queries/s"),))


def _cell_colors(cell_list: list[Cell]):
    """Colour by thread count (viridis), line style by variant; with a single thread
    count the colour tells the variants apart instead (one colour for all is unreadable)."""
    from matplotlib import colormaps

    ts = sorted({c.threads for c in cell_list})
    vs = variants(cell_list)
    if len(ts) == 1 and len(vs) > 1:
        tab = colormaps["tab10"]
        return lambda c: (tab(vs.index(c.variant) % 10), LINESTYLES[vs.index(c.variant) % len(LINESTYLES)])
    cmap = colormaps["viridis"]
    color = {t: cmap(0.85 * i / max(len(ts) - 1, 1)) for i, t in enumerate(ts)}
    return lambda c: (color[c.threads], LINESTYLES[vs.index(c.variant) % len(LINESTYLES)])


def timeseries(workload: str, cell_list: list[Cell], keys: list[str]) -> bytes:
    """Per-interval TPS and latency percentile of every run: colour by thread count, line
    style by variant, marker by repeat (r1 o, r2 square, ...), so repeats stay apart."""
    fig = Figure(figsize=(WIDTH_IN, 5.4), layout="constrained")
    ax_tps, ax_lat = fig.subplots(2, 1, sharex=True)
    style = _cell_colors(cell_list)
    pct = 95
    for c in cell_list:
        color, ls = style(c)
        for r in c.runs:
            iv = r.intervals
            if not iv:
                continue
            pct = (r.doc.get("options") or {}).get("percentile", pct)
            label = f"{c.threads} thr" + (f" r{r.repeat}" if len(c.runs) > 1 else "")
            label = (variant_text(c.variant, keys) + ", " if keys else "") + label
            if r.steady is False:
                label += " (unsteady)"
            marker = REPEAT_MARKERS[(r.repeat - 1) % len(REPEAT_MARKERS)] if len(c.runs) > 1 else None
            every = max(1, len(iv) // 8)
            ts = [x["time_s"] for x in iv]
            ax_tps.plot(
                ts,
                [x["tps"] for x in iv],
                color=color,
                linestyle=ls,
                linewidth=1.2,
                label=label,
                marker=marker,
                markevery=every,
                markersize=5,
            )
            ax_lat.plot(
                ts,
                [x["latency_pct_ms"] for x in iv],
                color=color,
                linestyle=ls,
                linewidth=1.2,
                marker=marker,
                markevery=every,
                markersize=5,
            )
            mark_fault(ax_tps, ax_lat, r.doc, color)
    ax_tps.set_title(f"{workload}: per-interval throughput and latency")
    ax_tps.set_ylabel("transactions/s")
    ax_lat.set_ylabel(f"{pct}% latency (ms)")
    ax_lat.set_xlabel("seconds since the start of the measured phase")
    for ax in (ax_tps, ax_lat):
        ax.set_ylim(bottom=0)
    handles = ax_tps.get_legend_handles_labels()[0]
    if handles:
        fig.legend(
            handles,
            ax_tps.get_legend_handles_labels()[1],
            fontsize="x-small",
            loc="outside right upper",
            ncol=1 if len(handles) <= 14 else 2,
        )
    _style(fig)
    return png(fig)


def percentile_curve(counts: list[int]) -> tuple[list[float], list[float]]:
    """(nines, latency ms) points: nines = -log10(1 - p), up to the last event."""
    total = sum(counts)
    if total == 0:
        return [], []
    cum = list(accumulate(counts))
    top = math.log10(total)
    xs, ys = [], []
    for k in range(CURVE_POINTS + 1):
        x = top * k / CURVE_POINTS
        rank = max(1, math.ceil((1 - 10**-x) * total))
        i = bisect_left(cum, min(rank, total))
        xs.append(x)
        ys.append(bucket_value_ms(i))
    return xs, ys


def percentiles(workload: str, cell_list: list[Cell], keys: list[str]) -> bytes:
    """Latency percentile curves (histograms of a cell's repeats merged)."""
    fig = Figure(figsize=(WIDTH_IN, 3.6), layout="constrained")
    ax = fig.subplots()
    style = _cell_colors(cell_list)
    top = 0.0
    for c in cell_list:
        xs, ys = percentile_curve(c.histogram())
        if not xs:
            continue
        color, ls = style(c)
        top = max(top, xs[-1])
        label = (variant_text(c.variant, keys) + ", " if keys else "") + f"{c.threads} thr"
        ax.plot(xs, ys, color=color, linestyle=ls, linewidth=1.4, label=label)
    ticks = [(x, t) for x, t in NINES_TICKS if x <= max(top, 1)]
    ax.set_xticks([x for x, _ in ticks], [t for _, t in ticks])
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_xlabel("percentile")
    ax.set_ylabel("latency (ms)")
    ax.set_title(f"{workload}: latency percentiles")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize="x-small", ncol=2)
    _style(fig)
    return png(fig)


CHARTS = {"scaling": scaling, "qps": qps_scaling, "timeseries": timeseries, "percentiles": percentiles}
