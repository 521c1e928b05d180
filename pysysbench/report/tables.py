"""Tables as data: headers and formatted cells, shared by Markdown, HTML and terminal.

Role: one place that decides what a report table shows (the seeds' columns:
threads, TPS, QPS, 95 % and 99 % latency, errors/s; with repeats the mean and
standard deviation and the number of runs) and how numbers are written.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from typing import Any

from ..core.record import record
from ..stats.noise import Sample, welch_margin
from .model import (
    METRICS,
    STEAL_LIMIT,
    TABLE_METRICS,
    Cell,
    Metric,
    Run,
    Variant,
    differing_keys,
    variant_text,
    variants,
)

SATURATION_MIN_GAIN = 0.05  # as peak finding's default min-gain
KEY_SETTINGS = (
    "tables",
    "table_size",
    "range_size",
    "rand-type",
    "db-ps-mode",
    "percentile",
    "time",
    "warmup-time",
    "report-interval",
    "skip_trx",
    "auto_inc",
    "point_selects",
    "index_updates",
    "non_index_updates",
    "delete_inserts",
    "mysql-ignore-errors",
    "pgsql-ignore-errors",
    "sqlite-journal-mode",
    "sqlite-synchronous",
    "create_table_options",
)
DRIVER_PREFIXES = ("mysql", "pgsql", "sqlite")


@record(frozen=True)
class TableData:
    headers: list[str]
    rows: list[list[str]]
    align_right: list[bool]


def number(value: float, decimals: int = 2) -> str:
    return f"{value:,.{decimals}f}"


def stat(s: Sample, decimals: int = 2) -> str:
    """``mean`` for one run, ``mean ± sd`` for repeats."""
    if s.n > 1:
        return f"{number(s.mean, decimals)} ± {number(s.sd, decimals)}"
    return number(s.mean, decimals)


def decimals_for(metric: Metric, value: float) -> int:
    """Latencies under 1 ms get more decimals (a point select on SQLite takes ~0.01 ms)."""
    if metric.unit != "ms" or abs(value) >= 1:
        return metric.decimals
    return 3 if abs(value) >= 0.1 else 4


def metric_stat(s: Sample, metric: Metric) -> str:
    return stat(s, decimals_for(metric, s.mean))


def latency(value_ms: float) -> str:
    return number(value_ms, decimals_for(METRICS["p95"], value_ms))


def workload_table(cell_list: list[Cell]) -> TableData:
    vs = variants(cell_list)
    keys = differing_keys(vs) if len(vs) > 1 else []
    repeats = any(len(c.runs) > 1 for c in cell_list)
    headers = ([", ".join(keys)] if keys else []) + ["Threads"] + [METRICS[m].title for m in TABLE_METRICS]
    headers += ["Runs"] if repeats else []
    rows = []
    for c in cell_list:
        row = ([variant_text(c.variant, keys)] if keys else []) + [str(c.threads)]
        row += [metric_stat(c.sample(m), METRICS[m]) for m in TABLE_METRICS]
        row += [str(len(c.runs))] if repeats else []
        rows.append(row)
    right = ([False] if keys else []) + [True] * (len(headers) - (1 if keys else 0))
    return TableData(headers, rows, right)


@record(frozen=True)
class PeakInfo:
    variant: Variant
    metric: str
    threads: int
    value: float
    saturation_threads: int  # fewest threads within 5 % of the peak
    p95_ms: float
    saturation_value: float = 0.0  # mean at saturation_threads
    noise_threads: int | None = None  # fewest threads not told apart from the peak (Welch 95 %); None: unknown
    noise_value: float = 0.0
    noise_margin: float | None = None  # the 95 % margin at noise_threads, relative to the peak
    repeats: int = 1  # fewest repeats of any cell of this variant


def peaks(cell_list: list[Cell], metric: str = "tps") -> list[PeakInfo]:
    """Per variant: the cell of highest mean throughput; the fewest threads within 5 %
    of it; and, separately, the fewest threads whose difference from it is within the
    run-to-run noise (Welch 95 %, unknown with single runs).  With few repeats the noise
    margin is wide, so the two facts are kept apart: "within noise" is not "as fast"."""
    out = []
    for v in variants(cell_list):
        mine = sorted((c for c in cell_list if c.variant == v), key=lambda c: c.threads)
        top = max(mine, key=lambda c: c.sample(metric).mean)
        best = top.sample(metric)
        near = next(c for c in mine if c.sample(metric).mean >= best.mean * (1 - SATURATION_MIN_GAIN))
        repeats = min(len(c.runs) for c in mine)
        noise_cell, noise_margin = None, None
        if repeats >= 2:
            for c in mine:
                m = welch_margin(c.sample(metric), best)
                if m is not None and best.mean - c.sample(metric).mean <= m:
                    noise_cell, noise_margin = c, (m / best.mean if best.mean else None)
                    break
        out.append(
            PeakInfo(
                v,
                metric,
                top.threads,
                best.mean,
                near.threads,
                top.sample("p95").mean,
                saturation_value=near.sample(metric).mean,
                noise_threads=noise_cell.threads if noise_cell else None,
                noise_value=noise_cell.sample(metric).mean if noise_cell else 0.0,
                noise_margin=noise_margin,
                repeats=repeats,
            )
        )
    return out


def _gap(value: float, peak: float) -> str:
    return f"{value / peak - 1:+.1%}" if peak else "-"


def within_5_text(p: PeakInfo) -> str:
    if p.saturation_threads == p.threads:
        return _threads_text(p.threads) + " (the peak)"
    return f"{_threads_text(p.saturation_threads)} ({_gap(p.saturation_value, p.value)})"


def within_noise_text(p: PeakInfo) -> str:
    if p.noise_threads is None:
        return "unknown (single runs)"
    margin = f", noise ±{p.noise_margin:.0%}" if p.noise_margin is not None else ""
    if p.noise_threads == p.threads:
        return _threads_text(p.threads) + f" (the peak{margin})"
    return f"{_threads_text(p.noise_threads)} ({_gap(p.noise_value, p.value)}{margin})"


def summary_table(all_cells: dict[str, list[Cell]]) -> TableData:
    vs = variants(c for cl in all_cells.values() for c in cl)
    keys = differing_keys(vs) if len(vs) > 1 else []
    headers = (
        ["Workload"]
        + ([", ".join(keys)] if keys else [])
        + [
            "Peak TPS",
            "at threads",
            "QPS at peak",
            "95% latency at peak (ms)",
            f"within {SATURATION_MIN_GAIN:.0%} of peak from",
            "within noise of peak from",
        ]
    )
    rows = []
    for workload, cl in all_cells.items():
        for p in peaks(cl):
            top = next(c for c in cl if c.variant == p.variant and c.threads == p.threads)
            rows.append(
                [workload]
                + ([variant_text(p.variant, keys)] if keys else [])
                + [
                    number(p.value),
                    str(p.threads),
                    number(top.sample("qps").mean),
                    latency(p.p95_ms),
                    within_5_text(p),
                    within_noise_text(p),
                ]
            )
    right = [False] + ([False] if keys else []) + [True] * 6
    return TableData(headers, rows, right)


FEW_REPEATS = 3


def summary_notes(all_cells: dict[str, list[Cell]]) -> list[str]:
    """Warnings that belong under the peak summary: with <= 3 repeats per cell the noise
    is poorly known and "within noise" covers wide ranges."""
    ps = [p for cl in all_cells.values() for p in peaks(cl)]
    if not ps:
        return []
    busy = busy_host_note([r for cl in all_cells.values() for c in cl for r in c.runs])
    notes = [f"Warning: {busy}"] if busy else []
    if any(p.repeats == 1 for p in ps):
        notes.append(
            f'Warning: some cells have a single run, so their run-to-run noise is unknown: "within noise" '
            f'cannot be told there, and "within {SATURATION_MIN_GAIN:.0%}" compares single measurements. '
            "Repeat the runs (5 or more) before calling a thread count saturated."
        )
    few = [p for p in ps if 1 < p.repeats <= FEW_REPEATS]
    if few:
        margins = [p.noise_margin for p in few if p.noise_margin is not None]
        wide = f" (up to ±{max(margins):.0%} of the peak here)" if margins else ""
        notes.append(
            f"Warning: {min(p.repeats for p in few)} repeats per cell (<= {FEW_REPEATS}): the 95 % noise "
            f'margin is wide{wide}, so "within noise of peak" may name thread counts well below the peak; '
            f'"within {SATURATION_MIN_GAIN:.0%}" does not depend on the noise. Use 5 or more repeats for '
            "firm statements."
        )
    return notes


def _threads_text(n: int) -> str:
    return f"{n} thread" + ("" if n == 1 else "s")


def peak_sentence(p: PeakInfo, keys: list[str]) -> str:
    who = f"{variant_text(p.variant, keys)}: " if keys else ""
    parts = []
    if p.saturation_threads != p.threads:
        parts.append(f"within {SATURATION_MIN_GAIN:.0%} of it from {within_5_text(p)}")
    if p.noise_threads is not None and p.noise_threads != p.threads:
        parts.append(f"within noise of it from {within_noise_text(p)}")
    sat = "; " + "; ".join(parts) if parts else ""
    return f"{who}peak {number(p.value)} TPS at {_threads_text(p.threads)} (p95 {latency(p.p95_ms)} ms){sat}"


# --- environment and commands ------------------------------------------------------------


def _distinct(values: Iterable[Any]) -> str:
    seen: list[str] = []
    for v in values:
        text = ",".join(map(str, v)) if isinstance(v, list) else str(v)
        if text not in seen:
            seen.append(text)
    return " / ".join(seen) if seen else ""


def environment_rows(runs: list[Run]) -> list[tuple[str, str]]:
    docs = [r.doc for r in runs]
    tool = _distinct(
        f"{d['tool'].get('name', 'pysysbench')} {d['tool'].get('version', '?')} (Python {d['tool'].get('python', '?')})"
        for d in docs
        if d.get("tool")
    )
    server = _distinct(f"{d.get('server_version') or 'unknown'} (driver {d.get('driver', '?')})" for d in docs)
    client = _distinct(
        f"{d['client'].get('hostname', '?')}: {d['client'].get('platform', '?')}, {d['client'].get('cpus', '?')} CPUs"
        for d in docs
        if d.get("client")
    )
    rows = [("Tool", tool), ("Server", server), ("Client machine", client)]
    impl = _distinct(implementation_text(d["implementation"]) for d in docs if d.get("implementation"))
    if impl:
        rows.insert(1, ("Implementation", impl))
    labels = _distinct(variant_text(r.variant) for r in runs)
    if labels:
        rows.append(("Labels", labels))
    rows.append(("Run dates", _run_dates(docs)))
    sizing = _distinct(r.campaign["table_size_source"] for r in runs if r.campaign.get("table_size_source"))
    if sizing:
        rows.append(("Table size chosen from memory", sizing))
    drivers = {d.get("driver") for d in docs}
    for name in KEY_SETTINGS:
        if _other_driver(name, drivers):
            continue
        vals = [_option_text(d["options"][name]) for d in docs if name in (d.get("options") or {})]
        if vals:
            rows.append((f"--{name}", _distinct(vals) or "''"))
    settings: dict[str, list[str]] = {}
    for r in runs:
        merged = dict(r.server_context.get("settings") or {})
        merged.update(r.campaign.get("server_settings") or {})
        for k, v in merged.items():
            settings.setdefault(k, [])
            if str(v) not in settings[k]:
                settings[k].append(str(v))
    rows += [(f"server: {k}", " / ".join(v)) for k, v in sorted(settings.items())]
    notes = _distinct(n for r in runs for n in r.server_context.get("notes") or [])
    if notes:
        rows.append(("Server context notes", notes))
    return rows


def implementation_text(impl: dict[str, Any]) -> str:
    """``C extension`` or ``Python (PYSYSBENCH_NATIVE=off)``, with a Lua script's runtime."""
    text = str(impl.get("hot_path") or ("C extension" if impl.get("c_extension") else "Python"))
    if impl.get("lua"):
        text += f"; Lua {impl['lua']}, events in {impl.get('lua_events', '?')}"
    return text


def _other_driver(option: str, drivers: set[Any]) -> bool:
    """``--mysql-...`` options mean nothing for a PostgreSQL run (the prefix names the driver)."""
    prefix = option.split("-", 1)[0]
    return prefix in DRIVER_PREFIXES and prefix not in drivers


def _option_text(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, list):
        return ",".join(map(str, value))
    return str(value)


def _run_dates(docs: list[dict[str, Any]]) -> str:
    dates = sorted(d.get("started_at") or "" for d in docs if d.get("started_at"))
    if not dates:
        return "unknown"
    return dates[0] if dates[0] == dates[-1] else f"{dates[0]} .. {dates[-1]}"


def command_text(argv: list[str]) -> str:
    return "pysysbench " + shlex.join(argv)


def reproduce_commands(runs: list[Run], all_cells: dict[str, list[Cell]]) -> list[str]:
    """Prepare commands, then one command per cell (its first repeat; the others
    differ only in the result file name)."""
    lines: list[str] = []
    for r in runs:
        for argv in r.campaign.get("prepare_commands") or []:
            text = command_text(argv)
            if text not in lines:
                lines.append(text)
    for cell_list in all_cells.values():
        for c in cell_list:
            first = c.runs[0]
            sql = first.campaign.get("sql_before_run") or []
            if sql:
                lines.append(f"# before each run, on the server: {'; '.join(sql)}")
            switch = first.campaign.get("variant_sql") or []
            if switch:
                lines.append(f"# variant {first.campaign.get('variant')}: before each of its runs: {'; '.join(switch)}")
            text = command_text(list(first.doc.get("command_line") or []))
            lines.append(text + (f"   # {len(c.runs)} repeats" if len(c.runs) > 1 else ""))
    return lines


def variant_keys(all_cells: dict[str, list[Cell]]) -> list[str]:
    vs: list[Variant] = variants(c for cl in all_cells.values() for c in cl)
    return differing_keys(vs) if len(vs) > 1 else []


# --- per-run trust figures: steadiness, client saturation, host load, server context ---------------


def steadiness_text(r: Run) -> str:
    st = r.steadiness
    if st.get("steady") is None:
        n = st.get("intervals", 0)
        return f"? ({n} interval{'' if n == 1 else 's'})"
    change = st.get("change") or 0.0
    if st["steady"]:
        return "steady"
    trend = "climbs" if change > 0 else "falls"
    return f"{trend} {change:+.0%} ({number(st['first_third_tps'], 0)} → {number(st['last_third_tps'], 0)} TPS)"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _load_text(r: Run) -> str:
    h = r.host
    a, b = h.get("loadavg_start"), h.get("loadavg_end")
    if not a or not b:
        return "-"
    return f"{a[0]:.2f} → {b[0]:.2f}"


def _us(value: float | None) -> str:
    return "-" if value is None else number(value, 1)


SERVER_COLUMNS = (
    ("hit_ratio", "Hit ratio", lambda v: f"{v:.2%}"),
    ("lock_waits_per_trx", "Lock waits / trx", lambda v: number(v, 3)),
    ("fsyncs_per_trx", "fsyncs / trx", lambda v: number(v, 3)),
    ("server_cpu_us_per_query", "Server CPU / query (µs)", lambda v: number(v, 1)),
)


def run_flags(r: Run) -> list[str]:
    flags = []
    if r.steady is False:
        flags.append("unsteady")
    if r.saturated:
        flags.append("client saturated")
    return flags + [f"busy host ({why})" if why.startswith("load") else why for why in r.host_problems]


def runs_table(cell_list: list[Cell]) -> TableData:
    """One row per run: what says whether its mean can be trusted."""
    vs = variants(cell_list)
    keys = differing_keys(vs) if len(vs) > 1 else []
    runs = [r for c in cell_list for r in c.runs]
    derived = [k for k, _, _ in SERVER_COLUMNS if any(k in r.derived for r in runs)]
    retries = any("retried" in r.summary for r in runs)  # --max-retries: its counts, where a run had it
    spans = any("write_trx" in r.summary for r in runs)  # --shard-nodes
    headers = ([", ".join(keys)] if keys else []) + [
        "Threads",
        "Run",
        "TPS",
        "Steadiness (first → last third)",
        "Client busy",
        "Client CPU / query (µs)",
        "Host load (1 min)",
        "Steal",
    ]
    headers += [title for k, title, _ in SERVER_COLUMNS if k in derived]
    headers += ["Retried", "Failed"] if retries else []
    headers += ["Multi-node writes"] if spans else []
    headers += ["Flags"]
    rows = []
    for c in cell_list:
        for r in c.runs:
            row = ([variant_text(c.variant, keys)] if keys else []) + [
                str(c.threads),
                f"r{r.repeat}",
                number(r.value("tps")),
            ]
            row += [
                steadiness_text(r),
                _pct(r.busy),
                _us(r.cpu_us_per_query),
                _load_text(r),
                _pct(r.host.get("steal_fraction")),
            ]
            d = r.derived
            row += [
                fmt(d[k]) if isinstance(d.get(k), (int, float)) else "-" for k, _, fmt in SERVER_COLUMNS if k in derived
            ]
            row += [str(r.summary.get(k, "-")) for k in ("retried", "failed")] if retries else []
            row += [spans_text(r.summary)] if spans else []
            row.append(", ".join(run_flags(r)) or "-")
            rows.append(row)
    right = ([False] if keys else []) + [True, False, True, False, True, True, True, True]
    right += [True] * (len(derived) + 2 * retries + spans) + [False]
    return TableData(headers, rows, right)


def spans_sentence(cell_list: list[Cell]) -> list[str]:
    """--shard-nodes: one line with the range of the runs' multi-node shares (none without it)."""
    shares = [
        r.summary["multi_node_write_share"] for c in cell_list for r in c.runs if "multi_node_write_share" in r.summary
    ]
    if not shares:
        return []
    lo, hi = min(shares), max(shares)
    span = f"{lo:.1%}" if f"{lo:.1%}" == f"{hi:.1%}" else f"{lo:.1%} to {hi:.1%}"
    return [
        f"write transactions on more than one node: {span} of them over {len(shares)} run(s) "
        "(--shard-nodes: those a sharded database commits in two phases)"
    ]


def spans_text(summary: dict) -> str:
    """--shard-nodes: the share of write transactions on more than one node, of how many."""
    share = summary.get("multi_node_write_share")
    if share is None:
        return "-"
    return f"{share:.1%} of {summary.get('write_trx', 0):,}"


def run_warnings(cell_list: list[Cell], keys: list[str]) -> list[str]:
    """Sentences under a workload's table for the runs whose mean misleads."""
    out = []
    for c in cell_list:
        who = (variant_text(c.variant, keys) + ", " if keys else "") + _threads_text(c.threads)
        for r in c.runs:
            tag = f"{who} r{r.repeat}"
            if r.steady is False:
                out.append(
                    f"Unsteady: {tag}: TPS {steadiness_text(r)} from the first to the last third of its "
                    "intervals; its mean describes no moment of the run (warm up longer, or run longer)."
                )
            if r.saturated:
                out.append(
                    f"Client saturated: {tag}: the client kept {r.busy:.0%} of its cores busy "
                    f"({_us(r.cpu_us_per_query)} µs CPU per query): the figure may be the client's limit "
                    "(add --workers or client machines)."
                )
            if r.summary.get("failed"):
                out.append(
                    f"Failed transactions: {tag}: {r.summary['failed']} transactions still failed after "
                    f"--max-retries={r.option('max_retries')} ({r.summary.get('retried', 0)} retried); its TPS "
                    "counts only those that committed (retry more, or lower the contention)."
                )
            if r.host_problems:
                out.append(
                    f"Busy host: {tag}: {'; '.join(r.host_problems)}: the client machine's CPU was not the "
                    "run's alone (other work, or a hypervisor taking it), so its figures are unreliable. Run "
                    "on a quiet machine; after a heavy run the 1-minute load takes a minute or more to fall "
                    "(a longer pause)."
                )
    return out


def busy_host_note(runs: list[Run]) -> str | None:
    """One sentence for a report's summary or a comparison: how many runs a busy host spoilt."""
    bad = [r for r in runs if r.ok and r.host_problems]
    if not bad:
        return None
    r = bad[0]
    return (
        f"{len(bad)} of {sum(1 for x in runs if x.ok)} runs were measured on a busy host (1-minute load at "
        f"the start above the cores the client left free, or CPU steal of {STEAL_LIMIT:.0%} or more), e.g. {r.workload} "
        f"at {_threads_text(r.threads)} r{r.repeat}: {'; '.join(r.host_problems)}; their figures are "
        "unreliable."
    )
