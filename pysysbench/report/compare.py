"""Comparison of two or more groups of runs: ratios and a noise-aware verdict per cell.

Role: the arithmetic behind ``pysysbench compare``.  A *group* is a result file,
a directory of results, a label selector (``version=10.11``) or one value of
a label (``--by=template``).  Cells are (workload, threads); each group's
repeats in a cell form a sample (mean, standard deviation).  Every group is
compared with the first (the baseline):

* ratio = mean(group) / mean(baseline);
* with repeats on both sides: *better* / *worse* when the difference exceeds the
  95 % Welch margin and ``min_effect``, else *same (within noise)*;
* with a single run on either side the noise is unknown: the verdict says so
  (``better?`` / ``worse?`` beyond ``single_run_threshold``, ``same?`` below).

"Better" follows the metric: higher throughput, lower latency.
"""

from __future__ import annotations

import math
import os

from ..core.errors import UsageError
from ..core.record import record
from ..stats.noise import Difference, Sample, difference, paired_difference, sample
from .model import METRICS, Metric, Run, load_runs
from .tables import TableData, busy_host_note, metric_stat

DEFAULT_MIN_EFFECT = 0.01
DEFAULT_SINGLE_RUN_THRESHOLD = 0.05


@record(frozen=True)
class Group:
    name: str
    runs: tuple[Run, ...]


@record(frozen=True)
class Verdict:
    text: str
    kind: str  # better | worse | same | unsure (CSS class / colour)


@record(frozen=True)
class CompareCell:
    workload: str
    threads: int
    samples: tuple[Sample | None, ...]  # per group; None = no run in that group
    diffs: tuple[Difference | None, ...]  # per group vs the baseline (None for it)
    verdicts: tuple[Verdict | None, ...]
    paired: tuple[bool, ...] = ()  # per group: compared round by round with the baseline


@record(frozen=True)
class Comparison:
    groups: tuple[str, ...]
    metric: Metric
    rows: dict[str, list[CompareCell]]

    @property
    def verdict_count(self) -> int:
        return sum(1 for cells in self.rows.values() for c in cells for v in c.verdicts if v is not None)


# --- groups ---------------------------------------------------------------------------------


def is_selector(arg: str) -> bool:
    return "=" in arg and all("=" in part for part in arg.split(","))


def select(pool: list[Run], selector: str) -> list[Run]:
    wanted = dict(part.split("=", 1) for part in selector.split(","))
    return [r for r in pool if all(dict(r.variant).get(k) == v for k, v in wanted.items())]


def _common_labels(runs: tuple[Run, ...]) -> dict[str, str]:
    maps = [dict(r.variant) for r in runs]
    return {k: v for k, v in maps[0].items() if all(m.get(k) == v for m in maps)} if maps else {}


def _name(groups: list[tuple[str, tuple[Run, ...]]]) -> list[Group]:
    """Name each group by the labels that tell it apart, else by its argument."""
    common = [_common_labels(runs) for _, runs in groups]
    keys = sorted({k for c in common for k in c})
    differing = [k for k in keys if len({c.get(k) for c in common}) > 1]
    out = []
    for (arg, runs), labels in zip(groups, common):
        text = ", ".join(f"{k}={labels[k]}" for k in differing if k in labels)
        out.append(Group(text or arg, runs))
    names = [g.name for g in out]
    if len(set(names)) < len(names):  # labels do not tell them apart: use the arguments
        out = [Group(arg, runs) for arg, runs in groups]
    return out


def make_groups(args: list[str], *, by: str | None = None, pool_dirs: list[str] | None = None) -> list[Group]:
    if by:
        runs = load_runs(args)
        values: dict[str, list[Run]] = {}
        for r in runs:
            value = dict(r.variant).get(by)
            if value is None:
                raise UsageError(f"'{r.path}' has no label '{by}' (labels: {dict(r.variant) or 'none'})")
            values.setdefault(value, []).append(r)
        order = _variant_order(runs) if by == "variant" else []
        ranked = sorted(values, key=lambda v: order.index(v) if v in order else len(order))
        groups = [Group(f"{by}={v}", tuple(values[v])) for v in ranked]
    else:
        pool = load_runs(pool_dirs or []) if any(is_selector(a) for a in args) else []
        raw = []
        for arg in args:
            runs = select(pool, arg) if is_selector(arg) and not _exists(arg) else load_runs([arg])
            raw.append((arg, tuple(runs)))
        groups = _name(raw)
    for g in groups:
        if not any(r.ok for r in g.runs):
            raise UsageError(f"group '{g.name}' has no successful run to compare")
    if len(groups) < 2:
        raise UsageError(
            f"need at least two groups to compare, got {len(groups)}"
            + (f" (every run has {by}={groups[0].name.split('=', 1)[-1]})" if by and groups else "")
        )
    return groups


def _variant_order(runs: list[Run]) -> list[str]:
    """The [[variant]] order of an interleaved campaign (the first is the baseline)."""
    for r in runs:
        order = r.campaign.get("interleaved")
        if order:
            return [str(v) for v in order]
    return []


def _exists(arg: str) -> bool:
    return os.path.exists(arg)


# --- arithmetic --------------------------------------------------------------------------------


def verdict(diff: Difference, metric: Metric, single_threshold: float) -> Verdict:
    good = diff.change > 0 if metric.higher_is_better else diff.change < 0
    if diff.significant is None:
        if abs(diff.change) < single_threshold:
            return Verdict("same? (no repeats)", "unsure")
        return Verdict(("better?" if good else "worse?") + " (no repeats)", "unsure")
    if diff.significant:
        return Verdict("better" if good else "worse", "better" if good else "worse")
    return Verdict("same (within noise)", "same")


def _cells(group: Group, metric: str) -> dict[tuple[str, int], list[Run]]:
    out: dict[tuple[str, int], list[Run]] = {}
    for r in group.runs:
        if r.ok:
            out.setdefault((r.workload, r.threads), []).append(r)
    return out


def round_of(r: Run) -> tuple[str, int] | None:
    """(campaign, round) of a run of an interleaved campaign ([[variant]]s), else None:
    only such runs were measured side by side and can be paired."""
    camp = r.campaign
    if camp.get("variant") is None or not camp.get("name"):
        return None
    return str(camp["name"]), int(camp.get("repeat") or 1)


def pairs(base: list[Run], other: list[Run], metric: str) -> list[tuple[float, float]]:
    a = {round_of(r): r.value(metric) for r in base if round_of(r) is not None}
    b = {round_of(r): r.value(metric) for r in other if round_of(r) is not None}
    return [(a[k], b[k]) for k in sorted(a) if k in b]


def compare(
    groups: list[Group],
    metric: str = "tps",
    *,
    min_effect: float = DEFAULT_MIN_EFFECT,
    single_run_threshold: float = DEFAULT_SINGLE_RUN_THRESHOLD,
) -> Comparison:
    if metric not in METRICS:
        raise UsageError(f"unknown metric '{metric}' (choose from {', '.join(METRICS)})")
    m = METRICS[metric]
    per_group = [_cells(g, metric) for g in groups]
    keys: list[tuple[str, int]] = []
    for cells in per_group:
        keys.extend(k for k in cells if k not in keys)
    workloads = list(dict.fromkeys(k[0] for k in keys))
    rows: dict[str, list[CompareCell]] = {}
    for w in workloads:
        for threads in sorted(t for wk, t in keys if wk == w):
            rows.setdefault(w, []).append(_cell(w, threads, per_group, m, min_effect, single_run_threshold))
    return Comparison(tuple(g.name for g in groups), m, rows)


def _cell(w: str, threads: int, per_group, m: Metric, min_effect: float, single: float) -> CompareCell:
    runs = [cells.get((w, threads)) for cells in per_group]
    samples = tuple(sample([r.value(m.key) for r in rs]) if rs else None for rs in runs)
    base = samples[0]
    diffs: list[Difference | None] = [None]
    verdicts: list[Verdict | None] = [None]
    paired = [False]
    for rs, s in zip(runs[1:], samples[1:]):
        if base is None or s is None:
            diffs.append(None)
            verdicts.append(None)
            paired.append(False)
            continue
        matched = pairs(runs[0], rs, m.key)
        if len(matched) >= 2 and len(matched) == min(len(runs[0]), len(rs)):
            d = paired_difference(matched, min_effect)
            paired.append(True)
        else:
            d = difference(base, s, min_effect)
            paired.append(False)
        diffs.append(d)
        verdicts.append(verdict(d, m, single))
    return CompareCell(w, threads, samples, tuple(diffs), tuple(verdicts), tuple(paired))


# --- trust: drift between the sides, separate campaigns, how many verdicts --------------------

DRIFT_MIN_EFFECT = 0.10  # client CPU per query / host load must differ by this much to be called drift


def _campaigns(g: Group) -> list[str]:
    return sorted({str(r.campaign.get("name")) for r in g.runs if r.campaign.get("name")})


def _drift_cells(base: Group, other: Group, value) -> tuple[int, int, str]:
    """Cells where ``value(run)`` differs beyond noise between the sides: (count, tested, example)."""
    a, b = _cells(base, "tps"), _cells(other, "tps")
    tested, found, example = 0, 0, ""
    for key in a:
        if key not in b:
            continue
        xs = [v for v in (value(r) for r in a[key]) if v is not None]
        ys = [v for v in (value(r) for r in b[key]) if v is not None]
        if len(xs) < 2 or len(ys) < 2:
            continue
        tested += 1
        d = difference(sample(xs), sample(ys), DRIFT_MIN_EFFECT)
        if d.significant:
            found += 1
            if not example:
                example = f"{key[0]} at {key[1]} threads: {sample(xs).mean:,.1f} → {sample(ys).mean:,.1f}"
    return found, tested, example


def _values(g: Group, value) -> list[str]:
    """The distinct values of ``value(run)`` over a group's successful runs, in order, as text."""
    seen = sorted({value(r) for r in g.runs if r.ok and value(r) is not None}, key=lambda v: (str(type(v)), v))
    return [f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else str(v) for v in seen]


def _set_up_notes(base: Group, other: Group) -> list[str]:
    """The two sides did not run the same experiment: another data set, other thread counts."""
    out = []
    for what, value in (("table count", lambda r: r.tables), ("table size", lambda r: r.table_size)):
        a, b = _values(base, value), _values(other, value)
        if a and b and a != b:
            out.append(
                f"Different set-up ({base.name} vs {other.name}): {what} {', '.join(a)} vs {', '.join(b)}: "
                "the sides ran on different data sets, so the ratios measure that as well as the change."
            )
    a_cells, b_cells = _cells(base, "tps"), _cells(other, "tps")
    for w in dict.fromkeys(k[0] for k in (*a_cells, *b_cells)):
        ta = sorted(t for wk, t in a_cells if wk == w)
        tb = sorted(t for wk, t in b_cells if wk == w)
        if ta and tb and ta != tb:
            both = sorted(set(ta) & set(tb))
            compared = f"only {', '.join(map(str, both))} compared" if both else "no thread count in common"
            out.append(
                f"Different thread counts ({base.name} vs {other.name}): {w} ran at "
                f"{', '.join(map(str, ta))} vs {', '.join(map(str, tb))} threads ({compared})."
            )
    return out


def notes(groups: list[Group], comparisons: list[Comparison]) -> list[str]:
    """What a reader must know before trusting the verdicts."""
    out = []
    base = groups[0]
    for g in groups:
        busy = busy_host_note(list(g.runs))
        if busy:
            out.append(f"Busy host ({g.name}): {busy}")
    for g in groups[1:]:
        out += _set_up_notes(base, g)
        found, tested, example = _drift_cells(base, g, lambda r: r.cpu_us_per_query)
        if found:
            out.append(
                f"Drift warning ({base.name} vs {g.name}): the client's CPU per query differs beyond noise "
                f"in {found} of {tested} cells (µs per query, e.g. {example}): the client machine was in "
                "another state (busier, throttled, other software); verdicts may measure that, not the change."
            )
        la = [r.load for r in base.runs if r.ok and r.load is not None]
        lb = [r.load for r in g.runs if r.ok and r.load is not None]
        if len(la) >= 2 and len(lb) >= 2:
            d = difference(sample(la), sample(lb), DRIFT_MIN_EFFECT)
            if d.significant:
                out.append(
                    f"Drift warning ({base.name} vs {g.name}): the host's load average differs beyond noise "
                    f"({sample(la).mean:.2f} → {sample(lb).mean:.2f}, 1-minute load over the runs): other work "
                    "on the machine may explain part of the differences."
                )
        ca, cb = _campaigns(base), _campaigns(g)
        paired = any(p for c in comparisons for cells in c.rows.values() for cell in cells for p in cell.paired[1:])
        if ca and cb and ca != cb:
            out.append(
                f"{base.name} and {g.name} come from separate campaigns ({', '.join(ca)}; {', '.join(cb)}): "
                "drift of the machine or the server between them cannot be told apart from the effect. "
                "For a trustworthy A/B, define both as [[variant]]s of one campaign: they then run "
                "interleaved, round by round, and compare pairs the rounds."
            )
        elif paired:
            out.append(
                f"{base.name} and {g.name} ran interleaved in one campaign: each round of one is compared "
                "with the same round of the other (paired), so slow drift cancels out."
            )
    n = sum(c.verdict_count for c in comparisons)
    if n:
        out.append(
            f"{n} verdicts made, each at 95 %: even with no real change about {n * 0.05:.1f} of them "
            "would say better or worse by chance (multiple comparisons); trust a consistent pattern over one "
            "cell."
        )
    return out


# --- tables -----------------------------------------------------------------------------------


def change_text(d: Difference, paired: bool = False) -> str:
    if d.ratio in (math.inf, -math.inf):
        return "- (baseline 0)"
    noise = f" ({'paired ' if paired else ''}noise ±{d.noise:.1%})" if d.noise is not None else ""
    return f"{d.ratio:.3f} ({d.change:+.1%}){noise}"


def table(c: Comparison, workload: str) -> tuple[TableData, list[list[str]]]:
    """Rows of one workload, and the CSS class of each cell (verdict colours)."""
    headers = ["Threads"] + [f"{g}: {c.metric.title}" for g in c.groups]
    right = [True] * len(headers)
    for g in c.groups[1:]:
        headers += [f"{g} / {c.groups[0]}", "verdict"]
        right += [True, False]
    rows, classes = [], []
    for cell in c.rows[workload]:
        row = [str(cell.threads)] + [metric_stat(s, c.metric) if s else "-" for s in cell.samples]
        cls = [""] * len(row)
        paired = cell.paired[1:] or (False,) * len(cell.diffs[1:])
        for d, v, p in zip(cell.diffs[1:], cell.verdicts[1:], paired):
            row += [change_text(d, p) if d else "-", v.text if v else "-"]
            cls += ["", v.kind if v else ""]
        rows.append(row)
        classes.append(cls)
    return TableData(headers, rows, right), classes


def group_sizes(groups: list[Group]) -> list[tuple[str, str]]:
    out = []
    for g in groups:
        ok = sum(1 for r in g.runs if r.ok)
        out.append((g.name, f"{ok} runs" + (f", e.g. {g.runs[0].path}" if g.runs else "")))
    return out


__all__ = ["Group", "Comparison", "CompareCell", "Verdict", "make_groups", "compare", "verdict", "table", "notes"]
