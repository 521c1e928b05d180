"""Series of runs over a label axis: what ``history check``, ``trend`` and ``dashboard`` read.

Role: the store's runs grouped into series, one per (workload, threads, driver), each in the
order of a label axis (``--by``), with each run's values of the metrics the gate knows.  Pure
apart from :func:`load` (one query through the store).

The axis (``--by``):

* ``started`` (default): every run is its own point, in the order the runs started (a run
  whose log gave no start time is labelled by its id: ``run 17``).
* ``date``: the run's ``date`` label, else the day it started (``YYYY-MM-DD``); in text
  order, which is time order for ISO dates (``2026-03-01``, ``2026-03-01T02:00``).
* ``version``: the ``version`` label in natural order: digits compare as numbers, the rest as
  text (``v8.9`` < ``v8.10`` < ``v9.0``; ``8.1.0-rc1`` < ``8.1.0`` is *not* known: text after a
  number sorts after it).  Runs without the label are left out.
* ``commit``: the ``commit`` label; commits in the order of their first run's start (a commit's
  hash says nothing of its place).  Runs without the label are left out.

Runs with the same axis value keep the order they started in, and stay separate points of
the series (repeats of one label).

A run's metric values: per-interval values where the run has intervals (its repeated
measurements, the noise within the run), else its summary value alone.  TPS, QPS and the
error rate (errors per second) are the intervals' values; p95 and p99 are the run's own
percentile (the summary), with the intervals' percentile as its spread where the run
reported that percentile (``--percentile``, 95 by default).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .detect import Point
from .store import Filter, Store

AXES = ("started", "date", "version", "commit")
METRICS = ("tps", "qps", "p95", "p99", "errors")
METRIC_TITLES = {
    "tps": ("throughput", "transactions/s"),
    "qps": ("queries per second", "queries/s"),
    "p95": ("95% latency", "ms"),
    "p99": ("99% latency", "ms"),
    "errors": ("error rate", "errors/s"),
}
SUMMARY_COLUMN = {
    "tps": "tps",
    "qps": "qps",
    "p95": "latency_p95_ms",
    "p99": "latency_p99_ms",
    "errors": "errors_per_s",
}


@dataclass(frozen=True)
class SeriesKey:
    workload: str
    threads: int | None
    driver: str

    def name(self) -> str:
        threads = "? threads" if self.threads is None else f"{self.threads} thread{'' if self.threads == 1 else 's'}"
        return f"{self.workload} @ {threads}" + (f" ({self.driver})" if self.driver else "")  # cpu, fileio: no driver

    def slug(self) -> str:
        threads = "x" if self.threads is None else str(self.threads)
        return re.sub(
            r"[^A-Za-z0-9_.-]+", "-", f"{self.workload}-t{threads}" + (f"-{self.driver}" if self.driver else "")
        )


@dataclass(frozen=True)
class RunPoint:
    """One run of a series: its id, its name (file or log, ``#N`` for the N-th run of a log),
    its axis value, its start, its labels and each metric's values and summary."""

    id: int
    run: str
    label: str
    started_at: str
    labels: Mapping[str, str]
    values: Mapping[str, tuple[float, ...]]
    summary: Mapping[str, float | None]

    def point(self, metric: str) -> Point | None:
        """The run as a :class:`Point` of ``metric`` (None: the run has no value for it)."""
        values, summary = self.values.get(metric, ()), self.summary.get(metric)
        if metric in ("p95", "p99"):
            return None if summary is None else Point(self.run, self.label, values, summary)
        if values:
            return Point(self.run, self.label, values)
        return None if summary is None else Point(self.run, self.label, (summary,))

    def band(self, metric: str) -> tuple[float, float] | None:
        """The spread of the run's own values of ``metric`` (min, max), None with fewer than two."""
        values = self.values.get(metric, ())
        return (min(values), max(values)) if len(values) >= 2 else None


@dataclass
class Series:
    key: SeriesKey
    runs: list[RunPoint] = field(default_factory=list)
    left_out: int = 0  # runs without the axis's label

    def points(self, metric: str) -> list[Point]:
        return [p for p in (r.point(metric) for r in self.runs) if p is not None]

    def with_values(self, metric: str) -> list[RunPoint]:
        """The runs that have a value of ``metric`` (the order of :meth:`points`)."""
        return [r for r in self.runs if r.point(metric) is not None]


def natural_key(text: str) -> tuple[tuple[int, int, str], ...]:
    """Natural order: digit runs compare as numbers, other text as text (case-blind)."""
    return tuple(
        (0, int(part), "") if part.isdigit() else (1, 0, part.lower()) for part in re.findall(r"\d+|\D+", text)
    )


def _finite(value: Any) -> float | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if ok else None


def interval_values(run: Mapping[str, Any], metric: str) -> tuple[float, ...]:
    """The run's per-interval values of ``metric`` (empty where it has none)."""
    intervals = [iv for iv in run.get("intervals") or [] if isinstance(iv, dict)]
    if metric in ("tps", "qps"):
        vals = [_finite(iv.get(metric)) for iv in intervals]
    elif metric == "errors":
        vals = [
            e / s if (e := _finite(iv.get("errors"))) is not None and (s := _finite(iv.get("interval_s"))) else None
            for iv in intervals
        ]
    else:
        percentile = (run.get("options") or {}).get("percentile", 95)
        if str(percentile) != metric[1:]:
            return ()
        vals = [_finite(iv.get("latency_pct_ms")) for iv in intervals]
    return tuple(v for v in vals if v is not None)


def axis_value(run: Mapping[str, Any], by: str) -> str | None:
    """The run's place on the axis ``by`` (None: it has no such label)."""
    labels = run.get("labels") or {}
    started = str(run.get("started_at") or "")
    if by == "started":
        return started or f"run {run.get('id')}"  # a log that printed no time: the run's id
    if by == "date":
        return str(labels.get("date") or started[:10])
    value = labels.get(by)
    return None if value in (None, "") else str(value)


def _run_names(rows: Sequence[Mapping[str, Any]]) -> dict[int, str]:
    """Each run's name: its source, with ``#N`` when one log holds several runs."""
    by_source: dict[str, list[int]] = {}
    for r in rows:
        by_source.setdefault(str(r["source"]), []).append(int(r["id"]))
    names = {}
    for source, ids in by_source.items():
        for n, run_id in enumerate(sorted(ids), 1):
            names[run_id] = source if len(ids) == 1 else f"{source}#{n}"
    return names


def _order(runs: list[RunPoint], by: str) -> list[RunPoint]:
    runs = sorted(runs, key=lambda r: (r.started_at, r.id))
    if by == "version":
        return sorted(runs, key=lambda r: natural_key(r.label))  # stable: repeats keep their start order
    if by == "commit":
        first: dict[str, int] = {}
        for i, r in enumerate(runs):
            first.setdefault(r.label, i)
        return sorted(runs, key=lambda r: first[r.label])
    if by == "date":
        return sorted(runs, key=lambda r: r.label)
    return runs


def build(rows: Iterable[Mapping[str, Any]], by: str = "started") -> list[Series]:
    """The series of the store's ``rows`` (``Store.series_runs``), ordered by workload, threads, driver."""
    if by not in AXES:
        raise ValueError(f"unknown axis {by!r} (known: {', '.join(AXES)})")
    rows = list(rows)
    names = _run_names(rows)
    groups: dict[SeriesKey, Series] = {}
    for r in rows:
        key = SeriesKey(str(r["workload"]), r["threads"], str(r["driver"] or ""))
        series = groups.setdefault(key, Series(key))
        label = axis_value(r, by)
        if label is None:
            series.left_out += 1
            continue
        series.runs.append(
            RunPoint(
                id=int(r["id"]),
                run=names[int(r["id"])],
                label=label,
                started_at=str(r["started_at"] or ""),
                labels=dict(r.get("labels") or {}),
                values={m: interval_values(r, m) for m in METRICS},
                summary={m: _finite(r.get(SUMMARY_COLUMN[m])) for m in METRICS},
            )
        )
    for series in groups.values():
        series.runs = _order(series.runs, by)
    return sorted(groups.values(), key=lambda s: (s.key.workload, s.key.threads or 0, s.key.driver))


async def load(store: Store, f: Filter | None = None, by: str = "started") -> list[Series]:
    """The series of the runs of ``f`` in ``store``."""
    return build(await store.series_runs(f), by)


def parse_metrics(text: str) -> list[str]:
    """``tps,p95`` (``--metric``) as a list; an unknown name is a ValueError."""
    names = [m.strip().lower() for m in text.split(",") if m.strip()]
    unknown = [m for m in names if m not in METRICS]
    if unknown or not names:
        raise ValueError(f"--metric '{text}': known metrics are {', '.join(METRICS)}")
    return list(dict.fromkeys(names))
