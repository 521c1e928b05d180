"""Charts: matplotlib figures rendered to PNG bytes (Agg, no display needed).

Role: the three pictures a benchmark report needs per workload —
throughput and latency against threads (one line per variant, error bars when
repeats exist), the per-interval time series of every run, and latency
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
from PIL import Image
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator, ScalarFormatter

from ..stats.histogram import bucket_value_ms
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


def scaling(workload: str, cell_list: list[Cell], keys: list[str]) -> bytes:
    """TPS and p95 latency against threads, one line per variant."""
    fig = Figure(figsize=(WIDTH_IN, 3.4), layout="constrained")
    ax_tps, ax_lat = fig.subplots(1, 2)
    for i, v in enumerate(variants(cell_list)):
        mine = sorted((c for c in cell_list if c.variant == v), key=lambda c: c.threads)
        ts = [c.threads for c in mine]
        label = variant_text(v, keys) if keys else None
        for ax, metric in ((ax_tps, "tps"), (ax_lat, "p95")):
            s = [c.sample(metric) for c in mine]
            ax.errorbar(ts, [x.mean for x in s], yerr=[x.sd for x in s], marker="o", capsize=3,
                        linestyle=LINESTYLES[i % len(LINESTYLES)], label=label)
    ax_tps.set_title(f"{workload}: throughput")
    ax_tps.set_ylabel("transactions/s")
    ax_lat.set_title(f"{workload}: 95% latency")
    ax_lat.set_ylabel("ms")
    for ax in (ax_tps, ax_lat):
        _thread_axis(ax, [c.threads for c in cell_list])
        ax.set_ylim(bottom=0)
    if keys:
        ax_tps.legend(fontsize="small")
    _style(fig)
    return png(fig)


def _cell_colors(cell_list: list[Cell]):
    """Colour by thread count (viridis), line style by variant."""
    from matplotlib import colormaps
    ts = sorted({c.threads for c in cell_list})
    cmap = colormaps["viridis"]
    color = {t: cmap(0.85 * i / max(len(ts) - 1, 1)) for i, t in enumerate(ts)}
    vs = variants(cell_list)
    return lambda c: (color[c.threads], LINESTYLES[vs.index(c.variant) % len(LINESTYLES)])


def timeseries(workload: str, cell_list: list[Cell], keys: list[str]) -> bytes:
    """Per-interval TPS and latency percentile of every run."""
    fig = Figure(figsize=(WIDTH_IN, 5.0), layout="constrained")
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
            ts = [x["time_s"] for x in iv]
            ax_tps.plot(ts, [x["tps"] for x in iv], color=color, linestyle=ls, linewidth=1.2, label=label)
            ax_lat.plot(ts, [x["latency_pct_ms"] for x in iv], color=color, linestyle=ls, linewidth=1.2)
    ax_tps.set_title(f"{workload}: per-interval throughput and latency")
    ax_tps.set_ylabel("transactions/s")
    ax_lat.set_ylabel(f"{pct}% latency (ms)")
    ax_lat.set_xlabel("seconds since the start of the measured phase")
    for ax in (ax_tps, ax_lat):
        ax.set_ylim(bottom=0)
    handles = ax_tps.get_legend_handles_labels()[0]
    if handles:
        ax_tps.legend(fontsize="x-small", ncol=min(4, len(handles)), loc="lower right")
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
        rank = max(1, math.ceil((1 - 10 ** -x) * total))
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


CHARTS = {"scaling": scaling, "timeseries": timeseries, "percentiles": percentiles}
